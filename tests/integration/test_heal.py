"""Healing what no event says (issue 10): a forked child that wakes up after its first scan,
touches pages and goes back to sleep; reclaim under a memory cgroup with swap; exit records
lost under fork load.  Every check compares with /proc/PID/pagemap (or /proc) read by the
test, with --no-reconcile, so only the mechanism under test can make the model right."""
import os
import signal
import subprocess
import time

import pytest

import harness
from harness import assert_matches, diff_pages, find_proc, model_pages, pagemap_truth
from test_exact import procs, start  # noqa: F401 (procs is a fixture)

MODES = ["sample", "chunk", "trace", "exact", "run"]
# Rounds of the forked-child race: a few in the default suite, 50 with `make stress`.
ROUNDS = int(os.environ.get("MEVITOP_STRESS_ROUNDS", "10"))


# The counters each refresh reads: one task-iterator pass, or /proc per process
# (--disable task_iter, the fallback).
SOURCES = {"task_iter": (), "proc": ("task_iter",)}


def watch(mevitop, procs, tmp_path, mode, source="task_iter"):  # noqa: F811
    """A workload and mevitop on it, refreshing every 50 ms."""
    if mode in ("exact", "run"):
        return start(procs, "attach" if mode == "exact" else "run", "fast", tmp_path)
    wl = harness.Workload()
    procs.append(wl)
    mv = mevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", "--no-files", "--mode", mode],
                 SOURCES[source])
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


CONFIGS = [(m, "task_iter") for m in MODES] + \
          [(m, "proc") for m in ("sample", "chunk", "trace")]


@pytest.mark.parametrize("mode,source", CONFIGS)
def test_stress_race_idle_forked_child_touching_after_first_scan(mevitop, procs, tmp_path, mode, source):  # noqa: F811,E501
    wl, mv = watch(mevitop, procs, tmp_path, mode, source)
    wl.do("map a 256")
    wl.do("touch a 0 256 1 w")
    for _ in range(ROUNDS):
        idle_child_round(mv, wl)


# Exact mode reads its counters as sample mode does: its fallback is covered there.
@pytest.mark.parametrize("mode,source", [(m, "task_iter") for m in ("sample", "chunk", "trace",
                                                                    "exact")] +
                         [(m, "proc") for m in ("sample", "chunk", "trace")])
def test_reclaim_under_memory_cgroup_with_swap(mevitop, procs, tmp_path, mode, source):  # noqa: F811
    """96 MiB re-written at random in a 48 MiB memory cgroup with swap: reclaim swaps pages
    out behind the target's back while its own faults bring others in.  Once it stops, the
    model equals pagemap within 2 refreshes -- with no periodic reconciliation."""
    pages = 24576
    with harness.swap_file(160), \
            harness.memory_cgroup(f"mevitop-test-heal-{os.getpid()}", 48 << 20) as enter:
        wl, mv = watch(mevitop, procs, tmp_path, mode, source)
        enter(wl.pid)
        wl.do(f"map a {pages}")
        wl.do(f"touch a 0 {pages} 1 w")
        t, _ = wl.do(f"random a {pages * 2} 12345")
        snap = exact_within(mv, wl.pid, t)
        entry = find_proc(snap, wl.pid)
        assert entry["pages"]["swapped"] > pages // 4, entry["pages"]
        mv.stop()
        wl.close()


def running_ghosts(snap):
    """Processes the snapshot says are running that /proc says are gone, reused or zombies."""
    ghosts = []
    for p in snap["processes"]:
        if p["state"] != "running":
            continue
        try:
            with open(f"/proc/{p['pid']}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            state = "gone"
        if state in ("gone", "Z", "X"):
            ghosts.append((p["pid"], p["comm"], state))
    return ghosts


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("mode", ["sample", "chunk", "trace"])
def test_lost_exit_records_retired(mevitop, mode, source):
    """A shell's 20 sleeping children are in the model; with mevitop's consumer stopped
    (SIGSTOP) and a 4 KiB ring buffer, the shell runs 300 short processes, which fill the
    ring, then kills the sleepers: their exit records are lost for sure.  Two refreshes after
    mevitop resumes, no process it says is running is gone, the shell equals pagemap, and
    stats count the sleepers as retired."""
    shell = subprocess.Popen(
        ["sh", "-c", 'read start; for i in $(seq 20); do sleep 1000 & echo $!; pids="$pids $!"; '
         'done; echo started; read go; i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i+1)); '
         'done; kill $pids; wait; echo stopped; read end'],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        mv = mevitop(["-p", str(shell.pid), "-i", "50", "--no-reconcile", "--no-files",
                      "--mode", mode,
                      "--ringbuf-size", "4096"], SOURCES[source])
        shell.stdin.write("start\n")
        shell.stdin.flush()
        sleepers = set()
        while (line := shell.stdout.readline()) != "started\n":
            sleepers.add(int(line))
        while not sleepers <= {p["pid"] for p in mv.snapshot()["processes"]
                               if p["state"] == "running"}:
            pass
        os.kill(mv.proc.pid, signal.SIGSTOP)
        try:
            shell.stdin.write("go\n")
            shell.stdin.flush()
            assert shell.stdout.readline() == "stopped\n"
            t = time.monotonic()
        finally:
            os.kill(mv.proc.pid, signal.SIGCONT)
        snap = mv.snapshot_after(t)
        snap = mv.snapshot()
        st = snap["stats"]
        assert st["lost_by_kind"]["exit"] >= len(sleepers), st
        assert running_ghosts(snap) == [], st
        assert st["retired"] >= len(sleepers), st
        assert_matches(snap, shell.pid)
    finally:
        shell.stdin.close()
        shell.wait(timeout=10)


def exact_through(mv, pid, tid, t, refreshes=2):
    """exact_within for a process whose main thread has exited: pagemap is read through a
    live thread (/proc/TID), the model is the process's."""
    for i in range(refreshes):
        snap = mv.snapshot_after(t) if i == 0 else mv.snapshot()
        entry = find_proc(snap, pid)
        assert entry is not None and entry["state"] == "running", snap["processes"]
        bad, lines = diff_pages(model_pages(entry), pagemap_truth(tid))
        if not bad:
            return snap
    raise AssertionError(f"{len(bad)} pages differ:\n" + "\n".join(lines))


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("mode", ["sample", "chunk", "trace"])
def test_main_thread_exited_process_is_watched(mevitop, workload, mode, source):
    """A process whose main thread called pthread_exit() while another runs on: its main
    thread is a zombie with no mm, but the process is alive.  Watched from the start, and
    when it happens while watched."""
    before = workload()
    before.do("map a 64")
    _, (tid,) = before.do("leaderexit")
    mv = mevitop(["-p", str(before.pid), "-i", "50", "--no-reconcile", "--no-files",
                  "--mode", mode],
                 SOURCES[source])
    t, _ = before.do("touch a 0 64 1 w")
    snap = exact_through(mv, before.pid, int(tid), t)
    assert find_proc(snap, before.pid)["pages"]["resident"] >= 64

    during = workload()
    during.do("map a 64")
    mv = mevitop(["-p", str(during.pid), "-i", "50", "--no-reconcile", "--no-files",
                  "--mode", mode],
                 SOURCES[source])
    _, (tid,) = during.do("leaderexit")
    t, _ = during.do("touch a 0 64 1 w")
    exact_through(mv, during.pid, int(tid), t)


def test_scan_buffer_allocation_failure_never_a_wrong_page(mevitop, workload):
    """A scan whose run buffer cannot grow (injected: MEVITOP_TEST_FAIL_ALLOC=scan-runs fails
    the first growth past 1,024 runs) drops the whole pass instead of reading the runs it
    could not keep as "not resident", and the process is rescanned at the next refresh:
    exact within 3 refreshes with no periodic reconcile."""
    wl = workload()
    wl.do("map a 16384")
    mv = mevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", "--no-files",
                  "--mode", "sample"],
                 env_extra={"MEVITOP_TEST_FAIL_ALLOC": "scan-runs"})
    mv.snapshot()
    t, _ = wl.do("touch a 0 16384 2 w")     # every other page: 8,192 runs in one pass
    snap = exact_within(mv, wl.pid, t, refreshes=3)
    assert find_proc(snap, wl.pid)["pages"]["resident"] >= 8192
