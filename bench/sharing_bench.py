#!/usr/bin/env python3
"""--sharing's costs and figures (issue 26, doc/sharing.md), measured in one run; nothing
here asserts a timing.

1. Side by side with Debian's smem on the same box: the whole system's PSS and USS per
   process (smem reads every /proc/PID/smaps; mevitop pagemap PFNs and kpagecount), how
   many processes agree within 1%, and the wall time and CPU each takes for the whole
   answer (mevitop: from its start to the first snapshot in which every process has been
   read; smem: its run).  Interleaved, --rounds times.
2. The default mode's workload figures with the columns on: the fault loop (faultbench)
   and the getppid loop (syscallbench) plain, under `mevitop --json`, and under
   `mevitop --json --sharing`, interleaved; ratios to plain.
3. mevitop's own CPU on the box as it is, with and without --sharing: each mevitop is
   measured only from its first complete snapshot on (without --sharing the first
   snapshot; with it the first in which every process of the first snapshot still running
   has been read: start-up's scans and first passes are reported apart), from its threads'
   schedstat over --seconds; the two kinds alternate (ABBA over --rounds) and each round's
   ratio is printed.
4. A --big-mib process of written anonymous memory, alone (its anonymous pages verified
   private once) and as a forked pair (every page shared: read and looked up each pass),
   watched with and without --sharing: seconds and CPU to the first complete USS/PSS of
   both, mevitop's CPU over --seconds after that, its VmHWM and VmRSS, what the passes
   cost per entry.  `--only bigpair --big-mib 16384` is the issue's 16 GiB pair.

  sharing_bench.py [--rounds 3] [--pairs 5] [--seconds 10] [--big-mib 2048] [--extra N]
                   [--only smem,cpu,big,bigpair,loops]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench  # noqa: E402  (faultbench, syscallbench, spread)
from idle_cost import cpu_s, hwm_mib, loadavg  # noqa: E402

MEVITOP = run_bench.MEVITOP


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def smem_answer():
    """{pid: (pss, uss) bytes}, wall seconds, CPU seconds."""
    c0, t0 = children_cpu(), time.monotonic()
    out = subprocess.run(["smem", "-H", "-c", "pid pss uss"], capture_output=True, text=True,
                         check=True).stdout
    wall, cpu = time.monotonic() - t0, children_cpu() - c0
    got = {}
    for line in out.splitlines():
        pid, pss, uss = (int(x) for x in line.split())
        got[pid] = (pss * 1024, uss * 1024)
    return got, wall, cpu


def static_answer():
    """{pid: (pss, uss) bytes} from build/bench/rollups: smaps_rollup read by a static
    binary, which maps no library (smem's python maps libc and libpython while it reads,
    and is counted as a mapper of their pages: every process sharing them has a lower
    PSS in smem's answer; mevitop takes itself out of the counts)."""
    out = subprocess.run([os.path.join(run_bench.ROOT, "build", "bench", "rollups")],
                         capture_output=True, text=True, check=True).stdout
    got = {}
    for line in out.splitlines():
        pid, pss, uss = (int(x) for x in line.split())
        got[pid] = (pss * 1024, uss * 1024)
    return got


def mevitop_answer(limit_s=300):
    """The first snapshot in which every process of the first one still running has been
    read (processes started since may still wait: a busy box starts them every tick):
    {pid: (pss, uss)}, wall seconds from the start, mevitop's CPU seconds until then."""
    t0 = time.monotonic()
    p = subprocess.Popen([MEVITOP, "--json", "--sharing", "-i", "200"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    first = None
    try:
        for line in p.stdout:
            snap = json.loads(line)
            procs = {q["pid"]: q for q in snap["processes"] if q["state"] == "running"}
            if first is None:
                first = set(procs)
            if all("pss" in procs[pid] for pid in first if pid in procs):
                wall, cpu = time.monotonic() - t0, cpu_s(p.pid)
                return {pid: (q["pss"], q["uss"]) for pid, q in procs.items() if "pss" in q}, \
                    wall, cpu, snap["stats"]["sharing"]
            if time.monotonic() - t0 > limit_s:
                break
    finally:
        p.terminate()
        p.wait()
    raise RuntimeError("mevitop did not read every process in time")


def within(a, b, frac=0.01, slack=0):
    return abs(a - b) <= max(frac * max(a, b), slack)


def vmas(pid):
    """smem sums smaps' Pss per mapping, each truncated to kB: up to 1 KiB low a mapping."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def rollups(pids):
    """{pid: (Pss, Private_Clean + Private_Dirty)} from smaps_rollup, read now."""
    out = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                kv = {ln.split()[0].rstrip(":"): int(ln.split()[1]) * 1024 for ln in f
                      if ln.rstrip().endswith(" kB")}
            out[pid] = (kv["Pss"], kv["Private_Clean"] + kv["Private_Dirty"])
        except (OSError, KeyError):
            pass
    return out


def bench_smem(rounds):
    """smem's answer taken right after mevitop's complete snapshot: on a box whose
    processes come and go, libraries' map counts move between two answers."""
    rows = []
    for _ in range(rounds):
        ro0 = rollups(int(d) for d in os.listdir("/proc") if d.isdigit())
        mv, mv_wall, mv_cpu, st = mevitop_answer()
        ro = rollups(mv)
        st_ro = static_answer()
        sm, sm_wall, sm_cpu = smem_answer()
        ro2 = rollups(mv)
        both = sorted(set(sm) & set(mv) & set(ro))
        # Quiet: its own smaps_rollup the same before mevitop started and after smem ended
        # (a process whose figures moved between the two answers cannot be compared).
        quiet = [p for p in both if p in ro0 and p in ro2 and ro0[p] == ro2[p]]
        q_pss = sum(within(mv[p][0], sm[p][0], slack=1024 * vmas(p)) for p in quiet)
        q_uss = sum(within(mv[p][1], sm[p][1]) for p in quiet)
        sq = [p for p in quiet if p in st_ro]
        s_pss = sum(within(mv[p][0], st_ro[p][0], slack=1024) for p in sq)
        s_uss = sum(within(mv[p][1], st_ro[p][1]) for p in sq)
        pss_ok = sum(within(mv[p][0], sm[p][0], slack=1024 * vmas(p)) for p in both)
        uss_ok = sum(within(mv[p][1], sm[p][1]) for p in both)
        ro_ok = sum(within(mv[p][0], ro[p][0]) and within(mv[p][1], ro[p][1]) for p in both)
        rows.append((len(both), pss_ok, uss_ok, sm_wall, sm_cpu, mv_wall, mv_cpu, st, ro_ok,
                     len(quiet), q_pss, q_uss, len(sq), s_pss, s_uss))
        bad = [(p, mv[p], sm[p], ro[p]) for p in both
               if not within(mv[p][0], ro[p][0])][:3]
        off = [(p, comm(p), mv[p], sm[p]) for p in both
               if not (within(mv[p][0], sm[p][0], slack=1024 * vmas(p)) and
                       within(mv[p][1], sm[p][1]))]
        print(f"  round: {len(both)} processes in all three; PSS and USS within 1% of "
              f"smaps_rollup: {ro_ok}; of smem (PSS within 1% or 1 KiB a mapping): {pss_ok}, "
              f"USS: {uss_ok}; of the {len(quiet)} quiet ones (their rollup the same before "
              f"and after both answers) PSS {q_pss}, USS {q_uss}; against the static "
              f"reader (no library mapped), of {len(sq)} quiet: PSS {s_pss}, USS {s_uss}; "
              f"smem {sm_wall:.2f} s wall {sm_cpu:.2f} s CPU; mevitop {mv_wall:.2f} "
              f"s wall {mv_cpu:.2f} s CPU, of which sharing passes {st['total_ms'] / 1e3:.2f} s "
              f"(stats.sharing {st}); first differing (pid, mevitop, smem, rollup): {bad}; "
              f"differing from smem (pid, comm, mevitop (pss, uss), smem): {off}")
    med = lambda k: statistics.median(r[k] for r in rows)  # noqa: E731
    print(f"smem vs mevitop --sharing (median of {rounds}): {med(0):.0f} processes, PSS "
          f"agree {med(1):.0f}, USS agree {med(2):.0f}; of {med(9):.0f} quiet processes PSS "
          f"agree {med(10):.0f}, USS {med(11):.0f}; against smaps_rollup read by a static "
          f"reader, of {med(12):.0f} quiet processes PSS agree {med(13):.0f}, USS "
          f"{med(14):.0f}; whole-system answer: smem "
          f"{med(3):.2f} s wall / {med(4):.2f} s CPU, mevitop {med(5):.2f} s wall / "
          f"{med(6):.2f} s CPU of which sharing {statistics.median(r[7]['total_ms'] for r in rows) / 1e3:.2f} s "
          f"(load {loadavg()})")


def complete(snap, first):
    """Has every process of the first snapshot that still runs been read (pss)?"""
    procs = {q["pid"]: q for q in snap["processes"] if q["state"] == "running"}
    return all("pss" in procs[pid] for pid in first if pid in procs)


class Monitor:
    """mevitop --json ARGS (pinned as run_bench's loops are), its output read by a thread.
    ready is set at its first complete snapshot: the first snapshot, or with --sharing the
    first in which every process of the first snapshot still running has been read.
    ready_s: seconds from the start to then; ready_cpu: mevitop's CPU seconds until then."""

    def __init__(self, args, limit_s=300):
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(run_bench.PREFIX + [MEVITOP, "--json", *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.sharing = "--sharing" in args
        self.ready = threading.Event()
        self.ready_s = self.ready_cpu = self.ready_stats = None
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(limit_s) or self.ready_s is None:
            self.stop()
            raise RuntimeError(f"mevitop {args} had no complete snapshot in {limit_s} s")

    def _read(self):
        first = None
        for line in self.p.stdout:
            if self.ready.is_set():
                continue        # drained, not parsed: the measured window is mevitop's
            snap = json.loads(line)
            first = first or {q["pid"] for q in snap["processes"] if q["state"] == "running"}
            if not self.sharing or complete(snap, first):
                self.ready_s, self.ready_cpu = time.monotonic() - self.t0, cpu_s(self.p.pid)
                st = snap["stats"].get("sharing")
                self.ready_stats = st and {k: st[k] for k in ("passes", "pages_read", "lookups",
                                                             "preads", "total_ms")}
                self.ready.set()
        self.ready.set()

    def stop(self):
        self.p.terminate()
        self.p.wait()


def bench_loops(pairs):
    for name, run, key in (("fault loop", run_bench.faultbench, "ns_per_page"),
                           ("getppid loop", run_bench.syscallbench, "ns_per_call")):
        plain, dflt, shar = [], [], []
        for _ in range(pairs):
            b = run()[key]
            m = Monitor([])
            d = run()[key]
            m.stop()
            m = Monitor(["--sharing"])
            s = run()[key]
            m.stop()
            plain.append(b)
            dflt.append(d / b)
            shar.append(s / b)
        print(f"{name}: default {run_bench.spread(dflt)}, default --sharing "
              f"{run_bench.spread(shar)} of plain ({statistics.median(plain):.1f} {key}; "
              f"{pairs} interleaved triples; load {loadavg()})")


def bench_cpu(seconds, extra, rounds=2):
    """mevitop's own CPU, without and with --sharing, from each one's first complete
    snapshot on (start-up apart); ABBA order; with extra sleeping processes
    (bench/sleepers: forks of one program, so their pages are shared)."""
    s = None
    if extra:
        s = subprocess.Popen([os.path.join(run_bench.BENCH, "sleepers"), str(extra)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        s.stdout.readline()
    kinds = (("default", []), ("--sharing", ["--sharing"]))
    try:
        got = {k: [] for k, _ in kinds}
        start = {k: [] for k, _ in kinds}
        loads = []
        for r in range(rounds):
            for name, args in (kinds if r % 2 == 0 else kinds[::-1]):
                m = Monitor(args)
                c0, w0 = cpu_s(m.p.pid), time.monotonic()
                time.sleep(seconds)     # the measured window (readiness came first)
                c1, w1 = cpu_s(m.p.pid), time.monotonic()
                got[name].append(100 * (c1 - c0) / (w1 - w0))
                start[name].append((m.ready_s, m.ready_cpu, hwm_mib(m.p.pid), m.ready_stats))
                m.stop()
            loads.append(loadavg())
        ratios = [b / a for a, b in zip(got["default"], got["--sharing"])]
        fmt = lambda xs: ", ".join(f"{x:.1f}" for x in xs)  # noqa: E731
        st = lambda k: "; ".join(f"{a:.1f} s / {c:.2f} s CPU / {h:.0f} MiB"  # noqa: E731
                                 + (f" (stats.sharing then {x})" if x else "")
                                 for a, c, h, x in start[k])
        print(f"mevitop --json, whole system (+{extra} sleepers, "
              f"{len(os.listdir('/proc'))} /proc entries), % of a core over {seconds} s "
              f"after the first complete snapshot, {rounds} rounds (ABBA): default "
              f"[{fmt(got['default'])}], --sharing [{fmt(got['--sharing'])}]; ratio per round "
              f"[{', '.join(f'{x:.2f}' for x in ratios)}], median "
              f"{statistics.median(ratios):.2f}; start-up to that snapshot (wall / CPU / "
              f"VmHWM): default {st('default')}; --sharing {st('--sharing')} "
              f"(load after each round {loads})")
    finally:
        if s:
            s.stdin.close()
            s.wait()


def status_mib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def watch_big(pids, args, seconds, limit_s):
    """mevitop --json -p pids[0] ARGS until its first complete answer for every pid (with
    --sharing: each one's pass done; without: the first snapshot), then --seconds more:
    (seconds and CPU to it, % of a core after it, VmHWM, VmRSS MiB, stats.sharing, pids'
    (uss, pss) MiB)."""
    t0 = time.monotonic()
    p = subprocess.Popen([MEVITOP, "--json", "-p", str(pids[0]), *args],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        for line in p.stdout:
            snap = json.loads(line)
            got = {q["pid"]: q for q in snap["processes"]}
            if all(x in got and ("--sharing" not in args or "pss" in got[x]) for x in pids):
                break
            if time.monotonic() - t0 > limit_s:
                raise RuntimeError(f"no complete answer in {limit_s} s: {snap['stats']}")
        ready, c0 = time.monotonic() - t0, cpu_s(p.pid)
        threading.Thread(target=p.stdout.read, daemon=True).start()
        time.sleep(seconds)     # the measured window after readiness
        steady = 100 * (cpu_s(p.pid) - c0) / seconds
        figs = {x: (got[x].get("uss", 0) >> 20, got[x].get("pss", 0) >> 20) for x in pids}
        return (ready, c0, steady, status_mib(p.pid, "VmHWM"), status_mib(p.pid, "VmRSS"),
                snap["stats"].get("sharing"), figs)
    finally:
        p.terminate()
        p.wait()


def big_cost(mib, fork, seconds, rounds, interval):
    """One process of mib MiB of written anonymous memory (a forked pair when fork: every
    page shared), watched without and with --sharing, alternating."""
    avail = status_meminfo("MemAvailable")
    if avail < mib + 1024:
        print(f"{mib} MiB: skipped, MemAvailable {avail:.0f} MiB")
        return
    wl = subprocess.Popen([os.path.join(run_bench.ROOT, "build", "workloads", "share_wl")],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        pid = int(wl.stdout.readline().split()[1])
        t = time.monotonic()
        wl.stdin.write(f"anon a {mib * 256}\n" + ("fork\n" if fork else ""))
        wl.stdin.flush()
        wl.stdout.readline()
        pids = [pid]
        if fork:
            pids.append(int(wl.stdout.readline().split()[2]))
        setup = time.monotonic() - t
        what = f"{mib} MiB {'forked pair' if fork else 'single process'}"
        kinds = (("default", []), ("--sharing", ["--sharing"]))
        for r in range(rounds):
            for name, args in (kinds if r % 2 == 0 else kinds[::-1]):
                ready, c0, steady, hwm, rss, st, figs = watch_big(
                    pids, ["-i", str(interval), *args], seconds, limit_s=1800)
                extra = ""
                if st:
                    extra = (f"; sharing passes {st['total_ms']:.0f} ms for {st['pages_read']} "
                             f"entries, {st['lookups']} lookups ({st['cached']} cached, "
                             f"{st['preads']} preads), {st['passes']} passes: "
                             f"{1e6 * st['total_ms'] / max(1, st['pages_read']):.0f} ns an "
                             f"entry; (uss, pss) MiB {figs}")
                print(f"{what} (set up in {setup:.1f} s), -i {interval} {name}: first complete "
                      f"answer {ready:.1f} s after start, {c0:.2f} s of CPU to it; then "
                      f"{steady:.1f}% of a core over {seconds} s; VmHWM {hwm:.0f} MiB, VmRSS "
                      f"{rss:.0f} MiB{extra} (load {loadavg()})", flush=True)
    finally:
        wl.stdin.close()
        wl.wait()


def status_meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--big-mib", type=int, default=2048)
    ap.add_argument("--extra", type=int, default=0, help="sleeping processes for --only cpu")
    ap.add_argument("--interval", type=int, default=200, help="-i for --only big, bigpair")
    ap.add_argument("--only", default="smem,loops,cpu,big")
    a = ap.parse_args()
    only = a.only.split(",")
    if "smem" in only:
        bench_smem(a.rounds)
    if "cpu" in only:
        bench_cpu(a.seconds, a.extra, a.rounds)
    if "big" in only:
        big_cost(a.big_mib, False, a.seconds, 1, a.interval)
    if "big" in only or "bigpair" in only:
        big_cost(a.big_mib, True, a.seconds, 1, a.interval)
    if "loops" in only:
        bench_loops(a.pairs)


if __name__ == "__main__":
    main()
