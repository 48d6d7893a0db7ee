"""Healing what no event says (issue 10): a forked child that wakes up after its first scan,
touches pages and goes back to sleep; reclaim under a memory cgroup with swap; exit records
lost under fork load.  Every check compares with /proc/PID/pagemap (or /proc) read by the
test, with --no-reconcile, so only the mechanism under test can make the model right."""
import os

import pytest

import harness
from harness import assert_matches, diff_pages, find_proc, model_pages, pagemap_truth
from test_exact import procs, start  # noqa: F401 (procs is a fixture)

MODES = ["sample", "chunk", "trace", "exact", "run"]
# Rounds of the forked-child race: a few in the default suite, 50 with `make stress`.
ROUNDS = int(os.environ.get("MEVITOP_STRESS_ROUNDS", "10"))


def watch(mevitop, procs, tmp_path, mode):  # noqa: F811
    """A workload and mevitop on it, refreshing every 50 ms."""
    if mode in ("exact", "run"):
        return start(procs, "attach" if mode == "exact" else "run", "fast", tmp_path)
    wl = harness.Workload()
    procs.append(wl)
    mv = mevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", "--mode", mode])
    return wl, mv


def exact_within(mv, pid, t, refreshes=2):
    """One of the first `refreshes` snapshots after t equals pagemap (read right after it);
    else the last one's difference fails the test."""
    snap = mv.snapshot_after(t)
    for _ in range(refreshes - 1):
        if not diff_pages(model_pages(find_proc(snap, pid) or {}), pagemap_truth(pid))[0]:
            return snap
        snap = mv.snapshot()
    assert_matches(snap, pid, f"{refreshes} refreshes after t")
    return snap


def wait_first_scan(mv, pid):
    """Returns as mevitop opens pid's /proc/PID/pagemap: its first scan is starting (the fd
    stays open while the process is watched).  Polled, not slept on."""
    fds, want = f"/proc/{mv.proc.pid}/fd", f"/proc/{pid}/pagemap"
    while True:
        for fd in os.listdir(fds):
            try:
                if os.readlink(f"{fds}/{fd}") == want:
                    return
            except OSError:
                pass


def idle_child_round(mv, wl, pages=64):
    """The child is born idle (waits on a pipe); the test releases it the moment mevitop
    starts its first scan, so it writes `pages` pages between that scan and the first
    refresh after it -- then sleeps, and no event of its own follows."""
    wl.send(f"forkwait a 0 {pages}")
    line = wl.out.get(what="forkwait to finish")
    assert line.startswith("done "), line
    child = int(line.split()[2])
    wait_first_scan(mv, child)
    t, _ = wl.do("release")
    exact_within(mv, child, t)
    os.kill(child, 9)     # the workload's zombie until it exits; mevitop sees the exit
    return child


@pytest.mark.parametrize("mode", MODES)
def test_stress_race_idle_forked_child_touching_after_first_scan(mevitop, procs, tmp_path, mode):  # noqa: F811
    wl, mv = watch(mevitop, procs, tmp_path, mode)
    wl.do("map a 256")
    wl.do("touch a 0 256 1 w")
    for _ in range(ROUNDS):
        idle_child_round(mv, wl)
