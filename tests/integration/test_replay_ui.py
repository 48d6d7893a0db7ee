"""The interactive replay (`mevitop replay FILE`) in tmux: the same view on a recording, with a
time cursor.  The workload's resident set grows in phases while it is recorded; moving the
cursor (, . { } and playback) moves the timeline and changes the list and the heatmap to
what was resident at that frame, and the header to that frame's memory summary."""
import os
import re

from harness import PAGE
from test_record import Recorder, replay, wait_until
from test_docs import key_table
from test_ui import help_shows, screen  # noqa: F401  (the fixture)
from test_ui_files import fmt_pages


def cursor(s):
    m = re.search(r"t=([\d.]+)s/([\d.]+)s f(\d+)/(\d+)", s)
    assert m, s
    return float(m.group(1)), int(m.group(3)), int(m.group(4))


def resident_of(s, pid):
    """The RES column of pid's row in the process list (e.g. '4.1M')."""
    for line in s.split("\n"):
        f = line.split()
        if f and f[0] == str(pid):
            return f[4]
    raise ValueError(f"pid {pid} not in the list")


def record_phases(wl, path, phases):
    """Records wl while it runs each phase, with at least one frame after each."""
    rec = Recorder(path, ["-p", str(wl.pid), "-i", "50"])
    try:
        wait_until(rec.frames, "the first frame")
        start = replay(path, "--at", "0")[0]["monotonic"]
        for cmds in phases:
            for c in cmds:
                t, _ = wl.do(c)
            rel = t - start + 1e-5
            wait_until(lambda: replay(path, "--from", f"{rel:.6f}"), "a frame of this phase")
    finally:
        assert rec.stop()[0] == 0
    return replay(path)


def test_replay_ui_cursor_moves_the_picture(workload, screen, tmp_path):  # noqa: F811
    wl = workload()
    path = str(tmp_path / "rec")
    frames = record_phases(wl, path, [["map a 8192"]] +
                           [[f"touch a {k * 2048} 2048 1 w"] for k in range(4)])
    res = [next(p for p in f["processes"] if p["pid"] == wl.pid)["pages"]["resident"]
           for f in frames]
    assert res[-1] - res[0] >= 8192

    sc = screen()
    sc.start(["replay", path])
    s = sc.wait_for(f"f1/{len(frames)}")
    first = resident_of(s, wl.pid)
    # To the end (the recording is shorter than 10 s): the last frame's numbers.
    sc.keys("}")
    s = sc.wait_for(f"f{len(frames)}/{len(frames)}")
    last = resident_of(s, wl.pid)
    assert first != last and cursor(s)[0] > 0
    # One frame back, then the heatmap of the process at that moment.
    sc.keys(",")
    sc.wait_for(f"f{len(frames) - 1}/{len(frames)}")
    sc.keys("Enter")
    s = sc.wait_for(f"pid {wl.pid}")
    a = wl.region("a")
    label = f"{a:x}-"       # its end depends on a merge with a neighbour (below)
    assert label in s, s
    # Back to the start: region a was not even mapped then.
    sc.keys("{")
    s = sc.wait_for(f"f1/{len(frames)}")
    assert label not in s
    # Playback at 100x runs to the end and stops there, the region back in view.
    sc.keys("3", "Space")
    s = sc.wait(lambda s: f"f{len(frames)}/{len(frames)}" in s and "⏸" in s, "the end")
    assert label in s
    # Go to a time: the frame current then (as replay --at says).
    mid = (frames[len(frames) // 2]["monotonic"] - frames[0]["monotonic"])
    want = replay(path, "--at", f"{mid + 1e-4:.6f}")[0]["monotonic"]
    idx = [f["monotonic"] for f in frames].index(want) + 1
    sc.keys("T")
    sc.wait_for("Go to time")
    sc.type(f"{mid + 1e-4:.6f}")
    sc.keys("Enter")
    sc.wait_for(f"f{idx}/{len(frames)}")
    # The help screen lists replay's keys too, from the table they dispatch with.
    sc.keys("h")
    s = sc.wait_for("Legend (")
    rows = key_table()
    for view in ("Anywhere", "Process list", "Heatmap", "Replay"):
        assert not help_shows(s, rows, view), (view, help_shows(s, rows, view), s)
    sc.keys("x")
    sc.wait(lambda s: "Legend (" not in s, "the help screen to close")
    sc.keys("q")
    status, _ = sc.wait_exit()
    assert status == 0, sc.stderr()


def region_rows(esc, label):
    """The coloured cell rows right under the label line of a mapping (escapes kept)."""
    lines = esc.split("\n")
    i = next(k for k, line in enumerate(lines) if label in line)
    return "\n".join(lines[i + 1:i + 4])


def test_replay_ui_diff_layer(workload, screen, tmp_path):  # noqa: F811
    """d colours the pages whose state changed since the marked frame (the first one unless
    m marked another): a region touched after the mark looks different from the same
    region diffed against a mark taken after the touch."""
    wl = workload()
    path = str(tmp_path / "rec")
    n = len(record_phases(wl, path, [["map a 4096", "touch a 0 4096 1 w"]]))
    a = wl.region("a")
    # The label line starts with the region's address; where it ends depends on the layout:
    # the kernel merges the region with an anonymous neighbour of the same flags when ASLR
    # puts one right after it (seen in a fresh container: 7f..c00000-7f..c03000).
    label = f"{a:x}-"
    sc = screen()
    sc.start(["replay", path])
    sc.wait_for(f"f1/{n}")
    sc.keys("}", "Enter")
    sc.wait(lambda s: f"f{n}/{n}" in s and label in s, "the heatmap at the end")
    plain = region_rows(sc.escapes(), label)
    sc.keys("d")
    sc.wait_for("diff since 0.0s")
    since_start = region_rows(sc.escapes(), label)
    sc.keys("m")
    sc.wait(lambda s: "diff since 0.0s" not in s and "diff since" in s, "the new mark")
    since_end = region_rows(sc.escapes(), label)
    assert since_start != since_end, "a fully changed region must not look unchanged"
    assert since_start != plain
    sc.keys("d")
    sc.wait_for("layer residency")
    assert region_rows(sc.escapes(), label) == plain
    sc.keys("q")
    assert sc.wait_exit()[0] == 0, sc.stderr()


def header_figures(s):
    """The memory summary of the list view's header (ui_memsum.c): the figures as drawn."""
    head = "\n".join(s.split("\n")[:6])
    got = {}
    m = re.search(r"used (\S+)/(\S+)\s+avail (\S+)\s+swap (\S+)", head)
    assert m, head
    got["used"], got["total"], got["avail"], got["swap"] = m.groups()
    for name in ("anon", "shmem", "cache", "kernel", "free", "accounted"):
        m = re.search(rf"(?<![a-z]){name} (\S+)", head)
        assert m, (name, head)
        got[name] = m.group(1)
    return got


def drawn(mem):
    """What ui_memsum.c draws for a "memory" object (its segments add up to total)."""
    def b(v):
        return fmt_pages((v + PAGE - 1) // PAGE)
    left = mem["total"]
    seg = {}
    for name, v in (("anon", mem["anon"]), ("shmem", mem["shmem"]),
                    ("cache", max(mem["file"] - mem["shmem"], 0)), ("kernel", mem["kernel"]),
                    ("free", mem["free"])):
        seg[name] = min(v, left)
        left -= seg[name]
    swap = f"{b(mem['swap_used'])}/{b(mem['swap_total'])}" if mem["swap_total"] else "none"
    return {"used": b(mem["total"] - seg["free"]), "total": b(mem["total"]),
            "avail": b(mem["available"]), "swap": swap, "accounted": b(mem["accounted"]),
            **{k: b(v) for k, v in seg.items()}}


def test_replay_ui_memory_summary(screen, tmp_path):  # noqa: F811
    """A whole-system recording: the list view's header shows the memory summary of the frame
    under the cursor, the figures of `replay --json --at T`'s "memory"; 256 MiB put in
    /dev/shm between the first frame and the last moves the cursor's shmem with it."""
    path = str(tmp_path / "rec")
    shm = f"/dev/shm/mevitop-replay-{os.getpid()}"
    rec = Recorder(path, ["-i", "200"])
    try:
        wait_until(rec.frames, "the first frame")
        with open(shm, "wb") as f:
            f.write(b"\1" * (256 << 20))
        # The truth after the write, read here (the box's other shmem may have moved since
        # the first frame: CI once never saw first + 256 MiB).
        with open("/proc/meminfo") as f:
            after = next(int(ln.split()[1]) * 1024 for ln in f if ln.startswith("Shmem:"))
        slack = 16 << 20
        seen = []

        def has_file():
            seen[:] = [f["memory"]["shmem"] for f in replay(path)]
            return any(v >= after - slack for v in seen)
        try:
            wait_until(has_file, "a frame with the shmem file")
        except AssertionError as e:
            raise AssertionError(f"{e}: meminfo's Shmem after the write {after}, the frames' "
                                 f"{seen[:3]} ... {seen[-3:]}") from None
    finally:
        assert rec.stop()[0] == 0
        os.unlink(shm)
    frames = replay(path)
    n = len(frames)
    t0 = frames[0]["monotonic"]
    sc = screen()
    sc.start(["replay", path])
    s = sc.wait_for(f"f1/{n}")
    first = replay(path, "--at", "0")[0]
    assert first["monotonic"] == t0
    assert header_figures(s) == drawn(first["memory"]), s
    sc.keys("}")
    s = sc.wait_for(f"f{n}/{n}")
    last = replay(path, "--at", f"{frames[-1]['monotonic'] - t0 + 1e-4:.6f}")[0]
    assert last["monotonic"] == frames[-1]["monotonic"]
    assert header_figures(s) == drawn(last["memory"]), s
    assert last["memory"]["shmem"] >= after - slack and \
        first["memory"]["shmem"] < last["memory"]["shmem"], (first["memory"], last["memory"])
    sc.keys("q")
    assert sc.wait_exit()[0] == 0, sc.stderr()
