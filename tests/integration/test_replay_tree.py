"""Recordings carry each process's parent (a *parent* section: doc/recording-format.md), so
replay's JSON has the live `ppid` and replay's process list has the live tree view (`t`).
The truth: /proc (each member's ppid, read by the test) of tests/workloads/forktree, the
live JSON line the recorder printed for each frame (MEVITOP_TEST_RECORD_JSON), and the
screen parsed column by column (test_ui_tree's parser and expected guides).  A recording made
before the section existed (tests/data/rec-v2-no-ppid.rec: ftroot, ftA, ftB and ftA1,
recorded with `mevitop record -p ROOT -i 50` by the writer of commit 0d122a5) still replays,
every ppid 0, every process a root."""
import json
import os
import subprocess
import time

from harness import GUARD_S, MEVITOP, ROOT, SAN_ENV, Reader
from test_record import FILE_HDR, frame_after, replay, wait_until, walk_frames
from test_ui import assert_clean_exit, screen  # noqa: F401 (the fixture)
from test_ui_tree import (descendants, expected_rows, forktree, list_rows,  # noqa: F401
                          ppid_of)

OLD = os.path.join(ROOT, "tests", "data", "rec-v2-no-ppid.rec")


class TreeRecorder:
    """mevitop record -p ROOT, printing each frame's live JSON line as well (for the test)."""

    def __init__(self, path, root):
        self.path = path
        self.proc = subprocess.Popen([MEVITOP, "record", "-o", path, "-p", str(root), "-i",
                                      "50"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=dict(os.environ, **SAN_ENV,
                                              MEVITOP_TEST_RECORD_JSON="1"))
        # Read all along: a full pipe would stop the recorder.
        self.out = Reader(self.proc.stdout, "recorder")
        self.err = Reader(self.proc.stderr, "recorder-stderr")

    def stop(self):
        self.proc.terminate()
        assert self.proc.wait(timeout=GUARD_S) == 0, "\n".join(self.err.all)
        self.out.join(timeout=GUARD_S)
        return [json.loads(l) for l in self.out.all]


def parents(frame):
    return {p["pid"]: p["ppid"] for p in frame["processes"]}


def record_tree(ft, path):
    """Records ftroot ─┬─ ftA ─── ftA1, then ftA quits: ftA1 is reparented to the root (a
    subreaper).  Returns the pids, the live lines and the replayed frames."""
    r = ft.root
    a = ft.spawn(r, "ftA", 30)
    b = ft.spawn(r, "ftB", 50)
    a1 = ft.spawn(a, "ftA1", 70)
    assert descendants(r) == {r: os.getpid(), a: r, b: r, a1: a}
    rec = TreeRecorder(path, r)
    try:
        wait_until(lambda: os.path.exists(path) and os.path.getsize(path) > FILE_HDR and
                   walk_frames(path), "the first frame")
        assert parents(replay(path, "--at", "0")[0]) == {r: os.getpid(), a: r, b: r, a1: a}
        ft.quit(a)
        assert ppid_of(a1) == r
        t = time.monotonic()
        frame_after(path, t)
        # ftA stays listed as exited for the engine's tombstone delay: record until it left.
        wait_until(lambda: a not in parents(replay(path)[-1]), "ftA gone from the frames")
    except BaseException:
        rec.proc.kill()
        rec.proc.wait()
        raise
    live = rec.stop()
    return (r, a, b, a1), live, replay(path)


def test_replay_json_carries_the_live_ppid(forktree, tmp_path):  # noqa: F811
    """Every replayed frame's ppids equal the live line's; the reparenting is in the file."""
    (r, a, b, a1), live, frames = record_tree(forktree(), str(tmp_path / "rec"))
    assert len(frames) == len(live) >= 3
    for got, want in zip(frames, live):
        assert got["monotonic"] == want["monotonic"]
        assert parents(got) == parents(want), (got["monotonic"], parents(got), parents(want))
    assert parents(frames[0]) == {r: os.getpid(), a: r, b: r, a1: a}
    assert parents(frames[-1]) == {r: os.getpid(), b: r, a1: r}


def test_replay_tree_view(screen, forktree, tmp_path):  # noqa: F811
    """replay FILE, t: the tree of the frame under the cursor, guides exact; at the end ftA1
    hangs under the root it was reparented to."""
    path = str(tmp_path / "rec")
    (r, a, b, a1), _live, frames = record_tree(forktree(), path)
    comm = {r: "ftroot", a: "ftA", b: "ftB", a1: "ftA1"}

    def shows(tree):
        want = [(p, guides + comm[p]) for p, guides, _sub in expected_rows(tree, lambda p: p)]
        return lambda s: "view tree" in s and "sort pid" in s and \
            [(row[0], row[2]) for row in list_rows(s, 200)] == want

    sc = screen()
    sc.start(["replay", path])
    sc.wait_for(f"f1/{len(frames)}")
    sc.keys("t", "P")
    s = sc.wait(shows({r: os.getpid(), a: r, b: r, a1: a}), "the first frame's tree")
    assert [row[2] for row in list_rows(s, 200)] == \
        ["ftroot", "\u251c\u2500ftA", "\u2502 \u2514\u2500ftA1", "\u2514\u2500ftB"], s
    sc.keys("}")
    s = sc.wait(lambda s: f"f{len(frames)}/{len(frames)}" in s and
                shows({r: os.getpid(), b: r, a1: r})(s), "the last frame's tree")
    assert [row[2] for row in list_rows(s, 200)] == \
        ["ftroot", "\u251c\u2500ftB", "\u2514\u2500ftA1"], s
    # Fold the root: one row, summing the three.
    sc.keys("Home", "-")
    s = sc.wait(lambda s: [row[2] for row in list_rows(s, 200)] == ["+ftroot"], "ftroot folded")
    sc.keys("q")
    assert_clean_exit(sc)


def test_recording_without_parents_replays_flat(screen):  # noqa: F811
    """A file from before the parent section: replay --json works, every ppid 0, and the tree
    view shows each process as a root."""
    frames = replay(OLD)
    assert len(frames) == 4
    for f in frames:
        assert sorted(p["comm"] for p in f["processes"]) == ["ftA", "ftA1", "ftB", "ftroot"]
        assert all(p["ppid"] == 0 for p in f["processes"]), f["processes"]
    pids = sorted(p["pid"] for p in frames[0]["processes"])
    sc = screen()
    sc.start(["replay", OLD])
    sc.wait_for("f1/4")
    sc.keys("t", "P")
    s = sc.wait(lambda s: "view tree" in s and "sort pid" in s and
                [row[0] for row in list_rows(s, 200)] == pids, "the flat tree")
    assert [row[2] for row in list_rows(s, 200)] == ["ftroot", "ftA", "ftB", "ftA1"], s
    sc.keys("q")
    assert_clean_exit(sc)
