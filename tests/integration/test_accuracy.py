"""Accuracy: after each behaviour, mevitop's model (--no-reconcile) equals /proc/PID/pagemap
read by the test, page for page: in trace mode with every forced fallback, and in sample mode
(the default) and chunk mode with the fallbacks that change their path."""
import os
import signal

import pytest

from harness import assert_matches, find_proc, pagemap_truth, read_maps, PAGE

# Each forced fallback runs the whole suite: default hooks, classic tracepoints instead of
# tp_btf, raw syscall hooks instead of per-syscall ones (via tp_btf and via tracefs), no
# tracefs at all, and pread instead of PAGEMAP_SCAN.
FALLBACKS = {
    "default": (),
    "no-tp_btf": ("tp_btf",),
    "no-syscall_tp": ("syscall_tp",),
    "raw_syscalls-tracefs": ("tp_btf", "syscall_tp"),
    "no-tracefs": ("tracefs",),
    "no-pagemap_scan": ("pagemap_scan",),
    # Sample and chunk modes follow layout changes with tp_btf/mmap_lock_released and no
    # syscall hook; forced off, they use the syscall records as trace mode does.
    "no-mmap_lock": ("mmap_lock",),
    # Layouts from the text of /proc/PID/maps alone, without the PROCMAP_QUERY ioctl for
    # names the text may have escaped.
    "no-procmap_query": ("procmap_query",),
    # Layouts by the PROCMAP_QUERY ioctl only, not the text first (the default until
    # 2026-12-04).
    "no-maps_text": ("maps_text",),
    # Counters from /proc/PID/stat and statm per process instead of the task iterator's pass.
    "no-task_iter": ("task_iter",),
    # Trace mode's user-mode faults in the shared events ring, not a ring per CPU merged in
    # by the records' stamps.
    "no-fault_rings": ("fault_rings",),
}


CONFIGS = [("trace", fb) for fb in FALLBACKS] + \
          [("sample", fb) for fb in ("default", "no-mmap_lock", "no-tp_btf", "no-pagemap_scan",
                                     "no-procmap_query", "no-maps_text", "no-task_iter")] + \
          [("chunk", fb) for fb in ("default", "no-mmap_lock", "no-tp_btf", "no-task_iter")]


@pytest.fixture(params=CONFIGS, ids=[f"{m}-{fb}" for m, fb in CONFIGS])
def disable(request):
    """(mode, switches) of one configuration."""
    mode, fb = request.param
    return mode, FALLBACKS[fb]


def layout_source(disable):
    """How the configuration must learn layout changes: sample and chunk modes from
    tp_btf/mmap_lock_released unless it is forced off, the others from syscall records."""
    mode, switches = disable
    hooked = mode in ("sample", "chunk") and not {"mmap_lock", "tp_btf"} & set(switches)
    return "mmap_lock" if hooked else "syscalls"


def watch(mevitop, wl, disable, extra=()):
    mode, switches = disable
    # --no-files: the page cache side (its BPF programs, the walk) is not what this checks,
    # and its start was ~14% of each case's time.
    mv = mevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", "--no-files", "--mode", mode,
                  *extra], switches)
    mv.want_layout = layout_source(disable)
    mv.want_rings = mode == "trace" and "fault_rings" not in switches
    return mv


def check(mv, wl, t, pids=None):
    """Waits for the first snapshot after t and compares every pid with pagemap; the model
    must have needed no healing (drift 0) and no event may have been lost."""
    snap = mv.snapshot_after(t)
    for pid in pids or [wl.pid]:
        assert_matches(snap, pid)
    assert snap["stats"]["lost"] == 0, snap["stats"]
    assert snap["stats"]["drift_pages"] == 0, snap["stats"]
    assert snap["stats"]["layout_source"] == mv.want_layout, snap["stats"]
    assert snap["stats"]["fault_rings"] == mv.want_rings, snap["stats"]
    return snap


def run(mevitop, workload, disable, cmds, check_states=None):
    wl = workload()
    mv = watch(mevitop, wl, disable)
    t = 0
    for c in cmds:
        t, _ = wl.do(c)
    snap = check(mv, wl, t)
    if check_states:
        check_states(wl, find_proc(snap, wl.pid))
    return wl, mv, snap


def region_states(entry, base, pages):
    """Per page of [base, base+pages), the model's state."""
    out = ["not_resident"] * pages
    for m in entry["mappings"]:
        for r in m["runs"]:
            s, e = int(r["start"], 16), int(r["end"], 16)
            for a in range(max(s, base), min(e, base + pages * PAGE), PAGE):
                out[(a - base) // PAGE] = r["state"]
    return out


def test_sparse_writes_and_reads(mevitop, workload, disable):
    def states(wl, entry):
        st = region_states(entry, wl.region("a"), 256)
        # Written every 3rd page, read (zero page) every 5th; the rest untouched.
        for i in range(256):
            want = "resident" if i % 3 == 0 or i % 5 == 1 else "not_resident"
            assert st[i] == want, f"page {i}"
    run(mevitop, workload, disable,
        ["map a 256", "touch a 0 256 3 w", "touch a 1 255 5 r"], states)


def test_faults_on_two_cpus_around_remaps(mevitop, workload, disable):
    """A thread on one CPU maps fresh memory over the region, a thread on the other writes a
    different stride of it each round: the faults and the mapping records come from two
    CPUs (in trace mode, two fault rings and the events ring), and only the last round's
    pages are resident.  A fault applied on the wrong side of a mapping record leaves a
    page too many, or too few."""
    rounds = 40

    def states(wl, entry):
        stride = (rounds - 1) % 5 + 2
        want = ["resident" if i % stride == 0 else "not_resident" for i in range(512)]
        assert region_states(entry, wl.region("a"), 512) == want
    run(mevitop, workload, disable, ["map a 512", f"crosscpu a {rounds}"], states)


def test_partial_munmap(mevitop, workload, disable):
    def states(wl, entry):
        base = wl.region("a")
        assert all(int(m["end"], 16) <= base + 16 * PAGE or int(m["start"], 16) >= base + 32 * PAGE
                   for m in entry["mappings"]), "the hole is still mapped"
    run(mevitop, workload, disable, ["map a 64", "touch a 0 64 1 w", "unmap a 16 16"], states)


def test_madv_dontneed_subrange(mevitop, workload, disable):
    def states(wl, entry):
        st = region_states(entry, wl.region("a"), 64)
        assert st[10:30] == ["not_resident"] * 20 and st[:10] == ["resident"] * 10
    run(mevitop, workload, disable,
        ["map a 64", "touch a 0 64 1 w", "advise a 10 20 dontneed"], states)


def test_mremap_grow_and_move(mevitop, workload, disable):
    def states(wl, entry):
        st = region_states(entry, wl.region("a"), 128)
        assert st[:32] == ["resident"] * 32 and st[32:40] == ["not_resident"] * 8
        assert st[40:48] == ["resident"] * 8 and st[48:] == ["not_resident"] * 80
    run(mevitop, workload, disable,
        ["map a 32", "touch a 0 32 1 w", "remap a 64 grow", "touch a 40 8 1 w",
         "remap a 128 move"], states)


def test_layout_changes_of_the_same_size(mevitop, workload, disable):
    """mprotect, and a move to a fresh place of the same size, change no counter of
    /proc/PID/stat (size, rss, faults): only the layout source -- the mmap_lock hook or the
    syscall records -- can tell the engine.  Each step is checked in a snapshot of its own,
    so no earlier change's layout read can pick it up.  The mappings must equal the
    kernel's."""
    wl = workload()
    mv = watch(mevitop, wl, disable)

    def layout_of_a(snap):
        base = wl.region("a")
        end = base + 32 * PAGE

        def inside(spans):
            return [(max(s, base), min(e, end), perms) for s, e, perms in spans
                    if s < end and e > base]
        model = inside((int(m["start"], 16), int(m["end"], 16), m["perms"])
                       for m in find_proc(snap, wl.pid)["mappings"])
        kernel = inside((s, e, perms) for s, e, perms, _path in read_maps(wl.pid))
        assert model == kernel
        return [(s - base, e - base, perms) for s, e, perms in model]

    wl.do("map a 32")
    t, _ = wl.do("touch a 0 32 1 w")
    assert layout_of_a(check(mv, wl, t)) == [(0, 32 * PAGE, "rw-p")]
    t, _ = wl.do("protect a 0 8 r")
    want = [(0, 8 * PAGE, "r--p"), (8 * PAGE, 32 * PAGE, "rw-p")]
    assert layout_of_a(check(mv, wl, t)) == want
    t, _ = wl.do("remap a 32 move")
    assert layout_of_a(check(mv, wl, t)) == want


def test_brk_up_and_down(mevitop, workload, disable):
    run(mevitop, workload, disable,
        ["brk 64", "brktouch 32", "brk -16", "brktouch 8", "brk 8", "brktouch 2"])


def test_threads_fault_one_region(mevitop, workload, disable):
    def states(wl, entry):
        assert region_states(entry, wl.region("a"), 2048) == ["resident"] * 2048
    run(mevitop, workload, disable, ["map a 2048", "threads a 4 0 2048"], states)


def test_shared_file_fault_around(mevitop, workload, disable, datafile):
    path = datafile(256)

    def states(wl, entry):
        st = region_states(entry, wl.region("f"), 256)
        # Read faults every 17 pages map their 64 KiB fault-around windows: more pages are
        # resident than were touched, and mevitop knows exactly which.
        assert st.count("resident") > 256 // 17 + 1
    run(mevitop, workload, disable,
        [f"map f 256 sharedfile={path}", "touch f 0 256 17 r"], states)


def test_file_large_folios(mevitop, workload, disable, datafile):
    """Page cache in large folios: a read fault, and a write fault on a shared mapping, map
    the whole folio (within the VMA and the PMD), well beyond the fault-around window.  A
    private write fault copies one page.  (Found on a fresh install, where libc's page cache
    came from dpkg's large writes.)"""
    path = datafile(1024, one_write=True)

    def states(wl, entry):
        st = region_states(entry, wl.region("f"), 1024)
        assert st.count("resident") > 3 * 16, \
            f"only {st.count('resident')} pages resident: no large folio was mapped here"
        assert region_states(entry, wl.region("c"), 1024).count("resident") == 1
    run(mevitop, workload, disable,
        [f"map f 1024 sharedfile={path}", "touch f 100 1 1 r", "touch f 700 1 1 w",
         f"map c 1024 file={path}", "touch c 300 1 1 w"], states)


def test_madv_pageout_file(mevitop, workload, disable, datafile):
    path = datafile(128)

    # The model is compared with pagemap page for page (check()); this only makes sure the
    # pageout happened.  MADV_PAGEOUT is best effort: a folio someone else holds locked or
    # isolated at that moment stays (CI saw 1 of 64 once), so most, not all, must go.
    def states(wl, entry):
        st = region_states(entry, wl.region("f"), 128)
        assert st[:64].count("not_resident") >= 56 and "resident" in st[64:], st
    run(mevitop, workload, disable,
        [f"map f 128 sharedfile={path}", "touch f 0 128 1 r", "advise f 0 64 pageout"], states)


def test_populate(mevitop, workload, disable):
    def states(wl, entry):
        assert region_states(entry, wl.region("p"), 64) == ["resident"] * 64
        st = region_states(entry, wl.region("q"), 64)
        assert st[8:24] == ["resident"] * 16 and st.count("resident") == 16
    run(mevitop, workload, disable,
        ["map p 64 populate", "map q 64", "advise q 8 16 populate_write"], states)


def test_read_into_fresh_pages(mevitop, workload, disable, datafile):
    path = datafile(32)

    def states(wl, entry):
        st = region_states(entry, wl.region("r"), 64)
        assert st[:32] == ["resident"] * 32 and st[32:] == ["not_resident"] * 32
    run(mevitop, workload, disable, ["map r 64", f"readfile r 0 32 {path}"], states)


def thp_available():
    try:
        return "[never]" not in open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        return False


@pytest.mark.skipif(not thp_available(), reason="transparent huge pages are disabled here")
def test_thp_madv_hugepage(mevitop, workload, disable):
    def states(wl, entry):
        st = region_states(entry, wl.region("h"), 1024)
        # One write fault in the first 2 MiB maps all 512 pages when a THP is available;
        # either way mevitop must agree with pagemap (checked above).
        assert st[0] == "resident"
    run(mevitop, workload, disable,
        ["map h 1024 hugepage align2m", "touch h 0 1 1 w", "touch h 700 1 1 r"], states)


MTHP_64K = "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"


@pytest.fixture
def mthp_64k():
    """Multi-size THP: 64 KiB folios for every anonymous mapping, while the test runs
    (set before mevitop starts: it probes the THP settings once)."""
    if not os.path.exists(MTHP_64K):
        pytest.fail(f"{MTHP_64K} is missing: this kernel has no multi-size THP (6.8+)")
    with open(MTHP_64K) as f:
        old = f.read().split("[")[1].split("]")[0]
    with open(MTHP_64K, "w") as f:
        f.write("always")
    yield
    with open(MTHP_64K, "w") as f:
        f.write(old)


def test_multi_size_thp(mevitop, workload, disable, mthp_64k):
    def states(wl, entry):
        st = region_states(entry, wl.region("m"), 256)
        # Each write fault maps a 64 KiB folio: 16 pages per touched page.
        assert st.count("resident") == 8 * 16, st.count("resident")
        # MADV_POPULATE_WRITE of pages 8..23 populates the two folios they touch, 0..31.
        st = region_states(entry, wl.region("q"), 256)
        assert st[:32] == ["resident"] * 32 and st.count("resident") == 32, st
    run(mevitop, workload, disable,
        ["map m 256 align2m", "touch m 0 256 32 w",
         "map q 256 align2m", "advise q 8 16 populate_write"], states)


def test_fork_copy_on_write(mevitop, workload, disable):
    wl = workload()
    mv = watch(mevitop, wl, disable)
    wl.do("map a 64")
    wl.do("touch a 0 64 1 w")
    t, extra = wl.do("fork a 0 16")
    child = int(extra[0])
    try:
        snap = check(mv, wl, t, pids=[wl.pid, child])
        assert find_proc(snap, child)["state"] == "running"
    finally:
        os.kill(child, signal.SIGKILL)


def test_exec(mevitop, workload, disable):
    wl = workload()
    mv = watch(mevitop, wl, disable)
    wl.do("map a 64")
    wl.do("touch a 0 64 1 w")
    t, _ = wl.do("exec")
    t, _ = wl.do("map b 16")
    t, _ = wl.do("touch b 0 8 1 w")
    check(mv, wl, t)


def test_exit_is_reported(mevitop, workload, disable):
    wl = workload()
    mv = watch(mevitop, wl, disable)
    wl.do("map a 16")
    wl.do("exit")
    wl.proc.wait(timeout=10)
    # The last snapshots show it exited; then mevitop exits 0 on its own: nothing is left.
    seen_exit = False
    while True:
        try:
            s = mv.snapshot()
        except EOFError:
            break
        p = find_proc(s, wl.pid)
        seen_exit |= bool(p and p["state"] == "exited")
    assert mv.proc.wait(timeout=10) == 0
    assert seen_exit
    assert f"process {wl.pid}" in mv.stderr_text() and "exited" in mv.stderr_text()


# Watching the whole box (every process's maps every 50 ms) is the suite's heaviest test; the
# fallbacks that change nothing for the whole system but a hook's attach point are covered
# per process above.  These change what the whole system is built from: the default of each
# mode, the /proc path instead of the task iterator's pass, maps text instead of
# PROCMAP_QUERY, and the syscall records instead of mmap_lock.
WHOLE_SYSTEM = [("trace", "default"), ("trace", "no-task_iter"), ("sample", "default"),
                ("sample", "no-task_iter"), ("sample", "no-procmap_query"),
                ("sample", "no-mmap_lock"), ("chunk", "default")]


@pytest.mark.parametrize("mode,fb", WHOLE_SYSTEM, ids=[f"{m}-{fb}" for m, fb in WHOLE_SYSTEM])
def test_whole_system_several_processes(mevitop, workload, mode, fb):
    disable = (mode, FALLBACKS[fb])
    switches = disable[1]
    mv = mevitop(["-i", "50", "--no-reconcile", "--maps", "--mode", mode], switches)
    mv.want_layout = layout_source(disable)
    wls = [workload() for _ in range(3)]
    t = 0
    for i, wl in enumerate(wls):
        wl.do(f"map a {64 * (i + 1)}")
        t, _ = wl.do(f"touch a 0 {64 * (i + 1)} {i + 1} w")
    snap = mv.snapshot_after(t)
    assert snap["stats"]["layout_source"] == mv.want_layout, snap["stats"]
    for wl in wls:
        assert_matches(snap, wl.pid, f"(workload {wl.pid})")
    # Processes that started after mevitop appear; exited ones disappear.
    wls[0].do("exit")
    wls[0].proc.wait(timeout=10)
    gone_seen = False
    deadline_snaps = 200
    while deadline_snaps:
        s = mv.snapshot()
        p = find_proc(s, wls[0].pid)
        if p is None:
            gone_seen = True
            break
        deadline_snaps -= 1
    assert gone_seen, "an exited process stayed after its tombstone"
