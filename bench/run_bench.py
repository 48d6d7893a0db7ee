#!/usr/bin/env python3
"""mevitop's benchmarks (`make bench`).  Every figure is a ratio or a measurement taken in
this one run: baseline and monitored runs are interleaved, and medians are reported.  These
are not tests: nothing here asserts a timing.

  run_bench.py [--quick] [--only NAME[,NAME]]
  names: slowdown, syscalls, server, latency, events, attach, memory, idle, scale, exact, stacks,
         stacks_exact, stacks_cost, swevent
"""
import argparse
import signal
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEVITOP = os.environ.get("MEVITOP_BIN", os.path.join(ROOT, "build", "mevitop"))
BENCH = os.path.join(ROOT, "build", "bench")


class Mevitop:
    """A running mevitop --json; the first line means attached and scanned."""

    def __init__(self, args):
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(PREFIX + [MEVITOP, "--json", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.first = None
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(120) or self.first is None:
            raise RuntimeError("mevitop did not start: " + self.proc.stderr.read())
        self.ready_s = time.monotonic() - self.t0

    def _read(self):
        for line in self.proc.stdout:
            d = json.loads(line)
            if self.first is None:
                self.first = d
                self.ready.set()
            self.lines.append(d)
        self.ready.set()

    def last(self):
        return self.lines[-1]

    def hwm_kib(self):
        # VmHWM, not wait4's ru_maxrss: the latter carries the forking Python's peak over exec.
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        try:
            self.maxrss_kib = self.hwm_kib()
        except OSError:
            self.maxrss_kib = 0
        self.proc.terminate()
        self.proc.wait()
        return self.proc.returncode


class Bpftrace:
    """The in-kernel floor: bpftrace counting page faults per pid in a map (no records, no
    wake-ups).  BEGIN runs once every probe is attached."""

    PROG = ('BEGIN { printf("ready\\n"); } '
            'tracepoint:exceptions:page_fault_user { @[pid] = count(); }')

    def __init__(self):
        self.proc = subprocess.Popen(PREFIX + ["bpftrace", "-B", "line", "-e", self.PROG],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # It has been seen to hang before attaching on this loaded VM: give up after 60 s.
        timer = threading.Timer(60, self.proc.kill)
        timer.start()
        try:
            for line in self.proc.stdout:
                if line.strip() == "ready":
                    return
        finally:
            timer.cancel()
        raise RuntimeError("bpftrace did not start: " + self.proc.stderr.read())

    def stop(self):
        self.proc.terminate()
        self.proc.communicate()
        return self.proc.returncode


def monitor(margs):
    """What is measured beside the plain run: mevitop with these arguments, or None for
    the bpftrace floor."""
    return Bpftrace() if margs is None else Mevitop(margs)


# The measured program runs on CPU 1 and mevitop on CPU 0 (when there are two): on a small
# shared VM this removes the scheduler's placement from the noise.  The per-fault work of
# the BPF programs runs on the faulting CPU either way.
PIN = os.cpu_count() and os.cpu_count() > 1
WORK_CPU = ["taskset", "-c", "1"] if PIN else []
PREFIX = ["taskset", "-c", "0"] if PIN else []


def faultbench(size_mb=64, rounds=20, threads=1):
    pin = WORK_CPU if threads == 1 else []
    out = subprocess.run(pin + [os.path.join(BENCH, "faultbench"), str(size_mb), str(rounds),
                                str(threads)], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def syscallbench(calls=3000000):
    out = subprocess.run(WORK_CPU + [os.path.join(BENCH, "syscallbench"), str(calls)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def bench_slowdown(args, results):
    pairs = 5 if args.quick else 11
    sleeper = subprocess.Popen(["sleep", "3600"])
    try:
        slowdowns(args, results, pairs, sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()


def slowdowns(args, results, pairs, sleeper):
    for mode, margs in args.modes:
        if margs is not None:	# None: the bpftrace floor
            margs = [str(sleeper) if a == "SLEEPER" else a for a in margs]
        ratios, base_ns, mon_ns = [], [], []
        for _ in range(pairs):
            b = faultbench()
            m = monitor(margs)
            r = faultbench()
            m.stop()
            base_ns.append(b["ns_per_page"])
            mon_ns.append(r["ns_per_page"])
            ratios.append(r["ns_per_page"] / b["ns_per_page"])
        results[f"slowdown_{mode}"] = {
            "median_ratio": round(statistics.median(ratios), 4),
            "ratios": [round(x, 3) for x in ratios],
            "baseline_ns_per_page": round(statistics.median(base_ns), 1),
            "monitored_ns_per_page": round(statistics.median(mon_ns), 1),
        }
        print(f"slowdown [{mode}]: median ratio {statistics.median(ratios):.3f} "
              f"(baseline {statistics.median(base_ns):.0f} ns/page, monitored "
              f"{statistics.median(mon_ns):.0f} ns/page, {pairs} interleaved pairs)")


def spread(xs):
    """Median and the range around it, as printed in doc/overhead.md: 1.004 (0.991-1.012)."""
    return f"{statistics.median(xs):.3f} ({min(xs):.3f}-{max(xs):.3f})"


def bench_syscalls(args, results):
    """What the hooks cost syscalls mevitop does not care about (getppid): any syscall
    tracepoint sends every syscall of every task down the slow path."""
    pairs = 5 if args.quick else 9
    for mode, margs in args.syscall_modes:
        ratios, cpu_ratios, clean = [], [], []
        for _ in range(pairs):
            # Another monitor holding a syscall tracepoint taxes the baseline too: such
            # pairs are kept but told apart.
            held = syscall_hook_holders()
            b = syscallbench()
            m = monitor(margs)
            r = syscallbench()
            held += [h for h in syscall_hook_holders() if h != m.proc.pid]
            m.stop()
            ratios.append(r["ns_per_call"] / b["ns_per_call"])
            cpu_ratios.append(r["cpu_ns_per_call"] / b["cpu_ns_per_call"])
            clean.append(not held)
        clean_cpu = [x for x, c in zip(cpu_ratios, clean) if c]
        results[f"syscalls_{mode}"] = {"median_ratio": round(statistics.median(ratios), 4),
                                       "ratios": [round(x, 3) for x in ratios],
                                       "median_cpu_ratio": round(statistics.median(cpu_ratios), 4),
                                       "cpu_ratios": [round(x, 3) for x in cpu_ratios],
                                       "pairs_without_other_syscall_hooks": sum(clean),
                                       "median_cpu_ratio_without_other_syscall_hooks":
                                           round(statistics.median(clean_cpu), 4) if clean_cpu else None,
                                       "baseline_ns_per_call": round(b["ns_per_call"], 1)}
        # CPU time per call (getrusage) as well as wall time: on a shared VM the loop is
        # preempted, which wall time counts and CPU time does not.
        print(f"syscalls [{mode}]: getppid() ratio {spread(ratios)} wall, "
              f"{spread(cpu_ratios)} CPU time (baseline {b['ns_per_call']:.0f} ns/call, "
              f"{pairs} interleaved pairs); CPU time over the {sum(clean)} pairs with no other "
              f"syscall hook on the machine: {spread(clean_cpu) if clean_cpu else 'none'}")


def syscall_hook_holders():
    """Processes other than ours holding a syscall tracepoint link (other monitors on this
    machine): while one runs, every baseline pays the syscall tax too."""
    holders = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:bpf_link":
                    continue
                with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                    if any(l.startswith("tp_name:\tsys_") for l in f):
                        holders.add(int(pid))
                        break
        except OSError:
            continue
    return sorted(holders)


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_rps(port, requests):
    """redis-benchmark's SET and GET throughput (requests/s, summed), client on CPU 0."""
    out = subprocess.run(PREFIX + ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port),
                                   "-n", str(requests), "-c", "8", "-t", "set,get", "--csv"],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    rps = 0.0
    for line in out.splitlines()[1:]:
        rps += float(line.split(",")[1].strip('"'))
    return rps


def bench_server(args, results):
    """A real syscall-bound server no one here wrote: redis-server (CPU 1, loopback only,
    no persistence) under redis-benchmark (CPU 0, 8 connections, SET and GET); throughput
    plain vs monitored, interleaved pairs, whole system watched."""
    pairs = 3 if args.quick else 7
    requests = 10000 if args.quick else 30000
    port = free_port()
    server = subprocess.Popen(WORK_CPU + ["redis-server", "--bind", "127.0.0.1", "--port",
                                          str(port), "--save", "", "--appendonly", "no",
                                          "--protected-mode", "yes"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True,
                              text=True).stdout.strip() == "PONG":
                break
            time.sleep(0.05)
        redis_rps(port, requests)  # warm up: the server's heap and the page cache
        for mode, margs in args.syscall_modes:
            ratios, base = [], []
            for _ in range(pairs):
                b = redis_rps(port, requests)
                m = monitor(margs)
                r = redis_rps(port, requests)
                m.stop()
                base.append(b)
                ratios.append(r / b)
            results[f"server_{mode}"] = {"median_throughput_ratio": round(statistics.median(ratios), 4),
                                         "ratios": [round(x, 3) for x in ratios],
                                         "baseline_rps": round(statistics.median(base))}
            print(f"server [{mode}]: redis SET+GET throughput ratio {spread(ratios)} "
                  f"(baseline {statistics.median(base):,.0f} requests/s, {pairs} interleaved pairs)")
    finally:
        server.terminate()
        server.wait()


def wall(cmd):
    t = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.monotonic() - t


def quit_latency(pid):
    """The interactive view in tmux: from `q` sent to the shell running the next command
    (the time it prints), tmux's own latency included."""
    done = f"/tmp/mevitop-bench-q-{os.getpid()}"
    session = f"mevitop-bench-{os.getpid()}"
    if os.path.exists(done):
        os.unlink(done)
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "40",
                    f"{MEVITOP} -p {pid} -i 500; date +%s.%N > {done}; sleep 5"], check=True)
    try:
        for _ in range(400):
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                                    capture_output=True, text=True).stdout
            if "mevitop 0" in screen:
                break
            time.sleep(0.05)
        time.sleep(0.3)
        t = time.time()
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
        for _ in range(2000):
            if os.path.exists(done) and os.path.getsize(done):
                break
            time.sleep(0.002)
        with open(done) as f:
            return float(f.read()) - t
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        if os.path.exists(done):
            os.unlink(done)


def bench_latency(args, results):
    """Start and stop: what `mevitop run -- /bin/true` adds to /bin/true, how long
    `mevitop --json -n 1 -p PID` takes from exec to exit, and how long mevitop takes to exit
    after SIGTERM, and how long `q` in the interactive view (in tmux) takes to give the
    shell back; medians of N."""
    n = 5 if args.quick else 15
    sleeper = subprocess.Popen(["sleep", "3600"])
    out = {}
    try:
        for mode in ("sample", "chunk"):
            out[f"json_n1_{mode}_s"] = [wall([MEVITOP, "--json", "-n", "1", "--mode", mode,
                                              "-p", str(sleeper.pid)]) for _ in range(n)]
        plain = [wall(["/bin/true"]) for _ in range(n)]
        run = [wall([MEVITOP, "run", "--json", "--", "/bin/true"]) for _ in range(n)]
        out["run_true_added_s"] = [r - p for r, p in zip(run, plain)]
        stops = []
        for _ in range(n):
            m = Mevitop(["-p", str(sleeper.pid), "-i", "1000"])
            t = time.monotonic()
            m.proc.terminate()
            m.proc.wait()
            stops.append(time.monotonic() - t)
        out["sigterm_to_exit_s"] = stops
        out["q_to_shell_s"] = [quit_latency(sleeper.pid) for _ in range(n)]
    finally:
        sleeper.kill()
        sleeper.wait()
    results["latency"] = {k: {"median": round(statistics.median(v), 4),
                              "min": round(min(v), 4), "max": round(max(v), 4)}
                          for k, v in out.items()}
    for k, v in out.items():
        print(f"latency [{k}]: median {statistics.median(v) * 1000:.0f} ms "
              f"({min(v) * 1000:.0f}-{max(v) * 1000:.0f} ms, {n} runs)")


def bench_events(args, results):
    """Events per second mevitop applies with nothing lost: two threads faulting flat out,
    every fault streamed (trace mode)."""
    m = Mevitop(["-i", "500", "--mode", "trace"])
    fb = faultbench(64, 10 if args.quick else 30, 2)
    time.sleep(1.2)  # let two more snapshots arrive: the stats of the busy interval
    snaps = list(m.lines)
    m.stop()
    peak = max(s["stats"]["events_per_sec"] for s in snaps)
    lost = snaps[-1]["stats"]["lost"]
    results["events"] = {"peak_events_per_sec": round(peak), "lost": lost,
                         "workload_pages": fb["pages"], "workload_seconds": fb["seconds"]}
    print(f"events: peak {peak:,.0f} events/s applied, {lost} lost "
          f"({fb['pages']:,} faults in {fb['seconds']:.2f} s by 2 threads)")


def start_hog(size_mb, pattern, spread_ms=0):
    p = subprocess.Popen([os.path.join(BENCH, "memhog"), str(size_mb), pattern, str(spread_ms)],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("ready"), line
    return p


def bench_attach(args, results):
    size = 2048 if args.quick else 8192
    hog = start_hog(size, "all")
    try:
        m = Mevitop(["-p", str(hog.pid), "-n", "2", "-i", "10000", "--no-reconcile"])
        entry = m.first["processes"][0]
        m.stop()
        results["attach"] = {"resident_gib": size / 1024, "seconds_to_first_snapshot":
                             round(m.ready_s, 3), "mevitop_maxrss_mib": round(m.maxrss_kib / 1024, 1),
                             "engine_bytes": m.first["stats"]["engine_bytes"],
                             "resident_pages": entry["pages"]["resident"]}
        print(f"attach: {size / 1024:.0f} GiB resident ({entry['pages']['resident']:,} pages): "
              f"first snapshot after {m.ready_s:.2f} s (process start included), "
              f"mevitop max RSS {m.maxrss_kib / 1024:.1f} MiB, engine "
              f"{m.first['stats']['engine_bytes'] / 1024:.0f} KiB")
    finally:
        hog.kill()
        hog.wait()


def bench_memory(args, results):
    size = 2048 if args.quick else 16384
    hog = start_hog(size, "every-other")
    try:
        m = Mevitop(["-p", str(hog.pid), "-n", "1", "--no-reconcile"])
        entry = m.first["processes"][0]
        m.stop()
        mapped = entry["pages"]["mapped"]
        bits = entry["model_bytes"] * 8 / mapped
        results["memory"] = {"mapped_pages": mapped, "resident_pages": entry["pages"]["resident"],
                             "model_bytes": entry["model_bytes"],
                             "engine_bytes": m.first["stats"]["engine_bytes"],
                             "bits_per_mapped_page": round(bits, 3)}
        print(f"memory: {size / 1024:.0f} GiB mapped, every other page resident: the process's "
              f"model {entry['model_bytes'] / 1024:.0f} KiB = {bits:.3f} bits per mapped page "
              f"(whole engine {m.first['stats']['engine_bytes'] / 1024:.0f} KiB)")
    finally:
        hog.kill()
        hog.wait()


def spawn_idle(n):
    """n idle processes (the scriptable workload, waiting on stdin): libc, a heap, a stack."""
    wl = os.path.join(ROOT, "build", "workloads", "wl")
    procs = [subprocess.Popen([wl], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
             for _ in range(n)]
    for p in procs:
        p.stdout.readline()
    return procs


def kill_all(procs):
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def count_user_processes():
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if open(f"/proc/{d}/maps").read(1):
                    n += 1
            except OSError:
                pass
    return n


def proc_cpu_s(pid):
    """CPU time of every thread, from schedstat (nanoseconds; /proc/PID/stat's utime+stime
    count whole ticks, too coarse for a process that uses tens of ms over 10 s)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total / 1e9


def bench_idle(args, results):
    """mevitop's own CPU on an idle system with ~300 processes, default mode and interval."""
    have = count_user_processes()
    procs = spawn_idle(max(0, 300 - have))
    try:
        m = Mevitop([])
        time.sleep(2)  # past the initial scans
        c0, t0, n0 = proc_cpu_s(m.proc.pid), time.monotonic(), len(m.lines)
        time.sleep(20 if not args.quick else 5)
        c1, t1 = proc_cpu_s(m.proc.pid), time.monotonic()
        hwm = m.hwm_kib()
        a, b = m.lines[n0 - 1]["stats"], m.last()["stats"]
        nproc = b["processes"]
        m.stop()
        pct = (c1 - c0) / (t1 - t0) * 100
        # What the engine did meanwhile: rescans of processes whose counters moved.
        scans, pages = b["scans"] - a["scans"], b["scanned_pages"] - a["scanned_pages"]
        results["idle"] = {"processes": nproc, "cpu_pct_of_one_core": round(pct, 3),
                           "mevitop_hwm_mib": round(hwm / 1024, 1), "rescans": scans,
                           "rescanned_pages": pages}
        print(f"idle: {nproc} processes watched, mevitop used {pct:.2f}% of one core "
              f"(over {t1 - t0:.0f} s; {scans} rescans, {pages:,} pages), "
              f"max RSS {hwm / 1024:.1f} MiB")
    finally:
        kill_all(procs)


def bench_scale(args, results):
    """1,000 processes and one 16 GiB resident process: time to the first complete snapshot,
    engine memory."""
    size = 2048 if args.quick else 16384
    hog = start_hog(size, "all")
    procs = spawn_idle(max(0, 1000 - count_user_processes()))
    try:
        m = Mevitop(["-i", "1000"])
        snap = m.first
        hwm = m.hwm_kib()
        m.stop()
        results["scale"] = {"processes": snap["stats"]["processes"], "hog_gib": size / 1024,
                            "seconds_to_first_snapshot": round(m.ready_s, 3),
                            "engine_mib": round(snap["stats"]["engine_bytes"] / 2**20, 2),
                            "mevitop_hwm_mib": round(hwm / 1024, 1)}
        print(f"scale: {snap['stats']['processes']} processes + {size / 1024:.0f} GiB resident: "
              f"first complete snapshot after {m.ready_s:.2f} s, engine "
              f"{snap['stats']['engine_bytes'] / 2**20:.1f} MiB, mevitop max RSS {hwm / 1024:.1f} MiB")
    finally:
        kill_all(procs)
        hog.kill()
        hog.wait()


def run_exact(variant, size_mb=64, rounds=20, extra=()):
    """faultbench under `mevitop run --exact=VARIANT`: its own result line (CMD shares
    mevitop's stdout) and the stats of mevitop's last snapshot (printed when CMD is done)."""
    # CMD pinned like the plain runs (taskset execs faultbench: exact mode follows the exec).
    out = subprocess.run([MEVITOP, "run", "--json", "-i", "1000", f"--exact={variant}", *extra,
                          "--",
                          *WORK_CPU, os.path.join(BENCH, "faultbench"), str(size_mb),
                          str(rounds)],
                         capture_output=True, text=True, check=True).stdout
    bench, snap = None, None
    for line in out.splitlines():
        d = json.loads(line)
        if "stats" in d:
            snap = d
        elif "ns_per_page" in d:
            bench = d
    return bench, snap["stats"]


def bench_exact(args, results):
    """Exact mode on the fault-bound microbenchmark, both variants, each pair interleaved
    (plain, fast, ordered, in a rotating order); median ratios.  Also: how many pages each
    64 MiB mapping had before mevitop registered it (registration latency in a tight
    mmap-then-touch loop), and how many first touches each variant reported."""
    pairs = 5 if args.quick else 9
    rounds = 20
    runs = {"plain": [], "fast": [], "ordered": []}
    stats = {}
    for i in range(pairs):
        order = ["plain", "fast", "ordered"]
        order = order[i % 3:] + order[:i % 3]
        for what in order:
            if what == "plain":
                runs[what].append(faultbench(64, rounds)["ns_per_page"])
            else:
                b, st = run_exact(what, 64, rounds)
                runs[what].append(b["ns_per_page"])
                stats.setdefault(what, []).append(st["exact"])
    pages = rounds * (64 << 8)
    for v in ("fast", "ordered"):
        ratios = [m / b for m, b in zip(runs[v], runs["plain"])]
        last = stats[v][-1]
        r = {"median_ratio": round(statistics.median(ratios), 3),
             "ratios": [round(x, 2) for x in ratios],
             "baseline_ns_per_page": round(statistics.median(runs["plain"]), 1),
             "monitored_ns_per_page": round(statistics.median(runs[v]), 1),
             "pages_touched": pages,
             "first_touches_reported": statistics.median(s["touches"] for s in stats[v]),
             "prereg_pages_max_per_mapping": max(s["prereg_max"] for s in stats[v]),
             "prereg_pages_median_total": statistics.median(s["prereg_pages"] for s in stats[v])}
        if v == "ordered":
            r["latency_us_hist"] = last["latency_us_hist"]
            r["server_threads"] = last["server"]["threads"]
        results[f"exact_{v}"] = r
        print(f"exact [{v}]: median ratio {r['median_ratio']:.2f} (baseline "
              f"{r['baseline_ns_per_page']:.0f} ns/page, monitored {r['monitored_ns_per_page']:.0f}"
              f" ns/page, {pairs} interleaved pairs); first touches reported "
              f"{r['first_touches_reported']:.0f} of {pages}; pages touched before registration:"
              f" at most {r['prereg_pages_max_per_mapping']} per 64 MiB mapping")


def perf_record(cmd, data):
    """cmd under `perf record -e page-faults -g` (perf's page-fault flame graph)."""
    out = subprocess.run(WORK_CPU + ["perf", "record", "-q", "-e", "page-faults", "-g", "-o",
                                     data, "--"] + cmd, capture_output=True, text=True,
                         check=True).stdout
    stats = subprocess.run(["perf", "report", "-i", data, "--stats"], capture_output=True,
                           text=True).stdout
    samples = next((int(l.split()[2]) for l in stats.splitlines()
                    if l.strip().startswith("SAMPLE events:")), 0)
    return json.loads(out.splitlines()[-1]), samples


def stacks_share(margs, size_mb=256, spread_ms=0):
    """Share of a memory hog's resident pages that --stacks attributes to a stack."""
    m = Mevitop(margs + ["--comm", "memhog", "--maps"])
    hog = start_hog(size_mb, "all", spread_ms)
    t = time.monotonic()
    try:
        deadline = t + 30
        while time.monotonic() < deadline:
            snap = m.last()
            if snap["monotonic"] > t and any(p["pid"] == hog.pid for p in snap["processes"]):
                break
            time.sleep(0.05)
        p = next(p for p in snap["processes"] if p["pid"] == hog.pid)
        attributed = sum(ft["pages"] for mp in p["mappings"] for ft in mp.get("first_touch", []))
        return attributed / max(1, p["pages"]["resident"])
    finally:
        hog.kill()
        hog.wait()
        m.stop()


def bench_stacks(args, results):
    """--stacks against the same mode without it, and beside perf's page-fault sampling."""
    pairs = 5 if args.quick else 9
    for mode in ("trace", "chunk", "sample"):
        ratios, cpu_ratios = [], []
        for _ in range(pairs):
            m = Mevitop(["--mode", mode, "-i", "1000"])
            a = faultbench()
            m.stop()
            m = Mevitop(["--mode", mode, "-i", "1000", "--stacks"])
            b = faultbench()
            m.stop()
            ratios.append(b["ns_per_page"] / a["ns_per_page"])
            # The fault path's BPF work is charged to the faulting task: its CPU time per
            # page is the cost, with less of the shared machine's noise than wall time.
            cpu_ratios.append(b["cpu_ns_per_page"] / a["cpu_ns_per_page"])
        # Sample mode's events are open a duty's share of the time: a hog touched at once
        # lands in one window or none, so it touches over a few cycles there.
        share = stacks_share(["--mode", mode, "-i", "200", "--stacks"],
                             spread_ms=SHARE_SPREAD_MS if mode == "sample" else 0)
        results[f"stacks_{mode}"] = {"median_ratio": round(statistics.median(ratios), 4),
                                     "ratios": [round(x, 3) for x in ratios],
                                     "median_cpu_ratio": round(statistics.median(cpu_ratios), 4),
                                     "cpu_ratios": [round(x, 3) for x in cpu_ratios],
                                     "resident_share_attributed": round(share, 4)}
        print(f"stacks [{mode}]: --stacks vs without, fault loop median ratio "
              f"{statistics.median(ratios):.3f} wall, {statistics.median(cpu_ratios):.3f} CPU "
              f"({pairs} interleaved pairs); {share:.1%} of a 256 MiB hog's resident pages "
              f"attributed")
    # Sample mode's --stacks adds a perf event, no syscall hook: getppid must not move.
    ratios = []
    for _ in range(pairs):
        m = Mevitop(["--mode", "sample", "-i", "1000"])
        a = syscallbench()
        m.stop()
        m = Mevitop(["--mode", "sample", "-i", "1000", "--stacks"])
        b = syscallbench()
        m.stop()
        ratios.append(b["ns_per_call"] / a["ns_per_call"])
    results["stacks_sample_getppid"] = {"median_ratio": round(statistics.median(ratios), 4),
                                        "ratios": [round(x, 3) for x in ratios]}
    print(f"stacks [sample]: getppid with --stacks vs without, median ratio "
          f"{statistics.median(ratios):.3f} ({pairs} interleaved pairs)")
    ratios, shares = [], []
    data = f"/tmp/mevitop-bench-perf-{os.getpid()}.data"
    try:
        for _ in range(pairs):
            a = faultbench()
            b, samples = perf_record([os.path.join(BENCH, "faultbench"), "64", "20", "1"], data)
            ratios.append(b["ns_per_page"] / a["ns_per_page"])
            shares.append(samples / b["pages"])
    finally:
        if os.path.exists(data):
            os.unlink(data)
    results["stacks_perf_record"] = {"median_ratio": round(statistics.median(ratios), 4),
                                     "ratios": [round(x, 3) for x in ratios],
                                     "faulted_pages_with_a_stack": round(statistics.median(shares), 4)}
    print(f"stacks [perf record -e page-faults -g]: fault loop median ratio "
          f"{statistics.median(ratios):.3f} vs no tool; {statistics.median(shares):.2%} of "
          f"faulted pages have a stack (and perf cannot tell which are still resident)")


class PerfStat:
    """`perf stat -a -e page-faults`: a counting software page-fault event on every CPU, no
    sampling, no BPF: what the event alone costs a fault."""

    def __init__(self):
        self.proc = subprocess.Popen(PREFIX + ["perf", "stat", "-a", "-x,", "-o", "/dev/null",
                                               "-e", "page-faults"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)   # no readiness line; the event is open well before this

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait()


def faultbench_under(cmd, size_mb=64, rounds=20):
    out = subprocess.run(WORK_CPU + cmd + [os.path.join(BENCH, "faultbench"), str(size_mb),
                                           str(rounds), "1"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


# Rounds of the fault loop per run here: ~2.5 s of faults, a few duty cycles, so that a
# run's share of open windows is the duty's whatever the phase it starts at (a 0.5 s run
# fell in the first window or between two).
COST_ROUNDS = 100


def bench_stacks_cost(args, results):
    """Sample mode's --stacks, side by side (CPU time per fault of the fault loop, interleaved
    rounds, each configuration against the plain run of its round): sample mode without
    --stacks, with the perf events always open (at the default period, and at a period that
    never samples: the event's own cost), and duty-cycled (--stack-duty), the default
    included.  Then, per --stacks configuration, the share of a memory hog's resident pages
    attributed.  What the event costs in each of its states (closed, disabled, counting,
    per task, exclude_kernel) is bench_swevent's."""
    pairs = 5 if args.quick else 9
    sample = ["--mode", "sample", "-i", "1000"]
    stacks = {
        "always": ["--stack-duty", "1000/1000"],
        "always-never-samples": ["--stack-duty", "1000/1000", "--stack-period", "1000000007"],
        "duty-300/1000": ["--stack-duty", "300/1000"],
        "duty-100/1000": ["--stack-duty", "100/1000"],
        "default": [],
    }
    confs = [("sample", sample)] + [(f"sample-stacks-{k}", sample + ["--stacks"] + v)
                                    for k, v in stacks.items()]
    if args.modes_only:     # --modes sample,sample-stacks-default: these alone, more pairs
        confs = [c for c in confs if c[0] in args.modes_only.split(",")]
    if args.pairs:
        pairs = args.pairs
    ratios = {name: [] for name, _ in confs}
    for i in range(pairs):
        for name, margs in confs[i % len(confs):] + confs[:i % len(confs)]:
            a = faultbench(rounds=COST_ROUNDS)
            m = Mevitop(margs)
            b = faultbench(rounds=COST_ROUNDS)
            m.stop()
            ratios[name].append(b["cpu_ns_per_page"] / a["cpu_ns_per_page"])
    base = statistics.median(ratios["sample"]) if "sample" in ratios else 1.0
    for name, margs in confs:
        r = ratios[name]
        res = {"median_cpu_ratio": round(statistics.median(r), 4),
               "cpu_ratios": [round(x, 3) for x in r],
               "vs_sample_without_stacks": round(statistics.median(r) / base, 4)}
        line = (f"stacks cost [{name}]: fault loop median CPU ratio {spread(r)} vs no tool, "
                f"{statistics.median(r) / base:.3f} vs sample mode without --stacks")
        if "--stacks" in margs and "1000000007" not in margs:
            shares = [stacks_share(margs, spread_ms=SHARE_SPREAD_MS)
                      for _ in range(1 if args.quick else 3)]
            res["resident_share_attributed"] = round(statistics.median(shares), 4)
            line += (f"; {statistics.median(shares):.1%} of a 256 MiB hog's resident pages "
                     f"attributed (touched over {SHARE_SPREAD_MS / 1000:.0f} s)")
        results[f"stacks_cost_{name}"] = res
        print(line + f" ({pairs} interleaved pairs)")


# The share of a hog's pages a duty-cycled sampler attributes depends on how the hog's
# faults fall across the windows: a hog that faults 256 MiB in a tenth of a second lands in
# one window or none.  This one spreads its touches over a few cycles, as a growing heap does.
SHARE_SPREAD_MS = 4000


def bench_swevent(args, results):
    """What a PERF_COUNT_SW_PAGE_FAULTS event costs a fault in each state, in one process
    whose rounds alternate between the states (bench/swevent_cost.c)."""
    runs = [json.loads(subprocess.run(WORK_CPU + [os.path.join(BENCH, "swevent_cost"), "64",
                                                  "9" if args.quick else "21"],
                                      capture_output=True, text=True, check=True).stdout)
            for _ in range(1 if args.quick else 3)]
    for k in runs[0]:
        if k == "none_cpu_ns_per_fault":
            continue
        v = [r[k] for r in runs]
        results[f"swevent_{k}"] = {"median_cpu_ratio": round(statistics.median(v), 4),
                                   "cpu_ratios": [round(x, 4) for x in v]}
        print(f"swevent [{k}]: fault CPU time {statistics.median(v):.3f}x no event "
              f"({len(v)} runs of alternating rounds, "
              f"{statistics.median(r['none_cpu_ns_per_fault'] for r in runs):.0f} ns a fault)")


def bench_stacks_exact(args, results):
    """Ordered exact mode with --stacks against the same without: the fault hooks' stack at
    every fault and its join with each first touch, on the fault loop (interleaved pairs)."""
    pairs = 5 if args.quick else 9
    rounds = 20
    ratios, joined = [], []
    for i in range(pairs):
        runs = {}
        for what in (("plain", "stacks") if i % 2 == 0 else ("stacks", "plain")):
            b, st = run_exact("ordered", 64, rounds, ["--stacks"] if what == "stacks" else [])
            runs[what] = b["ns_per_page"]
            if what == "stacks":
                joined.append(st["stacks"]["joined"] / max(1, st["stacks"]["first_touches"]))
        ratios.append(runs["stacks"] / runs["plain"])
    results["stacks_exact_ordered"] = {"median_ratio": round(statistics.median(ratios), 4),
                                       "ratios": [round(x, 3) for x in ratios],
                                       "first_touches_with_a_stack":
                                       round(statistics.median(joined), 4)}
    print(f"stacks [exact ordered]: --stacks vs without, fault loop median ratio "
          f"{statistics.median(ratios):.3f} ({pairs} interleaved pairs); "
          f"{statistics.median(joined):.2%} of first touches have their fault's stack")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer pairs")
    ap.add_argument("--only", default="slowdown,syscalls,server,latency,events,attach,memory,"
                                      "idle,scale,exact,stacks,stacks_exact")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--modes", dest="modes_only", help="only these monitored configurations")
    ap.add_argument("--pairs", type=int, help="stacks_cost: this many interleaved rounds")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: needs root (sudo make bench)")
    args.modes = [("sample", ["--mode", "sample", "-i", "1000"]),
                  ("chunk", ["--mode", "chunk", "-i", "1000"]),
                  ("trace", ["--mode", "trace", "-i", "1000"]),
                  ("trace+rss-hook", ["--mode", "trace", "-i", "1000", "--rss-hook"]),
                  # Attached, but the measured process is not watched (-p of another one):
                  # what the fault hook costs everyone else.
                  ("chunk-unwatched", ["--mode", "chunk", "-i", "1000", "-p", "SLEEPER"]),
                  # The layout hook forced off: sample mode on the syscall tracepoints.
                  ("sample-syscall-hooks", ["--mode", "sample", "-i", "1000",
                                            "--disable", "mmap_lock"]),
                  ("bpftrace-floor", None)]
    # Syscall-bound figures: the production modes, the old hooks, and the floor.
    args.syscall_modes = [m for m in args.modes
                          if m[0] in ("sample", "chunk", "sample-syscall-hooks", "bpftrace-floor")]
    if args.modes_only:
        keep = args.modes_only.split(",")
        args.modes = [m for m in args.modes if m[0] in keep]
        args.syscall_modes = [m for m in args.syscall_modes if m[0] in keep]
    held = syscall_hook_holders()
    if held:
        print(f"note: processes {held} hold syscall tracepoints: the baselines pay the "
              "syscall tax too, so syscall-bound ratios understate mevitop's own cost")
    results = {"syscall_hook_holders_at_start": held}
    for name in args.only.split(","):
        globals()[f"bench_{name}"](args, results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
