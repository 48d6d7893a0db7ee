"""kill -9 of mevitop at chosen moments after it seized a target, and the checks that the
target came out as it went in (issue 9).  Used by test_exact_kill.py (a short sweep in the
default suite) and tests/stress/exact_kill.py (`make stress`, >= 200 kills per target).

The target is tests/workloads/kill_target: its main thread - the one exact mode injects
into - checks its own rbx, r12-r15, ymm8 and ymm9 in a loop (or around a blocking read),
so borrowed registers or a lost AVX state show up as "error corrupt" and exit 4.  After
each kill the test waits for the kernel to detach the target (every thread's TracerPid
back to 0), then compares /proc/PID/maps (all but the one scratch page), the fd table,
each thread's SigBlk/SigIgn/SigCgt and the process state with what they were before.
"""
import os
import random
import signal
import subprocess
import tempfile
import time

import harness

GUARD_S = harness.GUARD_S


def _status(path):
    with open(path) as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def thread_status(pid):
    """{tid: status dict} for every thread still there."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out[int(tid)] = _status(f"/proc/{pid}/task/{tid}/status")
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


def fds_of(pid):
    d = f"/proc/{pid}/fd"
    return {fd: os.readlink(f"{d}/{fd}") for fd in os.listdir(d)}


def proc_state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def traced(pid):
    return any(int(s.get("TracerPid", "0")) for s in thread_status(pid).values())


class TracerWatch:
    """Polls the main thread's TracerPid as fast as Python can (a few µs a read, with the
    file kept open: the seize is seen within microseconds, the delay counts from there)."""

    def __init__(self, pid):
        self.fd = os.open(f"/proc/{pid}/status", os.O_RDONLY)

    def traced(self):
        os.lseek(self.fd, 0, os.SEEK_SET)
        text = os.read(self.fd, 8192)
        i = text.index(b"TracerPid:")
        return text[i + 10:text.index(b"\n", i)].strip() != b"0"

    def close(self):
        os.close(self.fd)


def wait_for(cond, what, timeout=GUARD_S):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


class Target:
    """A kill_target in MODE (spin, block, fork) with THREADS extra checking threads;
    stopped=True: SIGSTOPped before mevitop comes, and it must stay stopped."""

    def __init__(self, mode, threads=0, stopped=False):
        self.mode, self.stopped = mode, stopped
        self.wl = harness.Workload("kill_target", [mode, "-t", str(threads)])
        self.pid = self.wl.pid
        if mode != "block":
            self.rounds = self.status()
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
            "stopped": proc_state(self.pid) == "T",
        }

    def problems(self):
        """What differs from before (empty: the target is as it was)."""
        if self.wl.proc.poll() is not None:
            return [f"target died: exit status {self.wl.proc.returncode}"]
        now, bad = self.snapshot(), []
        with open(f"/proc/{self.pid}/maps") as f:
            scratch = harness.scratch_lines(self.pid, f.read())
        if len(scratch) > 1:
            bad.append(f"more than one scratch mapping: {scratch}")
        for key in ("maps", "fds", "signals", "stopped"):
            if now[key] != self.before[key]:
                bad.append(f"{key} changed: {self.before[key]!r} -> {now[key]!r}")
        if not self.stopped:
            try:
                rounds = self.status()
                if self.mode != "block" and rounds <= self.rounds:
                    bad.append(f"main thread made no progress ({self.rounds} -> {rounds})")
                self.rounds = rounds
            except AssertionError as e:
                bad.append(f"target does not answer: {e}")
        return bad

    def finish(self):
        """Resume a stopped target and check it runs on; then end it.  Returns problems."""
        bad = []
        if self.stopped and self.wl.proc.poll() is None:
            os.kill(self.pid, signal.SIGCONT)
            self.stopped = False
            self.before["stopped"] = False
            bad = self.problems()
        self.wl.close()
        return bad


def kill_once(target, delay_s, binary=None):
    """Start mevitop --exact on TARGET, SIGKILL it DELAY_S after the target became traced,
    wait for the kernel to detach the target.  Returns mevitop's stderr (for reports)."""
    env = dict(os.environ, **harness.SAN_ENV)
    with tempfile.TemporaryFile() as err:
        mv = subprocess.Popen([binary or harness.MEVITOP, "--exact", "-p", str(target.pid),
                               "-j", "-i", "50"], stdout=subprocess.DEVNULL, stderr=err,
                              env=env)
        watch = TracerWatch(target.pid)
        try:
            deadline = time.monotonic() + GUARD_S
            while not watch.traced():
                if mv.poll() is not None or time.monotonic() > deadline:
                    err.seek(0)
                    raise AssertionError("mevitop never seized the target: " +
                                         err.read().decode(errors="replace"))
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < delay_s:
                pass
        finally:
            mv.kill()
            mv.wait()
            watch.close()
        wait_for(lambda: not traced(target.pid), "the kernel to detach the target")
        err.seek(0)
        return err.read().decode(errors="replace")


def sweep(kind, kills, max_delay_s=0.003, per_target=2, seed=9, binary=None):
    """KILLS kills of mevitop spread over [0, MAX_DELAY_S] after the seize, a fresh target
    every PER_TARGET kills (so the scratch page's bootstrap and its reuse both get killed).
    KIND: (mode, threads, stopped).  Returns (kills, list of (delay_us, problem))."""
    mode, threads, stopped = kind
    rng = random.Random(seed)
    failures, target = [], None
    step = max_delay_s / max(kills, 1)
    try:
        for i in range(kills):
            if target is None:
                target = Target(mode, threads, stopped)
            delay = i * step + rng.uniform(0, step)
            kill_once(target, delay, binary)
            failures += [(int(delay * 1e6), p) for p in target.problems()]
            if (i + 1) % per_target == 0 or i + 1 == kills:
                failures += [(int(delay * 1e6), p) for p in target.finish()]
                target = None
    finally:
        if target is not None:
            target.wl.proc.kill()
            target.wl.close()
    return kills, failures
