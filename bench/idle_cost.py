#!/usr/bin/env python3
"""What watching a whole, idle system costs (issue 24): mevitop's own CPU, measured from its
threads' schedstat over --seconds, with `--json -i 1000` to /dev/null, interleaved in one
run against the /proc path (`--disable task_iter`) and against `top -b -d 1`; with the
processes the machine has, and with --extra sleeping processes this script forks and
kills.  Also: seconds to the first complete snapshot and VmHWM of each mevitop, and, in
each scenario, `mevitop serve` scraped every second beside node_exporter (Debian's
prometheus-node-exporter, default collectors, on a free port) scraped the same way.
Nothing here asserts a timing.

  idle_cost.py [--seconds 20] [--rounds 2] [--extra 5000] [--no-serve] [--baseline BIN]
               [--node-exporter BIN | --no-node-exporter]
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
NODE_EXPORTER = "/usr/bin/prometheus-node-exporter"    # `make bench` installs it


def cpu_s(pid):
    """CPU time of every thread of pid (schedstat: nanoseconds)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total / 1e9


def server_cpu_s(pid):
    """CPU time of pid's libmicrohttpd thread (schedstat), where every answer, scrape and
    stream runs: serving's own cost, apart from the engine's refreshes."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if not f.read().startswith("MHD"):
                    continue
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total / 1e9


def hwm_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def user_processes():
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/statm") as f:
                    if f.read().split()[0] != "0":
                        n += 1
            except OSError:
                pass
    return n


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def measure(cmd, seconds, first_line=True, scrape=None):
    """Starts cmd, waits for its first output line (mevitop: the first complete snapshot),
    lets it settle 2 s, then measures its CPU over `seconds`.  Returns (cpu %, seconds to
    the first line, VmHWM MiB)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    ready = None
    if first_line:
        p.stdout.readline()
        ready = time.monotonic() - t0
    # From here on its output is not read: it goes to a pipe drained by cat to /dev/null.
    sink = subprocess.Popen(["cat"], stdin=p.stdout, stdout=subprocess.DEVNULL)
    try:
        if scrape:
            scrape_until(scrape, time.monotonic() + 2)
        else:
            time.sleep(2)
        c0, w0 = cpu_s(p.pid), time.monotonic()
        if scrape:
            scrape_until(scrape, w0 + seconds)
        else:
            time.sleep(seconds)
        c1, w1 = cpu_s(p.pid), time.monotonic()
        hwm = hwm_mib(p.pid)
    finally:
        p.terminate()
        p.wait()
        sink.wait()
    return (c1 - c0) / (w1 - w0) * 100, ready, hwm


def scrape_until(url, until):
    while time.monotonic() < until:
        t = time.monotonic()
        try:
            urllib.request.urlopen(url, timeout=5).read()
        except OSError:
            pass
        time.sleep(max(0, 1 - (time.monotonic() - t)))


def serve_cmd(binary, extra, port):
    return [binary, "serve", "--listen", f"127.0.0.1:{port}", "-i", "1000", *extra]


def wait_port(port):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read()
            return
        except OSError:
            time.sleep(0.1)


def run_scenario(name, args, results):
    monitors = {
        "mevitop": [MEVITOP, "--json", "-i", "1000"],
        "mevitop --disable task_iter": [MEVITOP, "--json", "-i", "1000", "--disable",
                                        "task_iter"],
        "top -b -d 1": ["top", "-b", "-d", "1"],
    }
    if args.baseline:       # e.g. a copy of main's build: before and after, interleaved
        monitors["baseline"] = [args.baseline, "--json", "-i", "1000"]
    got = {k: [] for k in monitors}
    for _ in range(args.rounds):
        for k, cmd in monitors.items():       # interleaved: one of each per round
            got[k].append(measure(cmd, args.seconds))
    if not args.no_serve:     # every scenario: the exporter's cost grows with processes
        serves = [("mevitop serve, scraped 1/s", lambda port: serve_cmd(MEVITOP, [], port)),
                  ("mevitop serve --disable task_iter, scraped 1/s",
                   lambda port: serve_cmd(MEVITOP, ["--disable", "task_iter"], port))]
        if args.baseline:
            serves.append(("baseline serve, scraped 1/s",
                           lambda port: serve_cmd(args.baseline, [], port)))
        if args.node_exporter:
            serves.append(("node_exporter, scraped 1/s",
                           lambda port: [args.node_exporter,
                                         f"--web.listen-address=127.0.0.1:{port}"]))
        for k, _ in serves:
            got[k] = []
        for _ in range(args.rounds):
            for k, cmd in serves:
                port = free_port()
                got[k].append(measure_serve(cmd(port), port, args.seconds))
    procs = user_processes()
    print(f"\n{name}: {procs} processes with memory, load average {loadavg()}, "
          f"{args.rounds} rounds of {args.seconds} s each, interleaved")
    base = statistics.median(x[0] for x in got["mevitop"])
    for k, runs in got.items():
        cpu = statistics.median(x[0] for x in runs)
        firsts = [x[1] for x in runs if x[1] is not None]
        line = f"  {k:48s} {cpu:6.2f}% of a core (runs: " + \
               ", ".join(f"{x[0]:.2f}" for x in runs) + ")"
        if firsts:
            line += f", first snapshot {statistics.median(firsts):.3f} s"
        line += f", VmHWM {max(x[2] for x in runs):.1f} MiB"
        if k != "mevitop" and base > 0:
            line += f"; {cpu / base:.1f}x mevitop's"
        print(line)
        results[f"{name}: {k}"] = runs
    sys.stdout.flush()


def measure_serve(cmd, port, seconds):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        t0 = time.monotonic()
        wait_port(port)
        ready = time.monotonic() - t0
        url = f"http://127.0.0.1:{port}/metrics"
        scrape_until(url, time.monotonic() + 2)
        c0, w0 = cpu_s(p.pid), time.monotonic()
        scrape_until(url, w0 + seconds)
        c1, w1 = cpu_s(p.pid), time.monotonic()
        hwm = hwm_mib(p.pid)
    finally:
        p.terminate()
        p.wait()
    return (c1 - c0) / (w1 - w0) * 100, ready, hwm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--extra", type=int, default=5000)
    ap.add_argument("--no-serve", action="store_true")
    ap.add_argument("--baseline", help="another mevitop binary, measured in the same rounds")
    ap.add_argument("--node-exporter", default=NODE_EXPORTER,
                    help=f"node_exporter binary measured beside serve (default {NODE_EXPORTER})")
    ap.add_argument("--no-node-exporter", action="store_true")
    args = ap.parse_args()
    if args.no_node_exporter:
        args.node_exporter = None
    elif not os.access(args.node_exporter, os.X_OK):
        sys.exit(f"{args.node_exporter} missing: `make bench` installs "
                 "prometheus-node-exporter, or pass --no-node-exporter")
    results = {}
    run_scenario("base", args, results)
    if args.extra:
        s = subprocess.Popen([SLEEPERS, str(args.extra)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        try:
            print(f"\nspawned {s.stdout.readline().split()[1]} sleeping processes")
            run_scenario(f"+{args.extra} sleepers", args, results)
        finally:
            s.stdin.close()
            s.wait()


if __name__ == "__main__":
    main()
