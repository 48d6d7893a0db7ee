#!/usr/bin/env python3
"""Recording benchmarks (`make bench-record`): every figure comes from this one run.

  size-idle   bytes per frame and MiB per hour for 300 idle processes (tests/workloads/wl, each
              libc, a heap, a stack), recorded whole-system with --comm wl at -i 1000
  size-churn  the same for one process with 16 GiB mapped, 2 GiB resident, 1% of its pages
              changing state per second (bench/rec_churn.c; 16-page clusters, and single
              pages as the worst case, where `replay --at T` is timed too).  MiB per hour
              are at the interval the recorder really kept.
  size-heat   (b)'s worst case recorded with --heat
  seek        `replay --at T` wall time (open, index, decode, print) in a recording of ~3600
              frames (an hour's worth at -i 1000, synthesised by recording a 2 GiB churn
              process at -i 10 for 40 s), at 20 random T
  fsync       what --fsync (and the sync at each keyframe) costs: fdatasync after writing a
              frame of each typical size (idle delta, churn delta, churn keyframe), in the
              directory recordings go to (tempfile's), 20 times each
  cost        faultbench's ns/page watched by live `mevitop --json` vs `mevitop record`,
              interleaved pairs, CPUs pinned as in run_bench.py
Nothing here asserts a timing.
  rec_bench.py [--only NAME[,NAME]] [--quick]
"""
import argparse
import json
import os
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench  # noqa: E402

MEVITOP = run_bench.MEVITOP
BENCH = run_bench.BENCH


def frames(path, with_time=False):
    """(type, bytes in the file[, monotonic ns]) of each complete frame
    (doc/recording-format.md)."""
    d = open(path, "rb").read()
    off, out = 40, []
    while off + 40 <= len(d):
        t = d[off + 4]
        mono, = struct.unpack_from("<Q", d, off + 8)
        clen, = struct.unpack_from("<I", d, off + 24)
        if off + 40 + clen > len(d):
            break
        out.append((t, 40 + clen, mono) if with_time else (t, 40 + clen))
        off += 40 + clen
    return out


def record(args, seconds):
    path = tempfile.mktemp(prefix="mevitop-recbench-")
    subprocess.run(run_bench.PREFIX + [MEVITOP, "record", "-o", path, "--duration",
                                       str(seconds), *args], check=True)
    return path


def summarise(name, path, interval_s, results, keep=False):
    """Bytes per frame, and MiB per hour at the interval the recorder really kept (a busy
    mevitop stretches -i; each frame then carries more changes)."""
    fr = frames(path, with_time=True)
    keys = [n for t, n, _ in fr if t == 1]
    deltas = [n for t, n, _ in fr if t == 2]
    per_frame = sum(n for _, n, _ in fr) / len(fr)
    real_s = (fr[-1][2] - fr[0][2]) / 1e9 / (len(fr) - 1) if len(fr) > 1 else interval_s
    mib_h = per_frame * 3600 / real_s / 2**20
    results[name] = {"frames": len(fr), "keyframes": len(keys),
                     "bytes_per_frame": round(per_frame),
                     "keyframe_bytes": round(statistics.mean(keys)),
                     "delta_bytes": round(statistics.mean(deltas)) if deltas else 0,
                     "interval_s": round(real_s, 3), "mib_per_hour": round(mib_h, 2)}
    print(f"{name}: {len(fr)} frames ({len(keys)} keyframes), {per_frame:.0f} bytes/frame "
          f"(keyframes {statistics.mean(keys):.0f}, deltas "
          f"{statistics.mean(deltas) if deltas else 0:.0f}) every {real_s:.2f} s "
          f"(-i {interval_s:g} s) = {mib_h:.2f} MiB/hour")
    if keep:
        return path
    os.unlink(path)
    return None


def time_seeks(path, span, n=20):
    """Wall times of `replay --at T` (open, index, decode, print to /dev/null) at n random T."""
    rnd = random.Random(1)
    times = []
    for _ in range(n):
        t = rnd.random() * span
        t0 = time.monotonic()
        subprocess.run([MEVITOP, "replay", path, "--json", "--at", f"{t:.3f}"],
                       stdout=subprocess.DEVNULL, check=True)
        times.append(time.monotonic() - t0)
    return times


def bench_size_idle(args, results):
    procs = run_bench.spawn_idle(300)
    try:
        path = record(["--comm", "wl", "-i", "1000"], 20 if args.quick else 62)
        summarise("size_idle_300", path, 1.0, results)
    finally:
        run_bench.kill_all(procs)


def start_churn(cluster, size_mb=16384, res_mb=2048):
    p = subprocess.Popen(run_bench.WORK_CPU + [os.path.join(BENCH, "rec_churn"), str(size_mb),
                                                str(res_mb), "1", str(cluster)],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    return p, int(line.split()[1])


def bench_size_churn(args, results):
    for cluster in (16, 1):
        p, pid = start_churn(cluster)
        try:
            path = record(["-p", str(pid), "-i", "1000"], 20 if args.quick else 62)
        finally:
            p.kill()
            p.wait()
        name = f"size_churn_16g_1pct_cluster{cluster}"
        path = summarise(name, path, 1.0, results, keep=cluster == 1)
        if path:
            # Seeking in (b) itself: its frames print ~30 MB of JSON each (--maps), which
            # dominates; the decode alone is the difference to --at 0 (a keyframe).
            fr = frames(path, with_time=True)
            span = (fr[-1][2] - fr[0][2]) / 1e9
            times = time_seeks(path, span, 10)
            base = time_seeks(path, 0.0, 3)
            results[name]["seek_median_ms"] = round(statistics.median(times) * 1000, 1)
            results[name]["seek_max_ms"] = round(max(times) * 1000, 1)
            results[name]["print_keyframe_ms"] = round(min(base) * 1000, 1)
            print(f"  seek in it (decode + print ~30 MB JSON): median "
                  f"{statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms; "
                  f"printing its first frame alone: {min(base) * 1000:.0f} ms")
            os.unlink(path)


def bench_size_heat(args, results):
    """(b) recorded with --heat: what the heat adds where every changed page is a fault."""
    p, pid = start_churn(1)
    try:
        path = record(["-p", str(pid), "-i", "1000", "--heat"], 20 if args.quick else 62)
    finally:
        p.kill()
        p.wait()
    summarise("size_churn_16g_1pct_cluster1_heat", path, 1.0, results)


def bench_seek(args, results):
    # 2 GiB mapped, 256 MiB resident: small enough for mevitop to keep a 10 ms interval.
    p, pid = start_churn(16, 2048, 256)
    try:
        path = record(["-p", str(pid), "-i", "10"], 40)
    finally:
        p.kill()
        p.wait()
    n = len(frames(path))
    first = json.loads(subprocess.run([MEVITOP, "replay", path, "--json", "--at", "0"],
                                      capture_output=True, text=True, check=True).stdout)
    times = time_seeks(path, n * 0.01)
    size = os.path.getsize(path)
    results["seek_3600_frames"] = {"frames": n, "file_bytes": size,
                                   "median_ms": round(statistics.median(times) * 1000, 1),
                                   "max_ms": round(max(times) * 1000, 1)}
    print(f"seek: {n} frames ({size / 2**20:.1f} MiB, {first['processes'][0]['pages']['resident']}"
          f" resident pages), replay --at T (open, index, decode, print): median "
          f"{statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms over 20 T")
    os.unlink(path)


def bench_cost(args, results):
    pairs = 5 if args.quick else 9
    live, rec = [], []
    for _ in range(pairs):
        m = run_bench.Mevitop([])
        live.append(run_bench.faultbench()["ns_per_page"])
        m.stop()
        path = tempfile.mktemp(prefix="mevitop-recbench-")
        r = subprocess.Popen(run_bench.PREFIX + [MEVITOP, "record", "-o", path])
        while not os.path.exists(path) or os.path.getsize(path) < 80:
            time.sleep(0.05)
        rec.append(run_bench.faultbench()["ns_per_page"])
        r.terminate()
        r.wait()
        os.unlink(path)
    ratios = [b / a for a, b in zip(live, rec)]
    results["record_vs_live"] = {"median_ratio": round(statistics.median(ratios), 4),
                                 "ratios": [round(x, 3) for x in ratios]}
    print(f"cost: faultbench under record / under live --json (whole system): median ratio "
          f"{statistics.median(ratios):.3f} ({pairs} interleaved pairs; live "
          f"{statistics.median(live):.0f} ns/page, record {statistics.median(rec):.0f} ns/page)")


def bench_fsync(args, results):
    path = tempfile.mktemp(prefix="mevitop-recbench-")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for name, size in (("idle_delta", 200), ("churn_delta", 70000),
                           ("churn_keyframe", 335000)):
            times = []
            for _ in range(20):
                os.write(fd, os.urandom(size))
                t0 = time.monotonic()
                os.fdatasync(fd)
                times.append(time.monotonic() - t0)
            results[f"fdatasync_{name}"] = {"bytes": size,
                                            "median_ms": round(statistics.median(times) * 1e3, 2),
                                            "max_ms": round(max(times) * 1e3, 2)}
            print(f"fdatasync after a {size}-byte frame ({name}): median "
                  f"{statistics.median(times) * 1e3:.2f} ms, max {max(times) * 1e3:.2f} ms")
    finally:
        os.close(fd)
        os.unlink(path)


BENCHES = {"size-idle": bench_size_idle, "size-churn": bench_size_churn,
           "size-heat": bench_size_heat, "seek": bench_seek, "fsync": bench_fsync,
           "cost": bench_cost}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(BENCHES)
    results = {}
    for n in names:
        BENCHES[n](args, results)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
