"""Targets in containers (issue 13): tests/workloads/wl started by
`unshare [--user --map-root-user] --pid --mount --fork --mount-proc`, so it is PID 1 of its
own pid namespace (it says "ready 1") in a mount namespace of its own, and mevitop addresses
it by its host PID.  The default sample mode and exact attach (fast and ordered) must give 0
pages wrong against pagemap.

In a user namespace the target's root holds its capabilities in that namespace only, and
userfaultfd(2) asks for CAP_SYS_PTRACE in the initial one: exact attach then goes through the
/dev/userfaultfd handoff, which needs no capability in the target, and must be exact; with
the handoff off it is refused with the kernel's EPERM and the reason, the target as it was
(but the scratch page, the one thing an attach leaves).
"""
import os
import shutil
import signal
import subprocess

import pytest

import harness
import killsweep
import test_stacks
from harness import assert_matches, find_proc
from test_exact import ExactMevitop, check, procs  # noqa: F401 (procs is a fixture)

NAMESPACES = {
    "pid+mount": ["--pid", "--mount"],
    "user+pid+mount": ["--user", "--map-root-user", "--pid", "--mount"],
}


class ContainerWorkload(harness.Workload):
    """wl (or ARGV) as PID 1 of new namespaces; .pid is its host PID, .ns_pid what it
    sees."""

    def __init__(self, namespaces, argv=None):
        argv = argv or ["--mount-proc", os.path.join(harness.WORKLOADS, "wl")]
        self.proc = subprocess.Popen(
            ["unshare", *NAMESPACES[namespaces], "--fork", *argv],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.out = harness.Reader(self.proc.stdout, "container-workload")
        self.ns_pid = self.wait_ready()
        assert self.ns_pid == 1
        with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
            (self.pid,) = [int(w) for w in f.read().split()]
        with open(f"/proc/{self.pid}/status") as f:
            nspid = [ln.split()[1:] for ln in f if ln.startswith("NSpid:")][0]
        assert nspid == [str(self.pid), "1"], nspid
        self.regions = {}


@pytest.mark.parametrize("ns", list(NAMESPACES))
def test_container_sample(mevitop, ns):
    wl = ContainerWorkload(ns)
    try:
        wl.do("map a 256")
        mv = mevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile"])
        t, _ = wl.do("touch a 0 128 1 w")
        snap = mv.snapshot_after(t)
        entry, _ = assert_matches(snap, wl.pid)
        assert entry["pages"]["resident"] >= 128
    finally:
        wl.close()


@pytest.mark.parametrize("variant", ["ordered", "fast"])
@pytest.mark.parametrize("ns", list(NAMESPACES))
def test_container_exact_attach(procs, ns, variant):  # noqa: F811
    """Exact in both kinds of container: in a user namespace through the handoff."""
    wl = ContainerWorkload(ns)
    procs.append(wl)
    wl.do("map a 256")
    wl.do("touch a 0 16 1 w")
    maps, fds = harness.maps_without_scratch(wl.pid), killsweep.fds_of(wl.pid)
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", f"--exact={variant}"])
    procs.append(mv)
    t, _ = wl.do("touch a 16 200 1 w")
    check(mv, wl.pid, t, [wl.region("a")])
    assert mv.stop(signal.SIGTERM) == 0, mv.stderr_text()
    assert harness.maps_without_scratch(wl.pid) == maps
    assert killsweep.fds_of(wl.pid) == fds
    wl.do("touch a 0 256 1 w")


def test_container_userns_without_handoff_refused(procs):  # noqa: F811
    """With the handoff off, userfaultfd(2) in a user namespace of its own is refused by
    the kernel (EPERM): one line that says why, the target as it was."""
    wl = ContainerWorkload("user+pid+mount")
    procs.append(wl)
    wl.do("map a 256")
    wl.do("touch a 0 16 1 w")
    maps, fds = harness.maps_without_scratch(wl.pid), killsweep.fds_of(wl.pid)
    r = subprocess.run([harness.MEVITOP, "--exact", "-p", str(wl.pid), "--json", "-n", "1",
                        "--disable", "uffd_dev"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    err = harness.json_error(r.stderr)
    assert err.startswith(
        f"failed to create userfaultfd in process {wl.pid}: Operation not "
        "permitted (") and err.endswith(
        "; it runs in a user namespace of its own (a container), where its capabilities "
        "do not count for userfaultfd"), err
    assert harness.maps_without_scratch(wl.pid) == maps
    assert killsweep.fds_of(wl.pid) == fds
    assert not killsweep.traced(wl.pid)
    wl.do("touch a 16 16 1 w")     # it runs on


PIVOT = """set -e
mount --make-rprivate /
mount --bind "$0" "$0"
cd "$0"
pivot_root . oldroot
exec "$@"
"""


def test_container_root_stacks_named(mevitop, tmp_path):
    """A container with a root of its own (pivot_root into a copy of the workload, its
    library and libc): /proc/PID/maps gives paths as the process sees them, which name
    nothing (or another file) in mevitop's root; --stacks reads the files through
    /proc/PID/root and names every frame of the call chain."""
    root = tmp_path / "root"
    lib = root / "lib" / "x86_64-linux-gnu"
    lib.mkdir(parents=True)
    (root / "oldroot").mkdir()
    for src, dst in ((os.path.join(harness.WORKLOADS, "wl_stacks_fp"), root),
                     (test_stacks.LIB, root),
                     ("/lib/x86_64-linux-gnu/libc.so.6", lib)):
        shutil.copy(src, dst)
    (root / "lib64").mkdir()
    shutil.copy(os.path.realpath("/lib64/ld-linux-x86-64.so.2"), root / "lib64")
    w = ContainerWorkload("pid+mount", ["sh", "-c", PIVOT, str(root), "/wl_stacks_fp",
                                        "/libwl_touch.so"])
    try:
        with open(f"/proc/{w.pid}/maps") as f:
            assert " /wl_stacks_fp\n" in f.read()
        mv = mevitop(["--mode", "trace", "--stacks", "-p", str(w.pid), "-i", "200"])
        addrs, snap = test_stacks.touch_regions(w, mv)
        entry = find_proc(snap, w.pid)
        for r, addr in addrs.items():
            st = test_stacks.attributed(entry, addr, w.pid, r)
            names = [f.get("function") for f in st["frames"]]
            assert names[:4] == test_stacks.CHAIN[r], f"region {r}: {names}"
            test_stacks.check_no_wrong_name(st["frames"], test_stacks.CHAIN[r])
    finally:
        w.close()
