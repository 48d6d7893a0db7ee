#!/usr/bin/env python3
"""What one /metrics scrape costs `mevitop serve` (issue 24): the CPU time of its HTTP
thread (libmicrohttpd's, "MHD-single"; schedstat) over --scrapes back-to-back scrapes,
divided by them, with --extra sleeping processes this script forks; builds given with
--baseline are measured in the same run, the order alternating by round.  The engine's own
refresh (its main thread) is left out: `bench/idle_cost.py` measures serve as a whole.
Nothing here asserts a timing.

  scrape_cost.py [--extra 350] [--scrapes 300] [--rounds 2] [--baseline BIN ...]
                 [--openmetrics]
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEVITOP = os.environ.get("MEVITOP_BIN", os.path.join(ROOT, "build", "mevitop"))
SLEEPERS = os.path.join(ROOT, "build", "bench", "sleepers")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from idle_cost import server_cpu_s  # noqa: E402  (the HTTP thread's CPU, schedstat)
OPENMETRICS = "application/openmetrics-text; version=1.0.0"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url, accept):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return len(r.read())


def measure(binary, scrapes, accept):
    """(ms of the HTTP thread's CPU a scrape, bytes of the last answer)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    p = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}", "-i", "1000"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                scrape(url, accept)
                break
            except OSError:
                if p.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{binary} serve did not answer")
                time.sleep(0.05)
        for _ in range(3):      # the memo and the cgroup paths are made by the first ones
            scrape(url, accept)
        c0 = server_cpu_s(p.pid)
        for _ in range(scrapes):
            size = scrape(url, accept)
        return (server_cpu_s(p.pid) - c0) / scrapes * 1e3, size
    finally:
        p.terminate()
        p.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--extra", type=int, default=350)
    ap.add_argument("--scrapes", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--baseline", action="append", default=[])
    ap.add_argument("--openmetrics", action="store_true")
    args = ap.parse_args()
    if os.geteuid():
        sys.exit("needs root (mevitop loads BPF programs)")
    accept = OPENMETRICS if args.openmetrics else None
    sleepers = None
    if args.extra:
        sleepers = subprocess.Popen([SLEEPERS, str(args.extra)], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True)
        sleepers.stdout.readline()      # "ready N"
    builds = [MEVITOP, *args.baseline]
    got = {b: [] for b in builds}
    try:
        nproc = sum(1 for d in os.listdir("/proc") if d.isdigit())
        for r in range(args.rounds):
            for b in builds if r % 2 == 0 else reversed(builds):
                got[b].append(measure(b, args.scrapes, accept))
    finally:
        if sleepers:
            sleepers.stdin.close()
            sleepers.wait(timeout=60)
    print(f"scrape_cost: {nproc} processes, {args.scrapes} scrapes a round, {args.rounds} "
          f"rounds, {'OpenMetrics' if accept else 'text 0.0.4'}, loadavg "
          f"{os.getloadavg()[0]:.2f}")
    for b in builds:
        ms = [m for m, _ in got[b]]
        print(f"  {b}: {statistics.median(ms):.2f} ms of CPU a scrape (rounds "
              f"{', '.join(f'{m:.2f}' for m in ms)}), {got[b][-1][1]} bytes")


if __name__ == "__main__":
    main()
