#!/usr/bin/env python3
"""`make stress`: the README's two commands on a fresh Debian machine (issue 22).

A Debian 12 minbase tree is made with debootstrap from the mirror this machine's apt uses,
a clean clone of this checkout (what is committed, nothing from the work tree) is put in it,
and the tree is booted as a container: its own mount namespace (unshare) and root
(pivot_root), its own /tmp,
/dev/shm and /run, the host's /proc, /sys and /dev (mevitop watches the real kernel: BPF
and pagemap speak in the host's pids, so the container shares the host's pid namespace, as
`docker run --pid=host --privileged` does for a monitoring agent).  In it, as root:

    ./make.sh run ARGS="--json -n 1"     # installs, builds, one whole-system snapshot
    ./make.sh test                       # installs what the tests need, runs them all

Nothing is installed in the tree by hand: not make, not git, not python.  Prints each
command's last lines and one closing line; exits 1 if either command fails or the
snapshot is not one JSON object with processes in it.

    FRESH_SUITE (bookworm)  FRESH_DIR (/var/tmp/mevitop-fresh)  FRESH_KEEP=1 keeps the tree
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUITE = os.environ.get("FRESH_SUITE", "bookworm")
TREE = os.environ.get("FRESH_DIR", "/var/tmp/mevitop-fresh") + "-" + SUITE
SRC_IN_TREE = "/root/mevitop"


def mirror():
    """The Debian archive this machine's apt is set up with (deb822 or one-line sources)."""
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        text = open(path).read()
        for stanza in text.split("\n\n"):
            uris = re.search(r"^URIs:\s*(\S+)", stanza, re.M)
            if uris and re.search(r"^Suites:.*\b(bookworm|trixie|stable)\b", stanza, re.M) \
                    and "security" not in uris.group(1):
                return uris.group(1)
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        try:
            for line in open(path):
                m = re.match(r"deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+\S+\s+main", line)
                if m and "security" not in m.group(1):
                    return m.group(1)
        except OSError:
            pass
    sys.exit("fresh_machine: no Debian mirror found in /etc/apt (sources.list or *.sources)")


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, **kw)


def make_tree():
    if shutil.which("debootstrap") is None:
        if run(["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                "debootstrap"]).returncode:
            sys.exit("fresh_machine: could not install debootstrap")
    shutil.rmtree(TREE, ignore_errors=True)
    t0 = time.monotonic()
    r = run(["debootstrap", "--variant=minbase", SUITE, TREE, mirror()],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        print(r.stdout[-3000:])
        sys.exit(f"fresh_machine: debootstrap {SUITE} failed")
    print(f"debootstrap {SUITE} minbase: {time.monotonic() - t0:.0f} s", flush=True)
    # What a fresh machine has: name resolution to reach the archive, nothing else.
    shutil.copy("/etc/resolv.conf", os.path.join(TREE, "etc/resolv.conf"))
    # The committed tree, as CI clones it.
    r = run(["git", "clone", "-q", "--no-hardlinks", ROOT, TREE + SRC_IN_TREE])
    if r.returncode:
        sys.exit("fresh_machine: git clone failed")
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    for tool in ("make", "git", "python3", "clang", "gcc"):
        if any(os.path.exists(os.path.join(TREE, d, tool)) for d in ("usr/bin", "bin")):
            sys.exit(f"fresh_machine: {tool} is already in the fresh tree")
    return head


# Runs inside the new mount namespace: the container's mounts, then pivot_root into it (not
# chroot: the kernel refuses a chrooted caller a user namespace, and the container tests
# make one).  The host's /sys and /dev are bind-mounted (BTF, tracefs, bpffs, cgroups,
# /dev/userfaultfd, ptys for tmux); /tmp, /dev/shm and /run are its own.
ENTER = r"""
set -e
T="$1"; shift
mount --make-rprivate /
mount --bind "$T" "$T"
mount --rbind /proc "$T/proc"
mount --rbind /sys "$T/sys"
mount --rbind /dev "$T/dev"
mount -t tmpfs -o mode=1777 tmpfs "$T/dev/shm"
mount -t tmpfs -o mode=1777 tmpfs "$T/tmp"
mount -t tmpfs -o mode=755 tmpfs "$T/run"
cd "$T"
mkdir -p .host
pivot_root . .host
cd /
umount -l /.host
exec /usr/bin/env -i HOME=/root TERM=xterm-256color LANG=C.UTF-8 \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c "$*"
"""


def in_container(cmd, log):
    t0 = time.monotonic()
    with open(log, "w") as f:
        r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            ENTER, "enter", TREE, f"cd {SRC_IN_TREE} && {cmd}"],
                           stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return r.returncode, time.monotonic() - t0, open(log, errors="replace").read()


def main():
    if os.geteuid() != 0:
        sys.exit("fresh_machine: must run as root (debootstrap, mounts, the tests)")
    head = make_tree()
    logdir = os.environ.get("FRESH_LOGS", "/var/tmp")
    problems = []

    rc, secs, out = in_container('./make.sh run ARGS="--json -n 1"',
                                 os.path.join(logdir, "mevitop-fresh-run.log"))
    snap = None
    for line in out.splitlines():
        if line.startswith("{"):
            try:
                snap = json.loads(line)
            except ValueError:
                pass
    nprocs = len(snap.get("processes", [])) if isinstance(snap, dict) else 0
    print(f"make.sh run: exit {rc} in {secs:.0f} s, snapshot with {nprocs} processes")
    if rc or not nprocs:
        print("\n".join(out.splitlines()[-30:]))
        problems.append("make.sh run")

    rc, secs, out = in_container("./make.sh test", os.path.join(logdir, "mevitop-fresh-test.log"))
    total = [ln for ln in out.splitlines() if ln.startswith("total: ")]
    print(f"make.sh test: exit {rc} in {secs:.0f} s; {total[-1] if total else 'no total line'}")
    if rc:
        fails = [ln for ln in out.splitlines() if ln.startswith(("FAILED", "ERROR", "FAIL "))]
        print("\n".join(fails[:40] or out.splitlines()[-40:]))
        problems.append("make.sh test")

    if not os.environ.get("FRESH_KEEP"):
        shutil.rmtree(TREE, ignore_errors=True)
    print(f"fresh machine ({SUITE} minbase, {head}): "
          f"{'FAIL: ' + ', '.join(problems) if problems else 'PASS'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
