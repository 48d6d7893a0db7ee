"""Production mode (sample, the default) at scale: map overflows are counted and healed, the
filters select exactly the processes they should (joining and leaving live), process churn
leaves nothing behind, and --max-cpu widens the interval instead of hurting the host."""
import os
import shutil
import subprocess
import time

import pytest

import harness
from harness import assert_matches, find_proc


def pids_in(snap, state=None):
    return {p["pid"] for p in snap["processes"] if state is None or p["state"] == state}


def test_chunk_map_overflow_is_counted_and_healed(mevitop, workload):
    """A chunk map of 4 entries cannot hold 32 dirty chunks: the overflow is counted and the
    process is rescanned until it equals pagemap (even with --no-reconcile)."""
    wl = workload()
    mv = mevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", "--mode", "chunk",
                  "--chunk-map-size", "4"])
    wl.do("map a 16384")
    t, _ = wl.do("touch a 0 16384 1 w")
    snap = mv.snapshot_after(t)
    for _ in range(100):
        if snap["stats"]["reconciles"]:
            break
        snap = mv.snapshot()
    assert snap["stats"]["overflows"] > 0, snap["stats"]
    assert snap["stats"]["reconciles"] > 0, snap["stats"]
    assert_matches(snap, wl.pid)


def test_user_filter(mevitop, workload):
    root_wl = workload()
    mv = mevitop(["-i", "50", "-u", "nobody", "--maps"])
    # Started after mevitop, as nobody: it must appear; root's must not.
    p = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                          os.path.join(harness.WORKLOADS, "wl")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        reader = harness.Reader(p.stdout, "nobody-wl")
        pid = int(reader.get(what="nobody workload ready").split()[1])
        t = time.monotonic()
        snap = mv.snapshot_after(t)
        assert pid in pids_in(snap), "a process of the user did not appear"
        assert root_wl.pid not in pids_in(snap), "a process of another user is shown"
        for proc in snap["processes"]:
            with open(f"/proc/{proc['pid']}/status") as f:
                euid = [l for l in f if l.startswith("Uid:")][0].split()[2]
            assert euid == "65534"
        assert_matches(snap, pid)
    finally:
        p.kill()
        p.wait()


def test_comm_filter(mevitop, workload, tmp_path):
    other = tmp_path / "otherprog"
    shutil.copy(os.path.join(harness.WORKLOADS, "wl"), other)
    wl = workload()
    mv = mevitop(["-i", "50", "--comm", "otherprog"])
    p = subprocess.Popen([str(other)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        reader = harness.Reader(p.stdout, "otherprog")
        pid = int(reader.get(what="otherprog ready").split()[1])
        snap = mv.snapshot_after(time.monotonic())
        assert pids_in(snap) == {pid}, snap["processes"]
        assert wl.pid not in pids_in(snap)
    finally:
        p.kill()
        p.wait()


def cgroup2_root():
    for path in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
        if os.path.exists(os.path.join(path, "cgroup.procs")) and \
           os.path.exists(os.path.join(path, "cgroup.subtree_control")):
            return path
    return None


@pytest.fixture
def cgroup():
    root = cgroup2_root()
    if root is None:
        pytest.fail("no cgroup v2 hierarchy mounted (looked at /sys/fs/cgroup/unified and "
                    "/sys/fs/cgroup)")
    path = os.path.join(root, f"mevitop-test-{os.getpid()}")
    os.mkdir(path)
    yield path
    # Move anything left back to the root, then remove.
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            for pid in f.read().split():
                try:
                    with open(os.path.join(root, "cgroup.procs"), "w") as r:
                        r.write(pid)
                except OSError:
                    pass
    except OSError:
        pass
    os.rmdir(path)


def test_cgroup_filter_join_and_leave_live(mevitop, workload, cgroup):
    root = os.path.dirname(cgroup)
    wl = workload()
    bystander = workload()
    mv = mevitop(["-i", "50", "--cgroup", cgroup, "--maps"])
    assert pids_in(mv.first) == set()
    with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
        f.write(str(wl.pid))
    t = time.monotonic()
    while True:  # joining is noticed at a tick
        snap = mv.snapshot_after(t)
        if wl.pid in pids_in(snap):
            break
        t = snap["monotonic"]
    assert bystander.pid not in pids_in(snap)
    t, extra = wl.do("map a 64")
    t, _ = wl.do("touch a 0 64 2 w")
    assert_matches(mv.snapshot_after(t), wl.pid)
    # Its children are in the cgroup too.
    wl.do("map b 16")
    t, extra = wl.do("fork b 0 4")
    child = int(extra[0])
    snap = mv.snapshot_after(t)
    assert child in pids_in(snap)
    os.kill(child, 9)
    # Leaving: moved back to the root cgroup.
    with open(os.path.join(root, "cgroup.procs"), "w") as f:
        f.write(str(wl.pid))
    t = time.monotonic()
    while True:
        snap = mv.snapshot_after(t)
        if wl.pid not in pids_in(snap):
            break
        t = snap["monotonic"]


def test_process_churn_leaves_nothing(mevitop):
    """Hundreds of short-lived processes while the whole system is watched: afterwards the
    engine's process set matches /proc, and its memory is back near its baseline."""
    mv = mevitop(["-i", "100"])
    base = mv.first
    churn = subprocess.run(["sh", "-c", "for i in $(seq 300); do /bin/true & echo $!; done; wait"],
                           check=True, capture_output=True, text=True)
    churned = {int(x) for x in churn.stdout.split()}
    assert len(churned) == 300
    t = time.monotonic()
    # Past the tombstone (2 s), nothing that exited may remain.
    while True:
        snap = mv.snapshot_after(t)
        if snap["monotonic"] > t + 3:
            break
    shown = {p["pid"] for p in snap["processes"] if p["state"] == "running"}
    missing_in_proc = [pid for pid in shown if not os.path.exists(f"/proc/{pid}")]
    assert not missing_in_proc, f"mevitop shows processes that no longer exist: {missing_in_proc}"
    assert all(p["state"] == "running" or p["pid"] not in shown for p in snap["processes"])
    live = set()
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != mv.proc.pid:
            try:
                if open(f"/proc/{d}/maps").read(1):
                    live.add(int(d))
            except OSError:
                pass
    # Every live user process is modelled (a few may have started in the last interval).
    assert len(live - shown) <= 3, f"not modelled: {sorted(live - shown)}"
    assert not churned & {p["pid"] for p in snap["processes"]}, "churned processes remain"
    # Memory outside the live processes' models is back to where it was: nothing leaked per
    # process that came and went (other processes on the machine may come and go too, which
    # is why the models of the live ones are taken out).
    def overhead(s):
        return s["stats"]["engine_bytes"] - sum(p["model_bytes"] for p in s["processes"])
    assert overhead(snap) <= overhead(base) + 64 * 1024, (overhead(base), overhead(snap))


def test_max_cpu_widens_the_interval(mevitop):
    """Trace mode applying ~10^5 events/s at a 10 ms interval costs well over 1% of a core:
    with --max-cpu 1 the interval is stretched, and the stats say so."""
    mv = mevitop(["-i", "10", "--mode", "trace", "--max-cpu", "1"])
    bench = subprocess.Popen([os.path.join(harness.BUILD, "bench", "faultbench"), "64", "200"],
                             stdout=subprocess.DEVNULL)
    try:
        s = harness.widened_interval(mv)
        assert s["interval_ms"] == 10 * s["stats"]["interval_scale"]
    finally:
        bench.kill()
        bench.wait()


def test_pid_reused_while_tombstoned(mevitop, workload):
    """A process exits and, while mevitop still shows it as exited, a new process gets the
    same pid (forced through /proc/sys/kernel/ns_last_pid): the new one is modelled."""
    mv = mevitop(["-i", "50", "--maps"])
    old = workload()
    pid = old.pid
    t, _ = old.do("map a 16")
    assert find_proc(mv.snapshot_after(t), pid)["state"] == "running"
    old.do("exit")
    for _ in range(100):
        p = find_proc(mv.snapshot(), pid)
        if p and p["state"] == "exited":
            break
    assert p and p["state"] == "exited", p
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(pid - 1))
    new = workload()
    assert new.pid == pid, "could not reuse the pid (another process took it)"
    new.do("map a 32")
    t, _ = new.do("touch a 0 32 1 w")
    snap = mv.snapshot_after(t)
    entry = find_proc(snap, pid)
    assert entry and entry["state"] == "running", entry
    assert_matches(snap, pid)
