#!/usr/bin/env python3
"""SIGTERM to exit (reaped) of `mevitop --json --mode MODE -p PID`, the default against
--disable detach_child, interleaved (user/kernel/perf_release.c: trace mode's perf links'
last closes left to a grandchild).  Each run waits out the previous detacher (no
mevitop-detach left) before it starts, so runs do not share grace periods.  Prints the
medians and ranges in ms and the load.  Nothing here asserts a timing.

  exit_time.py [--runs 5] [--mode trace]
"""
import argparse
import os
import signal
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEVITOP = os.environ.get("MEVITOP_BIN", os.path.join(ROOT, "build", "mevitop"))


def detachers():
    n = 0
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/comm") as f:
                n += f.read().strip() == "mevitop-detach"
        except OSError:
            pass
    return n


def one(target, mode, disable):
    cmd = [MEVITOP, "--json", "-i", "200", "-p", str(target), "--mode", mode, "--no-files"]
    if disable:
        cmd += ["--disable", disable]
    while detachers():
        time.sleep(0.05)  # the last run's grace periods
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdout.readline()  # attached, first snapshot written
    t = time.monotonic()
    p.send_signal(signal.SIGTERM)
    p.wait()
    p.stdout.close()
    return (time.monotonic() - t) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mode", default="trace")
    a = ap.parse_args()
    target = subprocess.Popen(["sleep", "3600"])
    res = {"": [], "detach_child": []}
    try:
        for _ in range(a.runs):
            for d, v in res.items():
                v.append(one(target.pid, a.mode, d))
    finally:
        target.kill()
    for d, v in res.items():
        print(f"{a.mode}, {'default' if not d else '--disable ' + d}: SIGTERM to reaped "
              f"median {statistics.median(v):.0f} ms ({min(v):.0f}-{max(v):.0f}), runs "
              f"{[round(x) for x in v]}")
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
