#!/usr/bin/env python3
"""What starting mevitop on a whole system costs (issue 24): seconds to the first complete
snapshot (`--json -i 1000`'s first line), RSS 3 s later (VmRSS, the heap and the BPF maps'
pages apart) and VmHWM, with the machine's processes and with --extra sleeping processes
(build/bench/sleepers); bytes per extra process; and how many times the kernel's BTF is
parsed (opens of /sys/kernel/btf/vmlinux under strace).  Each binary given (the build's
mevitop, and e.g. a copy of main's as --baseline) is measured in the same rounds,
interleaved, with `top -b -n 1` beside it.  Nothing here asserts a timing.

  startup_cost.py [--rounds 3] [--extra 5000] [--baseline BIN] [--no-files]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEVITOP = os.environ.get("MEVITOP_BIN", os.path.join(ROOT, "build", "mevitop"))
SLEEPERS = os.path.join(ROOT, "build", "bench", "sleepers")


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def smaps_kib(pid):
    """Resident KiB of the heap and of the BPF maps' mmaps."""
    heap = maps = 0
    name = ""
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            first = line.split(None, 1)[0]
            if "-" in first and not first.endswith(":"):
                parts = line.split()
                name = parts[5] if len(parts) > 5 else ""
            elif first == "Rss:":
                kib = int(line.split()[1])
                if name == "[heap]":
                    heap += kib
                elif name == "anon_inode:bpf-map":
                    maps += kib
    return heap, maps


def measure(cmd):
    """(seconds to the first line, VmRSS, heap, BPF maps, VmHWM) in MiB."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        p.stdout.readline()
        first = time.monotonic() - t0
        sink = subprocess.Popen(["cat"], stdin=p.stdout, stdout=subprocess.DEVNULL)
        time.sleep(3)
        rss = status_kib(p.pid, "VmRSS")
        hwm = status_kib(p.pid, "VmHWM")
        heap, maps = smaps_kib(p.pid)
    finally:
        p.terminate()
        p.wait()
    sink.wait()
    return first, rss / 1024, heap / 1024, maps / 1024, hwm / 1024


def top_seconds():
    t0 = time.monotonic()
    subprocess.run(["top", "-b", "-n", "1"], stdout=subprocess.DEVNULL, check=False)
    return time.monotonic() - t0


def btf_parses(binary, extra):
    out = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", "/dev/stdout",
                          binary, "--json", "-n", "1", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return sum(1 for line in out.stdout.splitlines()
               if '"/sys/kernel/btf/vmlinux"' in line and "= -1" not in line)


def processes():
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/statm") as f:
                    n += f.read().split()[0] != "0"
            except OSError:
                pass
    return n


def scenario(name, bins, args, extra):
    got = {b: [] for b in bins}
    tops = []
    for _ in range(args.rounds):
        for label, binary in bins.items():
            got[label].append(measure([binary, "--json", "-i", "1000", *extra]))
        tops.append(top_seconds())
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"\n{name}: {processes()} processes with memory, load average {load}, "
          f"{args.rounds} interleaved rounds (medians)")
    res = {}
    for label, runs in got.items():
        med = [statistics.median(r[i] for r in runs) for i in range(5)]
        res[label] = med
        print(f"  {label:26s} first snapshot {med[0]:.3f} s (runs "
              + ", ".join(f"{r[0]:.2f}" for r in runs)
              + f"); VmRSS {med[1]:.1f} MiB (heap {med[2]:.1f}, BPF maps {med[3]:.1f});"
              f" VmHWM {med[4]:.1f} MiB")
    print(f"  {'top -b -n 1':26s} {statistics.median(tops):.3f} s")
    sys.stdout.flush()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--extra", type=int, default=5000)
    ap.add_argument("--baseline", help="another mevitop binary to measure beside")
    ap.add_argument("--no-files", action="store_true", help="pass --no-files to mevitop")
    args = ap.parse_args()
    bins = {"mevitop": MEVITOP}
    if args.baseline:
        bins["baseline"] = args.baseline
    extra = ["--no-files"] if args.no_files else []
    for label, binary in bins.items():
        print(f"{label}: {binary}: the kernel's BTF parsed {btf_parses(binary, extra)} "
              "time(s) for a one-snapshot run")
    base = scenario("base", bins, args, extra)
    if not args.extra:
        return
    s = subprocess.Popen([SLEEPERS, str(args.extra)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        n = int(s.stdout.readline().split()[1])
        print(f"\nspawned {n} sleeping processes")
        big = scenario(f"+{n} sleepers", bins, args, extra)
    finally:
        s.stdin.close()
        s.wait()
    print()
    for label in bins:
        per = (big[label][1] - base[label][1]) * 1024 * 1024 / n
        print(f"  {label:26s} {per:,.0f} bytes of RSS per extra process")
    if args.baseline:
        for i, what in ((0, "first snapshot"), (1, "VmRSS")):
            print(f"  {what} with +{n}: mevitop / baseline = "
                  f"{big['mevitop'][i] / big['baseline'][i]:.2f}x")


if __name__ == "__main__":
    main()
