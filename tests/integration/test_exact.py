"""Exact mode (issue 4): `mevitop run -- CMD` and `mevitop --exact -p PID`, ordered and fast.

Real processes, real ptrace and userfaultfd.  Each behaviour is checked against pagemap read
by the test (restricted to the mappings mevitop says userfaultfd tracks, and everything else
too), and the first touches mevitop reports are checked against what the workload touched:
in ordered mode page by page and in order, in fast mode as a set.  Safety: mevitop is
SIGKILLed at named stages (MEVITOP_TEST_PAUSE, exact/exact.h) and the target must run on with
the same mappings and file descriptors; detaching leaves a running target running and a
stopped one stopped; refusals say what to change and leave the target untouched.
"""
import ctypes
import errno
import json
import os
import re
import signal
import subprocess
import threading
import time

import pytest

import harness
from harness import PAGE, Reader, assert_matches, find_proc, pagemap_truth, model_pages

WL = os.path.join(harness.WORKLOADS, "wl")
VARIANTS = ["ordered", "fast"]


# --- processes ---------------------------------------------------------------------------

class ExactMevitop(harness.Mevitop):
    """mevitop in exact mode; keeps every snapshot (first touches are listed per snapshot)."""

    def __init__(self, args, run=None, env_extra=None, wait_first=True):
        env = dict(os.environ, **harness.SAN_ENV)
        env.update(env_extra or {})
        if run:
            self.cmd = [harness.MEVITOP, "run", "--json", *args, "--", *run]
        else:
            self.cmd = [harness.MEVITOP, "--json", *args]
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env)
        self.out = Reader(self.proc.stdout, "mevitop")
        self.err = Reader(self.proc.stderr, "mevitop-stderr")
        self.last = None
        self.all = []
        if wait_first:
            try:
                self.first = self.snapshot()
            except (EOFError, AssertionError):
                self.proc.wait(timeout=10)
                raise AssertionError("mevitop did not start: " + self.stderr_text())

    def snapshot(self, timeout=harness.GUARD_S):
        s = super().snapshot(timeout)
        self.all.append(s)
        return s

    def wait_stderr(self, pattern, timeout=harness.GUARD_S):
        deadline = time.monotonic() + timeout
        while True:
            line = self.err.get(timeout=max(0.1, deadline - time.monotonic()),
                                what=f"stderr matching {pattern!r}")
            if re.search(pattern, line):
                return line

    def touches(self, since=0):
        """Every first touch listed in the snapshots [since:], in order: (pid, tid, addr, rw)."""
        out = []
        for s in self.all[since:]:
            for pid, tid, addr, rw, _ts in s["stats"]["exact"]["first_touches"]:
                out.append((pid, tid, int(addr, 16), rw))
        return out

    def unlisted(self, since=0):
        return sum(s["stats"]["exact"]["first_touches_unlisted"] for s in self.all[since:])


class FifoWorkload(harness.Workload):
    """tests/workloads/wl talking through FIFOs, so that `mevitop run` can start it (its
    stdin/stdout stay mevitop's).  sh opens the FIFOs, then execs wl: `run` sees an exec at
    once."""

    def __init__(self, tmp_path):
        self.inp, self.outp = str(tmp_path / "wl.in"), str(tmp_path / "wl.out")
        os.mkfifo(self.inp)
        os.mkfifo(self.outp)
        self.argv = ["sh", "-c", 'exec "$0" <"$1" >"$2"', WL, self.inp, self.outp]
        self.regions = {}
        self.proc = None

    def connect(self):
        # O_RDWR never blocks and never sees EOF; the writer waits for sh to open its end.
        rfd = os.open(self.outp, os.O_RDWR)
        deadline = time.monotonic() + harness.GUARD_S
        while True:
            try:
                wfd = os.open(self.inp, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as e:
                assert e.errno == errno.ENXIO and time.monotonic() < deadline, e
                time.sleep(0.01)
        os.set_blocking(wfd, True)
        self.stdin = os.fdopen(wfd, "wb", buffering=0)
        self.out = Reader(os.fdopen(rfd, "rb"), "fifo-workload")
        self.pid = self.wait_ready()

    def send(self, cmd):
        self.stdin.write((cmd + "\n").encode())

    def wait_exit(self):
        pass            # not our child: mevitop run reaps it and reports its status

    def close(self):
        try:
            self.stdin.write(b"exit\n")
        except (OSError, AttributeError):
            pass


@pytest.fixture
def procs():
    """Everything a test starts is stopped at the end, whatever happened."""
    made = []
    yield made
    stop_all(made)


def stop_all(made):
    """Kills and reaps what a test started: ExactMevitops, Popens, pids, workloads."""
    for p in made:
        if isinstance(p, ExactMevitop):
            if p.proc.poll() is None:
                p.proc.kill()
            p.proc.wait()
        elif isinstance(p, subprocess.Popen):
            if p.poll() is None:
                p.kill()
            p.wait()
        elif isinstance(p, int):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        else:
            p.close()


def start(procs, mode, variant, tmp_path, extra=(), env=None):
    """A workload watched in exact mode, `run` (mevitop starts it) or attach (-p)."""
    args = ["-i", "50", "--no-reconcile", f"--exact={variant}", *extra]
    if mode == "run":
        wl = FifoWorkload(tmp_path)
        procs.append(wl)
        mv = ExactMevitop(args, run=wl.argv, env_extra=env)
        procs.append(mv)
        wl.connect()
    else:
        wl = harness.Workload()
        procs.append(wl)
        mv = ExactMevitop(["-p", str(wl.pid), *args], env_extra=env)
        procs.append(mv)
    return wl, mv


# --- checks ------------------------------------------------------------------------------

def tracked_ranges(entry):
    return [(int(m["start"], 16) // PAGE, int(m["end"], 16) // PAGE)
            for m in entry["mappings"] if m["tracker"] == "userfaultfd"]


def check(mv, pid, t, regions=()):
    """The first snapshot after t equals pagemap: on the mappings userfaultfd tracks (which
    must include `regions`, addresses) and everywhere else."""
    snap = mv.snapshot_after(t)
    entry = find_proc(snap, pid)
    assert entry is not None, f"pid {pid} missing"
    ranges = tracked_ranges(entry)
    truth, model = pagemap_truth(pid), model_pages(entry)
    for s, e in ranges:
        bad = [pg for pg in range(s, e) if model.get(pg, "not_resident") !=
               truth.get(pg, "not_resident")]
        assert not bad, f"{len(bad)} pages of tracked {s * PAGE:#x}-{e * PAGE:#x} differ"
    for addr in regions:
        assert any(s <= addr // PAGE < e for s, e in ranges), \
            f"{addr:#x} is not tracked by userfaultfd: {ranges}"
    assert_matches(snap, pid)
    assert snap["stats"]["lost"] == 0
    return snap


def wait_touches(mv, since, want, timeout=10):
    """Snapshots until every (pid, addr) of `want` was reported as a first touch."""
    deadline = time.monotonic() + timeout
    while True:
        got = {(p, a) for p, _t, a, _rw in mv.touches(since)}
        missing = set(want) - got
        if not missing or time.monotonic() > deadline:
            break
        mv.snapshot()
    assert not missing, (f"{len(missing)} first touches not reported, e.g. "
                         f"{sorted(missing)[:3]}; unlisted {mv.unlisted(since)}")
    return mv.touches(since)


def in_range(touches, pid, base, pages):
    return [(a - base) // PAGE for p, _t, a, _rw in touches
            if p == pid and base <= a < base + pages * PAGE]


def settle(mv, wl, t, *addrs, pid=None, timeout=10):
    """Waits until a snapshot drained after t (the engine has seen it) in which userfaultfd
    tracks every address of `addrs` in pid (the workload's): new mappings are registered for
    a time budget per drain, and a fast child gets its userfaultfd from the control thread,
    so under load a snapshot can come before either, and a page touched before the
    registration is counted as there before (prereg_pages), not as a first touch."""
    snap = mv.snapshot_after(t)
    deadline = time.monotonic() + timeout
    pid = pid or wl.pid
    while not all(any(s <= a // PAGE < e for s, e in tracked_ranges(find_proc(snap, pid) or
                                                                   {"mappings": []}))
                  for a in addrs):
        assert time.monotonic() < deadline, f"{[hex(a) for a in addrs]} never registered"
        snap = mv.snapshot()
    return len(mv.all)


# --- behaviours --------------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("mode", ["run", "attach"])
def test_behaviours(procs, tmp_path, mode, variant):
    """One workload through everything issue 4 lists, checked after each step: sparse reads
    and writes (first touches page by page), threads faulting one region at once, fork with
    copy-on-write, mremap grow and move, MADV_DONTNEED, brk, partial munmap, exec, exit."""
    wl, mv = start(procs, mode, variant, tmp_path)
    ordered = variant == "ordered"
    assert mv.first["mode"] == "exact"
    assert mv.first["stats"]["exact"]["variant"] == variant
    pid = wl.pid

    # Sparse writes then reads: every 3rd page written, every 5th read (the zero page).
    t, _ = wl.do("map a 96")
    a = wl.region("a")
    since = settle(mv, wl, t, a)
    wl.do("touch a 0 96 3 w")
    t, _ = wl.do("touch a 1 95 5 r")
    check(mv, pid, t, [a])
    writes = list(range(0, 96, 3))
    reads = [i for i in range(1, 96, 5) if i % 3]
    got = wait_touches(mv, since, [(pid, a + i * PAGE) for i in writes + reads])
    if ordered:
        assert in_range(got, pid, a, 96) == writes + reads
        rw = {(a_ - a) // PAGE: r for p, _t, a_, r in got if p == pid and a <= a_ < a + 96 * PAGE}
        assert all(rw[i] == "w" for i in writes) and all(rw[i] == "r" for i in reads)
        assert {t_ for p, t_, a_, _r in got if p == pid and a <= a_ < a + 96 * PAGE} == {pid}
    else:
        assert sorted(in_range(got, pid, a, 96)) == sorted(writes + reads)

    # Four threads write one region at once (and each other's pages): each page once.
    t, _ = wl.do("map t 512")
    since = settle(mv, wl, t, wl.region("t"))
    before = mv.last["stats"]["exact"]["touches"]
    t, _ = wl.do("threads t 4 0 512")
    snap = check(mv, pid, t, [wl.region("t")])
    if ordered:
        got = wait_touches(mv, since, [])
        pages = in_range(got, pid, wl.region("t"), 512)
        assert len(pages) == len(set(pages)), "a page was reported twice"
        assert len({t_ for p, t_, a_, _ in got if p == pid and a_ >= wl.region("t")}) >= 2
        assert snap["stats"]["exact"]["touches"] - before >= 512

    # Fork: the child writes pages its parent never touched (its own first touches, through
    # its own userfaultfd) and pages the parent had (copy-on-write: not first touches).
    wl.do("map f 128")
    t, _ = wl.do("touch f 0 64 1 w")
    since = settle(mv, wl, t)
    f = wl.region("f")
    t, extra = wl.do("fork f 32 64")
    child = int(extra[0])
    procs.append(child)
    settle(mv, wl, t, f, pid=child)
    check(mv, child, t, [f])
    check(mv, pid, t, [f])
    got = wait_touches(mv, since, [(child, f + i * PAGE) for i in range(64, 96)])
    child_pages = in_range(got, child, f, 128)
    if ordered:
        assert child_pages == list(range(64, 96))
    assert not set(child_pages) & set(range(32, 64)), \
        "copy-on-write of the parent's pages reported as first touches"
    assert mv.last["stats"]["exact"]["events"]["fork"] >= 1

    # mremap: grow in place or moved, then forced move; the pages move without faults.
    wl.do("map r 32")
    t, _ = wl.do("touch r 0 32 1 w")
    settle(mv, wl, t)
    t, _ = wl.do("remap r 64 grow")
    r = wl.region("r")
    since = settle(mv, wl, t, r + 40 * PAGE)
    t, _ = wl.do("touch r 40 8 1 w")
    check(mv, pid, t, [r])
    wait_touches(mv, since, [(pid, r + i * PAGE) for i in range(40, 48)])
    t, _ = wl.do("remap r 128 move")
    check(mv, pid, t, [wl.region("r")])

    # MADV_DONTNEED, then the same pages touched again: first touches again.
    t, _ = wl.do("advise a 0 30 dontneed")
    since = settle(mv, wl, t)
    t, _ = wl.do("touch a 0 6 1 w")
    check(mv, pid, t, [a])
    got = wait_touches(mv, since, [(pid, a + i * PAGE) for i in range(6)])
    if ordered:
        assert in_range(got, pid, a, 96)[:6] == list(range(6))

    # brk up and down, partial munmap.
    for c in ("brk 64", "brktouch 32", "brk -16", "brktouch 8", "brk 8", "brktouch 2",
              "unmap a 16 16"):
        t, _ = wl.do(c)
    check(mv, pid, t)

    # exec: a new address space, given a new userfaultfd.
    t, _ = wl.do("exec")
    assert wl.pid == pid
    wl.regions.clear()
    t, _ = wl.do("map e 32")
    e = wl.region("e")
    # The re-attach (attach mode: a new seize) may land after the first snapshot.
    since = settle(mv, wl, t, e)
    t, _ = wl.do("touch e 0 32 1 w")
    check(mv, pid, t, [e])
    got = wait_touches(mv, since, [(pid, e + i * PAGE) for i in range(32)])
    if ordered:
        assert in_range(got, pid, e, 32) == list(range(32))
    assert mv.last["stats"]["exact"]["attaches"] >= 2
    assert mv.last["stats"]["exact"]["touches_dropped"] == 0

    # exit: attach mode ends when nothing is left; run ends with the command's status.
    os.kill(child, signal.SIGKILL)
    wl.do("exit")
    rc = mv.proc.wait(timeout=harness.GUARD_S)
    assert rc == 0, mv.stderr_text()
    assert "AddressSanitizer" not in mv.stderr_text()


# --- detach ------------------------------------------------------------------------------

def fds_of(pid):
    """The fd table; an fd closed between the listing and its readlink (a thread of the
    target closing a socket meanwhile) is left out, as a listing a moment later would."""
    d, out = f"/proc/{pid}/fd", {}
    for fd in os.listdir(d):
        try:
            out[fd] = os.readlink(f"{d}/{fd}")
        except FileNotFoundError:
            pass
    return out


def maps_of(pid):
    """All mappings but exact mode's scratch page (one, reused by every attach)."""
    return harness.maps_without_scratch(pid)


def state_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def tracer_of(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"TracerPid:\s*(\d+)", f.read()).group(1))


def wait_state(pid, states, timeout=5):
    deadline = time.monotonic() + timeout
    while state_of(pid) not in states and time.monotonic() < deadline:
        time.sleep(0.01)
    return state_of(pid)


def assert_untouched(wl, maps, fds):
    """Same mappings and fds as before mevitop, not traced, and it still works."""
    assert maps_of(wl.pid) == maps
    assert fds_of(wl.pid) == fds
    assert tracer_of(wl.pid) == 0
    wl.do("map z 16")
    wl.do("touch z 0 16 1 w")


@pytest.mark.parametrize("variant", VARIANTS)
def test_detach_running(procs, tmp_path, variant):
    wl = harness.Workload()
    procs.append(wl)
    wl.do("map a 64")
    maps, fds = maps_of(wl.pid), fds_of(wl.pid)
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", f"--exact={variant}"])
    procs.append(mv)
    t, _ = wl.do("touch a 0 32 1 w")
    check(mv, wl.pid, t, [wl.region("a")])
    assert mv.stop(signal.SIGTERM) == 0
    assert wait_state(wl.pid, "RS") in "RS"
    assert_untouched(wl, maps, fds)


def test_detach_stopped(procs, tmp_path):
    """A target stopped (SIGSTOP) when mevitop attaches stays stopped when it detaches."""
    wl = harness.Workload()
    procs.append(wl)
    wl.do("map a 64")
    wl.do("touch a 0 16 1 w")
    maps, fds = maps_of(wl.pid), fds_of(wl.pid)
    os.kill(wl.pid, signal.SIGSTOP)
    assert wait_state(wl.pid, "T") == "T"
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--exact=ordered"])
    procs.append(mv)
    # Letting go of a thread in group stop (__ptrace_unlink) sets JOBCTL_STOP_PENDING again
    # and wakes it, so it shows R for a moment on its way back into do_signal_stop, in the
    # kernel, before any user code.  A process really resumed would sleep in its read of
    # stdin (S) and never return to T: so T is waited for, and anything else fails.
    assert wait_state(wl.pid, "T") == "T", "attaching resumed a stopped process"
    e = find_proc(mv.snapshot(), wl.pid)
    assert any(m["tracker"] == "userfaultfd" for m in e["mappings"])
    assert mv.stop(signal.SIGINT) == 0
    assert wait_state(wl.pid, "T") == "T", "detaching resumed a stopped process"
    os.kill(wl.pid, signal.SIGCONT)
    assert wait_state(wl.pid, "RS") in "RS"
    assert_untouched(wl, maps, fds)


# --- kill -9 at every stage --------------------------------------------------------------

@pytest.mark.parametrize("stage", ["seized", "injected", "registered", "serving", "fault",
                                   "detach"])
def test_kill9_attached(procs, tmp_path, stage):
    """SIGKILL of mevitop at a stage: during the injection (the target is held stopped),
    while serving, inside the fault server (a thread of the target waits on a fault), while
    detaching.  The target runs on, never blocked, with its mappings and fds."""
    wl = harness.Workload()
    procs.append(wl)
    wl.do("map c 64")
    maps, fds = maps_of(wl.pid), fds_of(wl.pid)
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--exact=ordered"],
                      env_extra={"MEVITOP_TEST_PAUSE": stage}, wait_first=False)
    procs.append(mv)
    if stage in ("seized", "injected", "registered"):
        mv.wait_stderr(f"test-pause {stage}")
        assert state_of(wl.pid) == "t", "the target is not held during the injection"
    elif stage == "fault":
        mv.snapshot()
        wl.proc.stdin.write(b"touch c 0 64 1 w\n")
        wl.proc.stdin.flush()
        mv.wait_stderr("test-pause fault")
        # The server is stuck: the toucher waits in the kernel for mevitop.
        deadline = time.monotonic() + 5
        while open(f"/proc/{wl.pid}/wchan").read() != "handle_userfault":
            assert time.monotonic() < deadline, "the target is not blocked on a fault"
            time.sleep(0.01)
    elif stage == "detach":
        mv.snapshot()
        mv.proc.send_signal(signal.SIGTERM)
        mv.wait_stderr("test-pause detach")
    else:
        # Paused at the end of the setup: the fault server serves on meanwhile.
        mv.wait_stderr("test-pause serving")
        wl.do("touch c 0 32 1 w")
    mv.proc.kill()
    mv.proc.wait()
    if stage == "fault":
        line = wl.out.get(timeout=5, what="the blocked touch to complete after the kill")
        assert line.startswith("done "), line
    assert wait_state(wl.pid, "RS") in "RS"
    assert_untouched(wl, maps, fds)


def test_kill9_run_kills_child(procs, tmp_path):
    """run: the child dies with mevitop (PTRACE_O_EXITKILL)."""
    mv = ExactMevitop(["-i", "50"], run=["sleep", "60"],
                      env_extra={"MEVITOP_TEST_PAUSE": "serving"}, wait_first=False)
    procs.append(mv)
    mv.wait_stderr("test-pause serving")
    child = int(subprocess.run(["pgrep", "-P", str(mv.proc.pid), "sleep"], capture_output=True,
                               text=True).stdout.split()[0])
    procs.append(child)
    assert tracer_of(child) != 0
    mv.proc.kill()
    mv.proc.wait()
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{child}") and state_of(child) != "Z":
        assert time.monotonic() < deadline, "the child outlived mevitop"
        time.sleep(0.01)


def test_watchdog_backs_out(procs, tmp_path):
    """A mevitop that stalls while it holds the target (here: paused for 2.5 s at the
    "registered" stage, --attach-timeout 100 ms) does not keep it stopped: the watchdog lets
    it go within 10 x 100 ms, and mevitop backs out with one message."""
    wl = harness.Workload()
    procs.append(wl)
    wl.do("map a 16")
    maps, fds = maps_of(wl.pid), fds_of(wl.pid)
    mv = ExactMevitop(["-p", str(wl.pid), "--exact", "--attach-timeout", "100"],
                      env_extra={"MEVITOP_TEST_PAUSE": "registered:2500"}, wait_first=False)
    procs.append(mv)
    mv.wait_stderr("test-pause registered")
    t0 = time.monotonic()
    assert state_of(wl.pid) == "t"
    assert wait_state(wl.pid, "RS", timeout=2) in "RS", "the watchdog did not release it"
    assert time.monotonic() - t0 < 1.6
    assert mv.proc.wait(timeout=10) == 1
    err = mv.stderr_text()
    assert re.search(r"attaching to process \d+ took \d+ ms, more than --attach-timeout 100 ms:"
                     r" backed out, the process is as it was", err), err
    assert_untouched(wl, maps, fds)


# --- refusals ----------------------------------------------------------------------------

def run_mevitop(args, timeout=30):
    env = dict(os.environ, **harness.SAN_ENV)
    p = subprocess.run([harness.MEVITOP, *args], capture_output=True, text=True,
                       timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH = 0x4206, 0x4207, 17


def test_refuses_already_traced(procs):
    wl = harness.Workload()
    procs.append(wl)
    maps, fds = maps_of(wl.pid), fds_of(wl.pid)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    assert libc.ptrace(PTRACE_SEIZE, wl.pid, None, None) == 0
    try:
        rc, out, err = run_mevitop(["--exact", "-p", str(wl.pid), "--json"])
        assert rc == 1 and out == ""
        assert harness.json_error(err) == (
            f"cannot attach to process {wl.pid}: already traced by PID {os.getpid()} "
            f"(python3). Exact mode needs ptrace: detach the other tracer first; or watch it "
            f"without --exact (mevitop -p PID)"), err
        assert tracer_of(wl.pid) == os.getpid()
    finally:
        libc.ptrace(PTRACE_INTERRUPT, wl.pid, None, None)
        os.waitpid(wl.pid, 0x40000000)  # __WALL
        assert libc.ptrace(PTRACE_DETACH, wl.pid, None, None) == 0
    assert_untouched(wl, maps, fds)


def test_refuses_without_userfaultfd(procs):
    wl = harness.Workload()
    procs.append(wl)
    maps, fds = maps_of(wl.pid), fds_of(wl.pid)
    rc, out, err = run_mevitop(["--exact", "-p", str(wl.pid), "--json", "--disable", "uffd"])
    assert rc == 1 and out == ""
    assert harness.json_error(err) == ("--exact needs userfaultfd, and userfaultfd is disabled "
                           "(--disable uffd or MEVITOP_DISABLE); or watch without --exact "
                           "(mevitop -p PID)"), err
    assert_untouched(wl, maps, fds)
    rc, out, err = run_mevitop(["run", "--json", "--disable", "uffd", "--", "true"])
    assert rc == 1 and out == ""
    assert harness.json_error(err) == ("mevitop run needs exact mode, and userfaultfd is disabled "
                           "(--disable uffd or MEVITOP_DISABLE)"), err


def test_run_exit_status_and_bad_command():
    assert run_mevitop(["run", "--json", "--", "sh", "-c", "exit 7"])[0] == 7
    assert run_mevitop(["run", "--json", "--", "sh", "-c", "kill -9 $$"])[0] == 128 + 9
    rc, out, err = run_mevitop(["run", "--json", "--", "/nonexistent/cmd"])
    assert rc == 127 and out == ""
    assert harness.json_error(err) == ("failed to execute /nonexistent/cmd: No such file or "
                           "directory"), err
    rc, _, err = run_mevitop(["--exact", "--json"])
    assert rc == 2 and "--exact needs processes" in err


def test_refuses_second_monitor(procs):
    """A second `mevitop --exact` on a process the first one holds: exit 1 with the reason,
    and the first one and the target carry on as before."""
    wl = harness.Workload()
    procs.append(wl)
    wl.do("map a 32")
    maps, fds = maps_of(wl.pid), fds_of(wl.pid)
    first = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--exact"])
    procs.append(first)
    held = fds_of(wl.pid)
    rc, out, err = run_mevitop(["--exact", "-p", str(wl.pid), "--json"])
    assert rc == 1 and out == ""
    assert re.fullmatch(
        rf"process {wl.pid} is already watched by another userfaultfd monitor "
        r"\((\d+) of its \1 private anonymous mappings are registered with another "
        r"userfaultfd\): stop that monitor first; or watch it without --exact "
        r"\(mevitop -p PID\)", harness.json_error(err)), err
    assert fds_of(wl.pid) == held and tracer_of(wl.pid) == 0
    # The first one still tracks it.
    t, _ = wl.do("touch a 0 32 1 w")
    check(first, wl.pid, t, [wl.region("a")])
    assert first.stop(signal.SIGTERM) == 0
    assert_untouched(wl, maps, fds)


def pin(pid, cpu):
    for tid in os.listdir(f"/proc/{pid}/task"):
        os.sched_setaffinity(int(tid), {cpu})


def test_ordered_servers_follow_the_faulting_cpu(procs, tmp_path):
    """Ordered mode's per-CPU servers: the one where no fault comes from parks (so a fault
    wakes no server on another CPU), and when the faulting thread moves, the parked one is
    woken and the other parks; every first touch is served and counted all along."""
    assert len(os.sched_getaffinity(0)) >= 2, "needs two CPUs"
    wl = harness.Workload()
    procs.append(wl)
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", "--exact=ordered"])
    procs.append(mv)
    assert mv.first["stats"]["exact"]["server"]["threads"] == 2
    for cpu, name in ((1, "a"), (0, "b")):
        pin(wl.pid, cpu)
        t, _ = wl.do(f"map {name} 2048")
        settle(mv, wl, t, wl.region(name))
        t0 = mv.last["stats"]["exact"]["touches"]
        p0 = mv.last["stats"]["exact"]["prereg_pages"]
        t, _ = wl.do(f"touch {name} 0 2048 1 w")
        snap = check(mv, wl.pid, t, [wl.region(name)])
        # A record the server read after the engine's last hook call waits for the next
        # drain (exact_track.c's bound_ns), while the rescan the fault counters asked for
        # may have found its page already: the count can lag the model by one drain.
        deadline = time.monotonic() + 10
        while snap["stats"]["exact"]["touches"] - t0 < 2048 and time.monotonic() < deadline:
            snap = mv.snapshot()
        srv = snap["stats"]["exact"]["server"]
        assert snap["stats"]["exact"]["prereg_pages"] == p0     # none touched unregistered
        assert snap["stats"]["exact"]["touches"] - t0 == 2048
        assert srv["waiting"] == 1, srv
        if name == "a":
            assert srv["parked"] >= 1, srv
        else:
            assert srv["steered"] >= 1 and srv["parked"] >= 2, srv
