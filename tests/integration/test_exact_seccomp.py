"""Exact mode on processes with seccomp filters (issue 13).

Targets are tests/workloads/seccomp_wl: a real filter (PR_SET_NO_NEW_PRIVS +
SECCOMP_SET_MODE_FILTER, a small cBPF program of its own) that kills on one system call and
makes getpgid fail with EXDEV (the witness that the filter is in force).  Two paths:
suspension (PTRACE_O_SUSPEND_SECCOMP while mevitop holds the target, the default as root)
and the proof (--disable seccomp_suspend: the filters are read and every injected call must
be allowed by them, or the process is refused with the call and the verdict).  Every time:
0 pages wrong against pagemap when attached, the target alive, untraced, with the same
/proc/PID/status Seccomp and Seccomp_filters, and its filter still enforced after mevitop is
gone - the witness still fails with EXDEV, and the killing call, tried last, kills it
(SIGSYS).  The kill -9 sweep of test_exact_kill.py is run on filtered targets too.
"""
import json
import os
import signal
import subprocess

import pytest

import harness
import killsweep
from test_exact import ExactMevitop, FifoWorkload, check, procs  # noqa: F401 (a fixture)

WITNESS = "errno=getpgid"
EXDEV = 18


def seccomp_state(pid):
    """{tid: (Seccomp, Seccomp_filters)} of every thread."""
    return {tid: (s["Seccomp"], s.get("Seccomp_filters"))
            for tid, s in killsweep.thread_status(pid).items()}


class FilteredWorkload(harness.Workload):
    def __init__(self, *rules):
        super().__init__("seccomp_wl", [*rules, WITNESS])
        self.seccomp = seccomp_state(self.pid)
        assert all(m == "2" and n == "1" for m, n in self.seccomp.values()), self.seccomp

    def touch(self, start, count):
        t, words = self.do(f"touch {start} {count}")
        return t, int(words[0], 16)

    def try_call(self, name):
        _, words = self.do(f"try {name}")
        return dict(w.split("=") for w in words)

    def assert_filter_enforced(self, killing_call):
        """Seccomp state as it was, the witness refused, and the killing call kills."""
        assert seccomp_state(self.pid) == self.seccomp
        assert not killsweep.traced(self.pid)
        assert self.try_call("getpgid") == {"ret": "-1", "errno": str(EXDEV)}
        self.send(f"try {killing_call}")
        assert self.proc.wait(timeout=harness.GUARD_S) == -signal.SIGSYS, \
            f"{killing_call} did not kill the target: its filter is not in force"


PATHS = {"suspend": (), "prove": ("--disable", "seccomp_suspend")}


@pytest.mark.parametrize("variant", ["ordered", "fast"])
@pytest.mark.parametrize("path", list(PATHS))
def test_filter_on_a_call_not_injected(procs, variant, path):  # noqa: F811
    """A filter that kills on getpriority, which mevitop never makes: attached on both
    paths, 0 pages wrong, the filter untouched and in force."""
    wl = FilteredWorkload("kill=getpriority")
    procs.append(wl)
    wl.touch(0, 100)
    maps = harness.maps_without_scratch(wl.pid)
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", f"--exact={variant}",
                       *PATHS[path]])
    procs.append(mv)
    t, region = wl.touch(100, 300)
    check(mv, wl.pid, t, [region])
    assert seccomp_state(wl.pid) == wl.seccomp
    # while watched (and no longer held), the filter is in force
    assert wl.try_call("getpgid") == {"ret": "-1", "errno": str(EXDEV)}
    assert mv.stop(signal.SIGTERM) == 0, mv.stderr_text()
    assert harness.maps_without_scratch(wl.pid) == maps
    wl.assert_filter_enforced("getpriority")


# The calls mevitop injects, each killed by a filter: `try` makes the same call itself.
INJECTED = {
    "userfaultfd": ("kill=userfaultfd", "userfaultfd", "userfaultfd("),
    "mmap-exec": ("killexec=mmap", "mmap", "mmap(0, ?, 0x5"),
    "prctl": ("kill=prctl", "prctl", "prctl(0x53564d41"),
    "ioctl": ("kill=ioctl", "ioctl", "ioctl("),
    "close": ("kill=close", "close", "close("),
}

# Suspended, how the attach goes: the way the userfaultfd is made ("by ..." in the -vv
# line), or the refusal.  A call the filter kills is never made, even suspended: were
# mevitop killed before the thread passed the seccomp check, the filter would see it (no
# ptrace request closes that window).  userfaultfd() has another way in, the
# /dev/userfaultfd handoff; prctl only names the scratch page (skipped); ioctl is made only
# by the handoff and the remote API handshake, neither used here.  mmap of the scratch
# page and close of the target's copy of the fd are needed by every way: refused before
# any call.  So is a filter that kills userfaultfd() and the handoff's socketpair.
SUSPENDED = {
    "userfaultfd": "/dev/userfaultfd",
    "mmap-exec": None,
    "prctl": "userfaultfd()",
    "ioctl": "userfaultfd()",
    "close": None,
    "userfaultfd-and-socketpair": None,
}
SUSPENDED_WHY = ("; its filters are suspended while mevitop holds it, but would see that "
                 "call were mevitop killed during it; watch it without --exact (mevitop -p "
                 "PID)")


@pytest.mark.parametrize("call", list(SUSPENDED))
def test_filter_on_an_injected_call_suspended(procs, call):  # noqa: F811
    """Suspended while held, the filter never sees an injected call, and only calls the
    thread would survive it seeing are made: attached (0 pages wrong) by the way the
    filter allows, or refused with the call and the verdict, the process left as it was
    (refused before any call: not even a scratch page); the filter is in force the moment
    mevitop lets go."""
    if call == "userfaultfd-and-socketpair":
        rules, killing = ("kill=userfaultfd", "kill=socketpair"), "socketpair"
        shown = ("userfaultfd(0x80800, 0, 0, 0, 0, 0), the call that creates the userfaultfd "
                 "exact mode watches the process with; and for the /dev/userfaultfd handoff, "
                 f"seccomp filter 0 of thread {{pid}} returns KILL_PROCESS for socketpair(")
    else:
        rule, killing, shown = INJECTED[call]
        rules = (rule,)
    wl = FilteredWorkload(*rules)
    procs.append(wl)
    wl.touch(0, 10)
    with open(f"/proc/{wl.pid}/maps") as f:
        maps = f.read()
    args = ["-p", str(wl.pid), "-i", "50", "--no-reconcile", "--exact=ordered", "-vv"]
    if SUSPENDED[call] is None:
        r = subprocess.run([harness.MEVITOP, "--json", *args, "-n", "1"], capture_output=True,
                           text=True, env=dict(os.environ, **harness.SAN_ENV),
                           timeout=harness.GUARD_S)
        assert r.returncode == 1, r.stderr
        errors = [json.loads(ln)["error"] for ln in r.stderr.splitlines()
                  if ln.startswith('{"error"')]
        assert len(errors) == 1, r.stderr
        assert errors[0].startswith(f"cannot attach to process {wl.pid}: seccomp filter 0 "
                                    f"of thread {wl.pid} returns KILL_PROCESS for "
                                    + shown.format(pid=wl.pid)), errors[0]
        assert errors[0].endswith(SUSPENDED_WHY), errors[0]
        with open(f"/proc/{wl.pid}/maps") as f:
            assert f.read() == maps
        assert not killsweep.traced(wl.pid)
        wl.touch(10, 10)
        wl.assert_filter_enforced(killing)
        return
    mv = ExactMevitop(args, wait_first=False)
    procs.append(mv)
    line = mv.wait_stderr(r"userfaultfd \(by ")
    assert f"userfaultfd (by {SUSPENDED[call]})" in line, line
    mv.snapshot()
    t, region = wl.touch(10, 200)
    check(mv, wl.pid, t, [region])
    assert mv.stop(signal.SIGTERM) == 0, mv.stderr_text()
    wl.assert_filter_enforced(killing)


def test_errno_filter_on_an_injected_call_suspended(procs):  # noqa: F811
    """A filter that makes userfaultfd() fail (ERRNO) is survivable: were mevitop killed
    mid-call the call would just fail.  So suspended, userfaultfd() itself is made."""
    wl = FilteredWorkload("errno=userfaultfd")
    procs.append(wl)
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", "--exact=ordered",
                       "-vv"], wait_first=False)
    procs.append(mv)
    line = mv.wait_stderr(r"userfaultfd \(by ")
    assert "userfaultfd (by userfaultfd())" in line, line
    mv.snapshot()
    t, region = wl.touch(0, 200)
    check(mv, wl.pid, t, [region])
    assert mv.stop(signal.SIGTERM) == 0, mv.stderr_text()
    assert wl.try_call("userfaultfd") == {"ret": "-1", "errno": str(EXDEV)}
    assert seccomp_state(wl.pid) == wl.seccomp
    assert not killsweep.traced(wl.pid)


@pytest.mark.parametrize("call", list(INJECTED))
def test_filter_on_an_injected_call_proved(procs, call):  # noqa: F811
    """Without suspension the proof finds the call the filter kills: refused before any
    call is made (the maps are exactly as they were: not even a scratch page), with the call
    and the verdict named; the target runs on, filter in force."""
    rule, killing, shown = INJECTED[call]
    wl = FilteredWorkload(rule)
    procs.append(wl)
    wl.touch(0, 10)
    with open(f"/proc/{wl.pid}/maps") as f:
        maps = f.read()
    r = subprocess.run([harness.MEVITOP, "--exact", "-p", str(wl.pid), "-j", "-n", "1",
                        "--disable", "seccomp_suspend"], capture_output=True, text=True,
                       env=dict(os.environ, **harness.SAN_ENV), timeout=harness.GUARD_S)
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert f"cannot attach to process {wl.pid}: seccomp filter 0 of thread {wl.pid} returns " \
           f"KILL_PROCESS for {shown}" in lines[0], lines[0]
    assert "cannot be suspended (disabled by --disable seccomp_suspend)" in lines[0]
    with open(f"/proc/{wl.pid}/maps") as f:
        assert f.read() == maps
    wl.touch(10, 10)
    wl.assert_filter_enforced(killing)


SECCOMP_WL = os.path.join(harness.WORKLOADS, "seccomp_wl")


class RunFilteredWorkload(FifoWorkload):
    """seccomp_wl serving through FIFOs, for `mevitop run`: OUTER rules are installed by a
    first seccomp_wl that then execs sh (mevitop injects into a filtered process at each
    exec), INNER ones by the serving seccomp_wl itself, after mevitop's injection."""

    def __init__(self, tmp_path, outer, inner):
        super().__init__(tmp_path)
        n = len(inner)
        shell = ["/bin/sh", "-c", 'exec "$0" "$@" <"$1" >"$2"'.replace(
            '"$@"', " ".join(f'"${i}"' for i in range(3, 3 + n))),
            SECCOMP_WL, self.inp, self.outp, *inner]
        self.argv = [SECCOMP_WL, *outer, "--", *shell] if outer else shell
        self.filters = str(len(inner) + (1 if outer else 0))

    def try_call(self, name):
        _, words = self.do(f"try {name}")
        return dict(w.split("=") for w in words)


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("variant", ["ordered", "fast"])
def test_run_filter_installed_after_exec(procs, tmp_path, variant, path):  # noqa: F811
    """`mevitop run` follows CMD with ptrace: the filter CMD installs must be in force while
    it runs (suspension only while it is parked for an injection)."""
    wl = RunFilteredWorkload(tmp_path, (), ("kill=getpriority", WITNESS))
    procs.append(wl)
    mv = ExactMevitop(["-i", "50", "--no-reconcile", f"--exact={variant}", *PATHS[path]],
                      run=wl.argv)
    procs.append(mv)
    wl.connect()
    t, words = wl.do("touch 0 200")
    check(mv, wl.pid, t, [int(words[0], 16)])
    assert seccomp_state(wl.pid)[wl.pid] == ("2", "1")
    assert wl.try_call("getpgid") == {"ret": "-1", "errno": str(EXDEV)}
    wl.send("try getpriority")
    assert mv.proc.wait(timeout=harness.GUARD_S) == 128 + signal.SIGSYS, mv.stderr_text()


@pytest.mark.parametrize("variant", ["ordered", "fast"])
def test_run_filter_inherited_across_exec(procs, tmp_path, variant):  # noqa: F811
    """CMD runs under a filter that kills userfaultfd before it execs: mevitop injects into
    the filtered program at each exec (suspended), exactly, and the filters stay in force."""
    wl = RunFilteredWorkload(tmp_path, ("kill=userfaultfd",), (WITNESS,))
    procs.append(wl)
    mv = ExactMevitop(["-i", "50", "--no-reconcile", f"--exact={variant}"], run=wl.argv)
    procs.append(mv)
    wl.connect()
    t, words = wl.do("touch 0 200")
    check(mv, wl.pid, t, [int(words[0], 16)])
    assert seccomp_state(wl.pid)[wl.pid] == ("2", "2")
    assert wl.try_call("getpgid") == {"ret": "-1", "errno": str(EXDEV)}
    wl.send("try userfaultfd")
    assert mv.proc.wait(timeout=harness.GUARD_S) == 128 + signal.SIGSYS, mv.stderr_text()


def test_probe_names_the_path():
    env = dict(os.environ, **harness.SAN_ENV)

    def probe(*extra):
        r = subprocess.run([harness.MEVITOP, "--probe", *extra], capture_output=True,
                           text=True, env=env, timeout=harness.GUARD_S)
        assert r.returncode == 0, r.stderr
        return r.stdout

    line = [ln for ln in probe().splitlines() if "seccomp (exact mode)" in ln]
    assert line == ["  seccomp (exact mode)         suspend filters while held "
                    "(PTRACE_O_SUSPEND_SECCOMP)"], line
    text = probe("--disable", "seccomp-suspend")
    assert "prove each injected call allowed (PTRACE_SECCOMP_GET_FILTER) (suspension: " \
           "disabled by --disable seccomp_suspend)" in text
    assert json.loads(probe("-j"))["exact_seccomp"] == "suspend"
    assert json.loads(probe("-j", "--disable", "seccomp_suspend"))["exact_seccomp"] == "prove"


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("stage", ["seized", "injected", "registered", "serving", "detach"])
def test_kill9_at_each_stage_filtered(procs, stage, path):  # noqa: F811
    """SIGKILL of mevitop paused at each named stage (MEVITOP_TEST_PAUSE) of an attach to a
    filtered process (suspended: a filter that kills userfaultfd; proving: one that kills
    getpriority, which the proof lets through): the target runs on, untraced, with its maps
    and seccomp state as before and its filter in force."""
    rule, killing = ("kill=userfaultfd", "userfaultfd") if path == "suspend" else \
        ("kill=getpriority", "getpriority")
    wl = FilteredWorkload(rule)
    procs.append(wl)
    wl.touch(0, 64)
    maps = harness.maps_without_scratch(wl.pid)
    mv = ExactMevitop(["-p", str(wl.pid), "-i", "50", "--exact=ordered", *PATHS[path]],
                      env_extra={"MEVITOP_TEST_PAUSE": stage}, wait_first=False)
    procs.append(mv)
    if stage in ("seized", "injected", "registered"):
        mv.wait_stderr(f"test-pause {stage}")
        assert killsweep.proc_state(wl.pid) == "t", "the target is not held"
    elif stage == "detach":
        mv.snapshot()
        mv.proc.send_signal(signal.SIGTERM)
        mv.wait_stderr("test-pause detach")
    else:
        mv.wait_stderr("test-pause serving")
        wl.touch(64, 32)
    mv.proc.kill()
    mv.proc.wait()
    killsweep.wait_for(lambda: not killsweep.traced(wl.pid), "the kernel to detach it")
    wl.touch(0, 256)
    assert harness.maps_without_scratch(wl.pid) == maps
    wl.assert_filter_enforced(killing)


# kill -9 of mevitop at moments swept over the attach, the target under a filter
KILL_KINDS = {
    "not-injected-suspend": ("kill=getpriority", ()),
    "not-injected-prove": ("kill=getpriority", ("--disable", "seccomp_suspend")),
    # userfaultfd() is never made (were mevitop killed before the thread passed the seccomp
    # check, the filter would see it): the /dev/userfaultfd handoff, which it allows
    "injected-suspend": ("kill=userfaultfd", ()),
    # survivable: userfaultfd() is made, and a killed mevitop could only make it fail
    "injected-errno-suspend": ("errno=userfaultfd", ()),
}


@pytest.mark.parametrize("kind", list(KILL_KINDS))
def test_kill9_during_attach_filtered(kind):
    rule, extra = KILL_KINDS[kind]
    kills, failures = killsweep.sweep(("spin", 1, False), 10, seccomp=(rule, WITNESS),
                                      extra=extra)
    assert not failures, f"{len(failures)} problems in {kills} kills: " + "; ".join(
        f"at {us} us: {p}" for us, p in failures[:5])


@pytest.mark.parametrize("rule", ["kill=userfaultfd", "errno=userfaultfd"])
def test_filtered_multithreaded_suspended(rule):
    """Every thread's filters are proven (threads with the same filters as the last once):
    a 5-thread target under a filter that kills or fails userfaultfd() is attached, then
    let go with its maps, fds, masks and seccomp state as they were.  (A first version of
    the up-front check refused every target with a second thread.)"""
    target = killsweep.Target("spin", 4, seccomp=(rule, WITNESS))
    try:
        r = subprocess.run([harness.MEVITOP, "--exact", "-p", str(target.pid), "-j", "-n", "2"],
                           capture_output=True, text=True, env=dict(os.environ, **harness.SAN_ENV),
                           timeout=harness.GUARD_S)
        assert r.returncode == 0, r.stderr
        killsweep.wait_for(lambda: not killsweep.traced(target.pid), "the detach")
        target.settle()
        assert target.snapshot() == target.before
    finally:
        target.wl.close()
