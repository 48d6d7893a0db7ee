"""--stacks: who first touched each region, named from the real fault hook's user stacks.

The workload (tests/workloads/wl_stacks.c) has one function per region (touch_a, touch_b,
touch_c, and wl_lib_touch in a shared library it dlopens), each region its own 2 MiB chunk,
reached through main -> run_cmd -> caller_X -> touch_X.  It is built without frame pointers
(wl_stacks) and with them (wl_stacks_fp).  The truth is the workload's own call graph and
pagemap, read by the test: every region's resident pages must be attributed, all of them,
to the right function; with frame pointers to the whole caller chain; never a wrong name.
"""
import json
import os
import shutil
import subprocess

import pytest

import harness
from harness import find_proc, pagemap_truth, PAGE
from test_exact import procs  # noqa: F401 (the fixture: stops what a test started)

LIB = os.path.join(harness.WORKLOADS, "libwl_touch.so")
# What each region's toucher is, and its callers up to main (the source's call graph).
CHAIN = {
    "a": ["touch_a", "caller_a", "run_cmd", "main"],
    "b": ["touch_b", "caller_b", "run_cmd", "main"],
    "c": ["touch_c", "caller_c", "run_cmd", "main"],
    "lib": ["wl_lib_touch", "caller_lib", "run_cmd", "main"],
}
PAGES = {"a": 10, "b": 20, "c": 30, "lib": 5, "newmap": 64}
# Callers above main that a frame-pointer walk may reach (glibc's start-up code).
ABOVE_MAIN = {"__libc_start_call_main", "__libc_start_main", "_start"}


def mapping_at(entry, addr):
    for m in entry["mappings"]:
        if int(m["start"], 16) <= addr < int(m["end"], 16):
            return m
    raise AssertionError(f"no mapping at {addr:#x}")


def resident_in(pid, start, end):
    truth = pagemap_truth(pid)
    return sum(1 for pg in range(start // PAGE, end // PAGE) if truth.get(pg) == "resident")


def touch_regions(w, mv, which=("a", "b", "c", "lib")):
    """Touches each region; returns ({region: address}, the snapshot after the last)."""
    addrs, t = {}, 0
    for r in which:
        t, extra = w.do(f"touch {r} {PAGES[r]}")
        addrs[r] = int(extra[0], 16)
    return addrs, mv.snapshot_after(t)


def check_no_wrong_name(frames, chain):
    """Every named frame is the true function at its depth; a chain may stop early (no
    trustworthy frame pointer) but never skip or invent a caller."""
    for depth, f in enumerate(frames):
        if f["name"] == "[unknown]":
            assert "function" not in f
            continue
        fn = f["function"]
        if depth < len(chain):
            assert fn == chain[depth], f"frame {depth} is {fn}, the code says {chain[depth]}"
        else:
            assert fn in ABOVE_MAIN, f"frame {depth} above main is {fn}"


def attributed(entry, addr, pid, region):
    """The region's mapping has exactly one first-touch stack, accounting for every page
    pagemap shows resident there; returns its frames."""
    m = mapping_at(entry, addr)
    ft = m["first_touch"]
    truth = resident_in(pid, addr, addr + (2 << 20))
    assert truth == PAGES[region]
    assert len(ft) == 1, f"region {region}: {ft}"
    assert ft[0]["pages"] == truth
    return ft[0]


# Sample mode samples page faults through a perf software event; with a period of 1 and the
# event always open (the default duty cycle closes it most of the time) every fault is a
# sample, so its attribution is as exact as the fault hook's.
ALWAYS_OPEN = ["--stack-duty", "3600000/3600000"]
MODES = {"trace": ["--mode", "trace"], "chunk": ["--mode", "chunk"],
         "sample": ["--mode", "sample", "--stack-period", "1", *ALWAYS_OPEN]}


@pytest.mark.parametrize("mode", MODES)
def test_frame_pointers_name_the_whole_chain(workload, mevitop, mode):
    w = workload("wl_stacks_fp", [LIB])
    mv = mevitop([*MODES[mode], "--stacks", "-p", str(w.pid), "-i", "200"])
    addrs, snap = touch_regions(w, mv)
    entry = find_proc(snap, w.pid)
    for r, addr in addrs.items():
        st = attributed(entry, addr, w.pid, r)
        names = [f.get("function") for f in st["frames"]]
        assert st["unwind"] == "fp"
        assert names[:4] == CHAIN[r], f"region {r}: {names}"
        check_no_wrong_name(st["frames"], CHAIN[r])
        assert st["frames"][0]["module"] == ("libwl_touch.so" if r == "lib" else "wl_stacks_fp")
        assert st["frames"][0]["name"].startswith(CHAIN[r][0] + "+0x")
        assert st["frames"][0]["file"].endswith("wl_touch.c" if r == "lib" else "wl_stacks.c")
    stats = snap["stats"]["stacks"]
    assert stats["samples"] >= 4 and stats["lost"] == 0
    assert stats["sample_period"] == (1 if mode == "sample" else 0)
    assert stats["attribution"].startswith("statistical") == (mode == "sample")


def test_sample_mode_is_statistical_and_never_wrong(workload, mevitop):
    """The default period: some regions get a sample, some not; a named one is right."""
    w = workload("wl_stacks_fp", [LIB])
    mv = mevitop(["--stacks", "-p", str(w.pid), "-i", "200"])
    for r in ("a", "b", "c"):
        w.do(f"touch {r} 512")
    addrs, snap = touch_regions(w, mv)
    entry = find_proc(snap, w.pid)
    assert snap["mode"] == "sample"
    assert snap["stats"]["stacks"]["sample_period"] == 251
    for r, addr in addrs.items():
        for ft in mapping_at(entry, addr)["first_touch"]:
            check_no_wrong_name(ft["frames"], CHAIN[r])
            assert ft["pages"] <= resident_in(w.pid, addr, addr + (2 << 20))


def wait_stats(mv, ok):
    """The first snapshot whose stats.stacks satisfy ok."""
    import time
    deadline = time.monotonic() + harness.GUARD_S
    while True:
        snap = mv.snapshot()
        if ok(snap["stats"]["stacks"]):
            return snap
        assert time.monotonic() < deadline, snap["stats"]["stacks"]


def test_closed_window_takes_no_stack(workload, mevitop):
    """--stack-duty ON/EVERY: between windows the perf events are closed, so a fault takes
    no sample even at period 1.  One 300 ms window at start, the next in an hour: once the
    stats say it closed, 60 pages touched by three functions get no stack at all."""
    w = workload("wl_stacks_fp", [LIB])
    mv = mevitop(["--mode", "sample", "--stacks", "--stack-period", "1", "--stack-duty",
                  "300/3600000", "-p", str(w.pid), "-i", "100"])
    before = wait_stats(mv, lambda st: st["windows"] == 1 and not st["window_open"])
    before = before["stats"]["stacks"]
    assert (before["duty_on_ms"], before["duty_every_ms"]) == (300, 3600000)
    addrs, snap = touch_regions(w, mv, ("a", "b", "c"))
    stats = snap["stats"]["stacks"]
    assert stats["samples"] == before["samples"], stats
    assert stats["windows"] == 1 and not stats["window_open"]
    entry = find_proc(snap, w.pid)
    for r, addr in addrs.items():
        assert resident_in(w.pid, addr, addr + (2 << 20)) == PAGES[r]
        assert mapping_at(entry, addr)["first_touch"] == [], r
    assert mv.stop() == 0


def test_windows_reopen_and_period_is_honoured(workload, mevitop):
    """A 100 ms window every 200 ms opens again and again; with the events always open and
    a period no fault count reaches, touched regions get no stack; at period 1 (the other
    sample-mode tests) every one of their pages does."""
    w = workload("wl_stacks_fp", [LIB])
    mv = mevitop(["--mode", "sample", "--stacks", "--stack-duty", "100/200", "-p",
                  str(w.pid), "-i", "100"])
    snap = wait_stats(mv, lambda st: st["windows"] >= 4)
    assert snap["stats"]["stacks"]["attribution"].startswith("statistical")
    assert mv.stop() == 0
    mv = mevitop(["--mode", "sample", "--stacks", "--stack-period", str(1 << 30),
                  *ALWAYS_OPEN, "-p", str(w.pid), "-i", "100"])
    addrs, snap = touch_regions(w, mv, ("a", "b", "c"))
    stats = snap["stats"]["stacks"]
    assert stats["samples"] == 0 and stats["windows"] == 1 and stats["window_open"], stats
    entry = find_proc(snap, w.pid)
    for r, addr in addrs.items():
        assert mapping_at(entry, addr)["first_touch"] == [], r
    assert mv.stop() == 0


def test_without_frame_pointers_the_ip_is_right(workload, mevitop):
    w = workload("wl_stacks", [LIB])
    mv = mevitop(["--mode", "trace", "--stacks", "-p", str(w.pid), "-i", "200"])
    addrs, snap = touch_regions(w, mv)
    entry = find_proc(snap, w.pid)
    for r, addr in addrs.items():
        st = attributed(entry, addr, w.pid, r)
        assert st["frames"][0]["function"] == CHAIN[r][0]
        check_no_wrong_name(st["frames"], CHAIN[r])
        assert st["unwind"] == ("fp" if len(st["frames"]) > 1 else "ip")


def test_stripped_binary_is_unknown_library_still_named(workload, mevitop, tmp_path):
    exe = tmp_path / "wl_stripped"
    subprocess.run(["strip", "-o", str(exe), os.path.join(harness.WORKLOADS, "wl_stacks_fp")],
                   check=True)
    shutil.copy(LIB, tmp_path / "libwl_touch.so")
    w = workload(str(exe), [str(tmp_path / "libwl_touch.so")])
    mv = mevitop(["--mode", "trace", "--stacks", "-p", str(w.pid), "-i", "200"])
    addrs, snap = touch_regions(w, mv, ("a", "lib"))
    entry = find_proc(snap, w.pid)
    a = attributed(entry, addrs["a"], w.pid, "a")
    assert a["frames"][0]["name"] == "[unknown]"
    assert a["frames"][0]["module"] == "wl_stripped"
    assert all(f["name"] == "[unknown]" or f["function"] in ABOVE_MAIN for f in a["frames"])
    lib = attributed(entry, addrs["lib"], w.pid, "lib")
    assert lib["frames"][0]["function"] == "wl_lib_touch"
    # Its caller is in the stripped binary: unnamed, not guessed.
    for f in lib["frames"][1:]:
        assert f["name"] == "[unknown]" or f["function"] in ABOVE_MAIN


def test_deleted_binary_never_a_wrong_name(workload, mevitop, tmp_path):
    exe = tmp_path / "wl_deleted"
    shutil.copy(os.path.join(harness.WORKLOADS, "wl_stacks_fp"), exe)
    w = workload(str(exe), [LIB])
    os.unlink(exe)
    # Something else at the same path must not be read in its place.
    shutil.copy(os.path.join(harness.WORKLOADS, "wl"), exe)
    mv = mevitop(["--mode", "trace", "--stacks", "-p", str(w.pid), "-i", "200"])
    addrs, snap = touch_regions(w, mv, ("a", "lib"))
    entry = find_proc(snap, w.pid)
    a = attributed(entry, addrs["a"], w.pid, "a")
    check_no_wrong_name(a["frames"], CHAIN["a"])
    lib = attributed(entry, addrs["lib"], w.pid, "lib")
    assert lib["frames"][0]["function"] == "wl_lib_touch"
    check_no_wrong_name(lib["frames"], CHAIN["lib"])


def test_process_exiting_at_once(mevitop, tmp_path):
    """Started after mevitop (--comm), it touches and exits before the next drain: mevitop
    keeps running, and whatever it names is right."""
    name = f"wlx{os.getpid() % 100000}"
    exe = tmp_path / name
    shutil.copy(os.path.join(harness.WORKLOADS, "wl_stacks_fp"), exe)
    mv = mevitop(["--mode", "trace", "--stacks", "--comm", name, "--maps", "-i", "100"])
    p = subprocess.run([str(exe), LIB, "touch-exit"], timeout=harness.GUARD_S)
    assert p.returncode == 0
    for _ in range(5):
        snap = mv.snapshot()
    assert mv.proc.poll() is None
    # touch-exit calls main -> caller_a -> touch_a; the loader and libc touch the rest.
    chain = ["touch_a", "caller_a", "main"]
    for proc in snap["processes"]:
        for m in proc.get("mappings", []):
            for ft in m.get("first_touch", []):
                if ft["frames"][0].get("function") == "touch_a":
                    check_no_wrong_name(ft["frames"], chain)
                else:
                    assert not {"touch_a", "caller_a"} & {f.get("function") for f in ft["frames"]}
    assert mv.stop() == 0


@pytest.mark.parametrize("mode", MODES)
def test_process_joining_a_filter_keeps_its_first_stacks(workload, mevitop, tmp_path, mode):
    """Started after mevitop and watched through --comm, it touches region a (a page a
    millisecond) before it says ready, while mevitop learns of it and reads its layout: a
    stack taken before that waits for it (user/stacks/early_stacks.h), so all 64 pages are
    touch_a's.  (How early the layout is read here is up to the scheduler: the test that
    must fail without the wait is the next one.)"""
    name = f"wlj{os.getpid() % 100000}"
    exe = tmp_path / name
    shutil.copy(os.path.join(harness.WORKLOADS, "wl_stacks_fp"), exe)
    mv = mevitop([*MODES[mode], "--stacks", "--comm", name, "--maps", "-i", "200"])
    w = workload(str(exe), [LIB, "touch-first"])
    t, extra = w.do("touch a 0")
    a = int(extra[0], 16)
    import time
    deadline = time.monotonic() + harness.GUARD_S
    snap = mv.snapshot_after(t)
    while time.monotonic() < deadline:
        entry = find_proc(snap, w.pid)
        if entry and sum(f["pages"] for f in mapping_at(entry, a)["first_touch"]) >= 64:
            break
        snap = mv.snapshot()
    assert resident_in(w.pid, a, a + (2 << 20)) == 64
    ft = mapping_at(find_proc(snap, w.pid), a)["first_touch"]
    assert len(ft) == 1 and ft[0]["pages"] == 64, ft
    names = [f.get("function") for f in ft[0]["frames"]]
    assert names[:3] == ["touch_a", "caller_a", "main"], names


@pytest.mark.parametrize("mode", MODES)
def test_new_mapping_touched_at_once_keeps_its_stack(workload, mevitop, mode):
    """A mapping made and touched at once: chunk and sample mode read the new layout at the
    next tick, after the fault's stack arrived; the stack waits for it (it used to be
    dropped, and the chunk's rate limit took no other), so its 64 pages are touch_a's."""
    w = workload("wl_stacks_fp", [LIB])
    mv = mevitop([*MODES[mode], "--stacks", "-p", str(w.pid), "-i", "200"])
    t, extra = w.do("newmap 64")
    a = int(extra[0], 16)
    import time
    deadline = time.monotonic() + harness.GUARD_S
    snap = mv.snapshot_after(t)
    while time.monotonic() < deadline:
        m = [m for m in find_proc(snap, w.pid)["mappings"]
             if int(m["start"], 16) <= a < int(m["end"], 16)]
        if m and sum(f["pages"] for f in m[0]["first_touch"]) >= 64:
            break
        snap = mv.snapshot()
    st = attributed(find_proc(snap, w.pid), a, w.pid, "newmap")
    assert [f.get("function") for f in st["frames"]][:4] == CHAIN["a"], st


def test_folded_weights_by_resident_pages(workload):
    w = workload("wl_stacks_fp", [LIB])
    env = dict(os.environ, **harness.SAN_ENV)
    cmd = [harness.MEVITOP, "--mode", "trace", "--folded", "-v", "-p", str(w.pid), "-i", "100"]
    mv = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    # --folded prints nothing until exit; -v says when it is ready (where --json's first
    # line would be): the touches must come after.
    err = harness.Reader(mv.stderr, "mevitop-stderr")
    while "folded stacks are printed at exit" not in err.get(what="mevitop ready"):
        pass
    for r in ("a", "b"):
        w.do(f"touch {r} {PAGES[r]}")
    w.do("exit")
    out = mv.stdout.read().decode()
    assert mv.wait(timeout=harness.GUARD_S) == 0, "\n".join(err.all)
    # Folded: "comm;outermost;...;innermost PAGES", the process exited by now: its stacks
    # were named from what mevitop knew of its layout.
    lines = dict(l.rsplit(" ", 1) for l in out.splitlines())
    for r in ("a", "b"):
        suffix = ";" + ";".join(reversed(CHAIN[r]))
        hits = [k for k in lines if k.startswith("wl_stacks_fp;") and k.endswith(suffix)]
        assert len(hits) == 1, out
        assert int(lines[hits[0]]) == PAGES[r]


class StacksFifo:
    """wl_stacks_fp through FIFOs, so that `mevitop run` can start it (test_exact's
    FifoWorkload with this workload and its library)."""

    def __new__(cls, tmp_path):
        from test_exact import FifoWorkload
        w = FifoWorkload(tmp_path)
        w.argv = ["sh", "-c", 'exec "$0" "$3" <"$1" >"$2"',
                  os.path.join(harness.WORKLOADS, "wl_stacks_fp"), w.inp, w.outp, LIB]
        return w


def start_exact(procs, workload, tmp_path, how):
    """wl_stacks_fp under --exact=ordered --stacks: attached (-p) or started (run)."""
    from test_exact import ExactMevitop
    args = ["--exact=ordered", "--stacks", "-i", "100"]
    if how == "run":
        w = StacksFifo(tmp_path)
        procs.append(w)
        mv = ExactMevitop(args, run=w.argv)
        procs.append(mv)
        w.connect()
        # The regions were mapped just before "ready": a page touched before mevitop
        # registered its mapping is counted as there before (prereg_pages), no first
        # touch and so no stack.  Touch only once userfaultfd tracks every region.
        regions = [int(w.do(f"touch {r} 0")[1][0], 16) for r in CHAIN]
        snap = mv.snapshot()
        while not all(mapping_at(find_proc(snap, w.pid), a)["tracker"] == "userfaultfd"
                      for a in regions):
            snap = mv.snapshot()
    else:
        w = workload("wl_stacks_fp", [LIB])
        mv = ExactMevitop(["-p", str(w.pid), *args])
        procs.append(mv)
    return w, mv


def exact_snapshot(mv, pid, t, want):
    """Exact mode applies first touches a drain or two after they were read: snapshots
    from t on until the first touches attributed in each mapping at an address of `want`
    ({address: pages}) add up to those pages (or the guard time ends)."""
    import time
    snap = mv.snapshot_after(t)
    deadline = time.monotonic() + harness.GUARD_S
    while time.monotonic() < deadline:
        entry = find_proc(snap, pid)
        if all(sum(f["pages"] for f in mapping_at(entry, a)["first_touch"]) >= n
               for a, n in want.items()):
            break
        snap = mv.snapshot()
    return snap


@pytest.mark.parametrize("how", ["attach", "run"])
def test_exact_ordered_every_first_touch_has_its_stack(procs, workload, tmp_path, how):
    """Exact mode sees every first touch: each region's every page goes to its toucher,
    with the whole caller chain, from the stack of the very fault that touched it."""
    w, mv = start_exact(procs, workload, tmp_path, how)
    addrs, snap = touch_regions(w, mv)
    snap = exact_snapshot(mv, w.pid, 0, {addrs[r]: PAGES[r] for r in addrs})
    entry = find_proc(snap, w.pid)
    for r, addr in addrs.items():
        st = attributed(entry, addr, w.pid, r)
        names = [f.get("function") for f in st["frames"]]
        assert st["unwind"] == "fp" and st["tid"] == w.pid
        assert names[:4] == CHAIN[r], f"region {r}: {names}"
        check_no_wrong_name(st["frames"], CHAIN[r])
    stats = snap["stats"]["stacks"]
    assert stats["attribution"].startswith("exact")
    assert stats["interval_ms"] == 0 and stats["sample_period"] == 0
    assert stats["joined"] >= sum(PAGES[r] for r in addrs) and stats["lost"] == 0
    assert stats["first_touches"] == snap["stats"]["exact"]["touches"]


def test_exact_ordered_a_page_touched_anew_changes_hands(procs, workload, tmp_path):
    """touch_a writes 10 pages, 6 are freed, touch_b writes 3 of them again: per page, 3 go
    to touch_b, the 4 still resident from the first touch stay touch_a's (pagemap says
    which are resident)."""
    w, mv = start_exact(procs, workload, tmp_path, "attach")
    _, extra = w.do("touch a 10")
    a = int(extra[0], 16)
    w.do("free a 6")
    t, _ = w.do("touch b 3 a")
    snap = exact_snapshot(mv, w.pid, t, {a: 7})
    truth = pagemap_truth(w.pid)
    resident = [pg - a // PAGE for pg in range(a // PAGE, a // PAGE + 512)
                if truth.get(pg) == "resident"]
    assert resident == [0, 1, 2, 6, 7, 8, 9]
    ft = mapping_at(find_proc(snap, w.pid), a)["first_touch"]
    got = [(f["pages"], [fr.get("function") for fr in f["frames"]][:2]) for f in ft]
    assert got == [(4, ["touch_a", "caller_a"]), (3, ["touch_b", "caller_b"])], ft


def test_stack_walk_faults_are_no_faults():
    """Exact mode sends a stack at every fault of a watched process.  The fault loop
    (bench/faultbench, -O2: no frame pointers) leaves %rbp pointing at pages it has not
    touched yet, so the stack walk itself faults on them, in kernel mode with page faults
    disabled: faults the kernel never handles, which used to count as faults and sent a
    second stack for each of the loop's (2x the pages).  Now: one stack per fault, the
    loop's pages plus the few of its start-up."""
    env = dict(os.environ, **harness.SAN_ENV)
    p = subprocess.run([harness.MEVITOP, "run", "--exact=ordered", "--stacks", "--json", "-i",
                        "100", "--", os.path.join(harness.BUILD, "bench", "faultbench"), "8",
                        "1", "1"], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    pages = next(d["pages"] for d in lines if "pages" in d)   # CMD's own line
    stats = [d for d in lines if "stats" in d][-1]["stats"]["stacks"]
    assert pages == 2048
    assert stats["lost"] == 0
    assert pages <= stats["samples"] <= pages + 400, stats


def test_stacks_bad_input():
    env = dict(os.environ, **harness.SAN_ENV)
    fast = "--stacks in exact mode needs --exact=ordered"
    for args, want in ((["--exact", "-p", "1", "--stacks"], fast),
                       (["--exact=fast", "-p", "1", "--stacks"], fast),
                       (["run", "--folded", "--", "true"], "--folded does not apply to exact mode"),
                       (["--stacks", "--stack-period", "0"], "invalid --stack-period '0'"),
                       (["--stacks", "--stack-interval", "x"], "invalid --stack-interval 'x'"),
                       (["--stacks", "--stack-duty", "100"], "invalid --stack-duty '100'"),
                       (["--stacks", "--stack-duty", "0/10"], "invalid --stack-duty '0/10'"),
                       (["--stacks", "--stack-duty", "20/10"], "invalid --stack-duty '20/10'"),
                       (["--stacks", "--stack-duty", "1/x"], "invalid --stack-duty '1/x'")):
        p = subprocess.run([harness.MEVITOP, *args], capture_output=True, text=True,
                           timeout=30, env=env)
        assert p.returncode == 2, args
        lines = p.stderr.splitlines()
        assert lines[0].startswith("mevitop: " + want), p.stderr


@pytest.fixture
def screen(tmp_path):
    from test_ui import Screen
    made = []

    def make():
        s = Screen(tmp_path, "stacks")
        made.append(s)
        return s
    yield make
    for s in made:
        s.kill()


def test_heatmap_cursor_and_pane_say_who(screen, workload):
    from test_ui import assert_clean_exit
    w = workload("wl_stacks_fp", [LIB])
    _, extra = w.do("touch a 0")        # touches nothing: the region's address
    a = int(extra[0], 16)
    scr = screen()
    scr.start(["--mode", "trace", "--stacks", "-p", str(w.pid), "-i", "100", "--layout", "labels"])
    scr.wait_for(f"{a:012x}-{a + (2 << 20):012x} rw-p anon")   # attached and scanned
    w.do(f"touch a {PAGES['a']}")
    scr.keys("g")
    scr.type(f"{a:x}")
    scr.keys("Enter")
    chain = " \u2190 ".join(f"{fn}+0x" for fn in CHAIN["a"][:1])
    s = scr.wait_for(f"first touch: tid {w.pid}, ")
    line = next(ln for ln in s.split("\n") if "first touch: tid" in ln)
    assert chain in line and " \u2190 caller_a+0x" in line and " \u2190 run_cmd+0x" in line, line
    scr.keys("w")
    s = scr.wait_for("first touch of this mapping, by resident pages")
    rows = [ln for ln in s.split("\n") if " pages  tid " in ln]
    assert len(rows) == 1, s
    assert rows[0].split()[0] == str(PAGES["a"]) and f"tid {w.pid}" in rows[0], rows[0]
    assert "touch_a+0x" in rows[0] and "\u2190 main+0x" in rows[0], rows[0]
    scr.keys("q")
    assert_clean_exit(scr)
