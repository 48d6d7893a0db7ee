"""Drives the real mevitop binary and the real workloads; reads the truth from pagemap.

Everything here synchronises on readiness: the workload's "ready"/"done" lines and
mevitop's snapshots (whose "monotonic" field is CLOCK_MONOTONIC at the start of the drain
that preceded them).  Timeouts exist only as failure guards.
"""
import contextlib
import json
import os
import queue
import re
import struct
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("MEVITOP_BUILD", os.path.join(ROOT, "build"))
MEVITOP = os.environ.get("MEVITOP_BIN", os.path.join(ROOT, "build-san", "mevitop"))
WORKLOADS = os.path.join(BUILD, "workloads")
PAGE = 4096
GUARD_S = 20  # failure guard for any single wait

# ASan: leaks are reported by the unit tests; here a leak report at exit would only add noise
# to the UI.  UBSan aborts on the first error (built with -fno-sanitize-recover).
SAN_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1:halt_on_error=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
}


def is_root():
    return os.geteuid() == 0


class Reader(threading.Thread):
    """Collects lines of a pipe into a queue."""

    def __init__(self, stream, name):
        super().__init__(daemon=True, name=name)
        self.stream = stream
        self.lines = queue.Queue()
        self.all = []
        self.start()

    def run(self):
        for line in self.stream:
            line = line.decode(errors="replace").rstrip("\n")
            self.all.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def get(self, timeout=GUARD_S, what="a line"):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"timed out waiting for {what}")
        if line is None:
            raise EOFError(f"stream closed while waiting for {what}")
        return line


class Workload:
    """tests/workloads/wl: one behaviour per command, answered by 'done MONO_NS ...'."""

    def __init__(self, prog="wl", args=(), env=None, wrap=()):
        # wrap: a command that execs the workload, e.g. setpriv to run it as another user
        self.proc = subprocess.Popen([*wrap, os.path.join(WORKLOADS, prog), *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env)
        self.out = Reader(self.proc.stdout, "workload")
        self.pid = self.wait_ready()
        self.regions = {}

    def wait_ready(self):
        line = self.out.get(what="workload ready")
        m = re.match(r"ready (\d+)", line)
        assert m, f"unexpected workload line {line!r}"
        return int(m.group(1))

    def send(self, cmd):
        self.proc.stdin.write((cmd + "\n").encode())
        self.proc.stdin.flush()

    def wait_exit(self):
        self.proc.wait(timeout=GUARD_S)

    def do(self, cmd):
        """Runs one command; returns (done_monotonic_seconds, extra words)."""
        self.send(cmd)
        if cmd.split()[0] == "exec":
            self.pid = self.wait_ready()
            return time.monotonic(), []
        if cmd.split()[0] == "exit":
            self.wait_exit()
            return time.monotonic(), []
        line = self.out.get(what=f"'{cmd}' to finish")
        if not line.startswith("done "):
            raise AssertionError(f"workload failed {cmd!r}: {line}")
        words = line.split()
        if cmd.startswith("map ") or cmd.startswith("remap "):
            self.regions[cmd.split()[1]] = int(words[2], 16)
        return int(words[1]) / 1e9, words[2:]

    def region(self, name):
        return self.regions[name]

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b"exit\n")
                self.proc.stdin.flush()
            except BrokenPipeError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def json_messages(stderr):
    """mevitop --json's stderr: one JSON object a line ({"error": ...}, {"warning": ...},
    {"notice": ...}, {"info": ...}, {"debug": ...}); any other line fails the test."""
    objs = []
    for line in stderr.splitlines():
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise AssertionError(f"not a JSON line on stderr: {line!r}")
        assert isinstance(obj, dict) and len(obj) == 1, line
        objs.append(obj)
    return objs


def json_error(stderr):
    """With --json an error is exactly one object on stderr, {"error": MESSAGE}: MESSAGE."""
    objs = json_messages(stderr)
    assert len(objs) == 1 and list(objs[0]) == ["error"], stderr
    return objs[0]["error"]


class Mevitop:
    """mevitop --json: the first line means hooks attached and initial scan complete."""

    def __init__(self, args, disable=(), env_extra=None, binary=None):
        env = dict(os.environ, **SAN_ENV)
        if env_extra:
            env.update(env_extra)
        cmd = [binary or MEVITOP, "--json", *args]
        if disable:
            cmd += ["--disable", ",".join(disable)]
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env)
        self.out = Reader(self.proc.stdout, "mevitop")
        self.err = Reader(self.proc.stderr, "mevitop-stderr")
        self.last = None
        try:
            self.first = self.snapshot()
        except (EOFError, AssertionError):
            # No first line in time: the caller never gets this object to stop, so a
            # mevitop still running would be left behind (orphaned, scanning on).
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait(timeout=10)
            raise AssertionError("mevitop did not start: " + "\n".join(self.err.all))

    def snapshot(self, timeout=GUARD_S):
        try:
            line = self.out.get(timeout=timeout, what="a mevitop snapshot")
        except EOFError:
            self.proc.wait(timeout=10)
            self.err.join(timeout=5)
            raise EOFError(f"mevitop exited ({self.proc.returncode}) while a snapshot was "
                           "awaited; its stderr:\n" + self.stderr_text())
        self.last = json.loads(line)
        return self.last

    def snapshot_after(self, t_mono):
        """The first snapshot whose drain started after t_mono (seconds)."""
        deadline = time.monotonic() + GUARD_S
        while True:
            s = self.snapshot(timeout=max(0.1, deadline - time.monotonic()))
            if s["monotonic"] > t_mono:
                return s

    def stop(self, sig=15):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        time.sleep(0)  # let the readers see EOF
        for r in (self.out, self.err):
            r.join(timeout=5)
        return rc

    def stderr_text(self):
        return "\n".join(self.err.all)


# --- the truth: /proc/PID/maps + /proc/PID/pagemap, read by the test itself ---

MAPS_RE = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S{4}) ([0-9a-f]+) \S+ \d+\s*(.*)$")


SCRATCH_NAME = "[anon:mevitop-scratch]"
SCRATCH_MEMFD = "/memfd:mevitop-scratch (deleted)"
SCRATCH_MAGIC = b"MEVITOP-SCRATCH1"


def scratch_named(line):
    """Is this scratch maps line named on every kernel (the memfd) and not writable?"""
    f = line.split(None, 5)
    return len(f) == 6 and f[5].rstrip("\n") == SCRATCH_MEMFD and "w" not in f[1]


def scratch_lines(pid, maps_text):
    """The /proc/PID/maps lines of exact mode's scratch page (user/exact/scratch.h), which
    only a killed mevitop leaves: the memfd's /memfd:mevitop-scratch (deleted), or the
    anonymous fallback named [anon:mevitop-scratch], or (kernels without anonymous VMA
    names) a small anonymous r-xp mapping whose first bytes, read here from
    /proc/PID/mem, are its magic or, if mevitop was killed between mapping and writing
    it, zeros."""
    found = []
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps_text.splitlines(keepends=True):
            if SCRATCH_NAME in line or line.rstrip("\n").endswith(" " + SCRATCH_MEMFD):
                found.append(line)
                continue
            f = line.split()
            if len(f) == 5 and f[1] == "r-xp" and f[2] == "00000000" and f[4] == "0":
                start, end = (int(x, 16) for x in f[0].split("-"))
                try:
                    mem.seek(start)
                    page = mem.read(PAGE)
                except OSError:
                    continue
                # ours, or mapped by a mevitop killed before it could write it
                if end - start <= 4 * PAGE and (page.startswith(SCRATCH_MAGIC) or
                                                page == bytes(PAGE)):
                    found.append(line)
    return found


def widened_interval(mv, tries=400):
    """Snapshots of MV until --max-cpu has stretched the interval (stats.interval_scale
    above 1); the last one.  Fails after TRIES snapshots."""
    for _ in range(tries):
        s = mv.snapshot()
        if s["stats"]["interval_scale"] > 1:
            return s
    raise AssertionError(f"the interval was never widened: {s['stats']}")


def maps_without_scratch(pid):
    """/proc/PID/maps minus the one scratch page a killed exact mode may leave."""
    with open(f"/proc/{pid}/maps") as f:
        text = f.read()
    for line in scratch_lines(pid, text):
        text = text.replace(line, "", 1)
    return text


def read_maps(pid):
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            m = MAPS_RE.match(line.rstrip("\n"))
            if m:
                out.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3),
                            m.group(5)))
    return out


def pagemap_truth(pid):
    """{page_number: 'resident'|'swapped'} for every present/swapped page of every mapping
    (vsyscall excluded: it is not part of the mm)."""
    truth = {}
    fd = os.open(f"/proc/{pid}/pagemap", os.O_RDONLY)
    try:
        for start, end, _perms, path in read_maps(pid):
            if path == "[vsyscall]":
                continue
            first, n = start // PAGE, (end - start) // PAGE
            data = os.pread(fd, n * 8, first * 8)
            for i, (v,) in enumerate(struct.iter_unpack("<Q", data)):
                if v >> 63 & 1:
                    truth[first + i] = "resident"
                elif v >> 62 & 1:
                    truth[first + i] = "swapped"
    finally:
        os.close(fd)
    return truth


def model_pages(proc_entry):
    """{page_number: state} for every page a snapshot's process lists in a run."""
    pages = {}
    for m in proc_entry.get("mappings", []):
        for r in m["runs"]:
            s, e = int(r["start"], 16) // PAGE, int(r["end"], 16) // PAGE
            for pg in range(s, e):
                pages[pg] = r["state"]
    return pages


def find_proc(snapshot, pid):
    for p in snapshot["processes"]:
        if p["pid"] == pid:
            return p
    return None


def diff_pages(model, truth, limit=20):
    """Pages whose state differs, as readable lines (empty when equal)."""
    bad = []
    for pg in sorted(set(model) | set(truth)):
        a, b = model.get(pg, "not_resident"), truth.get(pg, "not_resident")
        if a != b:
            bad.append((pg, a, b))
    lines = [f"page {pg * PAGE:#x}: mevitop says {a}, pagemap says {b}" for pg, a, b in bad[:limit]]
    if len(bad) > limit:
        lines.append(f"... and {len(bad) - limit} more")
    return bad, lines


def assert_matches(snapshot, pid, context=""):
    """The acceptance check: 0 pages may differ from pagemap, read now by the test."""
    entry = find_proc(snapshot, pid)
    assert entry is not None, f"pid {pid} missing from snapshot {context}"
    truth = pagemap_truth(pid)
    model = model_pages(entry)
    bad, lines = diff_pages(model, truth)
    if bad:
        addr = bad[0][0] * PAGE
        for m in entry.get("mappings", []):
            if int(m["start"], 16) <= addr < int(m["end"], 16):
                lines.append("mevitop's mapping: " + " ".join(
                    f"{k}={m[k]}" for k in ("start", "end", "perms", "kind", "path")))
        for s, e, perms, path in read_maps(pid):
            if s <= addr < e:
                lines.append(f"kernel's mapping: {s:#x}-{e:#x} {perms} {path}")
        # Every mapping with pages that differ, not only the first twenty pages' one.
        for s, e, perms, path in read_maps(pid):
            n = sum(1 for pg, _a, _b in bad if s <= pg * PAGE < e)
            if n:
                lines.append(f"  {n} differ in {s:#x}-{e:#x} {perms} {path}")
        lines.append(f"stats: {snapshot['stats']}")
    assert not bad, f"{len(bad)} pages differ {context}:\n" + "\n".join(lines)
    # The totals agree with the runs.
    assert entry["pages"]["resident"] == sum(1 for s in model.values() if s == "resident")
    return entry, truth


# --- kernel state a test sets up and takes down ---

@contextlib.contextmanager
def swap_file(mib):
    """A swap file of `mib` MiB, on while the block runs; named with this pid so that tests
    running at the same time (other worktrees) do not share one."""
    path = f"/var/tmp/mevitop-test-{os.getpid()}.swap"
    subprocess.run(["swapoff", path], capture_output=True)
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={mib}"], check=True,
                   capture_output=True)
    os.chmod(path, 0o600)
    subprocess.run(["mkswap", path], check=True, capture_output=True)
    r = subprocess.run(["swapon", path], capture_output=True, text=True)
    if r.returncode:
        os.unlink(path)
        raise AssertionError("swapon failed (this test needs a filesystem that takes swap "
                             f"files): {r.stderr}")
    try:
        yield path
    finally:
        subprocess.run(["swapoff", path], capture_output=True)
        os.unlink(path)


@contextlib.contextmanager
def memory_cgroup(name, limit_bytes):
    """A memory cgroup (v1 where the memory controller is mounted as v1, else v2) limited to
    limit_bytes; yields a function that moves a pid into it.  Removed at the end (its
    processes must have exited or been moved out by then)."""
    v1 = "/sys/fs/cgroup/memory"
    if os.path.isdir(v1):
        path, limit = os.path.join(v1, name), "memory.limit_in_bytes"
    else:
        path, limit = os.path.join("/sys/fs/cgroup", name), "memory.max"
    os.mkdir(path)
    try:
        with open(os.path.join(path, limit), "w") as f:
            f.write(str(limit_bytes))

        def enter(pid):
            with open(os.path.join(path, "cgroup.procs"), "w") as f:
                f.write(str(pid))
        yield enter
    finally:
        deadline = time.monotonic() + GUARD_S
        while True:
            try:
                os.rmdir(path)
                break
            except OSError:
                # The last process's exit is still uncharging it: retry until it is empty.
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)


def wait_all_threads_stopped(pid):
    """Readiness, not time: every thread of a SIGSTOPped pid seen stopped."""
    deadline = time.monotonic() + GUARD_S
    while True:
        states = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except FileNotFoundError:
                pass            # a thread that ended
        if states and all(s in "tT" for s in states):
            return
        assert time.monotonic() < deadline, f"process {pid} did not stop: {states}"
        time.sleep(0.01)
