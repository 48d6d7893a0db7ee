"""The web view in Debian's other browser (issue 27: "works in Debian's chromium and
firefox-esr"): the same page in a headless firefox-esr, driven through WebDriver BiDi
(tests/integration/bidi.py).  The canvas read back page by page equals pagemap read by the
test, a write reaches the canvas live through the event stream, and the list sorts; the rest of the page's behaviour
is tested in Chromium (test_web.py), whose page is the same file."""
import json

import pytest

from bidi import Browser
from test_web import canvas, differ, free_port, get, truth_states


@pytest.fixture(scope="module")
def firefox():
    """One firefox-esr for the module (it takes seconds to start), each test its own page."""
    b = Browser("about:blank")
    yield b
    b.close()


def test_firefox_canvas_equals_pagemap_and_follows_a_write(firefox, mevitop, workload,
                                                          swapfile):
    wl = workload()
    wl.do("map a 512")
    wl.do("touch a 0 512 3 w")
    wl.do("advise a 0 90 pageout")          # the first 30 touched go to swap
    port = free_port()
    mv = mevitop(["-p", str(wl.pid), "-i", "200", "--listen", f"127.0.0.1:{port}"])
    b = firefox
    b.goto(f"http://127.0.0.1:{port}/#pid={wl.pid}")
    b.wait("window.mevitop && window.mevitop.ready && window.mevitop.draws > 0",
           "the heatmap's first frame")
    b.js("window.mevitop.setZoom(0)")
    want = truth_states(wl.pid)
    assert list(want.values()).count("swapped") >= 20, "nothing went to swap"
    drawn = canvas(b)
    assert drawn == want, differ(drawn, want)
    t, _ = wl.do("touch a 1 40 3 w")
    mv.snapshot_after(t)
    frames = b.js("window.mevitop.frames")
    b.wait(f"window.mevitop.frames > {frames} && window.mevitop.lastSent === 1",
           "an update with the mapping written")
    b.js("window.mevitop.draw()")
    want = truth_states(wl.pid)
    drawn = canvas(b)
    assert drawn == want, differ(drawn, want)
    assert b.js("window.mevitop.transport") == "stream"   # EventSource, as in Chromium
    stats = json.loads(get(port, "/api/stats")[1])
    assert stats["events"]["answered"] >= 1, stats
    assert not b.errors, b.errors


def test_firefox_list_sorts(firefox, mevitop, workload):
    wls = [workload() for _ in range(3)]
    for i, w in enumerate(wls):
        w.do(f"map a {64 * (i + 1)}")
        w.do(f"touch a 0 {64 * (i + 1)} 1 w")
    port = free_port()
    mevitop(["-p", ",".join(str(w.pid) for w in wls), "--listen", f"127.0.0.1:{port}"])
    b = firefox
    b.goto(f"http://127.0.0.1:{port}/")
    b.wait("window.mevitop && window.mevitop.listFrames > 0", "the list's first frame")
    procs = json.loads(get(port, "/api/list")[1])["processes"]
    assert sorted(p["pid"] for p in procs) == sorted(w.pid for w in wls)
    b.js("document.querySelector('th[data-key=resident]').click()")
    b.js("list.desc = true; renderList()")
    assert b.js("window.mevitop.listOrder") == [w.pid for w in reversed(wls)]
    b.js("list.desc = false; renderList()")
    assert b.js("window.mevitop.listOrder") == [w.pid for w in wls]
    assert not b.errors, b.errors
