"""The web view's push channel (issue 27, item 1): /api/events, server-sent events after each
snapshot that changed something, in Debian's headless Chromium (tests/integration/cdp.py).
A write reaches the canvas through the stream alone (no /api/process poll answered), and the
canvas equals pagemap read by the test after it; the stream needs the token off loopback
and carries the same headers; mevitop stops at once with streams open (they are suspended
connections); the number of streams is bounded, one more gets 503 and the page polls
instead, and /metrics goes on, through slowloris and a connection flood too.  Two pages on
one process: one copy a snapshot; a quiet process: no copy at all until it changes.  The list's stream: the whole list, then what changed, and
the page's list equal to /api/list of the same frame after each event."""
import http.client
import json
import os
import re
import subprocess
import time

import harness
from cdp import Browser
from harness import GUARD_S, MEVITOP, PAGE, SAN_ENV, find_proc, model_pages
from test_web import canvas, differ, free_port, get, open_heatmap, \
    share_layer_equals_kpagecount, slowloris_and_flood, trace_target, truth_states
from test_web import quiet_target  # noqa: F401  (a fixture)
from test_ui_tree import Tree

MAX_STREAMS = 8                            # WEB_MAX_STREAMS (out/web_events.h)


def stats(port):
    return json.loads(get(port, "/api/stats")[1])


def open_stream(port, query, headers=None):
    """An /api/events stream: the connection and its response, headers read."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=GUARD_S)
    c.request("GET", "/api/events" + query, headers=headers or {})
    return c, c.getresponse()


def read_event(r):
    """The next event of a stream as {field: value} (comments skipped)."""
    ev = {}
    while True:
        line = r.readline()           # chunks decoded
        assert line, "the stream ended"
        line = line.decode().rstrip("\n")
        if not line:
            if ev:
                return ev
            continue
        if line.startswith(":"):
            continue
        k, _, v = line.partition(": ")
        ev[k] = v


def model_has(mv, t, pid, want):
    """The first snapshot after t in which the model's pages include want ({page: state,
    None: not resident})."""
    deadline = time.monotonic() + GUARD_S
    snap = mv.snapshot_after(t)
    while True:
        pages = model_pages(find_proc(snap, pid))
        if all(pages.get(pg) == st for pg, st in want.items()):
            return snap
        assert time.monotonic() < deadline, "the model never saw the change"
        snap = mv.snapshot()


def stream_caught_up(b, port, pid):
    """Once the model has a change (a snapshot said so): the page's stream has looked at a
    frame after that snapshot's, its copy taken after the change; everything it wrote has
    left it; and the page has had every event it sent.  The canvas then shows the model as
    of the change or later, exactly.  The streams hear of a frame after it is written, so
    when the test has read the snapshot they may not have yet: the frame after the count
    read now is after the snapshot's whichever it is."""
    frames = stats(port)["streams"]["frames"] + 1
    deadline = time.monotonic() + GUARD_S
    while True:                 # /api/stats is answered on the thread the streams write on
        mine = [s for s in stats(port)["streams"]["open"] if s["pid"] == pid]
        assert mine, "no stream"
        if all(s["looked"] >= frames and s["unsent"] == 0 for s in mine):
            break
        assert time.monotonic() < deadline, f"the stream did not look again: {mine}"
        time.sleep(0.02)
    # Several pages on pid: the page's is one of them (they look at the same frames).
    b.wait(f"{[s['events'] for s in mine]}.includes(window.mevitop.streamEvents)",
           "the stream's events")


def streams_settled(port, n):
    """/api/stats once each of the n open streams has answered the latest frame and waits
    for the next: every answer of that frame is counted in it."""
    deadline = time.monotonic() + GUARD_S
    while True:
        st = stats(port)
        ss = st["streams"]
        if len(ss["open"]) == n and all(s["waiting"] and s["looked"] == ss["frames"]
                                        for s in ss["open"]):
            return st
        assert time.monotonic() < deadline, f"the streams did not settle: {ss}"
        time.sleep(0.01)


def looks_over(port, n, frames):
    """The open streams (n of them) over the next `frames` frames, settled at both ends:
    their looks, the copies those made and the looks that found the process unchanged."""
    s0 = streams_settled(port, n)
    while stats(port)["streams"]["frames"] < s0["streams"]["frames"] + frames:
        time.sleep(0.05)
    s1 = streams_settled(port, n)
    return tuple(s1["events"][k] - s0["events"][k] for k in ("answered", "copies", "unchanged"))


def same_frame_polls(port, pid):
    """Two /api/process answers in a row of one frame (their times equal: no tick between
    them) and how many copies of the process they made."""
    for _ in range(20):
        c0 = stats(port)["process"]["copies"]
        a = json.loads(get(port, f"/api/process?pid={pid}")[1])
        b = json.loads(get(port, f"/api/process?pid={pid}")[1])
        if a["monotonic"] == b["monotonic"]:
            return a, b, stats(port)["process"]["copies"] - c0
    raise AssertionError("no two polls of one frame")


def test_a_write_reaches_two_viewers_through_the_stream_from_one_copy(mevitop, quiet_target):
    """Two pages on one process: each frame is copied once whichever of their streams
    (or a poll) answers first, the others share the copy, and each canvas equals pagemap."""
    wl = quiet_target
    port = free_port()
    mv = mevitop(["-p", str(wl.pid), "-i", "200", "--listen", f"127.0.0.1:{port}"])
    b = open_heatmap(port, wl.pid)
    b2 = None
    try:
        b2 = open_heatmap(port, wl.pid)
        for x in (b, b2):
            assert x.js("window.mevitop.transport") == "stream"
            assert x.js("document.body.dataset.transport") == "stream"
            stream_caught_up(x, port, wl.pid)
        want = truth_states(wl.pid)
        for x in (b, b2):
            drawn = canvas(x)
            assert drawn == want, differ(drawn, want)
        events = b.js("window.mevitop.streamEvents")

        # Both streams look at every frame: one copy a frame, not one a stream.
        looks, copies, same = looks_over(port, 2, 5)
        # The first look at a frame copies, or finds the process unchanged (no copy).
        assert looks >= 2 * 5 and 1 <= copies + same <= looks // 2 + 1, (looks, copies, same)

        base = wl.region("a") // PAGE
        t, _ = wl.do("touch a 1 40 3 w")       # pages 1, 4, ... 40 of region a
        written = {base + k: "resident" for k in range(1, 41, 3)}
        assert any(want[pg] != "resident" for pg in written), "nothing new to draw"
        model_has(mv, t, wl.pid, written)
        want = truth_states(wl.pid)
        for x in (b, b2):
            stream_caught_up(x, port, wl.pid)
            x.js("window.mevitop.draw()")
            drawn = canvas(x)
            assert drawn == want, differ(drawn, want)
        assert b.js("window.mevitop.streamEvents") > events, "no event carried the write"
        st = stats(port)
        assert st["process"]["answered"] == 0, "the page polled"
        assert st["events"]["answered"] >= st["streams"]["events"] >= 2, st
        assert b.js("window.mevitop.transport") == "stream"

        # Polls of one frame share its copy too, and answer the same.
        p1, p2, made = same_frame_polls(port, wl.pid)
        assert made <= 1, made
        for k in ("gen", "since"):
            del p1[k], p2[k]
        assert p1 == p2
    finally:
        b.close()
        if b2:
            b2.close()


def test_a_quiet_stream_copies_nothing_and_a_change_still_reaches_the_canvas(mevitop,
                                                                             workload):
    """A page streaming a process that does nothing: its stream looks at every tick but
    copies the process (under the engine's lock) only when it changed since the last copy
    (model_shown), none for ticks on end, each look counted `unchanged`.  Then the change
    that keeps every count and adds no heat (trace_target), which only the model's
    generation says, and a write: after each, once the stream has looked at a frame after
    the model had it, the canvas equals pagemap read by the test.  (Mutant: the key without
    the model's generation: the canvas keeps the dropped page.)"""
    wl, mv, port = trace_target(mevitop, workload)
    b = open_heatmap(port, wl.pid)
    try:
        assert b.js("window.mevitop.transport") == "stream"
        stream_caught_up(b, port, wl.pid)
        looks, copies, same = looks_over(port, 1, 8)
        # A reconciliation round (every 30 s) re-reads the layout, which moves the
        # generation: one copy at most in the window, not one a tick.
        assert looks >= 8 and copies <= 1 and copies + same == looks, (looks, copies, same)

        base = wl.region("b") // PAGE
        gone, new = base + 6, base + 41
        for cmds, want_model in ((("advise b 6 1 dontneed", "advise b 41 1 populate_write"),
                                  {gone: None, new: "resident"}),
                                 (("touch b 44 8 1 w",),
                                  {base + k: "resident" for k in range(44, 52)})):
            copied = stats(port)["events"]["copies"]
            for c in cmds:
                t, _ = wl.do(c)
            model_has(mv, t, wl.pid, want_model)
            stream_caught_up(b, port, wl.pid)
            b.js("window.mevitop.draw()")
            want = truth_states(wl.pid)
            assert all(want[pg] == (st or "not resident") for pg, st in want_model.items())
            drawn = canvas(b)
            assert drawn == want, differ(drawn, want)
            assert stats(port)["events"]["copies"] > copied, "no copy of the change"
        assert stats(port)["process"]["answered"] == 0, "the page polled"
    finally:
        b.close()


def test_a_sharing_pass_alone_reaches_the_canvas_through_the_stream(mevitop, workload):
    """--sharing, the parent of a forked pair streamed: the child's write to part of a
    region makes those pages of the parent's private (kpagecount: mapped once) while
    nothing of the parent itself changes, so only the next sharing pass of it says so; the
    stream's look at a tick after that pass copies the parent again, and its sharing layer
    on the canvas equals kpagecount page by page.  (Mutant: model_shown without the pass:
    the canvas keeps "2" for the written pages.)"""
    from test_sharing import shared_snapshot
    wl = workload("share_wl")
    _, words = wl.do("anon a 512")
    base = int(words[0], 16)
    _, words = wl.do("fork")
    child = int(words[0])
    port = free_port()
    mv = mevitop(["-p", f"{wl.pid},{child}", "-i", "100", "--sharing", "--listen",
                  f"127.0.0.1:{port}"])
    shared_snapshot(mv, (wl.pid, child), 0)
    b = open_heatmap(port, wl.pid)
    try:
        assert b.js("window.mevitop.transport") == "stream"
        b.wait("!document.getElementById('share-layer').disabled", "the sharing layer")
        b.js("document.getElementById('layer').value = 'share'; "
             "document.getElementById('layer').onchange()")
        for cmd, private in ((None, 0), ("cwrite a 0 128", 128)):
            if cmd:
                t, _ = wl.do(cmd)
                shared_snapshot(mv, (wl.pid, child), t)
            stream_caught_up(b, port, wl.pid)
            b.js("window.mevitop.draw()")
            want, _ = share_layer_equals_kpagecount(b, wl.pid, base, 512)
            assert list(want.values()).count("private") == private
        assert stats(port)["process"]["answered"] == 0, "the page polled"
    finally:
        b.close()


def test_a_change_that_keeps_every_count_reaches_the_canvas_through_the_stream(mevitop,
                                                                                 workload):
    """As test_web's poll test: one page dropped and another populated, counts and heat
    unchanged (trace mode), so only the page sets say the mapping changed; the stream's
    event carries it."""
    wl, mv, port = trace_target(mevitop, workload)
    b = open_heatmap(port, wl.pid)
    try:
        assert b.js("window.mevitop.transport") == "stream"
        stream_caught_up(b, port, wl.pid)
        base = wl.region("b") // PAGE
        gone, new = base + 5, base + 40
        wl.do("advise b 5 1 dontneed")
        t, _ = wl.do("advise b 40 1 populate_write")
        model_has(mv, t, wl.pid, {gone: None, new: "resident"})
        stream_caught_up(b, port, wl.pid)
        b.js("window.mevitop.draw()")
        want = truth_states(wl.pid)
        assert want[gone] == "not resident" and want[new] == "resident"
        drawn = canvas(b)
        assert drawn == want, differ(drawn, want)
        assert stats(port)["process"]["answered"] == 0, "the page polled"
    finally:
        b.close()


def test_stream_needs_the_token_off_loopback_and_stops_clean(workload):
    wl = workload()
    port = free_port()
    mv = subprocess.Popen([MEVITOP, "--json", "-i", "200", "-p", str(wl.pid), "--listen",
                           f"0.0.0.0:{port}"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=dict(os.environ, **SAN_ENV))
    conns = []
    try:
        err = harness.Reader(mv.stderr, "stderr")
        token = None
        while not token:
            m = re.search(r"\?token=([0-9a-f]{32})", err.get(what="the web view's URL"))
            token = m and m.group(1)
        assert get(port, f"/api/events?pid={wl.pid}")[0] == 403
        assert get(port, "/api/events")[0] == 403
        assert get(port, f"/api/events?pid={wl.pid}&token=" + "0" * 32)[0] == 403
        c, r = open_stream(port, f"?pid={wl.pid}&token={token}")
        conns.append(c)
        assert r.status == 200
        assert r.getheader("Content-Type") == "text/event-stream"
        for name, value in (("X-Frame-Options", "DENY"), ("X-Content-Type-Options", "nosniff"),
                            ("Cache-Control", "no-store")):
            assert r.getheader(name) == value, name
        assert r.getheader("Content-Security-Policy").startswith("default-src 'self'")
        ev = read_event(r)
        assert ev["event"] == "process", ev
        body = json.loads(ev["data"])
        assert body["pid"] == wl.pid and body["mappings"], body
        assert ev["id"] == f"{body['epoch']}-{body['gen']}", ev
        c2, r2 = open_stream(port, "", headers={"Cookie": f"mevitop_token={token}"})
        conns.append(c2)
        assert r2.status == 200 and read_event(r2)["event"] == "list"
        deadline = time.monotonic() + GUARD_S
        while True:             # both suspended, waiting for a snapshot that changes something
            st = json.loads(get(port, f"/api/stats?token={token}")[1])["streams"]["open"]
            if len(st) == 2 and all(s["waiting"] for s in st):
                break
            assert time.monotonic() < deadline, st
            time.sleep(0.02)
        mv.terminate()
        assert mv.wait(timeout=GUARD_S) == 0
        for rr in (r, r2):      # each stream ends (or its connection closes)
            try:
                while rr.readline():
                    pass
            except (OSError, http.client.HTTPException):
                pass                # closed mid-chunk: as good as ended
    finally:
        for c in conns:
            c.close()
        if mv.poll() is None:
            mv.kill()
            mv.wait()


def test_streams_bounded_page_polls_beyond_and_metrics_go_on(mevitop, quiet_target):
    wl = quiet_target
    port = free_port()
    mv = mevitop(["-p", str(wl.pid), "-i", "200", "--listen", f"127.0.0.1:{port}"])
    held = []
    try:
        for q in ("pid=abc", "pid=-1", "pid=99999999999", "pid="):
            assert get(port, "/api/events?" + q)[0] == 400, q
        assert get(port, "/api/events", method="POST")[0] == 405
        c, r = open_stream(port, "?pid=999999999")     # no such process: said, then ended
        assert r.status == 200 and read_event(r) == {"event": "gone",
                                                     "data": '{"pid": 999999999}'}
        assert r.read() == b""
        c.close()
        for i in range(MAX_STREAMS):
            c, r = open_stream(port, f"?pid={wl.pid}" if i % 2 else "")
            held.append((c, r))     # a response let go of closes its socket
            assert r.status == 200
            assert read_event(r)["event"] in ("process", "list")
        for _ in range(3):
            st, body = get(port, f"/api/events?pid={wl.pid}")
            assert st == 503, (st, body)
        assert get(port, "/metrics")[0] == 200
        assert get(port, "/api/list")[0] == 200
        st = stats(port)["streams"]
        assert len(st["open"]) == MAX_STREAMS and st["refused"] == 3, st
        # A page opened now is refused a stream and polls; it draws the same.
        b = open_heatmap(port, wl.pid)
        try:
            assert b.js("window.mevitop.transport") == "poll"
            want = truth_states(wl.pid)
            drawn = canvas(b)
            assert drawn == want, differ(drawn, want)
        finally:
            b.close()
        # A stream whose client went is found at its next write (a heartbeat at the
        # latest): its slot is free again.
        for x in held.pop():
            x.close()
        deadline = time.monotonic() + GUARD_S
        while len(stats(port)["streams"]["open"]) == MAX_STREAMS:
            assert time.monotonic() < deadline, "a closed stream kept its slot"
            time.sleep(0.05)
        c, r = open_stream(port, f"?pid={wl.pid}")
        held.append((c, r))
        assert r.status == 200
        t = time.monotonic()
        assert mv.snapshot_after(t)["processes"], "the snapshots stopped"
    finally:
        for c, r in held:
            r.close()
            c.close()
    assert mv.stop(sig=2) == 0


def test_streams_and_hostile_clients_leave_metrics_served(mevitop, quiet_target):
    """Every stream open, then slowloris and a thousand connections at once: the snapshots
    go on, /metrics is served again once they are gone, and the streams still carry a
    write (their connections outlived the flood)."""
    wl = quiet_target
    port = free_port()
    mv = mevitop(["-p", str(wl.pid), "-i", "200", "--listen", f"127.0.0.1:{port}"])
    held = []
    try:
        for _ in range(MAX_STREAMS):
            c, r = open_stream(port, f"?pid={wl.pid}")
            held.append((c, r))
            assert r.status == 200 and read_event(r)["event"] == "process"
        slowloris_and_flood(mv, port)
        t, _ = wl.do("touch a 2 30 3 w")
        for _, r in held:                  # each stream brings the write
            while True:
                body = json.loads(read_event(r)["data"])
                if body["monotonic"] > t and body["mappings"]:
                    break
    finally:
        for c, r in held:
            r.close()
            c.close()
    assert mv.stop(sig=15) == 0



def page_list(b):
    """The page's list as its last event left it: (its monotonic time, its rows)."""
    return b.js("[window.mevitop.listTime, window.mevitop.listRows()]")


def page_equals_list(b, port, seen):
    """After the page's next list event: its rows equal /api/list's, asked in the same
    frame (the two share the frame's copy: their times are equal).  seen: the page's
    events so far; returns the count after the one compared, or None (the frame had
    ticked before /api/list was asked: nothing to compare)."""
    b.wait(f"window.mevitop.listFrames > {seen}", "the page's next list event", GUARD_S)
    n = b.js("window.mevitop.listFrames")
    t, rows = page_list(b)
    answer = json.loads(get(port, "/api/list")[1])
    if answer["monotonic"] != t:
        return n, None
    assert rows == answer["processes"], (rows, answer["processes"])
    return n, rows


def test_list_stream_sends_what_changed_and_the_page_keeps_the_list(mevitop, workload):
    """The list's stream sends the whole list first, then each frame's rows new or changed
    and the pids gone; the page's list, diffs applied, equals /api/list of the same frame
    after each event, through processes started (a shell's sleeps, forktree members), changed
    and gone; and an event of a list where a few rows change is a small part of the whole."""
    ft = Tree()
    sh = None
    try:
        members = [ft.spawn(ft.root, f"ftm{i}", 8) for i in range(24)]
        # Churn: a shell whose sleeps start and exit, its own row changing as it forks.
        sh = subprocess.Popen(["sh", "-c", "while :; do sleep 0.15; done"])
        port = free_port()
        mevitop(["-p", f"{ft.root},{sh.pid}", "-i", "200", "--listen", f"127.0.0.1:{port}"])
        c, r = open_stream(port, "")
        b = Browser(f"http://127.0.0.1:{port}/")
        try:
            first = read_event(r)
            assert first["event"] == "list", first
            whole = len(first["data"])
            b.wait("window.mevitop && window.mevitop.listFrames > 0", "the list's first frame")
            assert b.js("window.mevitop.transport") == "stream"
            seen, compared, pids = 0, 0, set()
            born = ft.spawn(ft.root, "ftnew", 8)
            ft.quit(members[0])
            deadline = time.monotonic() + GUARD_S
            while compared < 6 or born not in pids or members[0] in pids:
                assert time.monotonic() < deadline, (compared, born, members[0], pids)
                seen, rows = page_equals_list(b, port, seen)
                if rows is not None:
                    compared += 1
                    pids = {p["pid"] for p in rows}
            # Diffs did it: rows changed and gone among them, and none the page could not
            # apply (it would have started the stream over).
            assert b.js("window.mevitop.listDiffs") >= 3
            assert b.js("window.mevitop.listResyncs") == 0
            assert b.js("window.mevitop.listGone") >= 1
            assert b.js("window.mevitop.listChanged") >= 1
            # The polls of a frame the streams had copied shared their copy.
            st = stats(port)["list"]
            assert st["answered"] >= compared and st["copies"] <= st["answered"] - compared, st
            assert b.js("window.mevitop.listUpdated") >= 1
            # The raw stream meanwhile: diffs only, each a small part of the whole; a row
            # it had already sent comes as the fields that changed, and only those.
            diffs, fields = [], []
            mine = {p["pid"]: p for p in json.loads(first["data"])["processes"]}
            while len(diffs) < 5:
                ev = read_event(r)
                assert ev["event"] == "listdiff", ev["event"]
                d = json.loads(ev["data"])
                for pid in d["removed"]:
                    del mine[pid]
                for row in d["changed"]:
                    mine[row["pid"]] = row
                for u in d["updated"]:
                    was = mine[u["pid"]]
                    assert len(u) > 1 and all(was[k] != v for k, v in u.items() if k != "pid"), \
                        (was, u)
                    was.update(u)
                    fields.append(len(u) - 1)
                assert len(mine) == d["rows"], d
                diffs.append(len(ev["data"]))
            whole_row = len(next(iter(mine.values())))
            print(f"fields sent of a row updated: {fields} of {whole_row}")
            assert min(fields) < whole_row - 1, fields
            ratio = sum(diffs) / len(diffs) / whole
            print(f"whole list {whole} bytes, diffs {diffs}: {ratio:.3f} of it")
            assert ratio < 0.3, (whole, diffs)
        finally:
            b.close()
            r.close()
            c.close()
    finally:
        if sh:
            sh.kill()
            sh.wait()
        ft.close()
