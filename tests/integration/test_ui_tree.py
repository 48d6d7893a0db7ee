"""The process list's tree view, driven for real in tmux (test_ui.Screen): a tree of processes
that fork and quit on command (tests/workloads/forktree: every member maps and writes a
region of its own), and a real headless Chromium.  The expected tree is built from /proc
(each process's ppid) and each row's numbers from the process's own pagemap and maps, read
by the test; the screen is parsed column by column, so a cell spilling into its neighbour
fails the parse."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from harness import GUARD_S, Reader, Workload, pagemap_truth, read_maps
from test_production import cgroup  # noqa: F401
from test_ui import assert_clean_exit, screen  # noqa: F401

PAGE = 4096
GUIDE_CHARS = "\u2502\u251c\u2514\u2500+ "     # │ ├ └ ─ + and blank
CHROMIUM = "/usr/lib/chromium/chromium"


def fmt_pages(pages):
    """ui/ui_draw.c's draw_fmt_pages: the list's numbers as drawn."""
    if not pages:
        return "0"
    v, i = pages * 4.0, 0
    while v >= 1024 and i < 5:
        v /= 1024
        i += 1
    return f"{v:.0f}{'KMGTPE'[i]}" if i == 0 or v >= 9.95 else f"{v:.1f}{'KMGTPE'[i]}"


def comm_width(cols, tree=True):
    """The command column: 15, plus (tree view) what a terminal wider than 100 spares, at
    most 16."""
    return 15 + max(0, min(16, cols - 100)) if tree else 15


def list_rows(text, cols, tree=True):
    """[(pid, user, command cell, mapped, res, swap, rest of the line)] of the process list,
    by column.  A line that does not fit the columns raises ValueError (Screen.wait takes it
    as "not yet": a frame half written; one that never comes out whole fails)."""
    lines = text.split("\n")
    head = next((i for i, ln in enumerate(lines) if re.match(r"\s+\S?PID USER +COMMAND", ln)), None)
    if head is None:
        raise ValueError("no process list on the screen")
    cw = comm_width(cols, tree)
    widths = [7, 8, cw, 7, 7, 7, 5, 7]
    rows = []
    for ln in lines[head + 1:]:
        if not ln.strip():
            break
        if len(ln) > cols:
            raise ValueError(f"line wider than the terminal: {ln!r}")
        cells, at = [], 0
        for w in widths:
            cells.append(ln[at:at + w])
            if ln[at + w:at + w + 1] not in (" ", ""):
                raise ValueError(f"column {len(cells)} runs into the next: {ln!r}")
            at += w + 1
        if not re.fullmatch(r" *\d+", cells[0]):
            raise ValueError(f"no pid: {ln!r}")
        rows.append((int(cells[0]), cells[1].strip(), cells[2].rstrip(), cells[3].strip(),
                     cells[4].strip(), cells[5].strip(), ln[at:]))
    return rows


def split_guides(cell):
    """(depth, folded, name) of a command cell: "├─name" is depth 1, "│ └+name" depth 2 and
    folded, "+name" a folded root."""
    n = len(cell) - len(cell.lstrip(GUIDE_CHARS))
    guides, name = cell[:n], cell[n:]
    if guides in ("", "+"):
        return 0, guides == "+", name
    return len(guides) // 2, guides.endswith("+"), name


def ppid_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def comm_of(pid):
    with open(f"/proc/{pid}/comm") as f:
        return f.read().strip()


def descendants(root):
    """{pid: ppid} of root and every live descendant (from /proc; zombies left out)."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if fields[0] != "Z":
                    parent[int(d)] = int(fields[1])
            except OSError:
                pass
    tree, todo = {root: parent.get(root, 0)}, [root]
    while todo:
        p = todo.pop()
        for c, pp in parent.items():
            if pp == p and c not in tree:
                tree[c] = p
                todo.append(c)
    return tree


class Truth:
    """What each process's row must say, from its pagemap and maps (read by the test)."""

    def __init__(self, pids):
        self.res, self.mapped, self.comm = {}, {}, {}
        for pid in pids:
            self.res[pid] = sum(1 for s in pagemap_truth(pid).values() if s == "resident")
            self.mapped[pid] = sum((e - s) // PAGE for s, e, _p, path in read_maps(pid)
                                   if path != "[vsyscall]")
            self.comm[pid] = comm_of(pid)


def guide_text(depth, more, last, folded):
    """The guides proctree/treeview draw (UTF-8): "│ " where an ancestor has later siblings."""
    if depth == 0:
        return "+" if folded else ""
    g = "".join("\u2502 " if more[k] else "  " for k in range(depth - 1))
    return g + ("\u2514" if last else "\u251c") + ("+" if folded else "\u2500")


def expected_rows(tree, key, folded=()):
    """[(pid, command cell, pids its numbers sum)] of the shown rows: pre-order, siblings by
    key (then pid), a folded process's subtree hidden and summed in its row."""
    kids = {}
    for c, p in tree.items():
        if p in tree and p != c:
            kids.setdefault(p, []).append(c)
    roots = [c for c, p in tree.items() if p not in tree or p == c]
    out = []

    def subtree(p):
        return [p] + [d for c in kids.get(p, []) for d in subtree(c)]

    def walk(p, depth, more, last):
        fold = p in folded and bool(kids.get(p))
        out.append((p, depth, more, last, fold, subtree(p) if fold else [p]))
        if fold:
            return
        ch = sorted(kids.get(p, []), key=lambda c: (key(c), c))
        for i, c in enumerate(ch):
            walk(c, depth + 1, more + ([not last] if depth >= 1 else []), i == len(ch) - 1)
    for r in sorted(roots, key=lambda c: (key(c), c)):
        walk(r, 0, [], True)
    return [(p, guide_text(d, m, la, fo), sub) for p, d, m, la, fo, sub in out]


def tree_matches(text, cols, tree, truth, key, folded=()):
    """The list shows exactly the expected rows, guides and numbers (summed when folded)."""
    rows = list_rows(text, cols)
    want = expected_rows(tree, key, folded)
    if [r[0] for r in rows] != [w[0] for w in want]:
        return False
    for (pid, _user, cell, mapped, res, swap, rest), (_p, guides, sub) in zip(rows, want):
        if cell != (guides + truth.comm[pid])[:comm_width(cols)]:
            return False
        if res != fmt_pages(sum(truth.res[p] for p in sub)) or swap != "0":
            return False
        if mapped != fmt_pages(sum(truth.mapped[p] for p in sub)):
            return False
        if len(sub) > 1 and guides.endswith("+") and f"+{len(sub) - 1} folded" not in rest \
                and cols >= 160:
            return False
    return True


def select(scr, cols, pid):
    """Moves the list's cursor onto pid's row, where it is now (Home, then Down)."""
    s = scr.wait(lambda s: pid in [r[0] for r in list_rows(s, cols)], f"the row of {pid}")
    pids = [r[0] for r in list_rows(s, cols)]
    scr.keys("Home", *["Down"] * pids.index(pid))


class Tree:
    """tests/workloads/forktree and the members the test spawned."""

    def __init__(self):
        self.wl = Workload("forktree", ["--name", "ftroot"])
        self.root = self.wl.pid

    def spawn(self, parent, name, pages):
        _t, extra = self.wl.do(f"spawn {parent} {name} {pages}")
        return int(extra[0])

    def quit(self, pid):
        self.wl.do(f"quit {pid}")

    def close(self):
        self.wl.close()


@pytest.fixture
def forktree():
    made = []

    def make():
        t = Tree()
        made.append(t)
        return t
    yield make
    for t in made:
        t.close()


def test_tree_follows_forks_folds_sums_tab_and_resize(screen, forktree):  # noqa: F811
    ft = forktree()
    r = ft.root
    a = ft.spawn(r, "ftA", 300)
    b = ft.spawn(r, "ftB", 500)
    a1 = ft.spawn(a, "ftA1", 700)
    a2 = ft.spawn(a, "ftA2", 900)
    ft.spawn(b, "ftB1", 1100)
    ft.spawn(a1, "ftA11", 70)
    tree = descendants(r)
    assert len(tree) == 7, tree
    truth = Truth(tree)

    scr = screen()
    # -p of the root: its descendants forked before mevitop started are watched too.
    scr.start(["-p", str(r), "-i", "100"])
    scr.wait_for(f"pid {r} ftroot")
    scr.keys("Escape")
    scr.wait_for("view tree")
    # Default sort, resident desc: siblings by their own resident pages, biggest first.
    scr.wait(lambda s: tree_matches(s, 200, tree, truth, lambda p: -truth.res[p]),
             "the tree, siblings by resident size")
    scr.keys("P")
    by_pid = lambda p: p  # noqa: E731
    scr.wait(lambda s: "sort pid asc" in s and tree_matches(s, 200, tree, truth, by_pid),
             "the tree, siblings by pid")

    # Live: a member forked now appears under its parent; one that quits is marked, then goes.
    b1 = next(p for p, pp in tree.items() if pp == b)
    c = ft.spawn(b1, "ftC", 400)
    ft.quit(a2)
    s = scr.wait(lambda s: any(row[0] == a2 and "exited" in row[6]
                               for row in list_rows(s, 200)), "ftA2 marked exited")
    tree = descendants(r)
    assert c in tree and a2 not in tree
    truth = Truth(tree)
    scr.wait(lambda s: tree_matches(s, 200, tree, truth, by_pid), "ftC in, ftA2 gone")

    # Fold ftA: its row sums its subtree (ftA, ftA1, ftA11), which is hidden.
    select(scr, 200, a)
    scr.keys("-")
    scr.wait(lambda s: tree_matches(s, 200, tree, truth, by_pid, folded={a}), "ftA folded")
    scr.keys("+")
    scr.wait(lambda s: tree_matches(s, 200, tree, truth, by_pid), "ftA unfolded")
    scr.keys("-")
    scr.wait(lambda s: tree_matches(s, 200, tree, truth, by_pid, folded={a}), "ftA folded")

    # Tab walks every process in the tree's order, the folded ones too, and wraps.
    order = [p for p, _g, _s in expected_rows(tree, by_pid)]
    scr.keys("Home", "Enter")
    scr.wait_for(f"pid {r} ftroot")
    for p in order[1:] + order[:1]:
        scr.keys("Tab")
        scr.wait_for(f"pid {p} {truth.comm[p]}")
    scr.keys("BTab")
    scr.wait_for(f"pid {order[-1]} {truth.comm[order[-1]]}")
    scr.keys("Escape")

    # * unfolds everything; * again folds every parent: the root's row sums the whole tree.
    scr.wait(lambda s: tree_matches(s, 200, tree, truth, by_pid, folded={a}), "the list again")
    scr.keys("*")
    scr.wait(lambda s: tree_matches(s, 200, tree, truth, by_pid), "all unfolded")
    scr.keys("*")
    parents = {pp for p, pp in tree.items() if pp in tree and p != r}
    scr.wait(lambda s: tree_matches(s, 200, tree, truth, by_pid, folded=parents),
             "every parent folded")
    scr.keys("*")
    scr.wait(lambda s: tree_matches(s, 200, tree, truth, by_pid), "all unfolded")

    # 80x24 in the tree view and back: the columns stay apart, the tree stays whole.
    scr.tmux("resize-window", "-t", "ui", "-x", "80", "-y", "24")
    scr.wait(lambda s: len(s.rstrip("\n").split("\n")) == 24 and
             tree_matches(s, 80, tree, truth, by_pid), "the 80x24 tree")
    scr.tmux("resize-window", "-t", "ui", "-x", "200", "-y", "60")
    scr.wait(lambda s: tree_matches(s, 200, tree, truth, by_pid), "the 200x60 tree")
    scr.keys("t")
    scr.wait(lambda s: "view tree" not in s and
             [row[2] for row in list_rows(s, 200, tree=False)] ==
             [truth.comm[p] for p in sorted(tree)],
             "the flat list by pid")
    scr.keys("q")
    assert_clean_exit(scr)


def test_whole_system_list_switches_to_tree(screen, forktree, cgroup):  # noqa: F811
    """The list without -p switches to the tree (t) and back (F5).  Limited to one cgroup
    (--cgroup): on a busy shared machine a start that scans every process can outlast the
    test's guard; the list and its tree are the same code either way."""
    ft = forktree()
    r = ft.root
    with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
        f.write(str(r))
    a = ft.spawn(r, "ftA", 300)
    ft.spawn(r, "ftB", 200)
    ft.spawn(a, "ftA1", 100)
    tree = descendants(r)
    truth = Truth(tree)
    by_res = lambda p: -truth.res[p]  # noqa: E731
    scr = screen()
    scr.start(["-i", "200", "--cgroup", cgroup])
    flat = sorted(tree, key=lambda p: (by_res(p), p))
    scr.wait(lambda s: "all processes" in s and "view tree" not in s and
             [row[0] for row in list_rows(s, 200, tree=False)] == flat, "the flat list")
    scr.keys("t")
    # ftroot's parent (this test) is not in the cgroup: ftroot is a root.
    scr.wait(lambda s: "view tree" in s and tree_matches(s, 200, tree, truth, by_res),
             "the tree, siblings by resident size")
    # Filtered, the tree is that of the matching processes: ftA's parent does not match.
    scr.keys("/")
    scr.type("ftA")
    scr.keys("Enter")
    sub = {p: pp for p, pp in tree.items() if truth.comm[p].startswith("ftA")}
    assert len(sub) == 2
    scr.wait(lambda s: "filter ftA" in s and tree_matches(s, 200, sub, truth, by_res),
             "the filtered tree")
    scr.keys("F5")
    scr.wait(lambda s: "view tree" not in s and [row[0] for row in list_rows(s, 200, tree=False)]
             == sorted(sub, key=lambda p: (by_res(p), p)), "the flat filtered list")
    scr.keys("q")
    assert_clean_exit(scr)


@pytest.fixture
def chromium():
    """A headless Chromium in a process group of its own, killed as a group at the end."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: `make deps` installs Debian's chromium")
    profile = tempfile.mkdtemp(prefix="mevitop-chromium-")
    proc = subprocess.Popen(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", f"--user-data-dir={profile}",
         "--remote-debugging-port=0", "about:blank"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True)
    err = Reader(proc.stderr, "chromium")
    try:
        while "DevTools listening on" not in err.get(what="chromium's DevTools line"):
            pass
        yield proc
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=GUARD_S)
        shutil.rmtree(profile, ignore_errors=True)


def test_chromium_tree_and_every_heatmap(screen, chromium):  # noqa: F811
    browser = chromium.pid
    scr = screen()
    scr.start(["-p", str(browser), "-i", "200"])
    scr.wait_for(f"pid {browser} chromium")
    scr.keys("Escape")
    scr.wait_for("view tree")

    # The browser, its zygotes, renderers and utility processes: what /proc says at the
    # moment of the capture (Chromium may start a helper meanwhile: compare until equal).
    def shape_matches(s):
        tree = descendants(browser)
        want = [(p, g) for p, g, _s in expected_rows(tree, lambda p: p)]
        rows = list_rows(s, 200)
        return len(tree) >= 4 and [(row[0], split_guides(row[2])[0]) for row in rows] == \
            [(p, split_guides(g + "chromium")[0]) for p, g in want]
    scr.keys("P")
    s = scr.wait(lambda s: "sort pid asc" in s and shape_matches(s), "Chromium's process tree")
    rows = list_rows(s, 200)
    assert any(split_guides(row[2])[0] >= 2 for row in rows), s   # grandchildren: a tree
    # Every process's heatmap opens (Enter on its row; the title names it), then back.
    for pid in [row[0] for row in rows]:
        scr.wait_for("view tree")
        select(scr, 200, pid)       # where it is now (a helper may have started meanwhile)
        scr.keys("Enter")
        scr.wait_for(f"pid {pid} chromium")
        scr.keys("Escape")
    scr.keys("q")
    assert_clean_exit(scr)


def test_json_ppid_and_descendants_of_p(mevitop, forktree):
    """-p of a process that has forked: JSON lists it and every descendant, alive at the start
    or forked later, each with the ppid /proc gives; --no-children lists the process alone;
    a member whose parent quits shows its new parent (the root is a subreaper)."""
    ft = forktree()
    r = ft.root
    a = ft.spawn(r, "ftA", 30)
    a1 = ft.spawn(a, "ftA1", 20)
    ft.spawn(a1, "ftA11", 10)
    alone = mevitop(["-p", str(r), "--no-children", "-i", "100"])
    assert [p["pid"] for p in alone.first["processes"]] == [r]
    mv = mevitop(["-p", str(r), "-i", "100"])

    def parents(snap):
        return {p["pid"]: p["ppid"] for p in snap["processes"] if p["state"] == "running"}

    def wait_parents(t, tree):
        snap, deadline = mv.snapshot_after(t), time.monotonic() + GUARD_S
        while parents(snap) != tree:
            assert time.monotonic() < deadline, f"JSON says {parents(snap)}, /proc {tree}"
            snap = mv.snapshot()
    assert parents(mv.first) == descendants(r)
    t, _ = ft.wl.do(f"spawn {a1} ftA12 10")
    tree = descendants(r)
    assert len(tree) == 5
    wait_parents(t, tree)
    # ftA1 quits: its children are re-parented to the root, and JSON follows.
    t, _ = ft.wl.do(f"quit {a1}")
    tree = descendants(r)
    assert len(tree) == 4 and sum(1 for pp in tree.values() if pp == r) == 3, tree
    wait_parents(t, tree)
    assert [p["pid"] for p in alone.snapshot()["processes"]] == [r]
