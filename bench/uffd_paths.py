#!/usr/bin/env python3
"""How long exact mode's attach takes by the way the target gets its userfaultfd (issue 13):
the userfaultfd() syscall injected into a root target, or the /dev/userfaultfd handoff (an
injected chain of 9 calls) into a root target (--disable uffd_syscall) and into a nobody
target.  Attaches of the three kinds are interleaved; medians of `mevitop -vv`'s own
figures: the creation alone ("userfaultfd (by ...) in N us") and the time the target was
held stopped ("held stopped N us": seize, bootstrap or reuse of the scratch page, creation,
registration, release).  Not a test: nothing here asserts a timing.

  bench/uffd_paths.py [ROUNDS]      (root; builds: make && make workloads)
"""
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEVITOP = os.environ.get("MEVITOP_BIN", os.path.join(ROOT, "build", "mevitop"))
WL = os.path.join(ROOT, "build", "workloads", "wl")
AS_NOBODY = ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]


def start_wl(wrap):
    p = subprocess.Popen([*wrap, WL], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    pid = int(p.stdout.readline().split()[1])
    for cmd in (b"map a 4096\n", b"touch a 0 4096 1 w\n"):   # 16 MiB resident
        p.stdin.write(cmd)
        p.stdin.flush()
        assert p.stdout.readline().startswith(b"done")
    return p, pid


def attach_once(pid, disable):
    cmd = [MEVITOP, "--exact", "-p", str(pid), "-j", "-vv", "-i", "1000"]
    if disable:
        cmd += ["--disable", disable]
    with tempfile.TemporaryFile("w+") as errf:     # -vv is verbose: no pipe to fill
        mv = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, text=True)
        mv.stdout.readline()        # the first snapshot: attached
        mv.send_signal(signal.SIGTERM)
        mv.communicate(timeout=30)
        errf.seek(0)
        err = errf.read()
    made = re.search(r"userfaultfd \(by (\S+)\) in (\d+) us", err)
    held = re.search(r"held stopped (\d+) us", err)
    assert made and held, err[-2000:]
    return made.group(1), int(made.group(2)), int(held.group(1))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    root, root_pid = start_wl(())
    nobody, nobody_pid = start_wl(AS_NOBODY)
    kinds = [("root target, userfaultfd()", root_pid, "uffd_dev"),
             ("root target, /dev/userfaultfd", root_pid, "uffd_syscall"),
             ("nobody target, /dev/userfaultfd", nobody_pid, None)]
    got = {k[0]: ([], []) for k in kinds}
    try:
        for _ in range(rounds):
            for name, pid, disable in kinds:
                _way, made_us, held_us = attach_once(pid, disable)
                got[name][0].append(made_us)
                got[name][1].append(held_us)
    finally:
        for p in (root, nobody):
            p.kill()
            p.wait()
    print(f"exact-mode attach by way of creating the userfaultfd ({rounds} rounds, medians)")
    for name, (made, held) in got.items():
        print(f"  {name:34s} create {statistics.median(made):7.0f} us   "
              f"held stopped {statistics.median(held):7.0f} us")


if __name__ == "__main__":
    main()
