"""kill -9 of mevitop at chosen moments after it seized a target, and the checks that the
target came out as it went in (issue 9).  Used by test_exact_kill.py (a short sweep in the
default suite) and tests/stress/exact_kill.py (`make stress`, >= 200 kills per target).

The target is tests/workloads/kill_target: its main thread - the one exact mode injects
into - checks its own rbx, r12-r15, ymm8 and ymm9 in a loop (or around a blocking read),
(kill_target amx: and AMX tile data in tmm0), so borrowed registers or a lost AVX state show up as "error corrupt" and exit 4.  mevitop
is killed by a timer it arms at its first PTRACE_SEIZE (MEVITOP_TEST_KILL_US), so the
delay is exact and the death can land on any instruction.  After each kill the test waits for the kernel to detach the target (every thread's TracerPid
back to 0), then compares /proc/PID/maps (all but the one scratch page), the fd table,
each thread's SigBlk/SigIgn/SigCgt, each thread's seccomp state (Seccomp,
Seccomp_filters), the credentials and the process state with what they were before.  A
target may run under a seccomp filter of its own (tests/workloads/seccomp_wl RULES --
kill_target ...) or as another user (WRAP: setpriv ...).
"""
import collections  # noqa: F401  (callers pass a collections.Counter as stages)
import difflib
import os
import random
import signal
import subprocess
import tempfile
import time

import harness

GUARD_S = harness.GUARD_S


def _cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


# kill_target amx: a main thread holding AMX tile data, whose signal frame is the full
# XSAVE size (~11 KiB).  Only a CPU with AMX can run it; the sweeps add it there.
HAS_AMX = "amx_tile" in _cpu_flags()


def _status(path):
    with open(path) as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def thread_status(pid):
    """{tid: status dict} for every thread still there."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out      # it died: problems() says so
    for tid in tids:
        try:
            out[int(tid)] = _status(f"/proc/{pid}/task/{tid}/status")
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


def fds_of(pid):
    d = f"/proc/{pid}/fd"
    return {fd: os.readlink(f"{d}/{fd}") for fd in os.listdir(d)}


CRED_KEYS = ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "NoNewPrivs",
             "Seccomp", "Seccomp_filters")


def creds_of(status):
    """Credentials and seccomp state from a /proc status dict."""
    return {k: status.get(k) for k in CRED_KEYS}


def proc_state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def traced(pid):
    return any(int(s.get("TracerPid", "0")) for s in thread_status(pid).values())


def wait_for(cond, what, timeout=GUARD_S):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


class Target:
    """A kill_target in MODE (spin, block, fork) with THREADS extra checking threads;
    stopped=True: SIGSTOPped before mevitop comes, and it must stay stopped; seccomp=RULES:
    it runs under the filter tests/workloads/seccomp_wl installs for those rules."""

    def __init__(self, mode, threads=0, stopped=False, seccomp=(), wrap=()):
        self.mode, self.stopped = mode, stopped
        args = [mode, "-t", str(threads)]
        if seccomp:
            self.wl = harness.Workload("seccomp_wl", [
                *seccomp, "--", os.path.join(harness.WORKLOADS, "kill_target"), *args],
                wrap=wrap)
        else:
            self.wl = harness.Workload("kill_target", args, wrap=wrap)
        self.pid = self.wl.pid
        self.settle()   # every thread has run: stdio buffers and malloc arenas exist
        if stopped:
            os.kill(self.pid, signal.SIGSTOP)
            wait_for(lambda: proc_state(self.pid) == "T", "the target to stop")
        self.before = self.snapshot()

    def status(self):
        """Ask the target; its answer proves its register checks still pass."""
        _, words = self.wl.do("status")
        return int(words[0].split("=")[1])

    def snapshot(self):
        threads = thread_status(self.pid)
        return {
            "maps": harness.maps_without_scratch(self.pid),
            "fds": fds_of(self.pid),
            "signals": {tid: (s["SigBlk"], s["SigIgn"], s["SigCgt"])
                        for tid, s in threads.items()},
            "seccomp": {tid: (s["Seccomp"], s.get("Seccomp_filters"))
                        for tid, s in threads.items()},
            "stopped": proc_state(self.pid) == "T",
            "creds": creds_of(threads.get(self.pid, {})),
        }

    def settle(self):
        """Wait until the main thread is back in its own code: a thread the monitor died
        under finishes the injected call and restores itself only when it next runs, and
        on 2 busy vCPUs that can take a while.  spin/fork: it completed a whole check loop
        after this call; block: its read() was restarted and answered."""
        if self.mode == "block":
            self.status()
            return
        first = self.status()
        deadline = time.monotonic() + GUARD_S
        while self.status() <= first:
            assert time.monotonic() < deadline, "the main thread made no progress"
            time.sleep(0.001)

    def problems(self):
        """What differs from before (empty: the target is as it was).  A stopped target
        stays stopped.  A thread of it that mevitop died under finishes the injected call
        (closing its fd; the /dev/userfaultfd chain: its fds and its data page) and
        restores its mask only when it runs again - before any code of its own - so its
        fds, maps and masks are compared after SIGCONT (finish())."""
        if self.wl.proc.poll() is not None or not os.path.exists(f"/proc/{self.pid}"):
            self.wl.proc.wait()
            return [f"target died: exit status {self.wl.proc.returncode}"]
        bad = []
        if not self.stopped:
            try:
                self.settle()
            except (AssertionError, EOFError, OSError) as e:
                self.wl.proc.wait()
                return [f"target does not answer ({e}); exit status {self.wl.proc.returncode}"]
        else:
            # Woken by the detach, a stopped thread runs in the kernel until it enters the
            # group stop again (state R for a moment): it never returns to its own code.
            try:
                wait_for(lambda: proc_state(self.pid) == "T", "the target to stop again", 5)
            except AssertionError as e:
                bad.append(str(e))
        now = self.snapshot()
        with open(f"/proc/{self.pid}/maps") as f:
            scratch = harness.scratch_lines(self.pid, f.read())
        if len(scratch) > 1:
            bad.append(f"more than one scratch mapping: {scratch}")
        bad += [f"a scratch page not named by its memfd, or writable: {line!r}"
                for line in scratch if not harness.scratch_named(line)]
        for key in ("maps", "fds", "signals", "seccomp", "stopped", "creds"):
            if key in ("signals", "fds", "maps") and self.stopped:
                continue
            if now[key] != self.before[key]:
                if key == "maps":
                    diff = difflib.unified_diff(self.before[key].splitlines(),
                                                now[key].splitlines(), lineterm="", n=0)
                    bad.append("maps changed: " + " | ".join(list(diff)[2:]))
                else:
                    bad.append(f"{key} changed: {self.before[key]!r} -> {now[key]!r}")
        return bad

    def finish(self):
        """Resume a stopped target and check it runs on; then end it.  Returns problems."""
        bad = []
        if self.stopped and self.wl.proc.poll() is None:
            os.kill(self.pid, signal.SIGCONT)
            wait_for(lambda: proc_state(self.pid) != "T", "the target to continue", 5)
            self.stopped = False
            self.before["stopped"] = False
            bad = self.problems()
        self.wl.close()
        return bad


def kill_once(target, delay_s, binary=None, extra=(), stages=None):
    """Start mevitop --exact on TARGET with MEVITOP_TEST_KILL_US (exact/inject_seize.c): the kernel
    SIGKILLs it DELAY_S after its first PTRACE_SEIZE of the target.  Wait for that death
    and for the kernel to detach the target.  Returns a problem string or None.  STAGES, a
    Counter: the stage mevitop was in when it died (MEVITOP_TEST_STAGE_FILE, stage.h) is
    counted there."""
    env = dict(os.environ, **harness.SAN_ENV)
    env["MEVITOP_TEST_KILL_US"] = str(int(delay_s * 1e6))
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile() as stage:
        env["MEVITOP_TEST_STAGE_FILE"] = stage.name
        mv = subprocess.Popen([binary or harness.MEVITOP, "--exact", "-p", str(target.pid),
                               "-j", "-i", "50", *extra], stdout=subprocess.DEVNULL, stderr=err,
                              env=env)
        try:
            rc = mv.wait(timeout=GUARD_S)
        except subprocess.TimeoutExpired:
            mv.kill()
            mv.wait()
            rc = "still running"
        wait_for(lambda: not traced(target.pid), "the kernel to detach the target")
        if stages is not None:
            stages[stage.read().decode(errors="replace").strip() or "(none)"] += 1
        if rc != -signal.SIGKILL:
            err.seek(0)
            return (f"mevitop was not killed by the timer (exit {rc}): " +
                    err.read().decode(errors="replace")[-500:])
    return None


# The stages of an attach in the order they come (stage.h and exact.h), for the histogram.
STAGE_ORDER = [
    "inj:seize", "inj:prepare", "seized", "boot:memfd_create", "boot:ftruncate", "boot:mmap",
    "boot:close", "call:prctl", "call:mmap", "call:userfaultfd", "tramp:userfaultfd",
    "call:ioctl", "tramp:ioctl", "call:munmap", "tramp:munmap", "chain:socketpair",
    "chain:recvmsg", "chain:ioctl", "chain:close", "chain:mmap", "chain:munmap", "injected",
    "registered", "drop:munmap", "inj:detach", "serving"]


def histogram(stages):
    """One line: where the kills landed, stage by stage in attach order."""
    order = {s: i for i, s in enumerate(STAGE_ORDER)}
    keys = sorted(stages, key=lambda s: (order.get(s, len(order)), s))
    return ", ".join(f"{k} {stages[k]}" for k in keys)


def sweep(kind, kills, max_delay_s=0.003, per_target=2, seed=9, binary=None, seccomp=(),
          extra=(), wrap=(), stages=None):
    """KILLS kills of mevitop spread over [0, MAX_DELAY_S] after the seize, a fresh target
    every PER_TARGET kills (so the scratch page's bootstrap and its reuse both get killed).
    KIND: (mode, threads, stopped); SECCOMP: the target's filter rules (seccomp_wl); EXTRA:
    more mevitop arguments; WRAP runs the target through a command (setpriv, to run it as
    another user).  STAGES (a Counter): where each kill landed (kill_once).  Returns
    (kills, list of (delay_us, problem))."""
    mode, threads, stopped = kind
    rng = random.Random(seed)
    failures, target = [], None
    step = max_delay_s / max(kills, 1)
    try:
        for i in range(kills):
            if target is None:
                target = Target(mode, threads, stopped, seccomp, wrap)
            delay = i * step + rng.uniform(0, step)
            problem = kill_once(target, delay, binary, extra, stages)
            if problem:
                failures.append((int(delay * 1e6), problem))
            failures += [(int(delay * 1e6), p) for p in target.problems()]
            if target.wl.proc.poll() is not None:
                target.wl.close()
                target = None
                continue
            if (i + 1) % per_target == 0 or i + 1 == kills:
                failures += [(int(delay * 1e6), p) for p in target.finish()]
                target = None
    finally:
        if target is not None:
            target.wl.proc.kill()
            target.wl.close()
    return kills, failures
