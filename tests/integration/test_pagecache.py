"""The page cache, file by file (doc/pagecache.md): files nobody has open, tmpfs, /dev/shm,
memfds, SysV segments, deleted files; --file's page runs.  The truth is read by the test:
mincore(2) on a fresh shared mapping for page sets, cachestat(2) for counts.  Waits are on
mevitop's snapshots (each is a refresh), with the harness's guard as the only timeout."""
import os
import subprocess
import sys
import tempfile
import time

import pytest

import harness
from harness import json_error
from pagecache_truth import (PAGE, cachestat, drop, mincore, read_pages, runs_pages)
from test_errors import run_mevitop

# A directory on the root filesystem (ext4 here): open_by_handle_at works there.
BASE = "/var/tmp"


@pytest.fixture
def tmpdir_ext4():
    d = tempfile.mkdtemp(prefix="mevitop-pc-", dir=BASE)
    yield d
    subprocess.run(["rm", "-rf", d], check=False)


def write_file(path, pages, sync=True):
    with open(path, "wb") as f:
        f.write(os.urandom(PAGE) * pages)
        if sync:
            f.flush()
            os.fsync(f.fileno())


def file_rows(snap):
    return {(f["dev"], f["ino"]): f for f in snap["files"]}


def dev_ino(path):
    st = os.stat(path)
    return f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}", st.st_ino


def row(snap, path, key=None):
    key = key or dev_ino(path)
    return file_rows(snap).get(key)


def wait_for(mv, cond, what):
    """Snapshots until cond(snapshot) is true (the state shows within a refresh or two)."""
    deadline = time.monotonic() + harness.GUARD_S
    snap = mv.last
    while True:
        if snap is not None:
            got = cond(snap)
            if got:
                return snap, got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        snap = mv.snapshot()


def runs_equal(snap, path, want):
    """The row of path if its runs' page set is want."""
    r = row(snap, path)
    return r if r and "runs" in r and set(runs_pages(r["runs"])) == want else None


def whole_system(mevitop, *args, **kw):
    return mevitop(["-i", "200", "--files-top", "0", *args], **kw)


def test_memory_summary(mevitop):
    mv = mevitop(["-n", "2"])
    m = mv.first["memory"]
    info = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":")
            info[k] = int(v.split()[0]) * 1024
    assert m["total"] == info["MemTotal"]
    for k in ("free", "available", "anon", "file", "shmem", "kernel", "swap_total",
              "swap_used", "accounted"):
        assert isinstance(m[k], int) and m[k] >= 0, k
    assert m["file"] == m["cached"] + m["buffers"]
    assert m["accounted"] <= m["total"]


FAMILY = r"""
import mmap, os, signal, sys
m = mmap.mmap(-1, int(sys.argv[1]) << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(0, len(m), 4096):
    m[i] = 1
kids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:        # shares every page of m with the parent (copy on write, unwritten)
        sys.stdin.close()
        signal.pause()
        os._exit(0)
    kids.append(pid)
print(" ".join(map(str, kids)), flush=True)
sys.stdin.read()
for k in kids:
    os.kill(k, 9)
"""


def anon_pages():
    with open("/proc/meminfo") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("AnonPages:"))


def pss_anon(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss_Anon:"):
                return int(line.split()[1]) * 1024
    return 0


# The whole system's anonymous memory: AnonPages less mevitop's own, or (the switch off)
# every process's smaps_rollup.
ANON_SOURCES = [((), "meminfo"), (("--disable", "meminfo_anon"), "rollups")]
ANON_IDS = ["meminfo", "rollups"]


def every_pss_anon(but):
    """Pss_Anon summed over every process but `but`, and how many were read."""
    total = n = 0
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != but:
            try:
                total += pss_anon(int(d))
                n += 1
            except OSError:
                pass            # gone, or a kernel thread
    return total, n


@pytest.mark.parametrize("switch,source", ANON_SOURCES, ids=ANON_IDS)
def test_accounted_anon_is_every_process_once(mevitop, switch, source):
    """The whole system's accounted_anon against the truth read here: every process's
    smaps_rollup but mevitop's, summed (each page divided by its map count: every anonymous
    page once).  Bounds: each rollup is rounded down to the kB, and the box moves between
    the reads (the truth is read on both sides of a snapshot).  A process that exits while
    it is read is in AnonPages until its pages are freed and in no rollup: in a whole-suite
    run one snapshot was 3 MiB off (2026-12-07), so up to three are taken, and one must
    agree.  Without mevitop's own pages taken out, all three are ~20 MiB off."""
    mv = whole_system(mevitop, *switch)
    wait_for(mv, lambda s: s["memory"].get("anon_pending", 0) == 0, "every process read")
    mv.snapshot()               # the readers' own first reads are done
    tries = []
    for _ in range(3):
        lo, n = every_pss_anon(mv.proc.pid)
        snap = mv.snapshot()
        hi, n2 = every_pss_anon(mv.proc.pid)
        m = snap["memory"]
        assert m["anon_source"] == source, m
        assert m["anon_pending"] == 0 and m["anon_unreadable"] == 0, m
        slack = max(n, n2) * 1024 + (2 << 20)
        tries.append((m["accounted_anon"], lo, hi, slack))
        if min(lo, hi) - slack <= m["accounted_anon"] <= max(lo, hi) + slack:
            break
    else:
        raise AssertionError(f"accounted_anon against the rollups' sum, three times: {tries}")


@pytest.mark.parametrize("switch,source", ANON_SOURCES, ids=ANON_IDS)
def test_accounted_adds_up(mevitop, switch, source):
    """accounted = accounted_anon + accounted_files; each anonymous page once, though four
    processes share 256 MiB since fork (counted per process, they were 1 GiB), so
    accounted_anon <= anon (AnonPages) and accounted <= total - free."""
    mib = 256
    fam = subprocess.Popen([sys.executable, "-c", FAMILY, str(mib)], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    try:
        kids = [int(k) for k in fam.stdout.readline().split()]
        fam_pss = sum(pss_anon(p) for p in [fam.pid, *kids])
        # The truth: the kernel divides the shared pages among the four.
        assert abs(fam_pss - (mib << 20)) < 16 << 20, fam_pss
        before = anon_pages()
        mv = mevitop(["-n", "1", *switch])
        # The first snapshot: the largest processes are read first (processes not read yet
        # stand in with their resident counts; anon_pending says how many).
        snap = mv.first
        m = snap["memory"]
        assert m["anon_source"] == source, m
        assert m["accounted"] == m["accounted_anon"] + m["accounted_files"]
        files = sum(f["pages"]["cached"] for f in snap["files"]) + \
            snap["files_omitted"]["pages"]["cached"]
        assert m["accounted_files"] == files * PAGE
        # Other work on the box moves anon between the reads: 64 MiB of slack (a quarter of
        # what counting the family per process would add), plus twice what AnonPages moved
        # over the run.
        slack = (64 << 20) + 2 * abs(anon_pages() - before)
        assert m["accounted_anon"] <= m["anon"] + slack, m
        assert m["accounted"] <= m["anon"] + m["file"] + slack, m
        assert m["accounted"] <= m["total"] - m["free"] + slack, m
        assert m["accounted_anon"] >= mib << 20, m   # the family is in it, once
    finally:
        fam.stdin.close()
        fam.wait(timeout=10)


COW_PAIR = r"""
import mmap, os, sys
m = mmap.mmap(-1, int(sys.argv[1]) << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(0, len(m), 4096):
    m[i] = 1
r, w = os.pipe()
pid = os.fork()
if pid == 0:            # shares every page of m with the parent until it writes them
    os.close(w)
    os.read(r, 1)
    for i in range(0, len(m), 4096):
        m[i] = 2        # copy on write: a page of its own each, no resident count moves
    print("written", flush=True)
    sys.stdin.read()
    os._exit(0)
print(pid, flush=True)
sys.stdin.readline()
os.write(w, b"x")
sys.stdin.read()
os.kill(pid, 9)
"""


@pytest.mark.parametrize("switch,source", ANON_SOURCES, ids=ANON_IDS)
def test_accounted_anon_follows_copy_on_write(mevitop, switch, source):
    """A forked pair shares 64 MiB until the child writes every page: Pss_Anon of the pair
    grows by 64 MiB (each has a copy), and neither's resident count moves.  The summary's
    accounted_anon follows within 10 refreshes (the child faulted, so its family is read
    again, within the reads' 2 ms budget a refresh), not at the periodic re-read 30 s later.  The truth is the pair's smaps_rollup."""
    mib = 64
    pair = subprocess.Popen([sys.executable, "-c", COW_PAIR, str(mib)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        kid = int(pair.stdout.readline())
        procs = [pair.pid, kid]
        mv = whole_system(mevitop, *switch)
        wait_for(mv, lambda s: s["memory"].get("anon_pending", 0) == 0, "every process read")
        assert mv.snapshot()["memory"]["anon_source"] == source
        for _ in range(3):          # settled: the readers' own first reads are done
            mv.snapshot()
        before_truth = sum(pss_anon(p) for p in procs)
        anon_before = anon_pages()
        before = mv.snapshot()["memory"]["accounted_anon"]
        pair.stdin.write("go\n")
        pair.stdin.flush()
        assert pair.stdout.readline().strip() == "written"
        t = time.monotonic()
        grew_truth = sum(pss_anon(p) for p in procs) - before_truth
        assert abs(grew_truth - (mib << 20)) < 4 << 20, grew_truth
        snap = mv.snapshot_after(t)
        for _ in range(9):          # 2 s at -i 200; the periodic re-read would be 30 s
            if snap["memory"]["accounted_anon"] - before >= grew_truth - (8 << 20):
                break
            snap = mv.snapshot()
        grew = snap["memory"]["accounted_anon"] - before
        # Others on the box move anonymous memory meanwhile: 8 MiB of slack below; above,
        # also what AnonPages moved beyond the pair's own growth (a fresh machine's suite
        # allocated 37 MiB elsewhere during one run).
        others = max(0, anon_pages() - anon_before - grew_truth)
        assert grew_truth - (8 << 20) <= grew <= grew_truth + (8 << 20) + others, \
            (grew, grew_truth, others)
    finally:
        pair.stdin.close()
        pair.wait(timeout=10)


def test_closed_file_cached_before_start(mevitop, tmpdir_ext4):
    """A file read and closed before mevitop started is in the first snapshot, with its count
    equal to cachestat's and mincore's."""
    path = os.path.join(tmpdir_ext4, "closed.dat")
    write_file(path, 64)
    drop(path)
    known = [0, 1, 2, 3, 10, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29]
    read_pages(path, known)
    truth = mincore(path)
    assert truth >= set(known)
    mv = whole_system(mevitop)
    r = row(mv.first, path)
    assert r is not None, "the closed file is not in the first snapshot"
    assert r["path"] == path and r["kind"] == "regular" and r["name_source"] == "path"
    assert r["pages"]["cached"] == len(mincore(path)) == cachestat(path)["cached"]
    assert r["size"] == 64 * PAGE and r["mapped_by"] == []


@pytest.fixture
def no_expiry():
    """Dirty pages stay dirty for the test: the flusher writes back only what is older than
    dirty_expire_centisecs (raised to an hour, then restored)."""
    knob = "/proc/sys/vm/dirty_expire_centisecs"
    with open(knob) as f:
        old = f.read().strip()
    with open(knob, "w") as f:
        f.write("360000")
    yield
    with open(knob, "w") as f:
        f.write(old)


def test_dirty_before_start_unlisted(mevitop, tmpdir_ext4, no_expiry):
    """A file written before mevitop started (no fsync) and outside the 64 largest rows, whose
    counts later refreshes keep exact: its dirty and writeback counts in the first snapshot
    equal cachestat's; a clean one beside it reads 0 dirty."""
    for i in range(70):     # 70 clean files larger than the dirty one: it is not in the top
        write_file(os.path.join(tmpdir_ext4, f"big{i:02d}"), 64)
    clean = os.path.join(tmpdir_ext4, "clean.dat")
    write_file(clean, 8)
    path = os.path.join(tmpdir_ext4, "dirty.dat")
    for _ in range(3):      # a sync by someone else meanwhile: again
        write_file(path, 8, sync=False)
        before = cachestat(path)
        assert before["dirty"] == 8, before
        mv = whole_system(mevitop, "-n", "1")
        after = cachestat(path)
        if after == before:
            break
        mv.stop()
    else:
        pytest.skip("the dirty pages were written back under every try (a sync elsewhere)")
    files = mv.first["files"]
    at = [i for i, f in enumerate(files) if (f["dev"], f["ino"]) == dev_ino(path)]
    assert at and at[0] >= 64, at       # not among the rows counted for being largest
    r = files[at[0]]["pages"]
    assert (r["cached"], r["dirty"], r["writeback"]) == \
        (after["cached"], after["dirty"], after["writeback"]), (r, after)
    c = row(mv.first, clean)
    truth = cachestat(clean)
    assert c and (c["pages"]["dirty"], c["pages"]["writeback"]) == \
        (truth["dirty"], truth["writeback"]) == (0, 0), (c, truth)


# files_rows.c's DIRTY_EVERY: ticks between counts of rows last seen dirty.
DIRTY_EVERY = 5


@pytest.mark.parametrize("disable", [(), ("dirty_tp",)], ids=["dirtied-hook", "no-dirty_tp"])
def test_dirty_follows_overwrite_and_writeback(mevitop, tmpdir_ext4, no_expiry, disable):
    """A clean cached file overwritten in place (no filemap event: its pages are cached) and
    then written back (no event either).  With the dirtied hook, a row outside the 64 largest
    shows its dirty pages in the first refresh after the write; with --disable dirty_tp only
    the largest rows are recounted, every DIRTY_EVERY refreshes, so the file is made one of
    them.  Either way, written back, the row reads clean within DIRTY_EVERY refreshes.  The
    truth is cachestat(2) after each step."""
    hooked = not disable
    if hooked:
        for i in range(70):     # 70 clean files larger than it: not among the largest
            write_file(os.path.join(tmpdir_ext4, f"big{i:02d}"), 64)
    path = os.path.join(tmpdir_ext4, "over.dat")
    pages = 8 if hooked else 16384     # 64 MiB: among the 64 largest rows on this box
    write_file(path, pages)
    read_pages(path, range(pages))
    key = dev_ino(path)
    mv = whole_system(mevitop, disable=disable)
    clean = cachestat(path)
    assert (clean["cached"], clean["dirty"]) == (pages, 0), clean
    wait_for(mv, lambda s: (r := row(s, path, key)) and r["pages"]["cached"] == pages and
             r["pages"]["dirty"] == 0, "the clean file")
    fd = os.open(path, os.O_WRONLY)
    try:
        for p in (1, 3, 6):
            os.pwrite(fd, b"x" * 100, p * PAGE)
        t = time.monotonic()
        dirty = cachestat(path)
        # 3 pages, or the large folios holding them (a write dirties its whole folio)
        assert dirty["cached"] == pages and 3 <= dirty["dirty"] <= pages, dirty
        snap = mv.snapshot_after(t)
        if not hooked:
            for _ in range(DIRTY_EVERY - 1):
                if row(snap, path, key)["pages"]["dirty"]:
                    break
                snap = mv.snapshot()
        files = snap["files"]
        at = [i for i, f in enumerate(files) if (f["dev"], f["ino"]) == key]
        assert at and (at[0] >= 64) == hooked, at
        r = files[at[0]]["pages"]
        assert (r["cached"], r["dirty"], r["writeback"]) == \
            (dirty["cached"], dirty["dirty"], dirty["writeback"]), (r, dirty)
        os.fdatasync(fd)
    finally:
        os.close(fd)
    t = time.monotonic()
    after = cachestat(path)
    assert (after["cached"], after["dirty"], after["writeback"]) == (pages, 0, 0), after
    snap = mv.snapshot_after(t)
    for _ in range(DIRTY_EVERY - 1):
        if not row(snap, path, key)["pages"]["dirty"]:
            break
        snap = mv.snapshot()
    r = row(snap, path, key)["pages"]
    assert (r["cached"], r["dirty"], r["writeback"]) == (pages, 0, 0), r


def test_files_sum_to_cached(mevitop):
    """Every file's cached pages plus the omitted ones: Cached + Buffers (within 3%)."""
    mv = mevitop(["-n", "1"])
    s = mv.first
    total = sum(f["pages"]["cached"] for f in s["files"]) + \
        s["files_omitted"]["pages"]["cached"]
    want = (s["memory"]["cached"] + s["memory"]["buffers"]) // PAGE
    assert abs(total - want) <= 0.03 * want, (total, want)


def test_watched_runs_follow_mincore(mevitop, tmpdir_ext4):
    """--file: runs equal mincore's set after reads, a DONTNEED range, dirty writes,
    truncate; dirty pages in dirty runs, counted as cachestat counts them."""
    path = os.path.join(tmpdir_ext4, "watched.dat")
    write_file(path, 100)
    drop(path)
    read_pages(path, range(0, 40))
    mv = mevitop(["-i", "200", "--file", path])

    def matches(snap):
        r = row(snap, path)
        if not r or "runs" not in r:
            return None
        got = runs_pages(r["runs"])
        return r if set(got) == mincore(path) else None

    _, r = wait_for(mv, matches, "the runs of the 40 pages read")
    assert r["watched"] and r["name_source"] == "file_arg"
    # Evict a range in the middle: gone from the runs within a refresh (the kernel keeps
    # the large folios that straddle the range's ends: mincore says which).
    before = mincore(path)
    drop(path, 10 * PAGE, 10 * PAGE)
    after = mincore(path)
    assert after < before
    _, r = wait_for(mv, lambda s: runs_equal(s, path, after), "the DONTNEED range gone")
    # Dirty pages: written, not synced.
    fd = os.open(path, os.O_WRONLY)
    os.pwrite(fd, b"d" * (5 * PAGE), 50 * PAGE)
    os.close(fd)

    def dirty_seen(snap):
        r = matches(snap)
        if not r:
            return None
        states = runs_pages(r["runs"])
        dirty = {p for p, st in states.items() if st in ("dirty", "writeback")}
        cs = cachestat(path)
        if dirty and len(dirty) == cs["dirty"] + cs["writeback"]:
            return r
        return None
    _, r = wait_for(mv, dirty_seen, "the dirty pages in dirty runs")
    assert set(range(50, 55)) <= {p for p, st in runs_pages(r["runs"]).items()
                                  if st in ("dirty", "writeback")} or cachestat(path)["dirty"] == 0
    os.truncate(path, 30 * PAGE)
    after = mincore(path)
    assert max(after) < 30
    _, r = wait_for(mv, lambda s: runs_equal(s, path, after),
                    "the pages past the truncation gone")
    assert r["size"] == 30 * PAGE
    assert mv.stop() == 0


def test_live_add_and_evict(mevitop, tmpdir_ext4):
    """A file read after mevitop started shows in a later refresh; evicted, it leaves."""
    mv = whole_system(mevitop)
    path = os.path.join(tmpdir_ext4, "live.dat")
    write_file(path, 32)
    key = dev_ino(path)
    drop(path)
    read_pages(path, range(8))
    want = cachestat(path)["cached"]
    wait_for(mv, lambda s: (r := row(s, path, key)) and r["pages"]["cached"] == want,
             "the new file's 8 pages")
    drop(path)
    wait_for(mv, lambda s: row(s, path, key) is None, "the evicted file gone")


def test_rename_and_unlink_while_mapped(mevitop, tmpdir_ext4):
    """Renamed: listed by its new path.  Unlinked while a process maps it: listed as deleted,
    mapped by that process, with the count the mapping's owner sees."""
    path = os.path.join(tmpdir_ext4, "old.dat")
    write_file(path, 16)
    new = os.path.join(tmpdir_ext4, "new.dat")
    os.rename(path, new)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import mmap,os,sys\n"
         f"f=open({new!r},'rb'); m=mmap.mmap(f.fileno(),0,prot=mmap.PROT_READ)\n"
         "s=sum(m[i*4096] for i in range(16)); os.unlink(sys.argv[1])\n"
         "print('ready', flush=True); sys.stdin.read()", new],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        mv = whole_system(mevitop)
        fd = os.open(f"/proc/{holder.pid}/map_files", os.O_RDONLY | os.O_DIRECTORY)
        os.close(fd)

        def deleted(snap):
            for f in snap["files"]:
                if f["path"] == new and f["kind"] == "deleted" and holder.pid in f["mapped_by"]:
                    return f
            return None
        _, r = wait_for(mv, deleted, "the unlinked mapped file as deleted")
        assert r["pages"]["cached"] == 16
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)


HOLDER = r"""
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shm_path, tmpfs_path = sys.argv[1], sys.argv[2]
fd = os.memfd_create("mevitop-test-memfd")
os.write(fd, b"m" * (5 * 4096))
with open(shm_path, "wb") as f:
    f.write(b"s" * (7 * 4096))
with open(tmpfs_path, "wb") as f:
    f.write(b"t" * (11 * 4096))
shmid = libc.shmget(0, 4 * 4096, 0o1600)
addr = libc.shmat(shmid, None, 0)
ctypes.memset(addr, 1, 3 * 4096)
libc.shmctl(shmid, 0, None)  # IPC_RMID: gone once detached, even if the test dies
print("ready", fd, shmid, flush=True)
sys.stdin.read()
"""


def test_shmem_kinds(mevitop, tmpdir_ext4):
    """A /dev/shm file, a file on a tmpfs of our own, a memfd held by a sleeping process and a
    SysV segment: each listed by its best name with the count the kernel gives."""
    mnt = os.path.join(tmpdir_ext4, "tmpfs")
    os.mkdir(mnt)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "mevitop-test", mnt], check=True)
    shm_path = f"/dev/shm/mevitop-test-{os.getpid()}"
    tmpfs_path = os.path.join(mnt, "t.dat")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, shm_path, tmpfs_path],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        _, fd, shmid = holder.stdout.readline().split()
        memfd = f"/proc/{holder.pid}/fd/{fd}"
        mv = whole_system(mevitop)

        def all_there(snap):
            rows = file_rows(snap)
            got = {}
            for name, path in (("shm", shm_path), ("tmpfs", tmpfs_path), ("memfd", memfd)):
                got[name] = rows.get(dev_ino(path))
            got["sysv"] = next((f for f in snap["files"] if f["kind"] == "sysv" and
                                f"shmid={shmid}" in f["path"]), None)
            # Who maps a file is known once that process's maps are read, which can be a
            # refresh after the row itself (the shmem walk) is listed: wait for both.
            if got["sysv"] and holder.pid not in got["sysv"]["mapped_by"]:
                return None
            return got if all(got.values()) else None
        _, got = wait_for(mv, all_there, "the shmem files")
        assert got["shm"]["path"] == shm_path and got["shm"]["kind"] == "tmpfs"
        assert got["shm"]["pages"]["cached"] == cachestat(shm_path)["cached"] == 7
        assert got["tmpfs"]["path"] == tmpfs_path and got["tmpfs"]["pages"]["cached"] == 11
        assert got["memfd"]["path"] == "memfd:mevitop-test-memfd"
        assert got["memfd"]["kind"] == "memfd"
        assert got["memfd"]["pages"]["cached"] == cachestat(memfd)["cached"] == 5
        assert got["sysv"]["pages"]["cached"] == 3 and holder.pid in got["sysv"]["mapped_by"]
        # A tmpfs change fires no tracepoint: the re-walk of shmem superblocks shows it.
        with open(shm_path, "ab") as f:
            f.write(b"x" * (3 * PAGE))
        wait_for(mv, lambda s: (r := row(s, shm_path)) and r["pages"]["cached"] == 10,
                 "the /dev/shm file grown by 3 pages")
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
        for p in (shm_path,):
            if os.path.exists(p):
                os.unlink(p)
        subprocess.run(["umount", mnt], check=False)


def cut_env(after, first, count):
    """Walks first .. first+count-1 cut every superblock after `after` inodes with pages
    (user/kernel/fcache_bpf.c's test switch): what an inode leaving the list under the walk's
    cursor does, which no test can time."""
    return {"MEVITOP_TEST_WALK_CUT": f"{after},{first},{count}"}


def test_cut_start_walk_is_walked_again(mevitop, tmpdir_ext4):
    """The start walk is cut short: the file it skipped (cached before the start, closed,
    never touched again, so no tracepoint or process will ever name it) is listed with its
    exact pages by the next full walk, a refresh later."""
    old, new = (os.path.join(tmpdir_ext4, n) for n in ("old.dat", "new.dat"))
    write_file(old, 9)
    write_file(new, 2)   # newer: ahead of old on the superblock's inode list
    mv = whole_system(mevitop, env_extra=cut_env(1, 1, 1))
    assert mv.first["files_stats"]["walk_cuts"] > 0, mv.first["files_stats"]
    assert row(mv.first, old) is None, "the start walk was not cut before the old file"
    for _ in range(2):       # the re-walk is the next refresh's walk
        r = row(mv.snapshot(), old)
        if r:
            break
    assert r is not None, "the file a cut walk skipped was never walked again"
    assert r["pages"]["cached"] == len(mincore(old)) == 9


def test_cut_walks_keep_rows(mevitop, tmpdir_ext4):
    """Every refresh re-walks tmpfs (its adds fire no tracepoint) and takes an unseen row for
    gone; a cut walk must not: files behind the cut keep their pages."""
    mnt = os.path.join(tmpdir_ext4, "tmpfs")
    os.mkdir(mnt)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "mevitop-test", mnt], check=True)
    try:
        old, new = (os.path.join(mnt, n) for n in ("old.dat", "new.dat"))
        write_file(old, 11, sync=False)
        write_file(new, 3, sync=False)
        mv = whole_system(mevitop, env_extra=cut_env(1, 2, 3))
        assert row(mv.first, old)["pages"]["cached"] == 11
        cuts = []
        for _ in range(4):   # walks 2-4 are cut; the fourth snapshot's is whole again
            snap = mv.snapshot()
            cuts.append(snap["files_stats"]["walk_cuts"])
            r = row(snap, old)
            assert r and r["pages"]["cached"] == len(mincore(old)) == 11, (r, cuts)
        assert cuts[0] > 0, "no walk was cut"
    finally:
        subprocess.run(["umount", mnt], check=False)


def test_lost_deltas_and_a_cut_rewalk(mevitop, tmpdir_ext4):
    """More files change in a refresh than the delta table holds (16 here): the loss is
    counted and a full walk is the truth, so a file evicted meanwhile leaves the list and 200
    new ones get their exact counts.  Those re-walks are cut short: a file behind the cut keeps
    its pages in every snapshot, and the first whole walk after the cut ones heals the rest."""
    old, gone = (os.path.join(tmpdir_ext4, n) for n in ("old.dat", "gone.dat"))
    write_file(old, 9)
    write_file(gone, 5)
    env = dict(cut_env(1, 2, 3), MEVITOP_TEST_FC_DELTAS="16")
    env["MEVITOP_TEST_WALK_CUT"] += ",full"
    mv = whole_system(mevitop, env_extra=env)
    assert row(mv.first, gone)["pages"]["cached"] == 5
    drop(gone)      # first: its count is in the table, the new files' do not all fit
    new = [os.path.join(tmpdir_ext4, f"n{i}.dat") for i in range(200)]
    for i, path in enumerate(new):
        write_file(path, 1 + i % 3, sync=False)
    want = {dev_ino(p): len(mincore(p)) for p in new}
    for _ in range(12):
        snap = mv.snapshot()
        r = row(snap, old)
        assert r and r["pages"]["cached"] == 9, ("the file behind the cut", r,
                                                 snap["files_stats"])
        rows = file_rows(snap)
        if (snap["files_stats"]["rewalks"] and row(snap, gone) is None and
                all(rows.get(k, {}).get("pages", {}).get("cached") == n
                    for k, n in want.items())):
            break
    else:
        assert False, ("not healed", snap["files_stats"], row(snap, gone),
                       sum(rows.get(k, {}).get("pages", {}).get("cached") == n
                           for k, n in want.items()))
    assert snap["files_stats"]["walk_cuts"] > 0


def test_many_small_files(mevitop, tmpdir_ext4):
    """20,000 one-page files read and closed: every one listed with its one page in the first
    snapshot; names come largest first, within the first refreshes."""
    d = os.path.join(tmpdir_ext4, "many")
    os.mkdir(d)
    paths = []
    for i in range(20000):
        p = os.path.join(d, f"f{i:05d}")
        with open(p, "wb") as f:
            f.write(b"x" * 100)
        paths.append(p)
    mv = whole_system(mevitop)
    rows = file_rows(mv.first)
    missing = [p for p in paths if dev_ino(p) not in rows]
    assert not missing, f"{len(missing)} of 20000 missing, e.g. {missing[:3]}"
    for p in paths[:200]:
        r = rows[dev_ino(p)]
        assert r["pages"]["cached"] == cachestat(p)["cached"] == 1
    keys = {dev_ino(p): p for p in paths}

    def all_named(s):
        mine = [f for f in s["files"] if (f["dev"], f["ino"]) in keys]
        return not s["files_stats"]["queued_names"] and \
            all(f["path"] == keys[(f["dev"], f["ino"])] for f in mine) and mine
    _, mine = wait_for(mv, all_named, "every one of the 20,000 named")
    # A shared box's reclaim may take some meanwhile: those have no page left.
    listed = {(f["dev"], f["ino"]) for f in mine}
    assert all(cachestat(p)["cached"] == 0 for k, p in keys.items() if k not in listed)


def test_fallback_lists_mapped_files(mevitop, tmpdir_ext4):
    """--disable fcache_bpf: files from processes' fds and maps, and --file's."""
    path = os.path.join(tmpdir_ext4, "fb.dat")
    write_file(path, 8)
    mv = mevitop(["-n", "1", "--files-top", "0", "--file", path], disable=("fcache_bpf",))
    assert mv.first["files_stats"]["source"] == "proc"
    r = row(mv.first, path)
    assert r and set(runs_pages(r["runs"])) == mincore(path)


# root reads any file: without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH it cannot read one
# that is nobody's with mode 000 (the hooks and /proc need neither).
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
          "--inh-caps=-dac_override,-dac_read_search"]


@pytest.mark.parametrize("kind", ["missing", "directory", "fifo", "socket", "unreadable"])
def test_bad_file(kind, tmpdir_ext4):
    path = os.path.join(tmpdir_ext4, kind)
    if kind == "unreadable":
        write_file(path, 2)
        os.chown(path, 65534, 65534)
        os.chmod(path, 0)
    elif kind == "directory":
        os.mkdir(path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        import socket
        s = socket.socket(socket.AF_UNIX)
        s.bind(path)
    want = {"missing": "No such file or directory", "directory": "it is a directory",
            "fifo": "it is a FIFO", "socket": "No such device or address",
            "unreadable": "Permission denied"}[kind]
    cmd = ["--json", "-n", "1", "--file", path]
    if kind == "unreadable":
        p = subprocess.run([*NO_DAC, harness.MEVITOP, *cmd], capture_output=True, text=True,
                           timeout=30, env=dict(os.environ, **harness.SAN_ENV))
        rc, out, err = p.returncode, p.stdout, p.stderr
    else:
        rc, out, err = run_mevitop(cmd)
    assert rc == 1 and out == ""
    msg = json_error(err)
    assert msg.startswith(f"failed to watch {path}: ") and want in msg, msg


def test_file_vanishes_while_watched(mevitop, tmpdir_ext4):
    path = os.path.join(tmpdir_ext4, "vanish.dat")
    write_file(path, 4)
    mv = mevitop(["-i", "200", "--file", path])
    os.unlink(path)
    deadline = time.monotonic() + harness.GUARD_S
    while not any("vanished" in line for line in mv.err.all):
        assert time.monotonic() < deadline, "no word about the vanished file"
        mv.snapshot()
    lines = [line for line in mv.err.all if "vanished" in line]
    assert len(lines) == 1 and path in lines[0]
    assert mv.proc.poll() is None  # still watching through its descriptor
    assert mv.stop() == 0


def test_metrics_memory_and_files(mevitop, tmpdir_ext4):
    """OpenMetrics: the memory summary, and the largest cached files bounded by
    --metrics-files, the one we cached among them with its exact bytes; promtool lints it."""
    from test_metrics import free_port, get, samples, value
    path = os.path.join(tmpdir_ext4, "metrics.dat")
    write_file(path, 64 * 1024)   # 256 MiB: among the largest files of any test box
    port = free_port()
    mv = mevitop(["--listen", f"127.0.0.1:{port}", "-i", "250", "--metrics-files", "5"])
    mv.snapshot()
    # Names come a budget a refresh (the largest first): on a box busy making files the
    # file may still be nameless in the first snapshot.  The scrape after it is named.
    deadline = time.monotonic() + harness.GUARD_S
    while not any(f.get("path") == path for f in mv.last.get("files", [])):
        assert time.monotonic() < deadline, "the file never named in the snapshots"
        mv.snapshot()
    _, _, text = get(port)
    assert value(text, "mevitop_memory_bytes", kind="total") == mv.last["memory"]["total"]
    for kind in ("free", "available", "anon", "file", "shmem", "kernel", "swap_total",
                 "swap_used", "accounted"):
        assert samples(text, "mevitop_memory_bytes", kind=kind), kind
    cached = samples(text, "mevitop_file_cached_bytes")
    assert len(cached) == 5 and len(samples(text, "mevitop_file_dirty_bytes")) == 5
    dev, ino = dev_ino(path)
    assert value(text, "mevitop_file_cached_bytes", path=path, dev=dev, ino=str(ino)) == \
        cachestat(path)["cached"] * PAGE
    lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                          text=True)
    assert lint.returncode == 0, lint.stderr + lint.stdout
