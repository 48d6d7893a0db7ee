"""Targets in containers (issue 13): tests/workloads/wl started by
`unshare [--user --map-root-user] --pid --mount --fork --mount-proc`, so it is PID 1 of its
own pid namespace (it says "ready 1") in a mount namespace of its own, and mevitop addresses
it by its host PID.  The default sample mode and exact attach (fast and ordered) must give 0
pages wrong against pagemap.

In a user namespace the target's root holds its capabilities in that namespace only, and
userfaultfd(2) asks for CAP_SYS_PTRACE in the initial one: exact attach then either works
through a way that needs no capability in the target (the /dev/userfaultfd handoff of issue
13's part A), and must be exact, or is refused with the kernel's EPERM and the reason, the
target as it was (but the scratch page, the one thing an attach leaves).
"""
import os
import signal
import subprocess

import pytest

import harness
import killsweep
from harness import assert_matches
from test_exact import ExactMevitop, check, procs  # noqa: F401 (procs is a fixture)

NAMESPACES = {
    "pid+mount": ["--pid", "--mount"],
    "user+pid+mount": ["--user", "--map-root-user", "--pid", "--mount"],
}


class ContainerWorkload(harness.Workload):
    """wl as PID 1 of new namespaces; .pid is its host PID, .ns_pid what it sees."""

    def __init__(self, namespaces):
        self.proc = subprocess.Popen(
            ["unshare", *NAMESPACES[namespaces], "--fork", "--mount-proc",
             os.path.join(harness.WORKLOADS, "wl")],
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
    wl = ContainerWorkload(ns)
    procs.append(wl)
    wl.do("map a 256")
    wl.do("touch a 0 16 1 w")
    maps, fds = harness.maps_without_scratch(wl.pid), killsweep.fds_of(wl.pid)
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", f"--exact={variant}"],
                      wait_first=False)
    procs.append(mv)
    try:
        mv.first = mv.snapshot()
    except (EOFError, AssertionError):
        mv.proc.wait(timeout=10)
        mv.err.join(timeout=5)
        err = mv.stderr_text().strip()
        assert ns.startswith("user") and mv.proc.returncode == 1, err
        assert len(err.splitlines()) == 1 and err.startswith(
            f"mevitop: failed to create userfaultfd in process {wl.pid}: Operation not "
            "permitted (") and err.endswith(
            "; it runs in a user namespace of its own (a container), where its capabilities "
            "do not count for userfaultfd"), err
        assert harness.maps_without_scratch(wl.pid) == maps
        assert killsweep.fds_of(wl.pid) == fds
        assert not killsweep.traced(wl.pid)
        t, _ = wl.do("touch a 16 16 1 w")     # it runs on
        return
    t, _ = wl.do("touch a 16 200 1 w")
    check(mv, wl.pid, t, [wl.region("a")])
    assert mv.stop(signal.SIGTERM) == 0, mv.stderr_text()
    assert harness.maps_without_scratch(wl.pid) == maps
    assert killsweep.fds_of(wl.pid) == fds
    wl.do("touch a 0 256 1 w")
