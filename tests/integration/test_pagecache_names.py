"""The page cache's rows by the kernel's own names and memory cgroups (doc/pagecache.md,
"Names" and "Memory cgroups"): SysV segments and shared anonymous mappings, the block device's
own cache, files on filesystems with no handle layout (ramfs, xfs) and on one mounted in another
mount namespace only, a file read through an overlay, drop_caches, the memory cgroup of a file
read inside a child cgroup.  The truth is read by the test (mincore, /proc/sysvipc/shm, sysfs,
/proc/PID/cgroup); waits are on mevitop's snapshots."""
import ctypes
import html
import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

import harness
from pagecache_truth import PAGE, cachestat, drop, mincore, read_pages
from test_pagecache import dev_ino, file_rows, row, wait_for, whole_system, write_file

BASE = "/var/tmp"


@pytest.fixture
def tmpdir_ext4():
    d = tempfile.mkdtemp(prefix="mevitop-pn-", dir=BASE)
    yield d
    with open("/proc/self/mounts") as f:
        under = [line.split()[1] for line in f if line.split()[1].startswith(d + "/")]
    for m in sorted(under, reverse=True):   # the overlay before the tmpfs it uses
        subprocess.run(["umount", m], capture_output=True)
    subprocess.run(["rm", "-rf", d], check=False)


def mount(fstype, where, opts="size=16m"):
    os.makedirs(where, exist_ok=True)
    subprocess.run(["mount", "-t", fstype, "-o", opts, f"mevitop-{fstype}", where], check=True)


SHM_HOLDER = r"""
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
key = int(sys.argv[1], 16)
# A SysV segment of 4 pages, 3 written, then detached: nobody maps it, it stays.
shmid = libc.shmget(key, 4 * 4096, 0o1600)
addr = libc.shmat(shmid, None, 0)
ctypes.memset(addr, 1, 3 * 4096)
libc.shmdt(ctypes.c_void_p(addr))
# A shared anonymous mapping of 6 pages, 5 written.
a = libc.mmap(None, 6 * 4096, 3, mmap.MAP_SHARED | mmap.MAP_ANONYMOUS, -1, 0)
ctypes.memset(a, 2, 5 * 4096)
vec = ctypes.create_string_buffer(6)
libc.mincore(ctypes.c_void_p(a), 6 * 4096, vec)
resident = sum(b & 1 for b in vec.raw)
with open("/proc/self/maps") as f:
    line = next(l for l in f if int(l.split("-")[0], 16) == a)
dev, ino = line.split()[3], int(line.split()[4])
print(shmid, dev, ino, resident, flush=True)
sys.stdin.read()
"""


def sysv_rss_pages(shmid):
    """/proc/sysvipc/shm's rss column (bytes) of the segment, in pages."""
    with open("/proc/sysvipc/shm") as f:
        head = f.readline().split()
        for line in f:
            v = dict(zip(head, line.split()))
            if int(v["shmid"]) == shmid:
                return int(v["rss"]) // PAGE
    return None


def test_sysv_and_anon_shmem(mevitop):
    """A detached SysV segment by its key and shmid, a MAP_SHARED|MAP_ANONYMOUS region as
    [anon shmem]: each with its own size and the resident count the kernel gives."""
    key = 0x6d650000 | (os.getpid() & 0xffff)
    holder = subprocess.Popen([sys.executable, "-c", SHM_HOLDER, f"{key:x}"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    shmid = None
    try:
        shmid, dev, ino, resident = holder.stdout.readline().split()
        shmid, ino, resident = int(shmid), int(ino), int(resident)
        major, minor = (int(x, 16) for x in dev.split(":"))
        shm_dev = f"{major}:{minor}"
        assert resident == 5 and sysv_rss_pages(shmid) == 3
        mv = whole_system(mevitop)

        def both(snap):
            rows = file_rows(snap)
            got = (rows.get((shm_dev, shmid)), rows.get((shm_dev, ino)))
            return got if all(got) and got[1]["mapped_by"] else None
        _, (sysv, anon) = wait_for(mv, both, "the SysV and shared anonymous rows")
        assert sysv["path"] == f"SYSV key=0x{key:08x} shmid={shmid}"
        assert sysv["kind"] == "sysv" and sysv["name_source"] == "sysvipc"
        assert sysv["size"] == 4 * PAGE and sysv["mapped_by"] == []
        assert sysv["pages"]["cached"] == sysv_rss_pages(shmid)
        assert anon["path"] == "[anon shmem]" and anon["kind"] == "anon_shmem"
        assert anon["size"] == 6 * PAGE and anon["pages"]["cached"] == resident
        assert holder.pid in anon["mapped_by"]
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
        if shmid is not None:
            ctypes.CDLL(None).shmctl(shmid, 0, None)  # IPC_RMID


def test_block_device_row(mevitop):
    """The block device's own cache (Buffers) is named by its /dev node, with the device's
    size."""
    mv = mevitop(["-n", "1", "--files-top", "0"])
    blocks = [f for f in mv.first["files"] if f["kind"] == "block"]
    assert blocks, "no block device row"
    for f in blocks:
        maj, mnr = f["ino"] >> 20, f["ino"] & 0xfffff
        st = os.stat(f["path"])
        assert (os.major(st.st_rdev), os.minor(st.st_rdev)) == (maj, mnr), f
        with open(f"/sys/dev/block/{maj}:{mnr}/size") as s:
            assert f["size"] == int(s.read()) * 512
        assert f["name_source"] == "kernel"
    assert sum(f["pages"]["cached"] for f in blocks) * PAGE <= \
        mv.first["memory"]["buffers"] + (16 << 20)


def test_first_snapshot_names_what_it_lists(mevitop):
    """--json --files-top N: the first snapshot asks the kernel about the 2N largest rows
    only (doc/pagecache.md, "Names"), every row it lists named, the other rows over the
    next refreshes; with --files-top 0 (every row listed) every row is asked about first."""
    mv = mevitop(["-i", "200", "--files-top", "3"])
    first = mv.first
    rows = len(first["files"]) + first["files_omitted"]["files"]
    assert rows > 6, "the box's page cache holds too few files for this test"
    assert 0 < first["files_stats"]["kinfo"] <= 6, first["files_stats"]
    for f in first["files"]:
        assert f["name_source"] != "none" and f["kind"], f
    wait_for(mv, lambda s: s["files_stats"]["kinfo"] > 6, "the other rows' names")
    everyone = mevitop(["-n", "1", "--files-top", "0"]).first
    assert everyone["files_stats"]["kinfo"] > 6
    listed = {(f["dev"], f["ino"]): f for f in everyone["files"]}
    for f in first["files"]:
        g = listed.get((f["dev"], f["ino"]))
        if g:       # the same row named the same way either way
            assert (g["name_source"], g["kind"], g.get("path")) == \
                (f["name_source"], f["kind"], f.get("path")), (f, g)


def test_paths_on_other_filesystems(mevitop, tmpdir_ext4):
    """ramfs (no file handles) is named by the dentry walk, as a path that opens the file; a
    ramfs mounted only in another mount namespace by its path within that filesystem."""
    mnt = os.path.join(tmpdir_ext4, "ramfs")
    mount("ramfs", mnt, "mode=755")
    path = os.path.join(mnt, "sub", "r.dat")
    os.mkdir(os.path.dirname(path))
    write_file(path, 9, sync=False)
    hidden = subprocess.Popen(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         "mkdir -p /run/mevitop-hidden-$$ && mount -t ramfs x /run/mevitop-hidden-$$ && "
         "mkdir /run/mevitop-hidden-$$/d && head -c 12288 /dev/zero > /run/mevitop-hidden-$$/d/h.dat "
         "&& stat -c '%d %i' /run/mevitop-hidden-$$/d/h.dat && read x; "
         "umount /run/mevitop-hidden-$$; rmdir /run/mevitop-hidden-$$"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        d, ino = (int(x) for x in hidden.stdout.readline().split())
        hkey = (f"{os.major(d)}:{os.minor(d)}", ino)
        mv = whole_system(mevitop)
        snap, got = wait_for(mv, lambda s: (r := row(s, path)) and (h := row(s, None, hkey)) and
                             (r, h), "the ramfs rows")
        r, h = got
        assert r["path"] == path and r["name_source"] == "path" and r["pages"]["cached"] == 9
        assert h["path"] == "/d/h.dat" and h["name_source"] == "kernel"
        assert "not mounted" in h["why"] and h["pages"]["cached"] == 3
    finally:
        hidden.stdin.close()
        hidden.wait(timeout=10)


def test_xfs_file_named(mevitop, tmpdir_ext4):
    """xfs (a loop image; no handle layout of ours) : a closed file is named by the dentry walk,
    as the path that opens it, with mincore's count."""
    img, mnt = os.path.join(tmpdir_ext4, "xfs.img"), os.path.join(tmpdir_ext4, "xfs")
    with open(img, "wb") as f:
        f.truncate(320 << 20)       # sparse: mkfs.xfs wants >= 300 MiB
    subprocess.run(["mkfs.xfs", "-q", img], check=True)
    os.mkdir(mnt)
    subprocess.run(["mount", "-o", "loop", img, mnt], check=True)
    path = os.path.join(mnt, "deep", "er", "x.dat")
    os.makedirs(os.path.dirname(path))
    write_file(path, 12)
    drop(path)
    read_pages(path, [0, 5, 6])
    mv = whole_system(mevitop)
    _, r = wait_for(mv, lambda s: (r := row(s, path)) and r["name_source"] != "none" and r,
                    "the xfs file's name")
    assert r["path"] == path and r["name_source"] == "path"
    assert r["pages"]["cached"] == len(mincore(path)) == cachestat(path)["cached"]


def test_overlayfs_file(mevitop, tmpdir_ext4):
    """A file read through an overlay: the page cache holds the lower (real) inode's pages,
    the overlay's own inode has none.  A file written through it is copied up: the upper
    inode's."""
    lower = os.path.join(tmpdir_ext4, "lower")
    os.mkdir(lower)
    lpath = os.path.join(lower, "l.dat")
    write_file(lpath, 16)
    drop(lpath)
    up = os.path.join(tmpdir_ext4, "up")
    mount("tmpfs", up)
    os.mkdir(os.path.join(up, "upper"))
    os.mkdir(os.path.join(up, "work"))
    merged = os.path.join(tmpdir_ext4, "merged")
    os.mkdir(merged)
    subprocess.run(["mount", "-t", "overlay", "-o",
                    f"lowerdir={lower},upperdir={up}/upper,workdir={up}/work", "mevitop-ovl",
                    merged], check=True)
    read_pages(os.path.join(merged, "l.dat"), [0, 1, 2, 7, 8])
    with open(os.path.join(merged, "w.dat"), "wb") as f:
        f.write(b"w" * (3 * PAGE))
    ovl_dev = os.stat(os.path.join(merged, "l.dat")).st_dev
    mv = whole_system(mevitop)
    upath = os.path.join(up, "upper", "w.dat")
    snap, (lo, upr) = wait_for(mv, lambda s: (a := row(s, lpath)) and (b := row(s, upath)) and
                               (a, b), "the lower and upper rows")
    # Read ahead through the overlay too: mincore is the truth, at least the pages read.
    cached = mincore(lpath)
    assert lo["path"] == lpath and lo["pages"]["cached"] == len(cached)
    assert cached >= {0, 1, 2, 7, 8}
    assert upr["path"] == upath and upr["pages"]["cached"] == cachestat(upath)["cached"] == 3
    ovl = f"{os.major(ovl_dev)}:{os.minor(ovl_dev)}"
    assert not [f for f in snap["files"] if f["dev"] == ovl], "the overlay's own inodes"


def test_drop_caches(mevitop, tmpdir_ext4):
    """echo 1 > drop_caches: a clean closed file's row leaves the first snapshot taken after
    it (mincore: nothing cached), and the table still sums to Cached + Buffers."""
    path = os.path.join(tmpdir_ext4, "dropped.dat")
    write_file(path, 32)
    read_pages(path, range(32))
    mv = whole_system(mevitop)
    wait_for(mv, lambda s: (r := row(s, path)) and r["pages"]["cached"] == 32, "the file")
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("1")
    after = time.monotonic()
    assert mincore(path) == set()
    snap = mv.snapshot_after(after)
    r = row(snap, path)
    assert r is None or r["pages"]["cached"] == 0, r
    total = sum(f["pages"]["cached"] for f in snap["files"]) + \
        snap["files_omitted"]["pages"]["cached"]
    want = (snap["memory"]["cached"] + snap["memory"]["buffers"]) // PAGE
    assert abs(total - want) <= 0.03 * want + 256, (total, want)


def own_memcg():
    """Our memory cgroup's path in the memory hierarchy (v1 "memory" or the v2 line)."""
    v2 = None
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, ctrl, path = line.rstrip("\n").split(":", 2)
            if "memory" in ctrl.split(","):
                return path
            if ctrl == "":
                v2 = path
    return v2


READER = r"""
import os, sys
sys.stdin.readline()          # moved into the cgroup by now
fd = os.open(sys.argv[1], os.O_RDONLY)
for p in range(6):
    os.pread(fd, 4096, p * 4096)
os.close(fd)
print("read", flush=True)
sys.stdin.readline()
"""


def test_memcg_of_a_file_read_in_a_child_cgroup(mevitop, tmpdir_ext4):
    """A file first read by a process in a child memory cgroup is charged there: its row's
    memcg is that cgroup; a file we read is charged to ours."""
    name = f"mevitop-test-memcg-{os.getpid()}"
    theirs = os.path.join(tmpdir_ext4, "theirs.dat")
    ours = os.path.join(tmpdir_ext4, "ours.dat")
    for p in (theirs, ours):
        write_file(p, 6)
        drop(p)
    mv = whole_system(mevitop)
    with harness.memory_cgroup(name, 1 << 30) as enter:
        reader = subprocess.Popen([sys.executable, "-c", READER, theirs],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            enter(reader.pid)
            with open(f"/proc/{reader.pid}/cgroup") as f:
                assert any(line.rstrip().endswith("/" + name) for line in f)
            reader.stdin.write("go\n")
            reader.stdin.flush()
            assert reader.stdout.readline() == "read\n"
            read_pages(ours, range(6))
            assert len(mincore(theirs)) == len(mincore(ours)) == 6
            _, (a, b) = wait_for(mv, lambda s: (a := row(s, theirs)) and (b := row(s, ours)) and
                                 a["memcg"] and b["memcg"] and (a, b), "both rows' memcg")
            assert a["memcg"] == "/" + name, a
            assert b["memcg"] == own_memcg(), b
        finally:
            reader.stdin.close()
            reader.wait(timeout=10)


def test_recording_keeps_memory_and_files(tmp_path):
    """record: every frame keeps the memory summary and the files; replay --json prints them
    as live JSON printed them for the same frame (MEVITOP_TEST_RECORD_JSON), and the report
    shows the summary of the last frame."""
    rec, live_out = str(tmp_path / "rec"), tmp_path / "live.ndjson"
    with open(live_out, "w") as out:
        subprocess.run([harness.MEVITOP, "record", "-o", rec, "-n", "3", "-i", "200"],
                       stdout=out, stderr=subprocess.PIPE, check=True, timeout=6 * harness.GUARD_S,
                       env=dict(os.environ, MEVITOP_TEST_RECORD_JSON="1", **harness.SAN_ENV))
    live = {f["monotonic"]: f for f in map(json.loads, live_out.read_text().splitlines())}
    got = subprocess.run([harness.MEVITOP, "replay", rec, "--json"], capture_output=True,
                         text=True, check=True, timeout=harness.GUARD_S).stdout
    frames = [json.loads(line) for line in got.splitlines()]
    assert len(frames) == len(live) == 3
    with open("/proc/meminfo") as f:
        total = int(f.readline().split()[1]) * 1024
    for f in frames:
        want = live[f["monotonic"]]
        for k in ("memory", "files", "files_omitted", "files_stats"):
            assert f[k] == want[k], k
        assert f["memory"]["total"] == total and f["files"]
    svg = tmp_path / "r.svg"
    subprocess.run([harness.MEVITOP, "report", rec, "-o", str(svg)], check=True,
                   capture_output=True, timeout=harness.GUARD_S)
    m = frames[-1]["memory"]
    text = svg.read_text()
    assert f"total {m['total'] / 1048576:.1f} MiB" in text
    assert f"accounted {m['accounted'] / 1048576:.1f}" in text
    assert html.escape(frames[-1]["files"][0]["path"], quote=False) in text
