"""Exact mode on processes of any user (issue 13): a target without CAP_SYS_PTRACE cannot
create a full userfaultfd itself (vm.unprivileged_userfaultfd=0), so mevitop hands it an open
/dev/userfaultfd (user/exact/uffd_dev.h) and the target's own ioctl(USERFAULTFD_IOC_NEW)
creates it.  Real processes: tests/workloads/wl run through `setpriv --reuid nobody`, and
Debian's memcached started by the test as user memcache.  Each attach is checked against
pagemap read by the test (0 pages wrong), the target's own results (memcached set/get over
loopback), and its fds, credentials, seccomp state and process state before and after: after
SIGTERM, and after kill -9 of mevitop at every stage of the handoff chain and at random
moments of the attach (the kill sweep).  Both forced ways are covered: --disable uffd_dev on
a root target still works by the syscall, on a nobody target it is refused with the reason;
--disable uffd_syscall makes a root target use the device too.
"""
import difflib
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import pytest

import harness
import killsweep
from harness import assert_matches, find_proc
from test_ui import screen  # noqa: F401  (a fixture: a tmux server driving the view)
from test_exact import (VARIANTS, ExactMevitop, FifoWorkload, check, fds_of, maps_of,
                        procs, state_of, tracer_of, wait_state)  # noqa: F401 (procs: a fixture)

AS_NOBODY = ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]
BY_DEV = "userfaultfd (by /dev/userfaultfd) in"
BY_SYSCALL = "userfaultfd (by userfaultfd()) in"
# the handoff chain's calls, as test-pause stages (user/exact/uffd_dev.c)
DEV_STAGES = ["dev-mmap", "dev-socketpair", "dev-close-sv0", "dev-recvmsg", "dev-close-sv1",
              "dev-ioctl", "dev-close-uffd", "dev-close-dev", "dev-munmap"]
MEMCACHED = shutil.which("memcached") or "/usr/bin/memcached"


def creds_of(pid):
    with open(f"/proc/{pid}/status") as f:
        status = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
    return killsweep.creds_of(status)


def as_before(pid, before, sync=None):
    """fds, mappings, credentials and seccomp state as they were; not traced; running.
    SYNC: a round trip with the target's main thread - the one injected into - proving it
    is back in its own code (one mevitop died under finishes the chain first)."""
    deadline = time.monotonic() + harness.GUARD_S
    while tracer_of(pid) != 0:
        assert time.monotonic() < deadline, "the kernel did not detach the target"
        time.sleep(0.005)
    if sync:
        sync()
    assert wait_state(pid, "RS") in "RS"
    now = snapshot_of(pid)
    for key, value in before.items():
        if key == "maps" and now[key] != value:
            diff = difflib.unified_diff(value.splitlines(), now[key].splitlines(),
                                        lineterm="", n=0)
            raise AssertionError("maps changed: " + " | ".join(list(diff)[2:]))
        assert now[key] == value, f"{key} changed: {value!r} -> {now[key]!r}"


def snapshot_of(pid):
    return {"fds": fds_of(pid), "maps": maps_of(pid), "creds": creds_of(pid)}


def nobody_wl(procs):
    wl = harness.Workload(wrap=AS_NOBODY)
    procs.append(wl)
    assert creds_of(wl.pid)["Uid"].split()[0] == "65534"
    return wl


# --- attach to a process of another user ------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_attach_nobody(procs, variant):
    """A nobody process: the handoff gives it a userfaultfd; 0 pages wrong; after SIGTERM it
    has its own fds, mappings and credentials, untraced, and works on."""
    wl = nobody_wl(procs)
    wl.do("map a 256")
    wl.do("touch a 0 64 1 w")
    before = snapshot_of(wl.pid)
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", f"--exact={variant}",
                       "-vv"])
    procs.append(mv)
    t, _ = wl.do("touch a 64 128 1 w")
    check(mv, wl.pid, t, [wl.region("a")])
    t, _ = wl.do("touch a 128 256 1 r")
    snap = check(mv, wl.pid, t, [wl.region("a")])
    assert snap["stats"]["exact"]["variant"] == variant
    assert mv.stop(signal.SIGTERM) == 0
    assert BY_DEV in mv.stderr_text(), mv.stderr_text()[-2000:]
    as_before(wl.pid, before)
    wl.do("map z 16")
    wl.do("touch z 0 16 1 w")


@pytest.mark.parametrize("variant", VARIANTS)
def test_run_drops_privileges(procs, tmp_path, variant):
    """`mevitop run --exact -- setpriv --reuid nobody ... wl`: sh and setpriv run as root
    (the syscall), the exec'd wl as nobody (the handoff); wl's pages are exact."""
    wl = FifoWorkload(tmp_path)
    wl.argv = ["sh", "-c", 'exec "$3" "$4" "$5" "$6" "$7" "$8" "$0" <"$1" >"$2"', *wl.argv[3:],
               *AS_NOBODY]
    procs.append(wl)
    mv = ExactMevitop(["-i", "50", "--no-reconcile", f"--exact={variant}", "-vv"], run=wl.argv)
    procs.append(mv)
    wl.connect()
    assert creds_of(wl.pid)["Uid"].split()[0] == "65534"
    wl.do("map a 128")
    t, _ = wl.do("touch a 0 128 1 w")
    check(mv, wl.pid, t, [wl.region("a")])
    # the exec'd program's mm got its userfaultfd by the handoff
    mv.wait_stderr(f"process {wl.pid}: " + re.escape(BY_DEV))
    wl.close()
    assert mv.proc.wait(timeout=harness.GUARD_S) == 0


# --- the ways forced off -----------------------------------------------------------------

def test_root_target_without_dev(procs):
    """--disable uffd-dev: a root target still gets its userfaultfd by the syscall."""
    wl = harness.Workload()
    procs.append(wl)
    wl.do("map a 64")
    before = snapshot_of(wl.pid)
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--exact=ordered", "-vv",
                       "--disable", "uffd-dev"])
    procs.append(mv)
    t, _ = wl.do("touch a 0 64 1 w")
    check(mv, wl.pid, t, [wl.region("a")])
    assert mv.stop(signal.SIGTERM) == 0
    assert BY_SYSCALL in mv.stderr_text()
    as_before(wl.pid, before)


def test_root_target_without_syscall(procs):
    """--disable uffd_syscall: a root target gets its userfaultfd by the handoff."""
    wl = harness.Workload()
    procs.append(wl)
    wl.do("map a 64")
    before = snapshot_of(wl.pid)
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--exact=fast", "-vv",
                       "--disable", "uffd_syscall"])
    procs.append(mv)
    t, _ = wl.do("touch a 0 64 1 w")
    check(mv, wl.pid, t, [wl.region("a")])
    assert mv.stop(signal.SIGTERM) == 0
    assert BY_DEV in mv.stderr_text()
    as_before(wl.pid, before)


def run_mevitop(args):
    p = subprocess.run([harness.MEVITOP, *args], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, **harness.SAN_ENV))
    return p.returncode, p.stdout, p.stderr


def test_nobody_without_dev_refused(procs):
    """--disable uffd-dev on a nobody target: one line saying why and what to do, exit 1,
    the target as it was."""
    wl = nobody_wl(procs)
    wl.do("map a 64")
    before = snapshot_of(wl.pid)
    rc, out, err = run_mevitop(["--exact", "-p", str(wl.pid), "--json", "--disable",
                                "uffd-dev"])
    assert rc == 1 and out == "", (rc, err)
    assert harness.json_error(err) == (
        f"failed to create userfaultfd in process {wl.pid}: Operation not permitted "
        "(userfaultfd() needs CAP_SYS_PTRACE in the target, and the /dev/userfaultfd handoff "
        "is disabled (--disable uffd_dev): enable it)"), err
    as_before(wl.pid, before)
    wl.do("touch a 0 64 1 w")


def test_both_ways_off_refused(procs):
    wl = nobody_wl(procs)
    before = snapshot_of(wl.pid)
    rc, out, err = run_mevitop(["--exact", "-p", str(wl.pid), "--json", "--disable",
                                "uffd_syscall,uffd_dev"])
    assert rc == 1 and out == ""
    assert harness.json_error(err) == (
        "--exact needs userfaultfd, and both ways to create one in a process are "
        "disabled (--disable uffd_syscall,uffd_dev); or watch without --exact "
        "(mevitop -p PID)"), err
    as_before(wl.pid, before)


def test_probe_names_the_way():
    rc, out, _ = run_mevitop(["--probe"])
    assert rc == 0
    assert re.search(r"exact mode creates uffd by\s+userfaultfd\(\) where the target may, "
                     r"else /dev/userfaultfd", out), out
    rc, out, _ = run_mevitop(["--probe", "--disable", "uffd-syscall"])
    assert re.search(r"userfaultfd\(\) in targets\s+no \(disabled by switch\)", out), out
    assert re.search(r"exact mode creates uffd by\s+/dev/userfaultfd$", out, re.M), out
    rc, out, _ = run_mevitop(["--probe", "-j", "--disable", "uffd_dev"])
    assert '"userfaultfd_syscall": true, "userfaultfd_dev": false' in out, out


# --- kill -9 of mevitop inside the handoff -----------------------------------------------

@pytest.mark.parametrize("stage", DEV_STAGES + ["injected"])
def test_kill9_in_handoff(procs, stage):
    """SIGKILL of mevitop held at each call of the chain (the target is stopped, mid-chain):
    the chain finishes alone, closing all it made; the target runs on as it was."""
    wl = nobody_wl(procs)
    wl.do("map c 64")
    before = snapshot_of(wl.pid)
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--exact=ordered"],
                      env_extra={"MEVITOP_TEST_PAUSE": stage}, wait_first=False)
    procs.append(mv)
    mv.wait_stderr(f"test-pause {stage}")
    assert state_of(wl.pid) == "t", "the target is not held during the handoff"
    mv.proc.kill()
    mv.proc.wait()
    as_before(wl.pid, before, lambda: wl.do("touch c 0 1 1 r"))
    wl.do("touch c 0 64 1 w")


@pytest.mark.parametrize("kind", ["spin", "block"])
def test_kill9_sweep_nobody(kind):
    """kill -9 at random moments over the attach of a nobody kill_target (which checks its
    own registers): its fds, maps, masks, credentials and state as before every time."""
    kills, failures = killsweep.sweep((kind, 1, False), 8, max_delay_s=0.002,
                                      wrap=AS_NOBODY)
    assert not failures, f"{len(failures)} problems in {kills} kills: " + "; ".join(
        f"at {us} us: {p}" for us, p in failures[:5])


# --- Debian's memcached, running as its own user ----------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Memcached:
    def __init__(self, procs):
        assert os.path.exists(MEMCACHED), "memcached is not installed (make deps)"
        self.port = free_port()
        self.proc = subprocess.Popen([MEMCACHED, "-u", "memcache", "-p", str(self.port),
                                      "-U", "0", "-l", "127.0.0.1", "-m", "64"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        procs.append(self.proc)
        self.pid = self.proc.pid
        deadline = time.monotonic() + harness.GUARD_S
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
                break
            except ConnectionRefusedError:
                assert self.proc.poll() is None, self.proc.stderr.read()
                assert time.monotonic() < deadline, "memcached did not listen"
                time.sleep(0.01)
        self.f = self.sock.makefile("rb")
        assert self.cmd("version").startswith(b"VERSION")    # connection set up
        self.nfds = len(fds_of(self.pid))
        assert creds_of(self.pid)["Uid"].split()[0] == str(_uid("memcache"))

    def accepts(self):
        """A new connection is accepted by memcached's main thread (the injected one)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(b"version\r\n")
            assert s.recv(100).startswith(b"VERSION")
        # its worker thread may hold the closed socket a moment longer
        deadline = time.monotonic() + harness.GUARD_S
        while len(fds_of(self.pid)) != self.nfds:
            assert time.monotonic() < deadline, f"fds: {fds_of(self.pid)}"
            time.sleep(0.001)

    def cmd(self, line, data=None):
        self.sock.sendall(line.encode() + b"\r\n" + (data + b"\r\n" if data is not None else b""))
        return self.f.readline().rstrip(b"\r\n")

    def set(self, key, value):
        assert self.cmd(f"set {key} 0 0 {len(value)}", value) == b"STORED"

    def get(self, key):
        head = self.cmd(f"get {key}")
        if head == b"END":
            return None
        n = int(head.split()[3])
        value = self.f.read(n + 2)[:n]
        assert self.f.readline() == b"END\r\n"
        return value

    def load(self, prefix, n, size):
        """Stores n values and reads them all back: memcached's own results."""
        for i in range(n):
            self.set(f"{prefix}{i}", bytes([65 + i % 26]) * size)
        for i in range(n):
            assert self.get(f"{prefix}{i}") == bytes([65 + i % 26]) * size, f"{prefix}{i}"

    def quiet_snapshot(self, mv):
        """A snapshot after a round trip: memcached's workers have served everything sent."""
        assert self.cmd("version").startswith(b"VERSION")
        return mv.snapshot_after(time.monotonic())


def _uid(name):
    import pwd
    return pwd.getpwnam(name).pw_uid


@pytest.mark.parametrize("variant", VARIANTS)
def test_memcached(procs, variant):
    """Debian's memcached as user memcache: attach, 0 pages wrong after a load of sets and
    gets, every value read back right, and as before after SIGTERM."""
    mc = Memcached(procs)
    mc.load("warm", 200, 1000)
    before = snapshot_of(mc.pid)
    mv = ExactMevitop(["-p", str(mc.pid), "-i", "50", "--no-reconcile", f"--exact={variant}",
                       "-vv"])
    procs.append(mv)
    mc.load("k", 2000, 3000)        # ~6 MiB of new items: slabs touched under exact mode
    before["maps"] = maps_of(mc.pid)  # memcached mapped new slabs itself meanwhile
    snap = mc.quiet_snapshot(mv)
    entry, _ = assert_matches(snap, mc.pid, f"(memcached, {variant})")
    assert any(m["tracker"] == "userfaultfd" for m in entry["mappings"])
    assert mc.get("warm7") == b"H" * 1000
    assert mv.stop(signal.SIGTERM) == 0
    assert BY_DEV in mv.stderr_text()
    as_before(mc.pid, before)
    mc.load("after", 100, 100)


def test_memcached_kill9_each_stage(procs):
    """memcached: mevitop killed at each call of the handoff; memcached runs on, serves, and
    has its own fds and credentials every time."""
    mc = Memcached(procs)
    mc.load("warm", 50, 100)
    before = snapshot_of(mc.pid)
    for stage in DEV_STAGES:
        mv = ExactMevitop(["-p", str(mc.pid), "-i", "50", "--exact=fast"],
                          env_extra={"MEVITOP_TEST_PAUSE": stage}, wait_first=False)
        procs.append(mv)
        mv.wait_stderr(f"test-pause {stage}")
        mv.proc.kill()
        mv.proc.wait()
        as_before(mc.pid, before, mc.accepts)
        mc.load(stage, 20, 500)
        before["maps"] = maps_of(mc.pid)    # its own new slabs


@pytest.mark.parametrize("variant", VARIANTS)
def test_memcached_ui_q(procs, screen, variant):
    """The interactive view on memcached (user memcache) in exact mode, then q: memcached
    served meanwhile and is as it was, its own fds, credentials and state."""
    mc = Memcached(procs)
    mc.load("warm", 50, 100)
    before = snapshot_of(mc.pid)
    scr = screen()
    scr.start([f"--exact={variant}", "-p", str(mc.pid)])
    scr.wait_for(f"pid {mc.pid}")
    scr.wait_for("exact")
    mc.load("k", 200, 2000)
    before["maps"] = maps_of(mc.pid)    # its own new slabs
    scr.keys("q")
    rc, _ = scr.wait_exit()
    assert rc == 0, scr.stderr()
    as_before(mc.pid, before, mc.accepts)
    assert mc.get("k7") == b"H" * 2000
