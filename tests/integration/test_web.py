"""The web view on --listen (issue 27), in Debian's headless Chromium driven by the test
(tests/integration/cdp.py): the canvas read back pixel by pixel against pagemap read by the
test, the hover line, only what changed sent on each poll (?poll=1: the stream the page uses
live is test_web_events.py's), the list sorted by each column,
the tree and the filter, a replay's slider against `replay --json --at T` (its "who touched"
layer too, recorded with --stacks), the token off
loopback, and hostile clients that must not stop the other views.  Screenshots of the page
(for the README) are written to $MEVITOP_BUILD/screenshots/."""
import http.client
import json
import math
import os
import random
import re
import signal
import socket
import struct
import subprocess
import time

import pytest

import harness
from cdp import Browser
from harness import GUARD_S, MEVITOP, PAGE, SAN_ENV, find_proc, model_pages, pagemap_truth

SHOTS = os.path.join(harness.BUILD, "screenshots")
STATES = {"resident": "resident", "swapped": "swapped"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path, method="GET", headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=GUARD_S)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def truth_states(pid):
    """{page: 'resident'|'swapped'|'not resident'} of every page of every mapping, read now
    by the test from /proc/PID/maps and pagemap."""
    truth = pagemap_truth(pid)
    out = {}
    for start, end, _perms, path in harness.read_maps(pid):
        if path == "[vsyscall]":
            continue
        for pg in range(start // PAGE, end // PAGE):
            out[pg] = truth.get(pg, "not resident")
    return out


VSYSCALL = 0xffffffffff600000 // PAGE     # the one mapping pagemap does not cover


def canvas(b):
    """{page: state} drawn on the canvas, read back by the page (vsyscall left out)."""
    return {int(k): v for k, v in b.js("window.mevitop.canvasPages()").items()
            if int(k) != VSYSCALL}


def differ(drawn, want, limit=10):
    bad = [(pg, drawn.get(pg), st) for pg, st in sorted(want.items()) if drawn.get(pg) != st]
    extra = sorted(set(drawn) - set(want))
    return [f"page {pg * PAGE:#x}: canvas {a}, pagemap {b}" for pg, a, b in bad[:limit]] + \
        [f"{len(bad)} pages differ, {len(extra)} drawn that pagemap does not map"]


def open_heatmap(port, pid, query="", zoom=0):
    b = Browser(f"http://127.0.0.1:{port}/{query}#pid={pid}")
    try:
        b.wait("window.mevitop && window.mevitop.ready && window.mevitop.draws > 0",
               "the heatmap's first frame")
        b.js(f"window.mevitop.setZoom({zoom})")  # 2^zoom pixels a page: every cell a page
    except BaseException:
        b.close()
        raise
    return b


@pytest.fixture
def quiet_target(workload, swapfile):
    """A workload with resident, swapped and never-touched pages in one region."""
    wl = workload()
    wl.do("map a 512")
    wl.do("touch a 0 512 3 w")             # every third page
    wl.do("touch a 300 60 1 w")            # and a solid block
    wl.do("advise a 0 90 pageout")         # the first 30 touched go to swap
    return wl


def test_canvas_equals_pagemap_and_updates_send_what_changed(mevitop, quiet_target):
    wl = quiet_target
    port = free_port()
    mv = mevitop(["-p", str(wl.pid), "-i", "200", "--listen", f"127.0.0.1:{port}"])
    b = open_heatmap(port, wl.pid, "?poll=1")   # polling (the stream: test_web_events.py)
    try:
        assert b.js("window.mevitop.transport") == "poll"
        want = truth_states(wl.pid)
        assert list(want.values()).count("swapped") >= 20, "nothing went to swap"
        drawn = canvas(b)
        assert drawn == want, differ(drawn, want)

        # Quiet: a poll sends no mapping; a write to region a sends that mapping alone.
        frames = b.js("window.mevitop.frames")
        b.wait(f"window.mevitop.frames > {frames} && window.mevitop.lastSent === 0",
               "a poll that sends nothing")
        t, _ = wl.do("touch a 1 40 3 w")
        mv.snapshot_after(t)
        frames = b.js("window.mevitop.frames")
        b.wait(f"window.mevitop.frames > {frames} && window.mevitop.lastSent === 1",
               "a poll that sends the one mapping written")
        b.js("window.mevitop.draw()")
        want = truth_states(wl.pid)
        drawn = canvas(b)
        assert drawn == want, differ(drawn, want)
    finally:
        b.close()


def trace_target(mevitop, workload):
    """A 64-page region, its first half populated, watched in trace mode: the madvise calls
    are applied as they come, and no rescan of the mode's own adds heat for a populated page
    (sample mode's does), so after one page dropped and another populated nothing but the
    page sets says the mapping changed, and a test fails if the answer looks at anything
    less.  (workload, mevitop, port)"""
    wl = workload()
    wl.do("map b 64")
    wl.do("advise b 0 32 populate_write")
    port = free_port()
    mv = mevitop(["-p", str(wl.pid), "-i", "200", "--mode", "trace", "--listen",
                  f"127.0.0.1:{port}"])
    return wl, mv, port


def test_a_change_that_keeps_every_count_reaches_the_canvas(mevitop, workload):
    """One resident page dropped (MADV_DONTNEED) and one never-touched page populated in the
    same mapping: its resident, swapped and untracked counts do not change, and nothing
    faults (MADV_POPULATE_WRITE is the kernel's own fault, not the user's), so its heat does
    not either.  The answer compares page sets, not counts (with a count-only fingerprint
    this test fails), so the second poll answered after the model has the change (the first
    may have copied the model just before) must draw it: the bound is 2 polls, asserted
    without retrying."""
    wl, mv, port = trace_target(mevitop, workload)
    b = open_heatmap(port, wl.pid, "?poll=1")
    try:
        before = truth_states(wl.pid)
        drawn = canvas(b)
        assert drawn == before, differ(drawn, before)
        base = wl.region("b") // PAGE
        gone, new = base + 5, base + 40
        assert before[gone] == "resident" and before[new] == "not resident", \
            (before[gone], before[new])
        wl.do("advise b 5 1 dontneed")
        t, _ = wl.do("advise b 40 1 populate_write")
        after = truth_states(wl.pid)
        assert list(after.values()).count("resident") == \
            list(before.values()).count("resident"), "the counts changed"
        assert after[gone] == "not resident" and after[new] == "resident"
        deadline = time.monotonic() + GUARD_S
        snap = mv.snapshot_after(t)
        while True:                         # the model has both pages' new states
            pages = model_pages(find_proc(snap, wl.pid))
            if pages.get(gone) is None and pages.get(new) == "resident":
                break
            assert time.monotonic() < deadline, "the model never saw the change"
            snap = mv.snapshot()
        frames = b.js("window.mevitop.frames")
        b.wait(f"window.mevitop.frames >= {frames + 2}", "two polls after the model has it")
        b.js("window.mevitop.draw()")
        drawn = canvas(b)
        want = truth_states(wl.pid)
        assert drawn == want, differ(drawn, want)
    finally:
        b.close()


def test_hover_says_what_the_cursor_line_says(mevitop, quiet_target):
    wl = quiet_target
    port = free_port()
    mevitop(["-p", str(wl.pid), "--listen", f"127.0.0.1:{port}"])
    b = open_heatmap(port, wl.pid, zoom=2)   # 4x4 pixels a page: the mouse hits its middle
    try:
        base = wl.region("a")
        top = b.js("document.getElementById('map').getBoundingClientRect().top")
        truth = truth_states(wl.pid)
        for k in (0, 1, 3, 301, 511):
            addr = base + k * PAGE
            p = b.js(f"window.mevitop.pixelOf({addr})")
            assert p and p["inView"], p
            b.mouse("mouseMoved", p["x"] + p["size"] / 2, top + p["y"] + p["size"] / 2)
            text = b.js("window.mevitop.hoverText()")
            assert text.startswith(f"{addr:#x} rw-p [anon]"), text
            assert f"page {k + 1} of 512: {truth[addr // PAGE]}" in text, text
        b.js("document.getElementById('zfit').click(); window.mevitop.draw()")  # the README's
        p = b.js(f"window.mevitop.pixelOf({base + 301 * PAGE})")
        b.mouse("mouseMoved", p["x"] + p["size"] / 2, top + p["y"] + p["size"] / 2)
        os.makedirs(SHOTS, exist_ok=True)
        b.screenshot(os.path.join(SHOTS, "web-heatmap.png"))
    finally:
        b.close()


def test_list_sorted_by_each_column_tree_and_filter(mevitop, workload):
    wls = [workload() for _ in range(3)]
    for i, w in enumerate(wls):
        w.do(f"map a {64 * (i + 1)}")
        w.do(f"touch a 0 {64 * (i + 1)} 1 w")
    port = free_port()
    mevitop(["-p", ",".join(str(w.pid) for w in wls), "--listen", f"127.0.0.1:{port}"])
    b = Browser(f"http://127.0.0.1:{port}/")
    try:
        b.wait("window.mevitop && window.mevitop.listFrames > 0", "the list's first frame")
        procs = json.loads(get(port, "/api/list")[1])["processes"]
        assert sorted(p["pid"] for p in procs) == sorted(w.pid for w in wls)
        for key in ("pid", "ppid", "comm", "resident", "swapped", "mapped", "mappings",
                    "fault_rate"):
            for _ in range(2):             # a second click reverses the order
                b.js(f"document.querySelector('th[data-key={key}]').click()")
                desc = b.js("list.desc")
                order = b.js("window.mevitop.listOrder")
                vals = [next(p for p in procs if p["pid"] == pid) for pid in order]
                keyed = [(p[key], p["pid"]) for p in vals]
                assert keyed == sorted(keyed, key=lambda kv: kv[0], reverse=desc) or \
                    [k for k, _ in keyed] == sorted((k for k, _ in keyed), reverse=desc), \
                    (key, desc, keyed)
        b.js("document.querySelector('th[data-key=resident]').click()")
        b.js("list.desc = true; renderList()")
        assert b.js("window.mevitop.listOrder") == [w.pid for w in reversed(wls)]
        os.makedirs(SHOTS, exist_ok=True)
        b.screenshot(os.path.join(SHOTS, "web-list.png"))
        b.js(f"document.getElementById('filter').value = '{wls[1].pid}'; renderList()")
        assert b.js("window.mevitop.listOrder") == [wls[1].pid]
        b.js("document.getElementById('filter').value = ''; "
             "document.getElementById('tree').checked = true; renderList()")
        assert sorted(b.js("window.mevitop.listOrder")) == sorted(w.pid for w in wls)
    finally:
        b.close()


def test_token_required_off_loopback(workload):
    wl = workload()
    port = free_port()
    mv = subprocess.Popen([MEVITOP, "--json", "-p", str(wl.pid), "--listen", f"0.0.0.0:{port}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          env=dict(os.environ, **SAN_ENV))
    try:
        err = harness.Reader(mv.stderr, "stderr")
        lines = {}
        while "notice" not in lines or "token=" not in lines["notice"]:
            msg = json.loads(err.get(what="the web view's URL"))
            lines.update(msg)
            assert "error" not in msg, msg
        assert "is not loopback" in lines.get("warning", ""), lines
        m = re.search(r"web view on http://0\.0\.0\.0:\d+/\?token=([0-9a-f]{32})$",
                      lines["notice"])
        assert m, lines
        token = m.group(1)
        assert get(port, "/")[0] == 403
        assert get(port, "/api/list")[0] == 403
        assert get(port, "/api/list?token=" + "0" * 32)[0] == 403
        assert get(port, "/api/list?token=" + token[:-1])[0] == 403
        assert get(port, "/api/list?token=" + token)[0] == 200
        assert get(port, "/", headers={"Cookie": f"mevitop_token={token}"})[0] == 200
        assert get(port, "/metrics")[0] == 200        # Prometheus scrapes as before
        b = Browser(f"http://127.0.0.1:{port}/?token={token}")
        try:
            b.wait("window.mevitop && window.mevitop.listFrames > 0", "the list with a token")
        finally:
            b.close()
    finally:
        mv.terminate()
        assert mv.wait(timeout=GUARD_S) == 0


def test_hostile_clients_do_not_stop_the_other_views(mevitop, workload):
    """Seeded junk requests, oversized headers, slowloris and a connection flood: each gets
    a 4xx (or is dropped), and the JSON snapshots and the metrics go on."""
    wl = workload()
    port = free_port()
    mv = mevitop(["-p", str(wl.pid), "-i", "200", "--listen", f"127.0.0.1:{port}"])
    rng = random.Random(27)
    alphabet = "abcz09%&=?/#.-_~+;:[]{}\"'<>\\ \t\x01\x7f\u00e9"
    for _ in range(300):
        path = rng.choice(["/api/process", "/api/list", "/api/info", "/", "/app.js", "/x",
                           "/api/", "/../etc/passwd", "/api/process/", "/api/files",
                           "/api/file", "/api/who", "/api/touch"])
        q = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        url = urlquote(path + ("?" + q if rng.random() < 0.8 else ""))
        q2 = rng.choice(["pid=%d" % wl.pid, "pid=0", "pid=-1", "pid=99999999999", "pid=",
                         "since=abc", "at=-5", "at=1e999", "pid=%d&since=18446744073709551616"
                         % wl.pid])
        q3 = rng.choice(["dev=1", "dev=1&ino=", "dev=-1&ino=2", "dev=18446744073709551615&ino=1",
                         "dev=2049&ino=99999999999999999999", "sort=%s" % q, "limit=0",
                         "limit=99999999", "desc=2", "filter=" + "a" * 5000])
        q4 = rng.choice(["pid=%d" % wl.pid, "page=1", "pid=%d&page=" % wl.pid,
                         "pid=0&page=1", "pid=-1&page=1", "pid=99999999999&page=1",
                         "pid=%d&page=-1" % wl.pid, "pid=%d&page=4503599627370496" % wl.pid,
                         "pid=%d&page=18446744073709551615" % wl.pid,
                         "pid=%d&page=%s" % (wl.pid, q)])
        for u in (url, "/api/process?" + q2, urlquote("/api/file?" + q3),
                  urlquote("/api/files?" + q3), urlquote("/api/who?" + q4),
                  "/api/touch?" + q2):
            try:
                st, _ = get(port, u)
            except (http.client.HTTPException, OSError):
                continue                   # a request http.client itself refuses
            assert st in (200, 400, 404, 414), (u, st)
    assert get(port, "/api/file?dev=1")[0] == 400              # no ino
    assert get(port, f"/api/who?pid={wl.pid}")[0] == 400        # no page
    assert get(port, f"/api/who?pid={wl.pid}&page=x1")[0] == 400
    assert get(port, "/api/who?pid=4194304&page=1")[0] == 404   # no such process
    stack = [int(s, 16) for s, *_ in (ln.split("-") for ln in open(f"/proc/{wl.pid}/maps")
                                      if ln.rstrip().endswith("[stack]"))][0] // PAGE
    assert get(port, f"/api/who?pid={wl.pid}&page={stack}")[0] == 404  # no --sharing
    assert get(port, f"/api/touch?pid={wl.pid}")[0] == 404     # no --stacks
    assert get(port, "/api/touch?pid=0")[0] == 400
    assert get(port, "/api/files?filter=" + "a" * 5000)[0] == 400  # over 4,096 bytes
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert get(port, "/api/list", method=method)[0] == 405
    try:                                   # 64 KiB of headers: refused, never a crash
        st, _ = get(port, "/", headers={"X-Big": "a" * 65536})
        assert 400 <= st < 500
    except (http.client.HTTPException, OSError):
        pass
    slowloris_and_flood(mv, port)
    t = time.monotonic()
    assert mv.snapshot_after(t)["processes"], "the snapshots stopped"
    assert mv.proc.poll() is None


def slowloris_and_flood(mv, port):
    """40 connections holding half a request each and a thousand connecting at once: the
    snapshots go on meanwhile, and once they are gone /api/list and /metrics are served."""
    slow = []
    for _ in range(40):                    # slowloris: half a request each, held open
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /api/list HTTP/1.1\r\nHost: x\r\n")
        slow.append(s)
    flood = []                             # a thousand at once: non-blocking connects
    for _ in range(1000):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        flood.append(s)
    for s in flood:
        s.close()
    t = time.monotonic()                   # the snapshots go on while slowloris holds on
    assert mv.snapshot_after(t)["processes"], "the snapshots stopped"
    for s in slow:
        s.close()
    deadline = time.monotonic() + GUARD_S
    while True:                            # served again once the flood is gone
        try:
            if get(port, "/api/list")[0] == 200 and get(port, "/metrics")[0] == 200:
                break
        except OSError:
            pass
        assert time.monotonic() < deadline, "the endpoint did not come back"
        time.sleep(0.05)


def urlquote(u):
    """Bytes http.client accepts on a request line, as a hostile client would send them."""
    return "".join(c if 0x21 <= ord(c) < 0x7f else "%%%02X" % (ord(c) & 0xff) for c in u)


class Recording:
    """`mevitop record -o path args` printing each frame's live JSON line as it writes it
    (MEVITOP_TEST_RECORD_JSON), so a test waits for the frame it needs, never a time."""

    def __init__(self, path, args):
        self.path = path
        self.proc = subprocess.Popen([MEVITOP, "record", "-o", path, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=dict(os.environ, MEVITOP_TEST_RECORD_JSON="1",
                                              **SAN_ENV))
        self.out = harness.Reader(self.proc.stdout, "recorder")
        self.first = json.loads(self.out.get(what="the first frame"))

    def frame(self, ok, what):
        """The next frame for which ok(frame) holds."""
        while True:
            f = json.loads(self.out.get(what=what))
            if ok(f):
                return f

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=GUARD_S) == 0, self.proc.stderr.read()


def replay_json(path, *args):
    return subprocess.run([MEVITOP, "replay", path, "--json", "--maps", *args],
                          capture_output=True, text=True, check=True,
                          env=dict(os.environ, **SAN_ENV)).stdout


class ReplayServer:
    """`mevitop replay path --listen` on a free port, once it printed its URL."""

    def __init__(self, path):
        self.port = free_port()
        self.proc = subprocess.Popen([MEVITOP, "replay", path, "--listen",
                                      f"127.0.0.1:{self.port}"],
                                     stderr=subprocess.PIPE, env=dict(os.environ, **SAN_ENV))
        err = harness.Reader(self.proc.stderr, "replay")
        while "web view on" not in err.get(what="the replay's URL"):
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.send_signal(signal.SIGINT)
        assert self.proc.wait(timeout=GUARD_S) == 0


def slide_to(b, at, what="frames"):
    """The replay page's slider moved to `at` seconds; returns once the page has drawn the
    frame there (and, what="touchFrames", its first touches too)."""
    seen = b.js(f"window.mevitop.{what}")
    b.js(f"document.getElementById('slider').value = {at}; "
         "document.getElementById('slider').oninput()")
    b.wait(f"window.mevitop.{what} > {seen}", f"the {what} at {at} s")


def test_replay_slider_equals_replay_json(workload, tmp_path):
    wl = workload()
    wl.do("map a 256")
    wl.do("touch a 0 64 1 w")
    path = str(tmp_path / "rec")
    rec = Recording(path, ["-p", str(wl.pid), "-i", "100"])
    try:
        t, _ = wl.do("touch a 100 100 1 w")
        rec.frame(lambda f: f["monotonic"] > t, "a frame after the touch")
    finally:
        rec.stop()
    frames = [json.loads(ln) for ln in replay_json(path).splitlines()]
    t0 = frames[0]["monotonic"]
    early, late = 0.0, math.ceil((frames[-1]["monotonic"] - t0) * 1000) / 1000
    with ReplayServer(path) as srv:
        port = srv.port
        # A replay's frames come when the slider asks (at=T): no stream, the page polls.
        assert get(port, f"/api/events?pid={wl.pid}")[0] == 404
        assert get(port, f"/api/who?pid={wl.pid}&page=1")[0] == 404   # live only
        assert get(port, f"/api/touch?pid={wl.pid}")[0] == 404   # recorded without --stacks
        b = open_heatmap(port, wl.pid, f"?at={late}")
        try:
            assert b.js("window.mevitop.transport") == "poll"
            for at in (late, early):
                slide_to(b, at)
                b.js("window.mevitop.setZoom(0)")
                entry = find_proc(json.loads(replay_json(path, "--at", str(at))), wl.pid)
                runs = model_pages(entry)
                want = {}
                for m in entry["mappings"]:
                    for pg in range(int(m["start"], 16) // PAGE, int(m["end"], 16) // PAGE):
                        want[pg] = runs.get(pg, "not resident").replace("_", " ")
                want.pop(VSYSCALL, None)
                drawn = canvas(b)
                assert drawn == want, differ(drawn, want)
            region = [pg for pg in want if wl.region("a") // PAGE <= pg <
                      wl.region("a") // PAGE + 256]
            assert sum(want[pg] == "resident" for pg in region) == 64   # the early frame
        finally:
            b.close()


def test_replay_who_touched_equals_replay_json(workload, tmp_path):
    """record --stacks (trace mode), then the replay's page: at a slider time after region
    a's touch and before b's, and at one after both, /api/touch?at=T answers and the "who
    touched" layer colours each region's pages by the stack `replay --json --at T` gives
    its mapping (first_touch: the same frames, thread and pages), resident where pagemap
    said so when the test read it at record time, right after each touch."""
    from test_stacks import CHAIN, LIB, PAGES
    w = workload("wl_stacks_fp", [LIB])
    path = str(tmp_path / "rec")
    rec = Recording(path, ["--mode", "trace", "--stacks", "-p", str(w.pid), "-i", "100"])
    addrs, truths, ats = {}, {}, {}
    try:
        for r in ("a", "b"):
            _, extra = w.do(f"touch {r} {PAGES[r]}")
            addrs[r] = int(extra[0], 16)
            truths[r] = pagemap_truth(w.pid)   # the workload waits: this is the frame's

            def attributed(f, r=r):            # the touch's stack has come (not a tick late)
                e = find_proc(f, w.pid)
                m = e and next((m for m in e.get("mappings", []) if int(m["start"], 16) <=
                                addrs[r] < int(m["end"], 16)), None)
                return m and [ft["pages"] for ft in m.get("first_touch", [])] == [PAGES[r]]
            f = rec.frame(attributed, f"a frame with region {r}'s first touch")
            # 50 us after the frame (both print microseconds), long before the next one.
            ats[r] = round(f["monotonic"] - rec.first["monotonic"], 6) + 0.00005
    finally:
        rec.stop()
    with ReplayServer(path) as srv:
        b = open_heatmap(srv.port, w.pid, f"?at={ats['a']:.6f}")
        try:
            b.wait("window.mevitop.touchFrames > 0 && "
                   "!document.getElementById('touch-layer').disabled", "the first touches")
            b.js("document.getElementById('layer').value = 'touch'; "
                 "document.getElementById('layer').onchange()")
            for last in ("b", "a"):        # the later time first: the slider goes back
                at = f"{ats[last]:.6f}"
                slide_to(b, at, "touchFrames")
                b.js("window.mevitop.draw()")
                touched = ("a", "b")[:("a", "b").index(last) + 1]
                entry = find_proc(json.loads(replay_json(path, "--at", at)), w.pid)
                st, body = get(srv.port, f"/api/touch?pid={w.pid}&at={at}")
                assert st == 200, body
                stacks = json.loads(body)["stacks"]
                assert stacks == b.js("window.mevitop.view.touch.stacks")
                # Every stack of the process (its start-up's too), with the resident pages
                # of what it first touched, summed over the mappings as replay says them.
                # A stack none of whose pages is resident now (start-up's, its buffer freed)
                # stays in /api/touch for the hover of what it touched; replay's first_touch,
                # as the 'w' pane, lists only stacks with resident pages.
                want_pages = {}
                for m in entry["mappings"]:
                    for ft in m.get("first_touch", []):
                        key = " \u2190 ".join(fr["name"] for fr in ft["frames"])
                        want_pages[key] = want_pages.get(key, 0) + ft["pages"]
                assert {s["frames"]: s["pages"] for s in stacks if s["pages"]} == want_pages
                drawn = b.js("window.mevitop.canvasPages()")
                for r, addr in addrs.items():
                    first = addr // PAGE
                    m = next(m for m in entry["mappings"]
                             if int(m["start"], 16) <= addr < int(m["end"], 16))
                    truth = truths[last]
                    if r not in touched:
                        assert "first_touch" not in m or not m["first_touch"], m
                        want = {pg: "not resident" for pg in range(first, first + 512)}
                    else:
                        (ft,) = m["first_touch"]
                        names = [fr.get("function") for fr in ft["frames"]]
                        assert names[:4] == CHAIN[r], names
                        k = next(i for i, s in enumerate(stacks)
                                 if s["frames"].startswith(CHAIN[r][0] + "+0x"))
                        assert k < 8, stacks        # a colour of its own
                        assert (stacks[k]["pages"], stacks[k]["tid"], stacks[k]["unwind"]) \
                            == (ft["pages"], ft["tid"], ft["unwind"]) == \
                            (PAGES[r], w.pid, "fp")
                        want = {pg: f"stack {k}" if truth.get(pg) == "resident" else
                                "not resident" for pg in range(first, first + 512)}
                    got = {pg: drawn.get(str(pg)) for pg in want}
                    assert got == want, (at, r, [(hex(pg * PAGE), got[pg], want[pg])
                                                 for pg in want if got[pg] != want[pg]][:10])
                    assert sum(truth.get(pg) == "resident" for pg in want) == \
                        (PAGES[r] if r in touched else 0)
        finally:
            b.close()


def pfn_of(pid, page):
    """The PFN pid's page (a page number) maps now, read by the test, or None."""
    fd = os.open(f"/proc/{pid}/pagemap", os.O_RDONLY)
    try:
        (v,) = struct.unpack("<Q", os.pread(fd, 8, page * 8))
    finally:
        os.close(fd)
    return v & ((1 << 55) - 1) if v >> 63 & 1 else None


def share_layer_equals_kpagecount(b, pid, base, n):
    """The sharing layer drawn for n pages from address base, asserted equal to each page's
    class from its PFN's map count (kpagecount) read now by the test: {page: class}, and
    {page: count} of those mapped more than once."""
    from test_sharing import by_class, kernel_truth
    drawn = b.js("window.mevitop.canvasPages()")
    _, _, _, counts = kernel_truth(pid, base, base + n * PAGE)
    truth = pagemap_truth(pid)
    want = {pg: by_class(counts[pg]) if pg in counts else
            "private" if truth.get(pg) == "resident" else "not resident"
            for pg in range(base // PAGE, base // PAGE + n)}
    got = {pg: drawn.get(str(pg)) for pg in want}
    assert got == want, [(hex(pg * PAGE), got[pg], want[pg]) for pg in want
                         if got[pg] != want[pg]][:10]
    return want, counts


def test_sharing_layer_equals_kpagecount(mevitop, workload):
    """--sharing: after a fork and the child's write to part of a region, the child's
    sharing layer on the canvas gives each page the class the test reads from its PFN's
    map count (kpagecount): private where the child wrote, by 2 where it did not; the
    hover of a shared page names the count and the other process mapping the same PFN
    (/api/who, as the terminal's cursor line does), of a written one "private"."""
    from test_sharing import shared_snapshot
    wl = workload("share_wl")
    _, words = wl.do("anon a 512")
    base = int(words[0], 16)
    port = free_port()
    _, words = wl.do("fork")
    child = int(words[0])
    mv = mevitop(["-p", f"{wl.pid},{child}", "-i", "100", "--sharing", "--listen",
                  f"127.0.0.1:{port}"])
    t, _ = wl.do("cwrite a 0 128")
    shared_snapshot(mv, (wl.pid, child), t)
    b = open_heatmap(port, child)
    try:
        b.wait("!document.getElementById('share-layer').disabled", "the sharing layer")
        b.js("document.getElementById('layer').value = 'share'; "
             "document.getElementById('layer').onchange(); window.mevitop.draw()")
        want, counts = share_layer_equals_kpagecount(b, child, base, 512)
        assert list(want.values()).count("private") == 128
        assert list(want.values()).count("2") == 384
        top = b.js("document.getElementById('map').getBoundingClientRect().top")
        comm = open(f"/proc/{wl.pid}/comm").read().strip()
        for k in (0, 200):
            pg = base // PAGE + k
            mine = pfn_of(child, pg)
            sharers = [p for p in (wl.pid,) if pfn_of(p, pg) == mine]  # the PFN's others
            asked = b.js("window.mevitop.whoAnswers")
            b.js("window.mevitop.setZoom(2)")
            p = b.js(f"window.mevitop.pixelOf({base + k * PAGE})")
            b.mouse("mouseMoved", p["x"] + p["size"] / 2, top + p["y"] + p["size"] / 2)
            if pg not in counts:           # written by the child: private, nothing asked
                assert not sharers
                text = b.js("window.mevitop.hoverText()")
                assert ", mapped once (private)  (" in text, text
                assert b.js("window.mevitop.whoAnswers") == asked
                who = json.loads(get(port, f"/api/who?pid={child}&page={pg}")[1])
                assert (who["count"], who["n"], who["pids"]) == (1, 0, []), who
                continue
            assert sharers == [wl.pid] and counts[pg] == 2, (sharers, counts[pg])
            b.wait(f"window.mevitop.whoAnswers > {asked}", "the hover's /api/who answer")
            text = b.js("window.mevitop.hoverText()")
            assert f", mapped by {counts[pg]} (also pid {wl.pid} {comm})  (" in text, text
            who = json.loads(get(port, f"/api/who?pid={child}&page={pg}")[1])
            assert (who["known"], who["count"], who["n"], who["pids"], who["comm"]) == \
                (True, counts[pg], len(sharers), sharers, comm), who
        assert "USS" in b.js("document.getElementById('title').textContent")
    finally:
        b.close()
    # /api/who's answers are counted as the others are, the engine's reads as its hold.
    def stats():
        return json.loads(get(port, "/api/stats")[1])["who"]
    was = stats()
    bodies = [get(port, f"/api/who?pid={child}&page={base // PAGE + k}")[1] for k in (0, 200)]
    now = stats()
    assert (now["answered"] - was["answered"], now["busy"] - was["busy"],
            now["bytes"] - was["bytes"]) == (2, 0, sum(map(len, bodies))), (was, now)
    held = now["held_ns"] - was["held_ns"]
    assert 0 < held <= now["total_ns"] - was["total_ns"] and now["held_max_ns"] >= held / 2, \
        (was, now)


def test_who_touched_layer_names_the_first_toucher(mevitop, workload):
    """--stacks (trace mode): the "who touched" layer colours each resident page of a region
    by the stack that first touched it, the function the workload's own code says
    (tests/workloads/wl_stacks.c: touch_X writes region X), residency from pagemap; the
    hover names its thread and caller chain as the terminal's cursor line does, and each
    stack's pages are the JSON snapshot's first_touch pages for that mapping."""
    from test_stacks import CHAIN, LIB, PAGES, attributed, touch_regions
    w = workload("wl_stacks_fp", [LIB])
    port = free_port()
    mv = mevitop(["--mode", "trace", "--stacks", "-p", str(w.pid), "-i", "100", "--listen",
                  f"127.0.0.1:{port}"])
    addrs, snap = touch_regions(w, mv, ("a", "b"))
    entry = find_proc(snap, w.pid)
    first_touch = {r: attributed(entry, addr, w.pid, r)   # the terminal's data, in full
                   for r, addr in addrs.items()}
    b = open_heatmap(port, w.pid)
    try:
        b.wait("window.mevitop.view.touch && ['touch_a', 'touch_b'].every((f) => "
               "window.mevitop.view.touch.stacks.some((s) => s.frames.startsWith(f + '+0x')))",
               "both regions' stacks")
        b.js("document.getElementById('layer').value = 'touch'; "
             "document.getElementById('layer').onchange(); window.mevitop.draw()")
        assert not b.js("document.getElementById('touch-layer').disabled")
        stacks = b.js("window.mevitop.view.touch.stacks")
        drawn = b.js("window.mevitop.canvasPages()")
        truth = pagemap_truth(w.pid)
        ks = {}
        for r, addr in addrs.items():
            k = next(i for i, s in enumerate(stacks) if s["frames"].startswith(CHAIN[r][0] + "+0x"))
            assert k < 8, stacks                # a colour of its own
            first = addr // PAGE
            want = {pg: f"stack {k}" if truth.get(pg) == "resident" else "not resident"
                    for pg in range(first, first + 512)}
            got = {pg: drawn.get(str(pg)) for pg in want}
            assert got == want, [(hex(pg * PAGE), got[pg], want[pg]) for pg in want
                                 if got[pg] != want[pg]][:10]
            assert list(want.values()).count(f"stack {k}") == PAGES[r]
            assert stacks[k]["pages"] == PAGES[r] == first_touch[r]["pages"]
            assert (stacks[k]["tid"], stacks[k]["unwind"]) == (first_touch[r]["tid"], "fp")
            ks[r] = k
        b.js("window.mevitop.setZoom(-1)")   # 2 pages a pixel: a cell takes its pages' stack
        for r, addr in addrs.items():
            b.js(f"window.mevitop.scrollTo({addr})")
            mine, dark = b.js(f"TOUCH_RGB[{ks[r]}]"), b.js("STATE_RGB[0]")
            for off, want in ((0, mine), (PAGES[r] - 2, mine), (PAGES[r], dark)):
                p = b.js(f"window.mevitop.pixelOf({addr + off * PAGE})")
                got = b.js(f"Array.from(document.getElementById('map').getContext('2d')"
                           f".getImageData({p['x']}, {p['y']}, 1, 1).data.slice(0, 3))")
                assert got == want, (r, off, got, want)
        top = b.js("document.getElementById('map').getBoundingClientRect().top")
        b.js("window.mevitop.setZoom(2)")
        for r, addr in addrs.items():
            b.js(f"window.mevitop.scrollTo({addr})")
            p = b.js(f"window.mevitop.pixelOf({addr + 3 * PAGE})")
            b.mouse("mouseMoved", p["x"] + p["size"] / 2, top + p["y"] + p["size"] / 2)
            text = b.js("window.mevitop.hoverText()")
            assert "page 4 of " in text and ": resident" in text, text
            tail = text.split(" \u00b7 first touch: ", 1)[1]
            assert tail.startswith(f"tid {w.pid}, ") and " s ago, " in tail, text
            names = [f.split("+0x")[0] for f in tail.split(" s ago, ", 1)[1].split(" \u2190 ")]
            assert names[:4] == CHAIN[r], text
        low = min(addrs.values())          # the README's: both regions, one hovered
        b.js("window.mevitop.setZoom(4)")
        b.js(f"window.mevitop.scrollTo({low})")
        p = b.js(f"window.mevitop.pixelOf({low + 3 * PAGE})")
        b.mouse("mouseMoved", p["x"] + p["size"] / 2, top + p["y"] + p["size"] / 2)
        assert " \u00b7 first touch: " in b.js("window.mevitop.hoverText()")
        os.makedirs(SHOTS, exist_ok=True)
        b.screenshot(os.path.join(SHOTS, "web-touch.png"))
    finally:
        b.close()
