"""The Files view and the file heatmap, driven for real in tmux (test_ui.py's Screen): real
files on the root filesystem whose page cache the test shapes with pread and
POSIX_FADV_DONTNEED, the truth read back with mincore(2) by the test itself.

Each file has a name no other file has (the test's pid and a counter), so the view's
filter finds exactly its row, whatever else the machine caches meanwhile."""
import os
import re
import subprocess
import sys

import pytest

from harness import GUARD_S
import pagecache_truth
from test_ui import FULL, NONE, assert_clean_exit, screen  # noqa: F401  (the fixture)

PAGE = 4096
ROOT_DIR = "/var/tmp"       # a disk filesystem (the root's), not tmpfs

def mincore(path):
    """The page cache state of every page of path (pagecache_truth's mincore(2)): bools."""
    cached = pagecache_truth.mincore(path)
    return [i in cached for i in range((os.path.getsize(path) + PAGE - 1) // PAGE)]


def fmt_pages(pages):
    """ui_draw.c's draw_fmt_pages."""
    if not pages:
        return "0"
    v, units, i = pages * 4.0, "KMGTPE", 0
    while v >= 1024 and i < 5:
        v /= 1024
        i += 1
    return f"{v:.0f}{units[i]}" if i == 0 or v >= 9.95 else f"{v:.1f}{units[i]}"


@pytest.fixture
def shaped():
    """make(pages, cached(i)): a closed file of pages pages, written and synced, dropped
    from the cache, then exactly the pages cached(i) says read back (readahead off)."""
    made = []

    def make(pages, cached):
        path = os.path.join(ROOT_DIR, f"mevitop-uifiles-{os.getpid()}-{len(made)}.dat")
        made.append(path)
        with open(path, "wb") as f:
            f.write(bytes(range(256)) * (pages * PAGE // 256))
            f.flush()
            os.fsync(f.fileno())
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
            for i in range(pages):
                if cached(i):
                    os.pread(fd, PAGE, i * PAGE)
        finally:
            os.close(fd)
        truth = mincore(path)
        assert truth == [bool(cached(i)) for i in range(pages)], truth
        return path, truth
    yield make
    for p in made:
        try:
            os.unlink(p)
        except OSError:
            pass


def file_row(s, path):
    """The Files view's row of path (flat view: the path ends the line)."""
    for line in s.split("\n"):
        if line.rstrip().endswith(path):
            return line
    raise ValueError(f"no row for {path}")


def cells(s, first_page, n):
    """The n cells of the file heatmap's line starting at page first_page."""
    for line in s.split("\n"):
        m = re.match(r"^ *(\d+) ", line)
        if m and int(m.group(1)) == first_page and len(m.group(0)) >= 6:
            return line[len(m.group(0)):len(m.group(0)) + n]
    raise ValueError(f"no line for page {first_page}")


def open_files_view(scr, path, args=()):
    scr.start(["--files", "-i", "200", *args])
    scr.wait_for("page cache")
    scr.keys("/")
    scr.type(os.path.basename(path))
    scr.keys("Enter")
    return scr.wait(lambda s: file_row(s, path), f"the row of {path}")


def test_closed_file_listed_with_its_cached_size_and_heatmap(screen, shaped):
    # 64 pages, cached in runs of four: 0-3 cached, 4-7 not, ...
    path, truth = shaped(64, lambda i: i % 8 < 4)
    scr = screen()
    s = open_files_view(scr, path)
    row = file_row(s, path)
    assert row.split()[0] == fmt_pages(sum(truth)), (row, sum(truth))    # CACHED: 128K
    assert " - " in row, row                                    # MAPPED-BY: nobody
    # Its heatmap: one page a cell at this width, each cell as mincore says.
    scr.keys("Enter")
    want = "".join(FULL if t else NONE for t in truth)
    s = scr.wait(lambda s: cells(s, 0, 64) == want, "the file's cells")
    assert f"file {path}" in s
    assert "zoom 1 page/cell" in s
    # The cursor line names page 0 and its state.
    assert re.search(r"cursor page 0: cached", s), s
    scr.keys("Right", "Right", "Right", "Right")
    scr.wait(lambda s: "cursor page 4: not cached" in s, "the cursor on page 4")
    # Resize to 80x24 and back: the view redraws whole at both sizes.
    scr.tmux("resize-window", "-t", "ui", "-x", "80", "-y", "24")
    s = scr.wait(lambda s: len(s.rstrip("\n").split("\n")) == 24 and
                 s.rstrip("\n").split("\n")[-1].startswith("F1Help") and
                 "cursor page 4: not cached" in s, "the 80x24 frame")
    assert all(len(line) <= 80 for line in s.split("\n")), s
    assert cells(s, 0, 64) == want, s      # 64 cells still fit on one line of 80
    scr.tmux("resize-window", "-t", "ui", "-x", "200", "-y", "60")
    scr.wait(lambda s: s.rstrip("\n").split("\n")[-1].startswith("F1Help") and
             cells(s, 0, 64) == want and len(s.rstrip("\n").split("\n")) == 60,
             "the 200x60 frame")
    # Esc: back to the Files view, the row still there; q quits cleanly.
    scr.keys("Escape")
    scr.wait(lambda s: file_row(s, path) and "PATH" in s, "the Files view again")
    scr.keys("q")
    assert_clean_exit(scr)


def test_tree_by_directory_sums_the_files(screen, shaped):
    a, ta = shaped(16, lambda i: True)
    b, tb = shaped(32, lambda i: i < 8)
    scr = screen()
    scr.start(["--files", "-i", "200"])
    scr.wait_for("page cache")
    scr.keys("/")
    scr.type(f"mevitop-uifiles-{os.getpid()}-")
    scr.keys("Enter")
    scr.wait(lambda s: file_row(s, a) and file_row(s, b), "both rows")
    scr.keys("t")
    # /var/tmp/ is one row (a chain: /var holds only tmp here) summing both files.
    s = scr.wait(lambda s: "view by directory" in s and re.search(r"/var/tmp/\s*$", s, re.M),
                 "the directory row")
    d = next(ln for ln in s.split("\n") if ln.rstrip().endswith("/var/tmp/"))
    assert d.split()[0] == fmt_pages(sum(ta) + sum(tb)), d
    assert "2 files" in d, d
    assert re.search(os.path.basename(a) + r"\s*$", s, re.M), s
    # Fold it: the files go, the sum stays.
    scr.keys("Home", "-")
    s = scr.wait(lambda s: os.path.basename(a) not in s and "/var/tmp/" in s, "the fold")
    scr.keys("q")
    assert_clean_exit(scr)


MAPPER = r"""
import mmap, os, sys
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
s = sum(m[i] for i in range(0, len(m), 4096))     # every page resident in this process
print("ready", os.getpid(), flush=True)
sys.stdin.readline()
"""


def test_file_mapped_by_a_watched_process_same_counts_in_both_views(screen, shaped):
    path, truth = shaped(48, lambda i: True)
    p = subprocess.Popen([sys.executable, "-c", MAPPER, path], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        assert line.startswith("ready"), line
        pid = int(line.split()[1])
        scr = screen()
        scr.start(["-p", str(pid), "-i", "200", "--layout", "labels"])
        # The process heatmap: the file mapping's label counts 48 pages resident.
        name = os.path.basename(path)
        s = scr.wait(lambda s: re.search(name + r" .*res +192K/192K", s), "the mapping label")
        # Enter on that mapping (found with /) opens the file's heatmap.
        scr.keys("/")
        scr.type(name)
        scr.keys("Enter")
        scr.wait(lambda s: re.search(r"page \d+ of .*" + re.escape(name), s), "the cursor on it")
        scr.keys("Enter")
        s = scr.wait(lambda s: f"file {path}" in s and "cursor page 0: cached" in s and
                     f"mapped by {pid} python3 (resident)" in s, "the file heatmap")
        assert cells(s, 0, 48) == FULL * 48
        assert re.search(r"cached 192K 100%", s), s
        # Esc goes back to the process heatmap; Tab from the list to the Files view.
        scr.keys("Escape")
        scr.wait(lambda s: f"pid {pid}" in s, "the process heatmap again")
        scr.keys("Escape")
        scr.wait_for("watched processes")
        scr.keys("Tab")
        scr.wait_for("page cache")
        scr.keys("/")
        scr.type(name)
        scr.keys("Enter")
        s = scr.wait(lambda s: file_row(s, path), "the file's row")
        row = file_row(s, path)
        assert row.split()[0] == "192K", row
        assert f"{pid} python3" in row, row
        scr.keys("q")
        assert_clean_exit(scr)
    finally:
        p.stdin.close()
        p.wait(timeout=GUARD_S)


def test_file_option_opens_its_heatmap_and_heat_shows_evictions(screen, shaped):
    path, truth = shaped(32, lambda i: True)
    scr = screen()
    scr.start(["--file", path, "-i", "200"])
    scr.wait(lambda s: f"file {path}" in s and cells(s, 0, 32) == FULL * 32, "its heatmap")
    # The heat layer: cached and quiet is '-'; evict the second half (one 16-page block).
    scr.keys("t")
    scr.wait(lambda s: "layer adds/evictions" in s and cells(s, 0, 32) == "-" * 32,
             "the quiet heat layer")
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 16 * PAGE, 16 * PAGE, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    assert mincore(path) == [True] * 16 + [False] * 16
    # 'e': evicted recently (the glyph without half blocks); it fades in about 16 s.
    s = scr.wait(lambda s: cells(s, 0, 32) == "-" * 16 + "e" * 16, "the evictions")
    assert re.search(r"cached 64K 50%", s), s
    scr.keys("t")
    scr.wait(lambda s: cells(s, 0, 32) == FULL * 16 + NONE * 16, "the cache layer again")
    scr.keys("q")
    assert_clean_exit(scr)


def test_help_on_the_files_side_at_80x24(screen, shaped):
    """The help screen of the Files side lists every Files and File heatmap binding from the
    key table, and a legend cut by a short terminal stays inside it (ASan would abort)."""
    from test_docs import key_table
    from test_ui import help_shows
    rows = key_table()
    path, _ = shaped(8, lambda i: True)
    scr = screen(width=80, height=24)
    scr.start(["--file", path, "-i", "200"])
    scr.wait_for(f"file {path}")
    for back in ("File heatmap", "Files"):
        scr.keys("h")
        s = scr.wait_for("any key returns")
        for view in ("Files", "File heatmap", "Anywhere"):
            assert not help_shows(s, rows, view), (view, help_shows(s, rows, view), s)
        assert "Process list" not in s
        scr.keys("x")
        scr.wait(lambda s: "any key returns" not in s, "the help screen to close")
        if back == "File heatmap":
            scr.keys("Escape")
            scr.wait_for("page cache")
    scr.keys("q")
    assert_clean_exit(scr)
