"""mevitop record / replay: a recording replayed with --json --at equals /proc/PID/pagemap read
by the test at each pause of a phased workload, page for page; a recorder killed with SIGKILL
leaves a file whose every complete frame (counted by an independent reader of the format in
doc/recording-format.md, below) replays; damaged files get one error line, never a crash."""
import json
import os
import random
import signal
import struct
import subprocess
import time
import zlib

import pytest

from harness import (GUARD_S, MEVITOP, SAN_ENV, diff_pages, find_proc, model_pages,
                     pagemap_truth)

FILE_HDR = 40
FRAME_HDR = 40
FRAME_MAGIC = 0x5246564D


def walk_frames(path):
    """Complete frames of one segment, as the spec defines them: (type, mono_ns) each,
    stopping at the first header or payload that is cut off or fails its checksum."""
    data = open(path, "rb").read()
    assert data[:8] == b"MEVIREC\n", "bad magic"
    ver, hlen = struct.unpack_from("<HH", data, 8)
    assert (ver, hlen) == (2, FILE_HDR)
    assert zlib.crc32(data[:36]) == struct.unpack_from("<I", data, 36)[0]
    off, out = FILE_HDR, []
    while off + FRAME_HDR <= len(data):
        magic, ftype = struct.unpack_from("<IB", data, off)
        mono, _wall, clen, rlen, pcrc, hcrc = struct.unpack_from("<QdIIII", data, off + 8)
        if magic != FRAME_MAGIC or zlib.crc32(data[off:off + 36]) != hcrc:
            break
        payload = data[off + FRAME_HDR:off + FRAME_HDR + clen]
        if len(payload) < clen or zlib.crc32(payload) != pcrc:
            break
        out.append((ftype, mono))
        off += FRAME_HDR + clen
    return out


def segment(path):
    """The segment number in a file header (0 for the first; -1: no header)."""
    with open(path, "rb") as f:  # FILE exists at every moment, even while it rotates
        h = f.read(FILE_HDR)
    return struct.unpack_from("<I", h, 12)[0] if len(h) == FILE_HDR else -1


def run(*args, check=True):
    p = subprocess.run([MEVITOP, *args], capture_output=True, env=dict(os.environ, **SAN_ENV),
                       timeout=GUARD_S)
    if check:
        assert p.returncode == 0, p.stderr.decode()
    return p


def replay(path, *args):
    p = run("replay", path, "--json", *args)
    return [json.loads(line) for line in p.stdout.decode().splitlines()]


def wait_until(fn, what):
    """Polls a condition (the recorder gives no other signal); the guard is a failure."""
    deadline = time.monotonic() + GUARD_S
    while True:
        v = fn()
        if v:
            return v
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


class Recorder:
    def __init__(self, path, args):
        self.path = path
        self.proc = subprocess.Popen([MEVITOP, "record", "-o", path, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=dict(os.environ, **SAN_ENV))

    def frames(self):
        if not os.path.exists(self.path) or os.path.getsize(self.path) < FILE_HDR:
            assert self.proc.poll() is None, self.proc.stderr.read().decode()
            return []
        return walk_frames(self.path)

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        rc = self.proc.wait(timeout=GUARD_S)
        return rc, self.proc.stderr.read().decode()


@pytest.fixture
def recorder():
    made = []

    def make(*a):
        r = Recorder(*a)
        made.append(r)
        return r
    yield make
    for r in made:
        r.stop(signal.SIGKILL)


PHASES = [
    ["map a 512", "touch a 0 512 1 w"],
    ["advise a 100 200 dontneed"],
    ["map b 300 shared", "touch b 0 300 3 w"],
    ["remap a 1024 move", "touch a 600 100 1 w"],
    ["unmap b 0 150", "touch a 0 50 1 r"],
]


def check_pauses(wl, rec, path, phases):
    """Runs each phase, captures pagemap while the workload waits, notes the first frame
    drained after the phase; after the recorder stops, replay --at that frame's time must
    equal the capture page for page.  Returns the replayed frames."""
    wait_until(rec.frames, "the first frame")
    start = replay(path, "--at", "0")[0]["monotonic"]
    pauses = []
    for cmds in phases:
        for c in cmds:
            t_done, _ = wl.do(c)
        truth = pagemap_truth(wl.pid)
        # A frame drained after the phase ended, written while the workload still waits.
        t_rel = t_done - start + 1e-5
        after = wait_until(lambda: replay(path, "--from", f"{t_rel:.6f}"), "a frame after "
                           "the pause began")
        pauses.append((after[0]["monotonic"], truth))
    rc, err = rec.stop()
    assert rc == 0, err
    got_all = []
    for i, (mono, truth) in enumerate(pauses):
        got = replay(path, "--at", f"{mono - start + 1e-4:.6f}")
        assert len(got) == 1 and got[0]["monotonic"] == mono, (i, got[:1])
        entry = find_proc(got[0], wl.pid)
        assert entry is not None, f"pause {i}: pid missing"
        bad, lines = diff_pages(model_pages(entry), truth)
        assert not bad, f"pause {i}:\n" + "\n".join(lines)
        got_all.append(got[0])
    return got_all


def test_replay_at_each_pause_equals_pagemap(workload, recorder, tmp_path):
    wl = workload()
    path = str(tmp_path / "rec")
    rec = recorder(path, ["-p", str(wl.pid), "-i", "50"])
    check_pauses(wl, rec, path, PHASES)


def test_record_exact_mode(workload, recorder, tmp_path):
    """record --exact: the frames carry exact mode's model (userfaultfd-tracked mappings)
    and its statistics, and still equal pagemap at each pause."""
    wl = workload()
    path = str(tmp_path / "rec")
    rec = recorder(path, ["--exact", "-p", str(wl.pid), "-i", "50"])
    frames = check_pauses(wl, rec, path, PHASES[:2])
    assert frames[-1]["mode"] == "exact" and "exact" in frames[-1]["stats"]
    a = wl.region("a")
    entry = find_proc(frames[-1], wl.pid)
    assert any(int(m["start"], 16) <= a < int(m["end"], 16) and m["tracker"] == "userfaultfd"
               for m in entry["mappings"])
    assert wl.proc.poll() is None


class RunRecorder(Recorder):
    """`mevitop run --record FILE -- CMD`: the workload is mevitop's child, talking through
    FIFOs (test_exact.FifoWorkload); it ends when the workload exits (run's status)."""

    def __init__(self, path, wl, args):
        self.path, self.wl = path, wl
        self.proc = subprocess.Popen([MEVITOP, "run", "--record", path, *args, "--", *wl.argv],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env=dict(os.environ, **SAN_ENV))

    def stop(self, sig=None):
        self.wl.close()
        try:
            rc = self.proc.wait(timeout=GUARD_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        return rc, self.proc.stderr.read().decode()


def test_run_record_exact_mode(tmp_path):
    """mevitop run --record FILE -- CMD records a program under exact mode: each pause's
    frame equals the pagemap the test read, and the recorder ends with the program (0)."""
    from test_exact import FifoWorkload
    wl = FifoWorkload(tmp_path)
    path = str(tmp_path / "rec")
    rec = RunRecorder(path, wl, ["-i", "50"])
    try:
        wl.connect()
        frames = check_pauses(wl, rec, path, PHASES[:2])
    finally:
        if rec.proc.poll() is None:
            rec.proc.kill()
            rec.proc.wait()
    assert frames[-1]["mode"] == "exact" and "exact" in frames[-1]["stats"]


def frame_after(path, t_mono):
    """Waits for a frame drained after CLOCK_MONOTONIC t_mono (seconds): the recorder has
    seen everything before it."""
    start = replay(path, "--at", "0")[0]["monotonic"]
    return wait_until(lambda: replay(path, "--from", f"{t_mono - start + 1e-5:.6f}"),
                      "a frame after the command")[0]


@pytest.mark.parametrize("mode", ["run", "attach"])
def test_recorded_first_touches(workload, recorder, tmp_path, mode):
    """In exact mode (ordered) a recording stores every first touch -- page, thread, time --
    and replay --json lists them ("recorded_touches").  The truth: threads that each write
    only their own pages, one thread after the other, and say their tids.  600 pages, more
    than live JSON lists per snapshot (100), so all of them must come from the recording."""
    from test_exact import FifoWorkload
    path = str(tmp_path / "rec")
    if mode == "run":
        wl = FifoWorkload(tmp_path)
        rec = RunRecorder(path, wl, ["-i", "50", "--exact=ordered"])
        wl.connect()
    else:
        wl = workload()
        rec = recorder(path, ["--exact=ordered", "-p", str(wl.pid), "-i", "50"])
    try:
        wait_until(rec.frames, "the first frame")
        t_map, _ = wl.do("map t 600")
        frame_after(path, t_map)		# registered with the userfaultfd from here on
        t_done, tids = wl.do("ownthreads t 4 0 600")
        frame_after(path, t_done)
        base = wl.region("t")
        rc, err = rec.stop()	# run: the workload ends, and with it the recorder
        assert rc == 0, err
    finally:
        if rec.proc.poll() is None:
            rec.proc.kill()
            rec.proc.wait()
    tids = [int(t) for t in tids]
    assert len(set(tids)) == 4 and wl.pid not in tids
    frames = replay(path)
    assert all("recorded_touches" in f for f in frames)
    assert sum(f["recorded_touches_dropped"] for f in frames) == 0
    got = {}
    for f in frames:
        for pid, tid, addr, rw, ts in f["recorded_touches"]:
            page = (int(addr, 16) - base) // 4096
            if pid == wl.pid and 0 <= page < 600:
                assert page not in got, f"page {page} recorded twice"
                got[page] = (tid, rw, ts)
    assert sorted(got) == list(range(600)), f"{600 - len(got)} first touches missing"
    wrong = [(j, got[j][0], tids[j % 4]) for j in range(600) if got[j][0] != tids[j % 4]]
    assert not wrong, f"pages recorded with the wrong thread (page, got, wrote): {wrong[:5]}"
    assert all(rw == "w" for _, rw, _ in got.values())
    # Times: after the region was mapped, before the command answered; each thread's
    # pages in order, and the threads one after the other.
    ts = [got[j][2] for j in range(600)]
    assert t_map <= min(ts) and max(ts) <= t_done + 1e-6
    for k in range(4):
        mine = ts[k::4]
        assert mine == sorted(mine), f"thread {k}'s touches out of order"
        if k:
            assert min(mine) >= max(ts[k - 1::4]), f"thread {k} before thread {k - 1}"


def record_beside_live(tmp_path, args, steps):
    """Records (args) while `steps()` drives the workload, the recorder also printing each
    frame's live JSON line (MEVITOP_TEST_RECORD_JSON), so replay can be held against the
    very frame live mode printed.  Returns ({monotonic: live line}, replayed frames)."""
    path, live_out = str(tmp_path / "rec"), tmp_path / "live.ndjson"
    with open(live_out, "w") as out:
        rec = subprocess.Popen([MEVITOP, "record", "-o", path, *args], stdout=out,
                               stderr=subprocess.PIPE,
                               env=dict(os.environ, MEVITOP_TEST_RECORD_JSON="1", **SAN_ENV))
        try:
            wait_until(lambda: live_out.stat().st_size > 0, "the first frame")
            steps(path)
            rec.send_signal(signal.SIGTERM)
            assert rec.wait(timeout=GUARD_S) == 0, rec.stderr.read().decode()
        finally:
            if rec.poll() is None:
                rec.kill()
                rec.wait()
    live = {f["monotonic"]: f for f in map(json.loads, live_out.read_text().splitlines())}
    frames = replay(path)
    assert len(frames) == len(live) and all(f["monotonic"] in live for f in frames)
    return live, frames


def heat_by_mapping(frame, pid):
    return {m["start"]: m["heat"] for m in find_proc(frame, pid)["mappings"]}


@pytest.mark.parametrize("heat", [True, False])
def test_replay_heat_equals_live(workload, tmp_path, heat):
    """record --heat: replay's heat (the heat layer; JSON "heat" per mapping) is what live
    JSON printed for the same frame -- the recorder prints that line too
    (MEVITOP_TEST_RECORD_JSON) -- mapping by mapping, while pages are being faulted in.
    Without --heat, replay has no heat at all where live had some."""
    wl = workload()

    def steps(path):
        wl.do("map a 2048")
        for k in range(8):
            t, _ = wl.do(f"touch a {k * 256} 256 1 w")
            frame_after(path, t)
    live, frames = record_beside_live(tmp_path, ["-p", str(wl.pid), "-i", "50", "--mode",
                                                 "trace", *(["--heat"] if heat else [])], steps)
    hot = 0
    for f in frames:
        want, got = heat_by_mapping(live[f["monotonic"]], wl.pid), heat_by_mapping(f, wl.pid)
        assert want.keys() == got.keys()
        hot += any(v > 0.5 for v in want.values())
        for start, v in want.items():
            if heat:
                # Both sum the same entries; only the order of the float additions differs.
                assert abs(got[start] - v) <= 0.0011 + 1e-5 * v, (f["monotonic"], start)
            else:
                assert got[start] == 0
    assert hot >= 4, "the workload's faults made no heat"


@pytest.mark.parametrize("every", [True, False])
def test_fsync_each_keyframe_or_every_frame(workload, tmp_path, every):
    """What a power cut may take: the recorder fdatasyncs each keyframe, or with --fsync
    every frame (counted by strace against the frames an independent reader finds)."""
    wl = workload()
    wl.do("map a 64")
    path, trace = str(tmp_path / "rec"), str(tmp_path / "strace")
    env = dict(os.environ, **SAN_ENV)
    # LeakSanitizer cannot run under ptrace; the other tests check for leaks.
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=fdatasync", "-o", trace, MEVITOP,
                        "record", "-o", path, "-p", str(wl.pid), "-i", "20", "-n", "12",
                        *(["--fsync"] if every else [])],
                       capture_output=True, env=env, timeout=GUARD_S)
    assert p.returncode == 0, p.stderr.decode()
    syncs = [ln for ln in open(trace) if "fdatasync(" in ln]
    assert all(ln.rstrip().endswith("= 0") for ln in syncs), syncs
    frames = walk_frames(path)
    assert len(frames) == 12
    assert len(syncs) == (12 if every else sum(t == 1 for t, _ in frames))


def folded_from_json(frame):
    """What --folded prints for a frame, from its JSON: per process, each first-touch stack
    (outermost first, function names) with the resident pages it accounts for."""
    out = {}
    for p in frame["processes"]:
        for m in p.get("mappings", []):
            for ft in m.get("first_touch", []):
                names = [f.get("function", f["name"]).replace(";", "_").replace(" ", "_")
                         for f in reversed(ft["frames"])]
                key = ";".join([p["comm"], *names])
                out[key] = out.get(key, 0) + ft["pages"]
    return out


def test_recorded_stacks_equal_live(workload, tmp_path):
    """record --stacks: the stack table and each mapping's first-touch attribution are in
    the file; replay --json prints the same first_touch members live JSON printed for the
    same frame, and replay --folded the same folded stacks.  The workload's call graph is
    the truth that the attribution is not empty."""
    from test_stacks import CHAIN, LIB, PAGES
    w = workload("wl_stacks_fp", [LIB])
    addrs = {}

    def steps(path):
        for r in ("a", "b", "c", "lib"):
            t, extra = w.do(f"touch {r} {PAGES[r]}")
            addrs[r] = int(extra[0], 16)
            frame_after(path, t)
    live, frames = record_beside_live(tmp_path, ["--mode", "trace", "--stacks", "-p",
                                                 str(w.pid), "-i", "50"], steps)
    path = str(tmp_path / "rec")
    for f in frames:
        want = {m["start"]: m.get("first_touch") for m in find_proc(live[f["monotonic"]],
                                                                       w.pid)["mappings"]}
        got = {m["start"]: m.get("first_touch") for m in find_proc(f, w.pid)["mappings"]}
        assert got == want, f"frame at {f['monotonic']}"
        assert f["stats"]["stacks"] == live[f["monotonic"]]["stats"]["stacks"]
    last = frames[-1]
    entry = find_proc(last, w.pid)
    for r, addr in addrs.items():
        m = next(m for m in entry["mappings"] if int(m["start"], 16) <= addr < int(m["end"], 16))
        assert [st["pages"] for st in m["first_touch"]] == [PAGES[r]]
        assert [f.get("function") for f in m["first_touch"][0]["frames"]][:4] == CHAIN[r]
    folded = run("replay", path, "--folded").stdout.decode().splitlines()
    got = {ln.rsplit(" ", 1)[0]: int(ln.rsplit(" ", 1)[1]) for ln in folded}
    assert got == folded_from_json(live[last["monotonic"]])
    assert any(k.endswith(";main;run_cmd;caller_a;touch_a") and v == PAGES["a"]
               for k, v in got.items()), got
    # Without --stacks there is nothing to fold: one line, exit 1.
    plain = str(tmp_path / "plain")
    run("record", "-o", plain, "-p", str(w.pid), "-n", "2", "-i", "20")
    p = run("replay", plain, "--folded", check=False)
    assert p.returncode == 1 and b"recorded without --stacks" in p.stderr


def test_replay_prints_what_live_json_printed(workload, recorder, tmp_path):
    """Every frame replays to the same line shape as live JSON, in time order, once each."""
    wl = workload()
    wl.do("map a 64")
    wl.do("touch a 0 64 1 w")
    path = str(tmp_path / "rec")
    rec = recorder(path, ["-p", str(wl.pid), "-i", "20", "--duration", "1"])
    assert rec.proc.wait(timeout=GUARD_S) == 0, rec.proc.stderr.read().decode()
    frames = replay(path)
    spec = walk_frames(path)
    assert len(frames) == len(spec) >= 10
    assert [round(f["monotonic"], 6) for f in frames] == [round(m / 1e9, 6) for _, m in spec]
    assert spec[0][0] == 1 and any(t == 2 for t, _ in spec), "keyframe first, then deltas"
    for f in frames:
        # As live -p JSON: the page cache members of the watched files (none here).
        assert set(f) == {"time", "monotonic", "mode", "interval_ms", "stats", "processes",
                          "files", "files_stats"}
        p = find_proc(f, wl.pid)
        assert p and p["mappings"] and p["pages"]["resident"] >= 64
    ts = [f["monotonic"] for f in frames]
    assert ts == sorted(ts)
    window = replay(path, "--from", "0.2", "--to", "0.5")
    assert window and all(0.2 - 1e-6 <= f["monotonic"] - ts[0] <= 0.5 + 1e-6 for f in window)


def seg_header(path):
    """(segment, recording id) of a file header, or None."""
    try:
        with open(path, "rb") as f:
            h = f.read(FILE_HDR)
    except FileNotFoundError:
        return None
    return struct.unpack_from("<IQ", h, 12) if len(h) == FILE_HDR else None


@pytest.mark.parametrize("seed,ring", [(1, False), (2, False), (3, False), (4, True),
                                       (5, True), (6, True)])
def test_sigkill_keeps_every_complete_frame(workload, recorder, tmp_path, seed, ring):
    wl = workload()
    wl.do("map a 2048")
    path = str(tmp_path / "rec")
    rec = recorder(path, ["-p", str(wl.pid), "-i", "10"] +
                   (["--max-size", "64K"] if ring else []))
    wait_until(rec.frames, "the first frame")
    rnd = random.Random(seed)
    # The workload keeps changing so frames differ (and, with a ring, segments rotate); the
    # kill lands at a random moment.
    for i in range(rnd.randrange(1, 60)):
        wl.do(f"touch a {rnd.randrange(0, 1900)} {rnd.randrange(1, 140)} 2 w")
    if ring:
        wait_until(lambda: (seg_header(path) or (0,))[0] >= 1 + seed % 3, "rotations")
    time.sleep(rnd.random() * 0.05)
    rec.proc.kill()
    rec.proc.wait(timeout=GUARD_S)
    spec = walk_frames(path)
    old, new = seg_header(path + ".1"), seg_header(path)
    if old and new and old[1] == new[1] and old[0] + 1 == new[0]:
        spec = walk_frames(path + ".1") + spec
    p = run("replay", path, "--json")
    frames = [json.loads(line) for line in p.stdout.decode().splitlines()]
    assert len(frames) == len(spec) >= 1, p.stderr.decode()
    assert [round(f["monotonic"], 6) for f in frames] == [round(m / 1e9, 6) for _, m in spec]
    assert wl.proc.poll() is None, "the watched process must keep running"


def test_damaged_files_get_one_clear_line(tmp_path, workload, recorder):
    wl = workload()
    path = str(tmp_path / "rec")
    rec = recorder(path, ["-p", str(wl.pid), "-i", "10", "--duration", "1"])
    assert rec.proc.wait(timeout=GUARD_S) == 0
    good = open(path, "rb").read()
    n = len(walk_frames(path))
    cases = {
        "empty": (b"", "is empty"),
        "not-a-recording": (b"hello world, not a recording at all.........", "not a mevitop"),
        "short-header": (good[:20], "cut short"),
        "version": (good[:8] + b"\x07\x00" + good[10:], "version"),
    }
    for name, (data, msg) in cases.items():
        f = tmp_path / name
        f.write_bytes(data)
        p = run("replay", str(f), "--json", check=False)
        err = p.stderr.decode()
        assert p.returncode == 1 and msg in err and len(err.splitlines()) == 1, (name, err)
    # Cut in the middle of a frame: a clean stop at the last whole frame, with a warning.
    f = tmp_path / "truncated"
    f.write_bytes(good[:len(good) - 5])
    p = run("replay", str(f), "--json", check=False)
    assert p.returncode == 0 and len(p.stdout.splitlines()) == n - 1, p.stderr.decode()
    assert "ends at offset" in p.stderr.decode()
    # A flipped payload byte in the middle: the frames before it print, then one line.
    spec_off = FILE_HDR
    for _ in range(n // 2):
        clen = struct.unpack_from("<I", good, spec_off + 24)[0]
        spec_off += FRAME_HDR + clen
    bad = bytearray(good)
    bad[spec_off + FRAME_HDR + 2] ^= 0x55
    f.write_bytes(bytes(bad))
    p = run("replay", str(f), "--json", check=False)
    assert p.returncode == 0, p.stderr.decode()
    assert len(p.stdout.splitlines()) == n // 2
    assert "checksum" in p.stderr.decode() and len(p.stderr.decode().splitlines()) == 1


def test_max_size_keeps_a_ring_of_recent_history(workload, recorder, tmp_path):
    wl = workload()
    wl.do("map a 4096")
    path = str(tmp_path / "rec")
    rec = recorder(path, ["-p", str(wl.pid), "-i", "10", "--max-size", "64K"])
    wait_until(lambda: os.path.exists(path + ".1"), "the first rotation")
    # Frames that differ, so the ring turns over more than once.
    for i in range(40):
        wl.do(f"touch a {i * 97 % 4000} 50 2 w")
    wait_until(lambda: segment(path) >= 3, "the ring to turn over")
    rc, err = rec.stop()
    assert rc == 0, err
    assert os.path.getsize(path) + os.path.getsize(path + ".1") <= 64 * 1024
    assert not os.path.exists(path + ".new")
    old, new = walk_frames(path + ".1"), walk_frames(path)
    assert old[0][0] == 1 and new[0][0] == 1, "each segment starts with a keyframe"
    frames = replay(path)
    assert len(frames) == len(old) + len(new)
    assert [round(f["monotonic"], 6) for f in frames] == \
        [round(m / 1e9, 6) for _, m in old + new]


def test_usage_errors(tmp_path):
    for args, msg in [(["record"], "needs a file"),
                      (["record", "-o", str(tmp_path / "x"), "--json"], "not JSON"),
                      (["-o", str(tmp_path / "x")], "-o FILE takes --json's snapshots"),
                      (["--duration", "5"], "apply to mevitop record"),
                      (["record", "-o", "x", "--max-size", "12Q"], "invalid --max-size"),
                      (["replay"], "needs a recording"),
                      (["replay", "f", "--json", "--at", "-1"], "invalid time"),
                      (["replay", "f", "--json", "--at", "1", "--from", "0"], "do not mix"),
                      (["record", "-o", "/nonexistent/dir/f", "-n", "1"], "failed to create")]:
        p = run(*args, check=False)
        assert p.returncode in (1, 2) and msg in p.stderr.decode(), (args, p.stderr)


def test_report_svg_counts_every_resident_page(workload, recorder, tmp_path):
    """report's picture, cell by cell, adds up to the resident pages replay reports for the
    process at each frame (and so to pagemap, by the test above)."""
    import xml.etree.ElementTree as ET
    wl = workload()
    path = str(tmp_path / "rec")
    rec = recorder(path, ["-p", str(wl.pid), "-i", "50"])
    wait_until(rec.frames, "the first frame")
    for c in ["map a 2048", "touch a 0 1000 1 w", "advise a 0 500 dontneed",
              "map b 300 shared", "touch b 0 300 3 w", "remap a 4096 move",
              "touch a 3000 500 2 w"]:
        t, _ = wl.do(c)
    rel = t - replay(path, "--at", "0")[0]["monotonic"] + 1e-5
    wait_until(lambda: replay(path, "--from", f"{rel:.6f}"), "a frame after the last phase")
    assert rec.stop()[0] == 0
    svg = str(tmp_path / "out.svg")
    run("report", path, "-o", svg, "-p", str(wl.pid))
    frames = replay(path)
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    groups = root.iter(ns + "g")
    cols = [g for g in groups if g.get("class") == "frame"]
    assert len(cols) == len(frames) <= 600
    totals = [int(d.text) for d in root.iter(ns + "desc") if d.get("class") == "resident"]
    for i, g in enumerate(cols):
        entry = find_proc(frames[int(g.get("data-frame"))], wl.pid)
        want = entry["pages"]["resident"] if entry else 0
        got = sum(int(r.get("data-res")) for r in g.iter(ns + "rect"))
        assert got == want, (i, got, want)
        assert totals[i] == want
    # The last frame shows the remapped region's stride-2 pages as half-resident cells.
    assert any(r.get("fill") not in ("#ffffff",) for r in cols[-1].iter(ns + "rect"))
    p = run("report", path, "-o", svg, "-p", "999999999", check=False)
    assert p.returncode in (1, 2) and p.stderr
