"""No trace after a clean exit, and after kill -9 only the named page (issue 22).

Clean exits: one mevitop --exact attaches to 20 targets (half tests/workloads/wl, half
kill_target blocked in read(), which checks its own registers), and quits by each way there
is - q in the real view (tmux), SIGINT, SIGTERM, -n - in both variants.  Each target's
/proc/PID/maps, fd table and, per thread, SigBlk/SigIgn/SigCgt, TracerPid, Seccomp and
Seccomp_filters must be byte for byte what they were before.  `run`: CMD forks 20 children
and ends; the children, which were watched, must show nothing of mevitop, and CMD itself
never saw the scratch page (it is gone before CMD's first instruction).

kill -9: mevitop is paused (MEVITOP_TEST_PAUSE, user/exact/stage.h) inside each call of an
attach and SIGKILLed there.  What stays is at most one page, /memfd:mevitop-scratch
(deleted), r-x; no fd; the masks back.  A later attach reuses that page (the same address)
and, quitting cleanly, leaves nothing.
"""
import errno
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import pytest

import harness
import killsweep
from test_ui import screen  # noqa: F401  (a fixture: a tmux server driving the view)

VARIANTS = ["fast", "ordered"]
TARGETS = 20


def state(pid):
    """What an attach could leave, read by the test itself: the whole maps text, the fd
    table, and per thread its masks, tracer and seccomp state."""
    with open(f"/proc/{pid}/maps") as f:
        maps = f.read()
    threads = killsweep.thread_status(pid)
    return {"maps": maps, "fds": killsweep.fds_of(pid),
            "threads": {tid: tuple(s.get(k) for k in ("SigBlk", "SigIgn", "SigCgt", "TracerPid",
                                                       "Seccomp", "Seccomp_filters"))
                        for tid, s in threads.items()}}


class Targets:
    def __init__(self, n=TARGETS):
        self.wls = []
        try:
            for i in range(n):
                if i % 2:
                    wl = harness.Workload("kill_target", ["block", "-t", "0"])
                    wl.prog = "kill_target"
                    self.wls.append(wl)
                else:
                    wl = harness.Workload()
                    wl.prog = "wl"
                    wl.do("map a 16")
                    wl.do("touch a 0 16 1 w")
                    self.wls.append(wl)
            for wl in self.wls:
                if wl.prog == "kill_target":
                    wl.do("status")
            self.before = {wl.pid: state(wl.pid) for wl in self.wls}
        except BaseException:
            self.close()
            raise

    def pids(self):
        return ",".join(str(wl.pid) for wl in self.wls)

    def check(self, what):
        for wl in self.wls:
            killsweep.wait_for(lambda: not killsweep.traced(wl.pid), "the target untraced")
            now = state(wl.pid)
            assert now == self.before[wl.pid], (
                f"{what}: process {wl.pid} ({wl.prog}) changed: " +
                "; ".join(f"{k}: {self.before[wl.pid][k]!r} -> {now[k]!r}"
                          for k in now if now[k] != self.before[wl.pid][k]))
            # and it works: its registers are its own (kill_target checks them)
            wl.do("status" if wl.prog == "kill_target" else "touch a 0 16 1 r")

    def close(self):
        for wl in self.wls:
            wl.close()


@pytest.fixture
def targets():
    made = []

    def make():
        t = Targets()
        made.append(t)
        return t
    yield make
    for t in made:
        t.close()


def exact_args(variant, pids):
    return [f"--exact={variant}", "-p", pids, "-i", "50"]


def userfaultfds(mevitop_pid):
    """How many userfaultfds mevitop holds: one per attached process (its only copy)."""
    d = f"/proc/{mevitop_pid}/fd"
    n = 0
    for fd in os.listdir(d):
        try:
            n += os.readlink(f"{d}/{fd}") == "anon_inode:[userfaultfd]"
        except FileNotFoundError:
            pass
    return n


def assert_all_attached(snap, t):
    """So that "unchanged" cannot pass by accident: every target really was attached."""
    for wl in t.wls:
        e = harness.find_proc(snap, wl.pid)
        assert e is not None and any(m["tracker"] == "userfaultfd" for m in e["mappings"]), \
            f"process {wl.pid} was not attached"


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("how", ["sigint", "sigterm", "n"])
def test_clean_exit_leaves_nothing(targets, variant, how):
    t = targets()
    if how == "n":
        r = subprocess.run([harness.MEVITOP, "--json", *exact_args(variant, t.pids()), "-n", "2"],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, **harness.SAN_ENV))
        assert r.returncode == 0, r.stderr
        assert "Sanitizer" not in r.stderr, r.stderr
        assert_all_attached(json.loads(r.stdout.strip().splitlines()[-1]), t)
    else:
        mv = harness.Mevitop(exact_args(variant, t.pids()))
        try:
            assert_all_attached(mv.first, t)
            assert userfaultfds(mv.proc.pid) >= TARGETS
        finally:
            rc = mv.stop(signal.SIGINT if how == "sigint" else signal.SIGTERM)
        assert rc == 0, mv.stderr_text()
    t.check(f"{variant}, {how}")


@pytest.mark.parametrize("variant", VARIANTS)
def test_q_in_the_view_leaves_nothing(targets, screen, variant):  # noqa: F811
    t = targets()
    scr = screen()
    scr.start(exact_args(variant, t.pids()))
    scr.wait_for("exact")
    scr.wait_for(f"pid {t.wls[0].pid}")
    pid = scr.mevitop_pid()
    killsweep.wait_for(lambda: userfaultfds(pid) >= TARGETS, "every target attached")
    scr.keys("q")
    rc, _ = scr.wait_exit()
    assert rc == 0, scr.stderr()
    t.check(f"{variant}, q")


RUN_CMD = r"""
import os, signal, sys
out = sys.argv[1]
def snap(pid):
    maps = open(f"/proc/{pid}/maps").read()
    st = dict(l.rstrip("\n").split(":\t", 1) for l in open(f"/proc/{pid}/status") if ":\t" in l)
    fds = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            fds[fd] = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            pass        # listdir's own
    return repr({"maps": maps, "fds": fds, "SigBlk": st["SigBlk"], "Seccomp": st["Seccomp"]})
me = snap(os.getpid())
kids = []
for i in range(int(sys.argv[2])):
    pid = os.fork()
    if pid == 0:
        signal.pause()
        os._exit(0)
    kids.append(pid)
with open(out, "w") as f:
    f.write(repr({"cmd": me, "kids": kids}))
"""


def scratchless(maps):
    """No line of the scratch page, under any of its names or none."""
    return not [l for l in maps.splitlines() if "mevitop" in l or
                re.match(r"\S+ r-xp 00000000 00:00 0\s*$", l)]


@pytest.mark.parametrize("variant", VARIANTS)
def test_run_cmd_end_leaves_nothing(tmp_path, variant):
    """`run`: the page is unmapped before CMD runs its first instruction, so CMD never
    sees it, nor do the 20 children it forks (watched through the userfaultfd); CMD ends,
    mevitop with it, and the children are untraced with their masks and seccomp state."""
    out = tmp_path / "run.out"
    kids = []
    try:
        # files, not pipes: the children keep CMD's stdout and stderr open
        with open(tmp_path / "mv.out", "w+") as o, open(tmp_path / "mv.err", "w+") as e:
            rc = subprocess.run([harness.MEVITOP, "run", "--json", f"--exact={variant}", "-i",
                                 "50", "--", sys.executable, "-c", RUN_CMD, str(out),
                                 str(TARGETS)], stdout=o, stderr=e, timeout=60,
                                env=dict(os.environ, **harness.SAN_ENV)).returncode
            e.seek(0)
            err = e.read()
        assert rc == 0 and "Sanitizer" not in err, err
        got = eval(out.read_text())     # noqa: S307 (our own repr)
        kids = got["kids"]
        cmd = eval(got["cmd"])          # noqa: S307
        assert scratchless(cmd["maps"]), cmd["maps"]
        assert len(kids) == TARGETS
        for pid in kids:
            killsweep.wait_for(lambda: not killsweep.traced(pid), "the child untraced")
            now = state(pid)
            assert scratchless(now["maps"]), now["maps"]
            assert now["fds"] == cmd["fds"]
            for sigblk, _, _, tracer, seccomp, _ in now["threads"].values():
                assert (sigblk, tracer, seccomp) == (cmd["SigBlk"], "0", cmd["Seccomp"])
    finally:
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# --- kill -9 inside each injected call ------------------------------------------------------

# Every stage of a first attach to an unfiltered target, in order (stage.h).
STAGES = ["inj:seize", "boot:memfd_create", "boot:ftruncate", "boot:mmap", "boot:close",
          "call:userfaultfd", "tramp:userfaultfd", "drop:munmap", "inj:detach"]


def paused_kill(pid, stage, variant="fast"):
    """Start mevitop on PID paused at STAGE, SIGKILL it there; the stage file says where
    it died.  Returns that stage."""
    with tempfile.NamedTemporaryFile() as sf:
        env = dict(os.environ, **harness.SAN_ENV, MEVITOP_TEST_PAUSE=f"{stage}:30000",
                   MEVITOP_TEST_STAGE_FILE=sf.name)
        mv = subprocess.Popen([harness.MEVITOP, "--json", f"--exact={variant}", "-p", str(pid)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        reader = harness.Reader(mv.stderr, "mevitop-stderr")
        try:
            deadline = time.monotonic() + harness.GUARD_S
            while True:
                line = reader.get(timeout=max(0.1, deadline - time.monotonic()),
                                  what=f"test-pause {stage}")
                if f"test-pause {stage}" in line:
                    break
            mv.kill()
        finally:
            if mv.poll() is None:
                mv.kill()
            mv.wait()
        killsweep.wait_for(lambda: not killsweep.traced(pid), "the kernel to detach the target")
        with open(sf.name) as f:
            return f.read().strip()


# amx: a main thread holding AMX tile data, whose rt_sigreturn frame must carry the whole
# ~11 KiB XSAVE image (a frame cut to the default size comes back with tmm0 zeroed)
@pytest.mark.parametrize("mode", ["spin"] + (["amx"] if killsweep.HAS_AMX else []))
@pytest.mark.parametrize("stage", STAGES)
def test_kill9_inside_each_call(stage, mode):
    target = killsweep.Target(mode, 1)
    try:
        with open(f"/proc/{target.pid}/maps") as f:
            raw = f.read()
        died = paused_kill(target.pid, stage)
        assert died == stage
        bad = target.problems()     # maps (all but the page), fds, masks, seccomp, creds
        assert not bad, bad
        with open(f"/proc/{target.pid}/maps") as f:
            left = harness.scratch_lines(target.pid, f.read())
        # the chain runs to its end alone: the page exists from its mmap on, until munmap
        expect = stage not in ("inj:seize", "inj:detach", "drop:munmap")
        assert len(left) == int(expect), left
        assert all(harness.scratch_named(line) for line in left), left
        # the next attach reuses that page, and its clean exit leaves nothing
        mv = harness.Mevitop(["--exact", "-p", str(target.pid), "-i", "50", "-vv"])
        rc = mv.stop(signal.SIGTERM)
        assert rc == 0, mv.stderr_text()
        if left:
            addr = left[0].split("-")[0].lstrip("0")
            assert re.search(rf"scratch page at 0x{addr} unmapped", mv.stderr_text()), \
                mv.stderr_text()
        with open(f"/proc/{target.pid}/maps") as f:
            assert not harness.scratch_lines(target.pid, f.read())
        assert not target.problems()
        with open(f"/proc/{target.pid}/maps") as f:
            assert f.read() == raw
    finally:
        target.wl.close()


# --- seccomp: a filter on the scratch page's calls -------------------------------------------

def test_memfd_refused_by_filter_falls_back_to_anonymous():
    """A filter that makes memfd_create fail: the page is the anonymous one, -v says why,
    and the clean exit still leaves the maps byte for byte, the filter in force."""
    from test_exact_seccomp import FilteredWorkload
    wl = FilteredWorkload("errno=memfd_create")
    try:
        before = state(wl.pid)
        mv = harness.Mevitop(["--exact", "-p", str(wl.pid), "-i", "50", "-v"])
        rc = mv.stop(signal.SIGTERM)
        assert rc == 0, mv.stderr_text()
        # refused before the call: a chain's calls must all be allowed (a thread left alone
        # runs it to its end)
        assert f"process {wl.pid}: scratch page: anonymous, not the mevitop-scratch memfd: " \
               f"its seccomp filters do not allow the memfd (seccomp filter 0 of thread " \
               f"{wl.pid} returns ERRNO(18) for memfd_create(" in mv.stderr_text(), \
            mv.stderr_text()
        assert state(wl.pid) == before
        assert wl.try_call("memfd_create") == {"ret": "-1", "errno": str(errno.EXDEV)}
        assert wl.try_call("getpgid") == {"ret": "-1", "errno": str(errno.EXDEV)}
    finally:
        wl.close()


def test_munmap_killed_by_filter_leaves_the_named_page():
    """A filter that kills munmap: the last munmap is never made (were mevitop killed in it,
    the filter would see it), so the named page stays and mevitop says so; the next attach
    reuses it (one page, not two), and the filter is in force."""
    from test_exact_seccomp import FilteredWorkload
    wl = FilteredWorkload("kill=munmap")
    try:
        before = harness.maps_without_scratch(wl.pid)
        pages = []
        for _ in range(2):
            mv = harness.Mevitop(["--exact", "-p", str(wl.pid), "-i", "50"])
            rc = mv.stop(signal.SIGTERM)
            assert rc == 0, mv.stderr_text()
            assert re.search(rf"process {wl.pid}: the scratch page at 0x[0-9a-f]+ stays "
                             r"\(munmap refused by its seccomp filters: ", mv.stderr_text()), \
                mv.stderr_text()
            with open(f"/proc/{wl.pid}/maps") as f:
                left = harness.scratch_lines(wl.pid, f.read())
            assert len(left) == 1 and harness.scratch_named(left[0]), left
            pages.append(left[0])
        assert pages[0] == pages[1]
        assert harness.maps_without_scratch(wl.pid) == before
        wl.assert_filter_enforced("munmap")
    finally:
        wl.close()


@pytest.mark.parametrize("stage", ["boot:memfd_create", "boot:mmap", "drop:munmap"])
def test_kill9_mid_bootstrap_of_a_stopped_target(stage):
    """A stopped target runs the rest of a bootstrap (or of the last munmap) only when it
    is continued.  The next attach finishes it for it first, so that attach reuses the page
    the chain maps, its clean exit removes it, and once continued the target is as it was,
    maps byte for byte: no second page, none in the end."""
    target = killsweep.Target("spin", 1, stopped=True)
    try:
        with open(f"/proc/{target.pid}/maps") as f:
            raw = f.read()
        assert paused_kill(target.pid, stage) == stage
        mv = harness.Mevitop(["--exact", "-p", str(target.pid), "-i", "50"])
        rc = mv.stop(signal.SIGTERM)
        assert rc == 0, mv.stderr_text()
        with open(f"/proc/{target.pid}/maps") as f:
            assert f.read() == raw      # still stopped: nothing pending either
        os.kill(target.pid, signal.SIGCONT)
        killsweep.wait_for(lambda: killsweep.proc_state(target.pid) != "T", "it to run")
        target.stopped = False
        target.before["stopped"] = False
        assert not target.problems()    # fds, masks, seccomp, credentials; it runs
        with open(f"/proc/{target.pid}/maps") as f:
            assert f.read() == raw
    finally:
        target.wl.close()


def test_anonymous_leftover_is_reused_and_removed():
    """The anonymous page (a filter refused the memfd; or one an earlier mevitop left, which
    always mapped it so) that a killed attach leaves is found by its magic, reused, and
    removed by the next attach's clean exit: the maps as they were, byte for byte."""
    from test_exact_seccomp import FilteredWorkload
    wl = FilteredWorkload("errno=memfd_create")
    try:
        with open(f"/proc/{wl.pid}/maps") as f:
            raw = f.read()
        assert paused_kill(wl.pid, "tramp:userfaultfd") == "tramp:userfaultfd"
        with open(f"/proc/{wl.pid}/maps") as f:
            left = harness.scratch_lines(wl.pid, f.read())
        assert len(left) == 1 and " r-xp 00000000 00:00 0 " in left[0], left
        mv = harness.Mevitop(["--exact", "-p", str(wl.pid), "-i", "50", "-vv"])
        rc = mv.stop(signal.SIGTERM)
        assert rc == 0, mv.stderr_text()
        addr = left[0].split("-")[0].lstrip("0")
        assert f"scratch page at 0x{addr} unmapped" in mv.stderr_text(), mv.stderr_text()
        with open(f"/proc/{wl.pid}/maps") as f:
            assert f.read() == raw
        assert wl.try_call("getpgid") == {"ret": "-1", "errno": str(errno.EXDEV)}
    finally:
        wl.close()
