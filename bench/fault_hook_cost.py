#!/usr/bin/env python3
"""What trace mode's fault hook costs a fault-bound program (issue 24), in one run: the fault
loop (build/bench/faultbench, pinned to CPU 1, the monitor on CPU 0) alone, beside an empty
program on the same tracepoint (build/bench/fault_floor: the floor of any fault hook), and
beside whole-system `mevitop --json --mode trace` with the per-CPU fault rings and with
`--disable fault_rings` (the shared events ring).  Configurations are interleaved round by
round, each ratio taken against the plain run of its own round; medians are printed.  A
second phase runs the same with the kernel's BPF statistics on (kernel.bpf_stats_enabled)
and prints the fault program's own run time a fault, which moves far less between runs
than the wall clock on a shared VM (the statistics' clock reads are in every figure alike).
Each line also gives the monitor's own CPU a fault (every thread's schedstat, across the
fault loop): what applying the faults costs the CPU beside the program.
Nothing here asserts a timing.

  fault_hook_cost.py [--rounds 9] [--stat-rounds 3] [--size-mb 64] [--loops 20]
                     [--threads N]      (N > 1: N threads fault at once, on every CPU,
                                         mevitop unpinned too: the shared ring's lock)
                     [--baseline BIN]   (also a second mevitop, trace mode, e.g. main's)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEVITOP = os.environ.get("MEVITOP_BIN", os.path.join(ROOT, "build", "mevitop"))
BENCH = os.path.join(ROOT, "build", "bench")
PIN = (os.cpu_count() or 1) > 1
WORK_CPU = ["taskset", "-c", "1"] if PIN else []
MON_CPU = ["taskset", "-c", "0"] if PIN else []
STATS = "/proc/sys/kernel/bpf_stats_enabled"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from idle_cost import cpu_s  # noqa: E402  (every thread's CPU, schedstat)


class Monitor:
    """A process that says it is attached by its first line of output (mevitop's first
    snapshot, fault_floor's "ready")."""

    def __init__(self, cmd, prog, pinned=True):
        self.prog = prog
        self.proc = subprocess.Popen((MON_CPU if pinned else []) + cmd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = []
        reader = threading.Thread(target=lambda: first.append(self.proc.stdout.readline()))
        reader.start()
        reader.join(120)
        if not first or not first[0]:
            self.proc.kill()
            raise RuntimeError(f"{cmd[0]} did not start: {self.proc.stderr.read()}")
        # Keep the pipe drained: a full pipe would stall mevitop's snapshots.
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait(30)


def prog_stats(name):
    """(run_time_ns, run_cnt) summed over loaded programs of that name."""
    out = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True,
                         check=True).stdout
    t = c = 0
    for p in json.loads(out):
        if p.get("name") == name:
            t += p.get("run_time_ns", 0)
            c += p.get("run_cnt", 0)
    return t, c


def faultbench(args):
    pin = WORK_CPU if args.threads == 1 else []
    out = subprocess.run(pin + [os.path.join(BENCH, "faultbench"), str(args.size_mb),
                                str(args.loops), str(args.threads)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def configs(args):
    trace = ["--json", "-i", "1000", "--mode", "trace"]
    out = [("plain", None, None),
           ("empty program", [os.path.join(BENCH, "fault_floor")], "empty_fault"),
           ("trace, fault rings", [MEVITOP, *trace], "btf_fault_user"),
           ("trace, events ring", [MEVITOP, *trace, "--disable", "fault_rings"],
            "btf_fault_user")]
    if args.baseline:
        out.append(("trace, baseline build", [args.baseline, *trace], "btf_fault_user"))
    return out


def one(args, cmd, prog):
    """ns a page (wall, CPU) and, with the statistics on, the program's ns a run."""
    mon = Monitor(cmd, prog, args.threads == 1) if cmd else None
    try:
        before = prog_stats(prog) if prog else (0, 0)
        cpu0 = cpu_s(mon.proc.pid) if mon else 0
        r = faultbench(args)
        cpu1 = cpu_s(mon.proc.pid) if mon else 0
        after = prog_stats(prog) if prog else (0, 0)
    finally:
        if mon:
            mon.stop()
    runs = after[1] - before[1]
    r["prog_ns"] = (after[0] - before[0]) / runs if runs > 0 else None
    r["mon_ns"] = (cpu1 - cpu0) * 1e9 / r["pages"]
    return r


def phase(args, rounds, stats_on):
    confs = configs(args)
    res = {name: {"wall": [], "cpu": [], "ratio": [], "prog": [], "mon": []}
           for name, _, _ in confs}
    with open(STATS) as f:
        saved = f.read().strip()
    with open(STATS, "w") as f:
        f.write("1" if stats_on else "0")
    try:
        for rnd in range(rounds):
            order = confs[rnd % len(confs):] + confs[:rnd % len(confs)]
            got = {name: one(args, cmd, prog) for name, cmd, prog in order}
            for name, _, _ in confs:
                g = got[name]
                res[name]["wall"].append(g["ns_per_page"])
                res[name]["cpu"].append(g["cpu_ns_per_page"])
                res[name]["mon"].append(g["mon_ns"])
                res[name]["ratio"].append(g["ns_per_page"] / got["plain"]["ns_per_page"])
                if g["prog_ns"] is not None:
                    res[name]["prog"].append(g["prog_ns"])
            print(f"  round {rnd + 1}/{rounds}: " + ", ".join(
                f"{n} {got[n]['ns_per_page']:.0f}" for n, _, _ in confs), flush=True)
    finally:
        with open(STATS, "w") as f:
            f.write(saved)
    return confs, res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--stat-rounds", type=int, default=3)
    ap.add_argument("--size-mb", type=int, default=64)
    ap.add_argument("--loops", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--baseline", help="another mevitop binary, measured the same way")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("fault_hook_cost: needs root")
    med = statistics.median
    print(f"wall clock, {args.rounds} interleaved rounds (statistics off):")
    confs, res = phase(args, args.rounds, False)
    for name, _, _ in confs:
        r = res[name]
        print(f"{name:24s} {med(r['wall']):7.0f} ns/page (CPU {med(r['cpu']):5.0f})  "
              f"ratio {med(r['ratio']):.3f} ({min(r['ratio']):.3f}-{max(r['ratio']):.3f})  "
              f"monitor CPU {med(r['mon']):5.1f} ns a fault")
    if args.stat_rounds:
        print(f"the fault program's run time, {args.stat_rounds} rounds (bpf_stats on):")
        confs, res = phase(args, args.stat_rounds, True)
        floor = med(res["empty program"]["prog"]) if res["empty program"]["prog"] else 0
        for name, _, prog in confs:
            p = res[name]["prog"]
            if p:
                print(f"{name:24s} {med(p):6.1f} ns a fault ({min(p):.1f}-{max(p):.1f}), "
                      f"{med(p) - floor:+.1f} beyond the empty program")


if __name__ == "__main__":
    main()
