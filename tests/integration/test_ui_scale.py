"""The heatmap at browser scale: the packed layout (`p`) on a process with 500 small
mappings of known names and states (tests/workloads/ui_many: memfds m000..m499, 1 to 4
pages each, page j of m<i> written when (i + j) % 3 == 0) and three big ones.  Driven for
real in tmux (test_ui.Screen); every cell shown is checked against the process's pagemap,
read by the test."""
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

import harness
from harness import Workload, pagemap_truth, read_maps
from test_ui import FULL, NONE, assert_clean_exit, screen, zoom_to_one_page  # noqa: F401

PAGE = 4096
SMALL_BASE = 0x300000000000
SMALL_STRIDE = 8            # pages
N = 500
SEP = "\u2506"              # ┆: unmapped pages between two blocks
BLOCK = re.compile(rf"(?:^| |{SEP})(m\d{{3}}) ([{FULL}{NONE}]+)(?= |{SEP}|$)")


def small(i):
    """(first page, pages) of small mapping i."""
    return SMALL_BASE // PAGE + i * SMALL_STRIDE, 1 + i % 4


def packed_blocks(text):
    """{index: cells} of every small mapping's block on the screen, from the lines whose
    gutter is an address.  Anything else on those lines (an overlap, or a capture that caught
    a redraw half written) raises ValueError, which Screen.wait takes as "not yet": a frame
    that never comes out whole fails the test."""
    found = {}
    for line in text.split("\n"):
        if not re.match(r"30000[0-9a-f]{7} ", line):
            continue
        rest = line[13:].rstrip()
        matched = BLOCK.findall(rest)
        # The blocks and their separators make up the whole line.
        rebuilt = " ".join(f"{n} {c}" for n, c in matched)
        if rebuilt != rest.replace(SEP, " "):
            raise ValueError(f"unexpected text on a packed line: {line!r}")
        for name, cells in matched:
            i = int(name[1:])
            if i in found:
                raise ValueError(f"{name} shown twice")
            found[i] = cells
    return found


def expected_cells(truth, i):
    first, n = small(i)
    return "".join(FULL if truth.get(first + j) == "resident" else NONE for j in range(n))


def assert_cells_match(pid, found):
    truth = pagemap_truth(pid)
    wrong = {i: (c, expected_cells(truth, i)) for i, c in found.items()
             if c != expected_cells(truth, i)}
    assert not wrong, f"cells differ from pagemap (shown, pagemap): {dict(list(wrong.items())[:5])}"


def start_packed(screen, width=160, height=48):
    wl = Workload("ui_many")
    scr = screen(width=width, height=height)
    scr.start(["-p", str(wl.pid), "-i", "100"])
    # The initial scan is in: every mapping of ours (and the program's own) counted.
    def scanned(s):
        m = re.search(r" maps (\d+) ", s)
        return m and int(m.group(1)) >= N + 3
    scr.wait(scanned, "the scan")
    # 500 label lines would not fit: the heatmap packs itself, no key pressed.
    scr.wait_for("overview ")
    zoom_to_one_page(scr)
    return wl, scr


NAMED = re.compile(rf"(?:^| |{SEP})(m\d{{3}}) ")


def test_opens_packed_with_no_key_pressed(screen):
    """Readable by default (issue 22): a process whose label layout needs more than one
    screen opens packed at the fitted zoom, no key pressed, and its first 160x48 screen names
    at least 200 of the 500 small mappings, each at the address /proc/PID/maps has for it;
    `p` still toggles to the label layout (far fewer names) and back."""
    wl = Workload("ui_many")
    scr = screen(width=160, height=48)
    scr.start(["-p", str(wl.pid), "-i", "100"])
    try:
        def names(s):
            shown = {}
            for line in s.split("\n")[4:-3]:
                m = re.match(r"([0-9a-f]{12}) (.*)", line)
                if m and m.group(1).startswith("30000"):
                    for name in NAMED.findall(" " + m.group(2)):
                        shown[int(name[1:])] = int(m.group(1), 16)
            return shown
        s = scr.wait(lambda s: len(names(s)) >= 200 and "auto" in s, "200 named mappings")
        assert "overview " in s, "not the packed layout"
        shown = names(s)
        # Each line's gutter is the address of its first block: the first name on a line
        # must be the mapping that starts there.
        firsts = {}
        for i, addr in shown.items():
            firsts.setdefault(addr, min(j for j, a in shown.items() if a == addr))
        for addr, i in firsts.items():
            assert small(i)[0] * PAGE == addr, (f"m{i:03d} at {addr:#x}", small(i))
        maps = {path for _b, _e, _p, path in read_maps(wl.pid)}
        assert all(f"/memfd:m{i:03d} (deleted)" in maps for i in shown)
        scr.keys("p")
        s = scr.wait(lambda s: "overview " not in s and len(names(s)) < 50, "the label layout")
        scr.keys("p")
        scr.wait(lambda s: "overview " in s and len(names(s)) >= 200, "packed again")
        scr.keys("q")
        assert_clean_exit(scr)
    finally:
        wl.close()


def test_packed_first_screen_shows_hundreds_of_mappings(screen):
    wl, scr = start_packed(screen)
    try:
        s = scr.wait(lambda s: len(packed_blocks(s)) >= 200, "200 packed mappings at 160x48")
        found = packed_blocks(s)
        # In address order from the first one, each exactly as pagemap says.
        assert sorted(found) == list(range(len(found))), sorted(found)[:10]
        assert_cells_match(wl.pid, found)
        assert "m000 " in s.split("\n")[4], "the first mapping is not at the top"
        scr.keys("q")
        assert_clean_exit(scr)
    finally:
        wl.close()


def readout_of(i, perms="rw-s"):
    first, n = small(i)
    return (f"of /memfd:m{i:03d} (deleted) ({first * PAGE:012x}-{(first + n) * PAGE:012x} "
            f"{perms}, ")


def test_packed_cursor_names_each_mapping(screen):
    wl, scr = start_packed(screen)
    try:
        s = scr.wait_for(readout_of(0))
        for i in range(1, 40):
            scr.keys("]")
            scr.wait_for(readout_of(i))
        # Right walks cell by cell into the next mapping: m039 has 4 pages.
        for _ in range(4):
            scr.keys("Right")
        scr.wait_for(readout_of(40))
        # Down: the block below on the next line; Up comes back.
        scr.keys("Home")
        s = scr.wait_for(readout_of(0))
        second = BLOCK.findall(s.split("\n")[5][13:])
        scr.keys("Down")
        scr.wait_for(readout_of(int(second[0][0][1:])))
        scr.keys("Up")
        scr.wait_for(readout_of(0))
        # A file's segments are one object: one label, each segment's perms in the cursor
        # line.
        exe = [(s, e, p, path) for s, e, p, path in read_maps(wl.pid)
               if path.endswith("/ui_many")]
        assert len(exe) >= 2, exe
        scr.keys("g")
        scr.type(f"{exe[0][0]:x}")
        scr.keys("Enter")
        s = scr.wait_for(f"page 0 of {exe[0][3]} ({exe[0][0]:012x}-{exe[0][1]:012x} {exe[0][2]}")
        line = next(ln for ln in s.split("\n") if ln.startswith(f"{exe[0][0]:012x} "))
        heatmap = "\n".join(s.split("\n")[4:-4])
        assert line.count("ui_many") == 1 and heatmap.count("ui_many ") == 1, line
        scr.keys("]")
        scr.wait_for(f"page 0 of {exe[1][3]} ({exe[1][0]:012x}-{exe[1][1]:012x} {exe[1][2]}")
        scr.keys("q")
        assert_clean_exit(scr)
    finally:
        wl.close()


def test_packed_live_change_and_resize(screen):
    wl, scr = start_packed(screen)
    try:
        # Neither of m001's pages is written at first ((1 + j) % 3 != 0); now page 1 is.
        s = scr.wait(lambda s: len(packed_blocks(s)) >= 200, "the packed screen")
        assert packed_blocks(s).get(1) == NONE * 2
        wl.do("touch 1 1")
        s = scr.wait(lambda s: packed_blocks(s).get(1) == NONE + FULL, "m001's page 1 resident")
        assert_cells_match(wl.pid, packed_blocks(s))

        def fits(w, h):
            def cond(s):
                lines = s.rstrip("\n").split("\n")
                return (len(lines) == h and all(len(ln) <= w for ln in lines) and
                        lines[-1].startswith("F1Help") and len(packed_blocks(s)) >= 20)
            return cond
        scr.tmux("resize-window", "-t", "ui", "-x", "80", "-y", "24")
        s = scr.wait(fits(80, 24), "the 80x24 packed redraw")
        found = packed_blocks(s)
        assert sorted(found) == list(range(len(found)))
        assert_cells_match(wl.pid, found)
        scr.tmux("resize-window", "-t", "ui", "-x", "160", "-y", "48")
        s = scr.wait(lambda s: fits(160, 48)(s) and len(packed_blocks(s)) >= 200,
                     "the 160x48 packed redraw")
        assert_cells_match(wl.pid, packed_blocks(s))
        scr.keys("q")
        assert_clean_exit(scr)
    finally:
        wl.close()


def test_search_and_biggest_resident(screen):
    wl, scr = start_packed(screen)
    try:
        scr.wait_for(readout_of(0))
        # By name: the next mapping whose path contains the text.
        scr.keys("/")
        scr.type("m321")
        scr.wait_for("Search mappings: m321")
        scr.keys("Enter")
        scr.wait_for(readout_of(321))
        scr.keys("/")
        scr.type("big1")
        scr.keys("Enter")
        big1 = 0x310000000000 + 0x1000000
        scr.wait_for(f"page 0 of /memfd:big1 (deleted) ({big1:012x}-{big1 + 2048 * PAGE:012x} "
                     "rw-s, res 4.0M/8.0M)")
        # By address (hex that names nothing): the cell of that page.
        first, _ = small(7)
        scr.keys("/")
        scr.type(f"{(first + 2) * PAGE:x}")
        scr.keys("Enter")
        scr.wait_for(f"cursor {(first + 2) * PAGE:#x}: ")
        scr.wait_for(readout_of(7).replace("of ", "page 2 of ", 1))
        scr.keys("/")
        scr.type("nosuchmapping")
        scr.keys("Enter")
        scr.wait_for("no mapping matches 'nosuchmapping'")
        # B: the mapping with the most resident pages (big0..big2 tie at 4 MiB: the first).
        scr.keys("B")
        big0 = 0x310000000000
        scr.wait_for(f"page 0 of /memfd:big0 (deleted) ({big0:012x}-")
        scr.keys("q")
        assert_clean_exit(scr)
    finally:
        wl.close()


def test_overview_marks_the_shown_part(screen):
    """The overview line: the mapped part end to end over the columns right of the gutter,
    brackets around the columns of the mappings the screen shows (from /proc/PID/maps)."""
    wl, scr = start_packed(screen)
    try:
        maps = read_maps(wl.pid)
        sizes = [(e - b) // PAGE for b, e, _p, _path in maps]
        total, w = sum(sizes), 160 - 13 - 2

        def close_column(s):
            """(where ']' is, where the shown mappings say it must be)."""
            lines = s.split("\n")
            # The last mapping shown: the one holding the last map line's address, or its
            # last block.
            last_line = [ln for ln in lines[4:-4] if re.match(r"[0-9a-f]{12} ", ln)][-1]
            blocks = BLOCK.findall(last_line[13:])
            if blocks:
                first, _n = small(int(blocks[-1][0][1:]))
                addr = first * PAGE
            else:
                addr = int(last_line[:12], 16)
            last = [i for i, (b, e, _p, _path) in enumerate(maps) if b <= addr < e][0]
            end = sum(sizes[:last + 1])
            return lines[3][13:].index("]"), 1 + -(-end * w // total)

        # A capture can catch a redraw half written: wait for one whole frame.
        s = scr.wait(lambda s: len(packed_blocks(s)) >= 200 and
                     close_column(s)[0] == close_column(s)[1], "the overview's bracket")
        lines = s.split("\n")
        assert lines[3].startswith("overview     ["), lines[3]
        bar = lines[3][13:]
        assert bar.count("[") == 1 and bar.count("]") == 1, bar
        assert close_column(s)[1] < w, "the first screen shows everything: nothing to test"
        assert len(bar.rstrip()) == w + 2, bar
        # At the end of the address space, the bracket closes the line.
        scr.keys("End")
        s = scr.wait(lambda s: s.split("\n")[3].rstrip().endswith("]") and
                     not s.split("\n")[3].startswith("overview     ["), "the overview at the end")
        scr.keys("q")
        assert_clean_exit(scr)
    finally:
        wl.close()


M_BLOCK = re.compile(rf"(?:^| |{SEP})(m\d{{3}}) ([{FULL}{NONE}]+)(?= |{SEP}|$)")


def m_sequence(text):
    """The small mappings' blocks in reading order, [(index, cells)], from the map lines
    (12 hex digits of gutter), whatever else shares the lines."""
    seq = []
    for line in text.split("\n")[4:-4]:
        if re.match(r"[0-9a-f]{12} ", line):
            seq += [(int(n[1:]), c) for n, c in M_BLOCK.findall(line[13:].rstrip())]
    return seq


def resident_of(truth, i):
    first, n = small(i)
    return sum(truth.get(first + j) == "resident" for j in range(n))


def test_order_by_resident_and_heat(screen):
    """o cycles address, resident, heat: objects biggest first, ties in address order."""
    wl, scr = start_packed(screen)
    try:
        scr.wait(lambda s: len(packed_blocks(s)) >= 200 and "order address" in s, "packed")
        truth = pagemap_truth(wl.pid)
        want = sorted(range(N), key=lambda i: (-resident_of(truth, i), i))

        def in_order(s):
            seq = m_sequence(s)
            return ("order resident" in s and len(seq) >= 200 and
                    [i for i, _ in seq] == want[:len(seq)])
        scr.keys("o")
        # A capture can catch a redraw half written: wait for one whole frame in order.
        s = scr.wait(in_order, "the resident order")
        assert all(c == expected_cells(truth, i) for i, c in m_sequence(s))
        # The three big ones (1024 resident pages each, more than any other object) first.
        scr.keys("Home")
        big0 = 0x310000000000
        scr.wait_for(f"page 0 of /memfd:big0 (deleted) ({big0:012x}-")
        for k in (1, 2):
            scr.keys("]")
            scr.wait_for(f"page 0 of /memfd:big{k} (deleted) ({big0 + k * 0x1000000:012x}-")
        # Heat: m498 and m499 share a 16-page heat block; a write to m499 makes them the
        # hottest small mappings once the initial scan's heat has decayed below it.
        # The big ones were just populated, the hottest by far: collapsed, they leave the
        # screen to the rest.
        scr.keys("o")
        scr.wait_for("order heat")
        for k in range(3):
            scr.keys("/")
            scr.type(f"big{k}")
            scr.keys("Enter")
            scr.wait_for(f"page 0 of /memfd:big{k} (deleted)")
            scr.keys("c")
            scr.wait_for(f"cursor {big0 + k * 0x1000000:#x} +")
        scr.keys("Home")
        wl.do("touch 499 0")
        scr.wait(lambda s: [i for i, _ in m_sequence(s)][:2] == [498, 499], "m498, m499 first")
        scr.keys("o")
        s = scr.wait(lambda s: "order address" in s and len(packed_blocks(s)) >= 200,
                     "back to address order")
        assert sorted(packed_blocks(s)) == list(range(len(packed_blocks(s))))
        scr.keys("q")
        assert_clean_exit(scr)
    finally:
        wl.close()


def test_collapse_and_expand(screen):
    """c folds the cursor's object onto one line of cells (coarser cells), c unfolds it."""
    wl, scr = start_packed(screen)
    try:
        scr.wait(lambda s: len(packed_blocks(s)) >= 200, "packed")
        big0 = 0x310000000000
        scr.keys("/")
        scr.type("big0")
        scr.keys("Enter")
        s = scr.wait_for(f"cursor {big0:#x}: resident")      # one page per cell
        def big0_lines(s):
            """Lines of big0's cells: its name in the gutter, or an address in it."""
            return [ln for ln in s.split("\n")[4:-4] if ln.startswith("big0 ") or
                    (re.match(r"[0-9a-f]{12} ", ln) and
                     big0 <= int(ln[:12], 16) < big0 + 2048 * PAGE)]
        assert len(big0_lines(s)) > 2, "big0 takes several lines at one page per cell"
        scr.keys("c")
        s = scr.wait(lambda s: re.search(rf"cursor {big0:#x} \+\d+ pages", s), "collapsed")
        z = int(re.search(rf"cursor {big0:#x} \+(\d+) pages: (\d+) resident", s).group(1))
        assert re.search(rf"cursor {big0:#x} \+{z} pages: {z} resident", s), s
        # One line: its label and 2048 / z cells, the first half resident.
        line = next(ln for ln in s.split("\n") if "big0 " in ln)
        assert line[13:].rstrip() == "big0 " + FULL * (1024 // z) + NONE * (1024 // z), line
        assert (14 + 5 + 2048 // z) <= 160 < 14 + 5 + 2048 // (z // 2), z
        assert big0_lines(s) == [line], big0_lines(s)
        scr.keys("c")
        s = scr.wait_for(f"cursor {big0:#x}: resident")
        assert len(big0_lines(s)) > 2
        scr.keys("q")
        assert_clean_exit(scr)
    finally:
        wl.close()


def test_cursor_line_fits_80_columns(screen):
    """At 80 columns the cursor line leaves out its least useful fields (heat at 0, the
    page number, the range) and shortens a path to its base name, so the mapping's name,
    permissions and resident size stay on the screen."""
    wl, scr = start_packed(screen, width=80, height=24)
    try:
        s = scr.wait_for("cursor 0x300000000000: resident \u00b7 /memfd:m000 (deleted) "
                         "(rw-s, res 4K/4K)")
        assert all(len(ln) <= 80 for ln in s.split("\n"))
        exe = [(b, e, p, path) for b, e, p, path in read_maps(wl.pid)
               if path.endswith("/ui_many")]
        b, e, perms, path = exe[0]
        assert len(path) > 30, path
        truth = pagemap_truth(wl.pid)
        state = "resident" if truth.get(b // PAGE) == "resident" else "not resident"
        res = sum(truth.get(pg) == "resident" for pg in range(b // PAGE, e // PAGE))
        scr.keys("g")
        scr.type(f"{b:x}")
        scr.keys("Enter")
        want = (f"cursor {b:#x}: {state} \u00b7 \u2026/ui_many ({perms}, res {res * 4}K/"
                f"{(e - b) // 1024}K)")
        s = scr.wait_for(want)
        line = next(ln for ln in s.split("\n") if ln.startswith("cursor "))
        assert line.rstrip() == want, line
        # Wide again: every field back.
        scr.tmux("resize-window", "-t", "ui", "-x", "200", "-y", "48")
        scr.wait_for(f"cursor {b:#x}: {state} \u00b7 heat 0 f/s \u00b7 page 0 of {path} "
                     f"({b:012x}-{e:012x} {perms}, res {res * 4}K/{(e - b) // 1024}K)")
        scr.keys("q")
        assert_clean_exit(scr)
    finally:
        wl.close()


CHROMIUM = shutil.which("chromium")
READOUT_RANGE = re.compile(r"\(([0-9a-f]{12})-([0-9a-f]{12}) ([rwxsp-]{4}), res ")


def renderers(browser):
    """Pids of the renderer processes under the browser process (its descendants)."""
    parent, argv = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{d}/cmdline", "rb") as f:
                # Chromium rewrites its title: the arguments may be one string.
                argv[int(d)] = f.read().replace(b"\0", b" ").split()
        except (OSError, ValueError, IndexError):
            pass

    def under(pid):
        while pid > 1:
            pid = parent.get(pid, 0)
            if pid == browser:
                return True
        return False
    return [p for p, a in argv.items() if b"--type=renderer" in a and under(p)]


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make deps)")
def test_chromium_renderer_first_screen(screen, tmp_path):
    """The target of issue 16: a headless Chromium renderer (hundreds of mappings, V8's
    terabyte reservations among them) at 160x48 in the packed layout shows at least 200
    mappings on its first screen, and the cursor line names each one (its range and
    permissions, as /proc/PID/maps has them): ] walks them from the first until the screen
    scrolls."""
    browser = subprocess.Popen(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        def renderer():
            """The renderer, once it has loaded what it maps (hundreds of mappings)."""
            for pid in renderers(browser.pid):
                if len(read_maps(pid)) >= 500:
                    return pid
            return None
        deadline = time.monotonic() + 60
        while (pid := renderer()) is None:
            assert browser.poll() is None, "chromium exited"
            assert time.monotonic() < deadline, "no chromium renderer with 500 mappings"
            time.sleep(0.2)
        scr = screen(width=160, height=48)
        scr.start(["-p", str(pid), "--no-children", "-i", "200"])
        scr.wait(lambda s: (m := re.search(r" maps (\d+) ", s)) and int(m.group(1)) >= 500,
                 "the renderer's scan")
        # Hundreds of mappings: it opens packed by itself (issue 22), no key pressed.
        scr.wait(lambda s: READOUT_RANGE.search(s) and "overview " in s, "the packed layout")
        # The renderer keeps mapping (V8's heap splits its reservations as it grows): it is
        # stopped while its maps are compared (our own browser; it resumes at the end), and
        # the picture paused once mevitop has its layout.
        os.kill(pid, signal.SIGSTOP)
        # The signal is asynchronous: a thread may still map until it is stopped, so the
        # maps are read once every thread is.
        harness.wait_all_threads_stopped(pid)
        maps = {(b, e, p) for b, e, p, _ in read_maps(pid)}
        scr.wait(lambda s: f" maps {len(maps)} " in s, "mevitop's layout of the stopped renderer")
        scr.keys("Space")
        scr.wait_for("PAUSED")
        scr.keys("Home")
        s = scr.wait(lambda s: "cursor 0x10000 " in s or "cursor 0x10000:" in s or
                     READOUT_RANGE.search(s), "the first mapping")
        top = s.split("\n")[4][:13]
        seen = []
        while True:
            m = READOUT_RANGE.search(s)
            seen.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
            if len(seen) >= 1000:
                break
            scr.keys("]")
            try:
                s = scr.wait(lambda s: (r := READOUT_RANGE.search(s)) and
                             (int(r.group(1), 16), int(r.group(2), 16), r.group(3)) !=
                             seen[-1][:3], "the next mapping", timeout=5)
            except AssertionError:
                break           # the last mapping
            if s.split("\n")[4][:13] != top:
                break           # the screen scrolled: past the first one
        unknown = [r for r in seen if r not in maps]
        assert not unknown, unknown[:10]
        assert len(set(seen)) >= 200, f"{len(set(seen))} mappings on the first screen"
        scr.keys("q")
        assert_clean_exit(scr)
        os.kill(pid, signal.SIGCONT)
    finally:
        os.killpg(browser.pid, signal.SIGKILL)
        browser.wait()
