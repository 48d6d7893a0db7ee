"""The page cache as the test reads it itself: mincore(2) on a fresh shared mapping (the cached
page set, nothing faulted in) and cachestat(2) (counts), through ctypes."""
import ctypes
import mmap
import os

PAGE = 4096
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
libc.syscall.restype = ctypes.c_long
NR_CACHESTAT = 451


class CachestatRange(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class Cachestat(ctypes.Structure):
    _fields_ = [("nr_cache", ctypes.c_uint64), ("nr_dirty", ctypes.c_uint64),
                ("nr_writeback", ctypes.c_uint64), ("nr_evicted", ctypes.c_uint64),
                ("nr_recently_evicted", ctypes.c_uint64)]


def cachestat_fd(fd):
    r = CachestatRange(0, 0)
    cs = Cachestat()
    if libc.syscall(NR_CACHESTAT, fd, ctypes.byref(r), ctypes.byref(cs), 0) != 0:
        raise OSError(ctypes.get_errno(), "cachestat")
    return {"cached": cs.nr_cache, "dirty": cs.nr_dirty, "writeback": cs.nr_writeback,
            "evicted": cs.nr_evicted, "recently_evicted": cs.nr_recently_evicted}


def cachestat(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        return cachestat_fd(fd)
    finally:
        os.close(fd)


def mincore_fd(fd):
    """The set of cached page indexes of the file behind fd."""
    size = os.fstat(fd).st_size
    n = (size + PAGE - 1) // PAGE
    if not n:
        return set()
    addr = libc.mmap(None, n * PAGE, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap")
    try:
        vec = ctypes.create_string_buffer(n)
        if libc.mincore(addr, n * PAGE, vec) != 0:
            raise OSError(ctypes.get_errno(), "mincore")
        return {i for i in range(n) if vec.raw[i] & 1}
    finally:
        libc.munmap(addr, n * PAGE)


def mincore(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        return mincore_fd(fd)
    finally:
        os.close(fd)


def drop(path, start=0, length=0):
    """Written back, then out of the page cache: POSIX_FADV_DONTNEED of [start, +length)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, start, length, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def read_pages(path, pages):
    fd = os.open(path, os.O_RDONLY)
    try:
        for p in pages:
            os.pread(fd, PAGE, p * PAGE)
    finally:
        os.close(fd)


def runs_pages(runs):
    """The page set of a file's JSON runs, checking each page is in exactly one run."""
    seen = {}
    for r in runs:
        assert r["start"] < r["end"], r
        for p in range(r["start"], r["end"]):
            assert p not in seen, f"page {p} in two runs"
            seen[p] = r["state"]
    return seen
