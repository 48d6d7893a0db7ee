#!/usr/bin/env python3
"""The page cache side's benchmarks (doc/pagecache.md).  Ratios from runs interleaved in this
one invocation (blocks without and with mevitop alternate; medians; a block with mevitop
starts --settle snapshots after its first, so the start's own work is not timed), and times
to a complete answer.  Not tests: nothing asserts a timing.  The machine may be shared: say so with figures.

  pagecache_bench.py [--quick | --long] [--only NAME[,NAME]] [--blocks N] [--rounds N]
                     [--mib N] [--settle N] [--no-files-arm] [--mevitop-args "..."]
  names: churn, cold, warm, scale, tools

churn: write 64 MiB to a new ext4 file with write(2) (1 MiB writes), unlink; repeat.
cold:  a buffered read of a 1 GiB file after POSIX_FADV_DONTNEED.
warm:  the same read with the file cached.
scale: 100,000 one-page files cached: mevitop's first snapshot time, and its CPU per second
       idle with and without --no-files (the difference is the page cache side's).
tools: 20,000 files side by side with vmtouch and util-linux fincore: the same counts, and
       the time each takes to a complete answer.
"""
import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEVITOP = os.environ.get("MEVITOP_BIN", os.path.join(ROOT, "build", "mevitop"))
BASE = "/var/tmp"
PAGE = 4096
MIB = 1 << 20


class Mevitop:
    """mevitop --json running; ready once the first snapshot is out."""

    def __init__(self, args):
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([MEVITOP, "--json", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        self.lines = []
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(300) or not self.lines:
            raise RuntimeError("mevitop did not start")
        self.first_s = time.monotonic() - self.t0

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))
            self.ready.set()
        self.ready.set()

    def cpu_s(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def churn_round(d, chunk):
    path = os.path.join(d, "churn.dat")
    t0 = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for _ in range(64):
        os.write(fd, chunk)
    os.close(fd)
    os.unlink(path)
    return time.perf_counter() - t0


def read_all(path, dontneed):
    fd = os.open(path, os.O_RDONLY)
    if dontneed:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    t0 = time.perf_counter()
    while os.read(fd, MIB):
        pass
    dt = time.perf_counter() - t0
    os.close(fd)
    return dt


def settle(mv, snapshots):
    """Waits for snapshots more after the first: the start's own work (names, the first
    Pss_Anon reads) is over, so a block measures the steady state."""
    deadline = time.monotonic() + 120
    while len(mv.lines) < 1 + snapshots and time.monotonic() < deadline:
        time.sleep(0.05)


def spread(xs):
    """'median (min-max, IQR lo-hi)' of xs."""
    q = statistics.quantiles(xs, n=4) if len(xs) >= 2 else [xs[0]] * 3
    return (f"{statistics.median(xs):.3f}x (min-max {min(xs):.3f}-{max(xs):.3f}, IQR "
            f"{q[0]:.3f}-{q[2]:.3f})")


def interleaved(name, run_block, blocks, mv_args):
    """Blocks without and with mevitop (and with --no-files, --no-files-arm) in pairs whose
    order alternates (off-on, on-off, ...: a drift of the box's load cancels); the ratio of
    the medians of block times, each pair's own ratio (median and spread: how far one run
    can be trusted), and mevitop's CPU during its blocks."""
    arms = [("with", [])] + ([("with --no-files", ["--no-files"])] if ARGS.no_files_arm else [])
    off, on, cpu = [], {a: [] for a, _ in arms}, {a: [] for a, _ in arms}
    pair = {a: [] for a, _ in arms}

    def watched(arm, extra):
        mv = Mevitop([*mv_args, *extra])
        try:
            settle(mv, ARGS.settle)
            c0, t0 = mv.cpu_s(), time.monotonic()
            on[arm].append(run_block())
            cpu[arm].append((mv.cpu_s() - c0) / (time.monotonic() - t0) * 100)
        finally:
            mv.stop()
    for b in range(blocks):
        if b % 2:
            for arm, extra in arms:
                watched(arm, extra)
        off.append(run_block())
        if not b % 2:
            for arm, extra in arms:
                watched(arm, extra)
        for arm, _ in arms:
            pair[arm].append(on[arm][-1] / off[-1])
    r = statistics.median(on["with"]) / statistics.median(off)
    print(f"{name}: {r:.3f}x  (median block without {statistics.median(off):.3f}s, with "
          f"{statistics.median(on['with']):.3f}s; {blocks} interleaved pairs, "
          f"{ARGS.settle} snapshots after the first; mevitop's CPU in its blocks "
          f"{statistics.median(cpu['with']):.0f}% of a core; loadavg "
          f"{os.getloadavg()[0]:.2f})", flush=True)
    print(f"  each pair's ratio: {spread(pair['with'])}", flush=True)
    for arm, _ in arms[1:]:
        print(f"  {arm}: {statistics.median(on[arm]) / statistics.median(off):.3f}x (median "
              f"{statistics.median(on[arm]):.3f}s, mevitop's CPU "
              f"{statistics.median(cpu[arm]):.0f}% of a core); each pair's ratio: "
              f"{spread(pair[arm])}", flush=True)
    return r


def blocks(quick):
    return ARGS.blocks or (3 if quick else 12 if ARGS.long else 6)


def big_mib(quick):
    return ARGS.mib or (256 if quick else 1024)


def bench_churn(d, quick, mv_args):
    chunk = os.urandom(MIB)
    rounds = ARGS.rounds or (5 if quick else 100 if ARGS.long else 20)
    return interleaved(f"churn (64 MiB write+unlink, {rounds} a block)", lambda: sum(
        churn_round(d, chunk) for _ in range(rounds)), blocks(quick), mv_args)


def make_big(d, mib):
    path = os.path.join(d, "big.dat")
    chunk = os.urandom(MIB)
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(chunk)
        os.fsync(f.fileno())
    return path


def bench_cold(d, quick, mv_args):
    mib = big_mib(quick)
    path = make_big(d, mib)
    return interleaved(f"cold read ({mib} MiB, buffered)", lambda: read_all(path, True),
                       blocks(quick), mv_args)


def bench_warm(d, quick, mv_args):
    mib = big_mib(quick)
    path = make_big(d, mib)
    read_all(path, False)
    return interleaved(f"warm reread ({mib} MiB)", lambda: sum(read_all(path, False)
                                                               for _ in range(3)),
                       blocks(quick), mv_args)


def make_files(d, n, size=100):
    """n files of size bytes, written a page at a time (small folios: a DONTNEED of one
    page then drops just that page)."""
    os.makedirs(d, exist_ok=True)
    paths = []
    for i in range(n):
        p = os.path.join(d, f"f{i:06d}")
        with open(p, "wb", buffering=0) as f:
            for off in range(0, size, PAGE):
                f.write(b"x" * min(PAGE, size - off))
        paths.append(p)
    return paths


COUNTERS = ("full_walks", "rewalks", "cachestats", "opens", "proc_scans", "tree_walks", "kinfo")
TIMES = ("refresh_ms", "walk_ms", "mapped_ms", "proc_ms")
PROC_COUNTERS = ("events", "maps_reads", "scans", "layout_changes", "retired")


def peak_cause(mv, marks, per_s):
    """What mevitop's snapshots in its busiest second say it did then: the files side's
    counters that moved (cumulative ones: the difference) and its times."""
    i = max(range(len(per_s)), key=per_s.__getitem__)
    snaps = mv.lines[max(marks[i] - 1, 0):marks[i + 1]]
    if len(snaps) < 2 or "files_stats" not in snaps[0]:
        return f"second {i}: no snapshot in it"
    a, b = snaps[0]["files_stats"], snaps[-1]["files_stats"]
    moved = {k: b.get(k, 0) - a.get(k, 0) for k in COUNTERS if b.get(k, 0) != a.get(k, 0)}
    times = {k: max(x["files_stats"].get(k, 0) for x in snaps[1:]) for k in TIMES}
    procs = len(snaps[-1].get("processes", []))
    pa, pb = snaps[0]["stats"], snaps[-1]["stats"]
    pmoved = {k: pb.get(k, 0) - pa.get(k, 0) for k in PROC_COUNTERS
              if pb.get(k, 0) != pa.get(k, 0)}
    return (f"second {i} ({per_s[i]:.1f}%): files side moved {moved or 'nothing'}, its "
            f"longest times {times}; process side moved {pmoved or 'nothing'}, "
            f"{procs} processes")


def evict_wave(mv, paths):
    """Half the files evicted at once (what reclaim does to a box of small cached files):
    what mevitop's next two refreshes do and cost."""
    n0, c0 = len(mv.lines), mv.cpu_s()
    a = mv.lines[-1]
    t0 = time.monotonic()
    for p in paths[::2]:
        fd = os.open(p, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    while len(mv.lines) < n0 + 3 and time.monotonic() - t0 < 30:
        time.sleep(0.05)
    cpu = (mv.cpu_s() - c0) / (time.monotonic() - t0) * 100
    b = mv.lines[-1]
    moved = {k: b["files_stats"].get(k, 0) - a["files_stats"].get(k, 0) for k in COUNTERS}
    worst = max(x["files_stats"]["refresh_ms"] for x in mv.lines[n0:])
    print(f"  eviction of {len(paths[::2])} files: mevitop {cpu:.1f}% of a core over the "
          f"{time.monotonic() - t0:.1f} s to 3 snapshots, files side {moved}, longest refresh "
          f"{worst:.1f} ms", flush=True)


def bench_scale(d, quick, mv_args):
    n = 20000 if quick else 100000
    paths = make_files(os.path.join(d, "scale"), n)
    # Written back before mevitop starts: the idle seconds are not the flusher's writeback
    # of 100,000 new files (nor the start's cachestat of every file with dirty pages).
    os.sync()
    secs = 5 if quick else 10
    for label, extra in (("files", []), ("no-files", ["--no-files"])):
        mv = Mevitop(["-i", "1000", *mv_args, *extra])
        try:
            time.sleep(2)
            c0, t0 = mv.cpu_s(), time.monotonic()
            # CPU second by second, and which snapshots each second holds: a spike is
            # found in the snapshots of its second (what the files side did then).
            per_s, marks, c = [], [len(mv.lines)], c0
            for k in range(secs):
                time.sleep(max(0.0, t0 + k + 1 - time.monotonic()))
                now = mv.cpu_s()
                per_s.append((now - c) * 100)
                marks.append(len(mv.lines))
                c = now
            cpu = (mv.cpu_s() - c0) / (time.monotonic() - t0) * 100
            s = mv.lines[-1]
            nfiles = len(s.get("files", [])) + s.get("files_omitted", {}).get("files", 0)
            print(f"scale ({label}, {n} extra cached files): first snapshot {mv.first_s:.2f}s, "
                  f"files {nfiles}, idle CPU {cpu:.2f}% of a core, loadavg "
                  f"{os.getloadavg()[0]:.2f}", flush=True)
            print(f"  each second: {' '.join(f'{x:.1f}' for x in per_s)} (% of a core; "
                  f"clock ticks of 1/{os.sysconf('SC_CLK_TCK')} s); busiest "
                  f"{peak_cause(mv, marks, per_s)}", flush=True)
            st = mv.lines[0].get("files_stats")
            if st:  # the page cache side's own share of the first snapshot
                print(f"  files side of the first snapshot: walk {st['full_walk_ms']:.0f} ms + "
                      f"refresh {st['refresh_ms']:.0f} ms (the kernel's names for "
                      f"{st.get('kinfo', 0)} rows in {st.get('kinfo_ms', 0):.0f} ms)",
                      flush=True)
            print(f"  memory: VmHWM {vm_hwm(mv.proc.pid)} KiB", flush=True)
            if label == "files":
                evict_wave(mv, paths)
        finally:
            mv.stop()


def vm_hwm(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))


def bench_tools(d, quick, mv_args):
    n = 20000
    paths = make_files(os.path.join(d, "tools"), n, size=3 * PAGE)
    # Drop the second page of every other file (written back first, or DONTNEED keeps
    # it): the answers must agree on a mixed state.
    os.sync()
    for p in paths[::2]:
        fd = os.open(p, os.O_RDONLY)
        os.posix_fadvise(fd, PAGE, PAGE, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    base = os.path.join(d, "tools")
    t0 = time.monotonic()
    out = subprocess.run(["vmtouch", "-f", base], capture_output=True, text=True).stdout
    t_vm = time.monotonic() - t0
    vm_pages = next(int(l.split()[2].split("/")[0]) for l in out.splitlines()
                    if "Resident Pages" in l)
    t0 = time.monotonic()
    out = subprocess.run(f"find {shlex.quote(base)} -type f -print0 | xargs -0 fincore --raw "
                         "--noheadings --output PAGES", shell=True, capture_output=True,
                         text=True).stdout
    t_fc = time.monotonic() - t0
    fc_pages = sum(int(x) for x in out.split())
    # mevitop: the first snapshot has every file's count; names come largest first, so the
    # answer for a directory is complete at the first snapshot naming all of its files.
    t0 = time.monotonic()
    mv = Mevitop(["-i", "1000", "--files-top", "0", *mv_args])
    t_first = mv.first_s
    deadline = time.monotonic() + 120
    while True:
        snap = mv.lines[-1]
        if not snap["files_stats"]["queued_names"] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    t_mv = time.monotonic() - t0
    mv.stop()
    mine = [f for f in snap["files"] if f["path"].startswith(base + "/")]
    mv_pages = sum(f["pages"]["cached"] for f in mine)
    # The cache moves under a shared box (others' reclaim): the truth again, right after.
    out = subprocess.run(f"find {shlex.quote(base)} -type f -print0 | xargs -0 fincore --raw "
                         "--noheadings --output PAGES", shell=True, capture_output=True,
                         text=True).stdout
    fc_after = sum(int(x) for x in out.split())
    print(f"tools ({n} files): pages vmtouch {vm_pages}, fincore {fc_pages} (again after "
          f"mevitop: {fc_after}), mevitop {mv_pages} ({len(mine)} files with pages); time to "
          "a complete answer vmtouch "
          f"{t_vm:.2f}s, fincore {t_fc:.2f}s, mevitop {t_mv:.2f}s (start, BPF load and the "
          f"whole system's {len(snap['files'])} files included; first snapshot {t_first:.2f}s)",
          flush=True)


ARGS = None
BENCHES = {"churn": bench_churn, "cold": bench_cold, "warm": bench_warm,
           "scale": bench_scale, "tools": bench_tools}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=",".join(BENCHES))
    ap.add_argument("--blocks", type=int, default=0,
                    help="interleaved pairs for churn, cold and warm (default 6, --quick 3)")
    ap.add_argument("--long", action="store_true",
                    help="churn, cold, warm: 12 pairs; churn: blocks of 100 rounds (~1 s) "
                    "instead of 20 (~0.2 s), whose spread (+-8%%) hid a 2%% effect")
    ap.add_argument("--rounds", type=int, default=0,
                    help="churn: 64 MiB rounds a block (default 20, --quick 5, --long 100)")
    ap.add_argument("--mib", type=int, default=0,
                    help="the cold and warm file's size (default 1024, --quick 256)")
    ap.add_argument("--settle", type=int, default=2,
                    help="snapshots to wait for after mevitop's first before a block is timed "
                    "(0: time the start too)")
    ap.add_argument("--no-files-arm", action="store_true",
                    help="churn, cold, warm: also blocks with mevitop --no-files (the page "
                    "cache side's share)")
    ap.add_argument("--mevitop-args", default="")
    global ARGS
    a = ARGS = ap.parse_args()
    if os.geteuid():
        sys.exit("needs root (mevitop loads BPF programs)")
    print(f"pagecache_bench: {os.uname().release}, {os.cpu_count()} CPUs, loadavg "
          f"{os.getloadavg()[0]:.2f} (a shared machine: others' work moves these figures)",
          flush=True)
    for name in a.only.split(","):
        d = tempfile.mkdtemp(prefix="mevitop-bench-", dir=BASE)
        try:
            BENCHES[name](d, a.quick, shlex.split(a.mevitop_args))
        finally:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
