"""Stop signals are answered at once, wherever mevitop is: here in the middle of the
initial scan of a process whose pagemap is read entry by entry (no PAGEMAP_SCAN) across
60 TiB of reservations, as a sanitizer's shadow and allocator regions are."""
import os
import signal
import subprocess
import time

import harness

# A process that reserves MAPPINGS x 60 GiB, never touched (PROT_NONE and PROT_READ in turn,
# so that neighbours do not merge into one mapping mevitop would not read entry by entry).
HUGE = r"""
import mmap, os, sys
with open("/proc/self/comm", "w") as f:
    f.write(sys.argv[2])
keep = [mmap.mmap(-1, 60 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000,
                  prot=mmap.PROT_READ if i % 2 else 0)
        for i in range(int(sys.argv[1]))]
print("ready", os.getpid(), flush=True)
sys.stdin.read()
"""
MAPPINGS = 1000     # ~15.7 G pagemap entries: a minute or more of preads here


def pagemap_open(mevitop_pid, pid):
    """Whether mevitop holds pid's pagemap open: it has begun to scan it."""
    want = f"/proc/{pid}/pagemap"
    try:
        fds = os.listdir(f"/proc/{mevitop_pid}/fd")
    except FileNotFoundError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{mevitop_pid}/fd/{fd}") == want:
                return True
        except FileNotFoundError:
            pass
    return False


def sigterm_when(mv, ready, what):
    """Waits until ready() (a state of mevitop's, polled: it announces nothing there), then
    sends SIGTERM; returns the exit code, which must come within the guard."""
    deadline = time.monotonic() + harness.GUARD_S
    while not ready():
        assert mv.poll() is None, mv.stderr.read().decode()
        assert time.monotonic() < deadline, f"mevitop never got {what}"
        time.sleep(0.01)
    mv.send_signal(signal.SIGTERM)
    try:
        return mv.wait(timeout=harness.GUARD_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"SIGTERM {what} was not answered")


def blocked_in_pipe_write(pid):
    with open(f"/proc/{pid}/wchan") as f:
        return "pipe_write" in f.read()


def test_sigterm_during_a_huge_pread_scan():
    comm = f"huge{os.getpid()}"[:15]
    wl = subprocess.Popen(["python3", "-c", HUGE, str(MAPPINGS), comm], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True)
    mv = None
    try:
        line = wl.stdout.readline()
        assert line.startswith("ready "), line
        pid = int(line.split()[1])
        mv = subprocess.Popen([harness.MEVITOP, "--json", "-v", "--disable", "pagemap_scan",
                               "--comm", comm], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=dict(os.environ, **harness.SAN_ENV))
        # Ready: its pagemap is open, so the scan that would take minutes has begun (the
        # model's first snapshot comes after it: nothing else says so).
        rc = sigterm_when(mv, lambda: pagemap_open(mv.pid, pid), "to the pagemap scan")
        out, err = mv.communicate()
        assert rc == 0, err.decode()
        # No snapshot: the initial scan was cut short, so there is no true picture to give.
        assert out == b""
        objs = harness.json_messages(err.decode())
        assert {"info": "stopped during the initial scan (signal 15)"} in objs, objs
        assert wl.poll() is None           # the target runs on
    finally:
        if mv and mv.poll() is None:
            mv.kill()
            mv.wait()
        wl.kill()
        wl.wait()


def test_sigterm_while_stdout_is_full(workload):
    """A reader that stopped reading (a full pipe) holds mevitop in write(): SIGTERM still
    ends it, with 0 and no complaint (stdio would write the rest and block again)."""
    wl = workload()
    mv = subprocess.Popen([harness.MEVITOP, "--json", "-i", "10", "-p", str(wl.pid)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=dict(os.environ, **harness.SAN_ENV))
    try:
        # Ready: blocked writing a snapshot into the pipe nobody reads.
        rc = sigterm_when(mv, lambda: blocked_in_pipe_write(mv.pid), "to a full pipe")
        err = mv.stderr.read().decode()
        assert rc == 0 and err == "", (rc, err)
        assert wl.do("map a 1")[0] > 0          # the target runs on
    finally:
        if mv.poll() is None:
            mv.kill()
            mv.wait()
