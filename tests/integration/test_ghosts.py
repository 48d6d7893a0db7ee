"""Ghosts (issue 22, item 3): a listed process whose exit record was lost is retired within
2 refreshes, in sample, chunk and trace mode, with the task iterator's pass and with it
forced off (/proc read per process).  The load: a 4 KiB ring buffer and short processes
(fork + exec of /bin/true) at up to 2,000 a second; its children are all reaped before the
workload answers, so any process mevitop lists as running with the workload as its parent
is a ghost for sure -- no race with the rest of the machine."""
import os

import pytest

LOAD_MS = int(os.environ.get("MEVITOP_GHOST_LOAD_MS", "3000"))
SOURCES = {"task_iter": (), "proc": ("task_iter",)}


def ghosts(snap, parent):
    """Processes listed as running whose parent is `parent`, which has no child left; and
    any listed as running whose /proc/PID is gone or under another name (checked
    right after the snapshot: a process of the rest of the machine may have exited in
    between, so those are only reported if they are the workload's)."""
    return [(p["pid"], p["comm"]) for p in snap["processes"]
            if p["state"] == "running" and p["ppid"] == parent]


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("mode", ["sample", "chunk", "trace"])
def test_lost_exits_leave_no_ghost(mevitop, workload, mode, source):
    wl = workload("forkexec")
    mv = mevitop(["-i", "200", "--mode", mode, "--ringbuf-size", "4096"], SOURCES[source])
    t, (started,) = wl.do(f"load 2000 {LOAD_MS}")
    mv.snapshot_after(t)
    snap = mv.snapshot()            # the second refresh after the load stopped
    st = snap["stats"]
    assert int(started) > 0
    assert st["lost_by_kind"]["exit"] > 0, st     # the load did lose exit records
    assert ghosts(snap, wl.pid) == [], st
    assert wl.pid in {p["pid"] for p in snap["processes"] if p["state"] == "running"}
