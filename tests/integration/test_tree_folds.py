"""The tree view's folds belong to processes, not to pids: a folded process that exits takes
its fold with it, so a new process given the same pid (tests/workloads/pidreuse: clone3's
set_tid, on demand) starts unfolded, its child shown.  The screen is parsed column by column
(test_ui_tree's parser); the truth is the pids the workload reports."""
from harness import Workload
from test_ui import assert_clean_exit, screen  # noqa: F401 (the fixture)
from test_ui_tree import list_rows, select

CORNER, TEE, DASH = "\u2514", "\u251c", "\u2500"


def cells(s):
    return [(row[0], row[2]) for row in list_rows(s, 200)]


def test_fold_does_not_outlive_its_process(screen):  # noqa: F811
    wl = Workload("pidreuse")
    try:
        r = wl.pid
        _t, (x, xk) = wl.do("spawn 0 ftX")
        x, xk = int(x), int(xk)
        scr = screen()
        scr.start(["-p", str(r), "-i", "100"])
        scr.wait_for(f"pid {r} pidreuse")
        scr.keys("Escape")
        tree = [(r, "pidreuse"), (x, f"{CORNER}{DASH}ftX"), (xk, f"  {CORNER}{DASH}ftXk")]
        scr.wait(lambda s: "view tree" in s and cells(s) == tree, "the tree")
        select(scr, 200, x)
        scr.keys("-")
        scr.wait(lambda s: cells(s) == [(r, "pidreuse"), (x, f"{CORNER}+ftX")], "ftX folded")
        # ftX quits (its child with it); once the list has shown it exited, a new process
        # takes its pid.
        wl.do(f"quit {x}")
        scr.wait(lambda s: any(row[0] == x and "exited" in row[6] for row in list_rows(s, 200)),
                 "ftX marked exited")
        _t, (y, yk) = wl.do(f"spawn {x} ftY")
        assert int(y) == x
        want = [(r, "pidreuse"), (x, f"{CORNER}{DASH}ftY"), (int(yk), f"  {CORNER}{DASH}ftYk")]
        scr.wait(lambda s: cells(s) == want, "the new ftY unfolded, its child shown")
        scr.keys("q")
        assert_clean_exit(scr)
    finally:
        wl.close()
