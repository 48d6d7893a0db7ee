"""A file row's mapped_by follows one process mapping and unmapping files while the others
stay idle (files_rows.c re-walks only processes whose model changed).  The truth is the
test's own reading of every /proc/PID/maps: the pids that map the file's dev:ino."""
import os
import subprocess
import sys

import harness
from test_pagecache import dev_ino, row, tmpdir_ext4, wait_for, whole_system, write_file

assert tmpdir_ext4      # the fixture, imported for pytest

HOLDER = r"""
import mmap, sys
maps = {}
for line in sys.stdin:
    cmd, path = line.split()
    if cmd == "map":
        f = open(path, "rb")
        maps[path] = (f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ))
    else:
        f, m = maps.pop(path)
        m.close()
        f.close()
    print("ok", flush=True)
"""


def mappers(path):
    """The pids whose /proc/PID/maps has path's dev:ino (maps gives dev in hex)."""
    st = os.stat(path)
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    pids = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/maps") as f:
                for line in f:
                    parts = line.split()
                    if len(parts) < 5 or parts[4] == "0":
                        continue
                    ma, mi = parts[3].split(":")
                    if (int(ma, 16), int(mi, 16), int(parts[4])) == want:
                        pids.add(int(d))
                        break
        except OSError:
            pass
    return sorted(pids)


class Holder:
    def __init__(self):
        self.p = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def do(self, cmd, path):
        self.p.stdin.write(f"{cmd} {path}\n")
        self.p.stdin.flush()
        assert self.p.stdout.readline().strip() == "ok"

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=harness.GUARD_S)


def test_mapped_by_follows_map_and_unmap(mevitop, tmpdir_ext4):
    a, b = (os.path.join(tmpdir_ext4, n) for n in ("a.dat", "b.dat"))
    write_file(a, 4)
    write_file(b, 4)
    idle, mover = Holder(), Holder()
    try:
        idle.do("map", a)       # maps a throughout: its entry must stay
        mv = whole_system(mevitop)

        def agrees(snap):
            got = []
            for path in (a, b):
                r = row(snap, path, dev_ino(path))
                want = mappers(path)
                have = sorted(r["mapped_by"]) if r else []
                if have != want:
                    return None
                got.append(have)
            return got

        steps = [("map", a), ("map", b), ("unmap", a), ("map", a), ("unmap", b),
                 ("unmap", a)]
        for cmd, path in steps:
            mover.do(cmd, path)
            _, got = wait_for(mv, agrees, f"mapped_by after {cmd} {path}")
            assert idle.p.pid in got[0]
            assert (mover.p.pid in (got[0] if path == a else got[1])) == (cmd == "map")
    finally:
        idle.close()
        mover.close()
