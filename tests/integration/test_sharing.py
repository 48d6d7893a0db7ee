"""--sharing: USS, PSS and the sharing layer, against the kernel's own figures.

A forked pair (tests/workloads/share_wl) shares anonymous memory copy-on-write, a MAP_SHARED
file, a SysV shm segment and a transparent huge page; the child and the parent then write
parts of it.  At each step, once mevitop's sharing pass of both processes began after the
step was done (the processes are quiet then):
- each of the workload's mappings is page-exact against pagemap PFNs and /proc/kpagecount
  read by this test: uss, pss, shared (bytes) and the runs of pages by map count;
- each process's uss and pss are smaps_rollup's Private_Clean+Private_Dirty and Pss
  within 1% (libraries' map counts move as other processes come and go), with mevitop's
  own mappings taken out of each page's map count as mevitop takes them out: smaps_rollup
  read while mevitop runs counts the observer as a mapper of its libraries' pages
  (observer_pfns below; test_observer_not_a_mapper checks the figures with and without).
KSM, where ksmd can run: pages merged into one are shared by every mapping of it.
"""
import json
import re
import os
import struct
import subprocess
import time

import pytest

from test_ui import screen  # noqa: F401 (the tmux fixture)

import harness
from harness import find_proc
from test_metrics import free_port, get, value

PAGE = harness.PAGE
SHIFT = 12  # smaps' PSS_SHIFT
KSM_RUN = "/sys/kernel/mm/ksm/run"


def smaps_rollup(pid):
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return out


def kernel_truth(pid, start, end, mine=None):
    """Page by page from pagemap's PFNs and kpagecount/kpageflags: (uss, pss, shared) in
    bytes and {page: map count} of the pages mapped more than once.  mine: the observer's
    {pfn: times mapped} (observer_pfns), taken out of each count."""
    n = (end - start) // PAGE
    fd = os.open(f"/proc/{pid}/pagemap", os.O_RDONLY)
    try:
        data = os.pread(fd, n * 8, start // PAGE * 8)
    finally:
        os.close(fd)
    uss = shared = pss = 0
    counts = {}
    with open("/proc/kpagecount", "rb") as kc, open("/proc/kpageflags", "rb") as kf:
        for i, (v,) in enumerate(struct.iter_unpack("<Q", data)):
            if not v >> 63 & 1:
                continue
            pfn = v & ((1 << 55) - 1)
            kf.seek(pfn * 8)
            if struct.unpack("<Q", kf.read(8))[0] >> 24 & 1:
                continue  # the zero page
            # Every page's own count: pagemap's "exclusive" bit, which mevitop uses where
            # it can, is what this checks.
            kc.seek(pfn * 8)
            c = struct.unpack("<Q", kc.read(8))[0]
            if mine and pfn in mine:
                c = max(c - mine[pfn], 1)
            if c <= 1:
                uss += PAGE
                pss += PAGE << SHIFT
            else:
                shared += PAGE
                pss += (PAGE << SHIFT) // c
                counts[start // PAGE + i] = c
    return uss, pss >> SHIFT, shared, counts


def by_class(c):
    return "2" if c == 2 else "3-8" if c <= 8 else "9+"


def layer_pages(mapping):
    pages = {}
    for r in mapping["shared_runs"]:
        for pg in range(int(r["start"], 16) // PAGE, int(r["end"], 16) // PAGE):
            pages[pg] = r["by"]
    return pages


def mapping_at(entry, addr):
    for m in entry["mappings"]:
        if int(m["start"], 16) <= addr < int(m["end"], 16):
            return m
    raise AssertionError(f"no mapping at {addr:#x} in {entry['pid']}")


def shared_snapshot(mv, pids, t):
    """The first snapshot in which every pid's sharing pass began after t."""
    deadline = time.monotonic() + harness.GUARD_S
    while True:
        snap = mv.snapshot_after(t)
        entries = [find_proc(snap, pid) for pid in pids]
        if all(e and e.get("sharing_at", 0) > t for e in entries):
            return snap, entries
        assert time.monotonic() < deadline, f"no sharing pass after {t}: {snap['stats']}"


def check_exact(entry, addrs, what, mine=None):
    for addr in addrs:
        m = mapping_at(entry, addr)
        s, e = int(m["start"], 16), int(m["end"], 16)
        uss, pss, shared, counts = kernel_truth(entry["pid"], s, e, mine)
        got = (m["uss"], m["pss"], m["shared"])
        assert got == (uss, pss, shared), \
            f"{what}: pid {entry['pid']} mapping {s:#x}-{e:#x} ({m['kind']}): mevitop " \
            f"uss/pss/shared {got}, kernel {(uss, pss, shared)}"
        want = {pg: by_class(c) for pg, c in counts.items()}
        layer = layer_pages(m)
        bad = sorted(pg for pg in set(want) | set(layer) if want.get(pg) != layer.get(pg))
        assert not bad, f"{what}: {len(bad)} pages in the wrong layer class, first " \
            f"{bad[0] * PAGE:#x}: mevitop {layer.get(bad[0])}, kernel {want.get(bad[0])}"


def file_ranges(pid):
    """The file and vdso mappings of pid: (start, end) in bytes."""
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            path = parts[5].strip() if len(parts) == 6 else ""
            if path.startswith("/") or path == "[vdso]":
                s, e = (int(x, 16) for x in parts[0].split("-"))
                out.append((s, e))
    return out


def present_pfns(pid, start, end):
    fd = os.open(f"/proc/{pid}/pagemap", os.O_RDONLY)
    try:
        data = os.pread(fd, (end - start) // PAGE * 8, start // PAGE * 8)
    finally:
        os.close(fd)
    return [v & ((1 << 55) - 1) for (v,) in struct.iter_unpack("<Q", data) if v >> 63 & 1]


def observer_pfns(pid):
    """{pfn: times mapped} of the file and vdso pages the observer (mevitop) maps."""
    out = {}
    for s, e in file_ranges(pid):
        for pfn in present_pfns(pid, s, e):
            out[pfn] = out.get(pfn, 0) + 1
    return out


def rollup_without(pid, observer):
    """smaps_rollup's (pss, uss) of pid, with the observer's mappings taken out of the map
    count of each page it shares with pid (read from both pagemaps and kpagecount now)."""
    r = smaps_rollup(pid)
    pss, uss = r["Pss"], r["Private_Clean"] + r["Private_Dirty"]
    mine = observer_pfns(observer)
    with open("/proc/kpagecount", "rb") as kc:
        for s, e in file_ranges(pid):
            for pfn in present_pfns(pid, s, e):
                if pfn not in mine:
                    continue
                kc.seek(pfn * 8)
                c = struct.unpack("<Q", kc.read(8))[0]
                d = max(c - mine[pfn], 1)
                if d < c:
                    pss += PAGE // d - PAGE // c
                    uss += PAGE if d == 1 else 0
    return pss, uss


def check_rollup(entry, what, observer):
    """observer: mevitop's pid."""
    pss, uss = rollup_without(entry["pid"], observer)
    for name, got, want in (("pss", entry["pss"], pss), ("uss", entry["uss"], uss)):
        assert abs(got - want) <= 0.01 * want, \
            f"{what}: pid {entry['pid']} {name} {got} vs smaps_rollup {want} (mevitop's " \
            f"own mappings out)"


def rollup_thp(pid):
    """Bytes a PMD maps, as smaps_rollup sums them."""
    r = smaps_rollup(pid)
    return r["AnonHugePages"] + r["ShmemPmdMapped"] + r["FilePmdMapped"]


def test_forked_pair(mevitop, workload, tmp_path):
    wl = workload("share_wl")
    regions = {}
    for cmd in ("anon a 2048", f"file f {tmp_path}/shared.bin 256", "shm s 256",
                "thp t 1024"):
        _, words = wl.do(cmd)
        regions[cmd.split()[1]] = int(words[0], 16)
    port = free_port()
    # A small budget: passes span refreshes, cut inside the mappings.
    mv = mevitop(["-p", str(wl.pid), "-i", "100", "--sharing", "--maps", "--listen",
                  str(port), "--sharing-budget", "2000"])
    _, words = wl.do("fork")
    child = int(words[0])
    wl.do("ctouch f")
    t, _ = wl.do("ctouch s")
    addrs = list(regions.values())
    steps = [("after fork", None), ("child wrote", "cwrite a 0 512"),
             ("child wrote a huge page's page", "cwrite t 0 1"),
             ("parent wrote", "pwrite a 1024 256")]
    for what, cmd in steps:
        if cmd:
            t, _ = wl.do(cmd)
        snap, entries = shared_snapshot(mv, (wl.pid, child), t)
        for e in entries:
            check_exact(e, addrs, what)
            check_rollup(e, what, mv.proc.pid)
            assert e["thp"] == rollup_thp(e["pid"]), (what, e["pid"], e["thp"])
        parent, kid = entries
        assert parent["thp"] > 0, "no transparent huge page in the thp region"
        if what == "child wrote a huge page's page":
            # The child's write split its PMD: one huge page fewer mapped whole.
            assert kid["thp"] == parent["thp"] - 2 * 1024 * 1024, (kid["thp"], parent["thp"])
        a_parent = mapping_at(parent, regions["a"])
        if what == "after fork":
            # Everything the child maps of the region is the parent's too.
            assert mapping_at(kid, regions["a"])["uss"] == 0
            assert a_parent["shared"] >= 2048 * PAGE
        if what == "child wrote":
            assert mapping_at(kid, regions["a"])["uss"] == 512 * PAGE
    assert snap["stats"]["sharing"]["passes"] >= 2
    # The metrics say what JSON says (within 1%: a later pass may see libraries' counts
    # move), in both formats.
    for accept in ("text/plain", "application/openmetrics-text; version=1.0.0"):
        status, _, text = get(port, headers={"Accept": accept})
        assert status == 200
        for e in entries:
            for name in ("uss", "pss", "shared"):
                got = value(text, f"mevitop_process_{name}_bytes", pid=e["pid"])
                assert abs(got - e[name]) <= 0.01 * e[name], (name, got, e[name])


def ksm_merge(wants):
    """Runs ksmd until each pid has its count of merged pages, then restores its setting."""
    if not os.path.exists(KSM_RUN):
        pytest.fail("no KSM on this kernel (/sys/kernel/mm/ksm)")
    with open(KSM_RUN) as f:
        before = f.read().strip()
    try:
        with open(KSM_RUN, "w") as f:
            f.write("1")
        deadline = time.monotonic() + harness.GUARD_S
        for pid, pages in wants.items():
            while True:
                with open(f"/proc/{pid}/ksm_merging_pages") as f:
                    if int(f.read()) == pages:
                        break
                assert time.monotonic() < deadline, "ksmd did not merge the pages"
                time.sleep(0.05)  # ksmd's own pace; a failure guard bounds it
    finally:
        with open(KSM_RUN, "w") as f:
            f.write(before)


def test_ksm(mevitop, workload):
    wl = workload("share_wl")
    _, words = wl.do("ksm k 256")
    addr = int(words[0], 16)
    mv = mevitop(["-p", str(wl.pid), "-i", "100", "--sharing", "--maps"])
    ksm_merge({wl.pid: 256})
    t = time.monotonic()
    snap, (entry,) = shared_snapshot(mv, (wl.pid,), t)
    check_exact(entry, [addr], "ksm")
    check_rollup(entry, "ksm", mv.proc.pid)
    m = mapping_at(entry, addr)
    assert m["uss"] == 0 and m["shared"] == 256 * PAGE, m
    assert entry["ksm"] >= 256 * PAGE


def test_observer_not_a_mapper(mevitop, workload):
    """mevitop maps its own binary and libraries: a page of them that only a watched
    process and mevitop map is the process's own once mevitop is gone, so mevitop takes its
    own mappings out of each count (as a later smaps_rollup, or smem, sees it).  The
    workload reads mevitop's binary, mapped privately: the pages mevitop has mapped too
    are the process's private pages in mevitop's figures, page-exact against both
    pagemaps and kpagecount; with --disable observer they are "shared by 2"."""
    binary = harness.MEVITOP
    pages = os.path.getsize(binary) // PAGE
    for disable in ((), ("observer",)):
        wl = workload("share_wl")
        addr = int(wl.do(f"ro bin {binary} {pages}")[1][0], 16)
        mv = mevitop(["-p", str(wl.pid), "-i", "100", "--sharing", "--maps"],
                     disable=disable)
        t = time.monotonic()
        _, (entry,) = shared_snapshot(mv, (wl.pid,), t)
        mine = observer_pfns(mv.proc.pid)
        both = [p for p in present_pfns(wl.pid, addr, addr + pages * PAGE) if p in mine]
        assert len(both) > 16, f"mevitop maps only {len(both)} of its binary's pages"
        m = mapping_at(entry, addr)
        raw = kernel_truth(wl.pid, addr, addr + pages * PAGE)
        out = kernel_truth(wl.pid, addr, addr + pages * PAGE, mine)
        want = raw if disable else out
        assert (m["uss"], m["pss"], m["shared"]) == want[:3], \
            f"--disable {disable}: mevitop uss/pss/shared {m['uss'], m['pss'], m['shared']}" \
            f", kernel {raw[:3]}, mevitop's own mappings out {out[:3]}"
        # The pages only the two map: shared by 2 in the kernel's count, private here.
        assert raw[0] + len(both) * PAGE >= out[0] > raw[0], (raw[:3], out[:3])
        if not disable:
            check_exact(entry, [addr], "observer", mine)
            check_rollup(entry, "observer", mv.proc.pid)
        mv.stop()
        wl.close()


def test_ksm_merge_seen(mevitop, workload):
    """ksmd merges a quiet process's private pages as it drops as many merged pages of a
    process gone (KSM counts those until ksmd runs again): pages_sharing ends where it
    was, and the next pass still reads the merged pages, shared as the kernel says."""
    gone = workload("share_wl")
    gone.do("ksm k 64")
    ksm_merge({gone.pid: 64})
    gone.do("exit")
    wl = workload("share_wl")
    addr = int(wl.do("ksm k 64")[1][0], 16)
    # -i 1000: a quiet process is read again 10 refreshes after its pass began.
    mv = mevitop(["-p", str(wl.pid), "-i", "1000", "--sharing", "--maps"])
    t = time.monotonic()
    snap, (entry,) = shared_snapshot(mv, (wl.pid,), t)
    assert snap["stats"]["sharing"]["anon_verified"] == 1  # its anonymous memory private
    assert mapping_at(entry, addr)["uss"] == 64 * PAGE
    with open("/sys/kernel/mm/ksm/pages_sharing") as f:
        before = f.read()
    ksm_merge({wl.pid: 64})
    with open("/sys/kernel/mm/ksm/pages_sharing") as f:
        assert f.read() == before, "pages_sharing moved: not the case this test is for"
    snap, (entry,) = shared_snapshot(mv, (wl.pid,), time.monotonic())
    check_exact(entry, [addr], "ksm merged, pages_sharing back where it was")
    assert mapping_at(entry, addr)["shared"] == 64 * PAGE


def test_ksm_who(screen, workload):
    """Two unrelated processes whose identical pages KSM merged, at other addresses: the
    cursor line on one's page names the other, as their pagemaps' PFNs say."""
    a_wl, b_wl = workload("share_wl"), workload("share_wl")
    a = int(a_wl.do("ksm k 64")[1][0], 16)
    b_wl.do("anon pad 16")  # b's region at another address than a's
    b = int(b_wl.do("ksm k 64")[1][0], 16)
    ksm_merge({a_wl.pid: 64, b_wl.pid: 64})
    assert a != b and pfn_at(a_wl.pid, a + 5 * PAGE) == pfn_at(b_wl.pid, b + 7 * PAGE) \
        is not None
    scr = sharing_heatmap(screen, a_wl.pid, b_wl.pid)
    cursor_line(scr, a + 5 * PAGE, "mapped by ")
    # Mapped by at least 2: the KSM page may hold more mappers (ksmd merges any 0x5a page).
    pat = rf"cursor {a + 5 * PAGE:#x}: resident, mapped by (\d+) \(also pid {b_wl.pid} share_wl\)"
    scr.wait(lambda s: re.search(pat, s), "the cursor line naming the KSM page's other mapper")
    scr.keys("F10")


def test_ksm_who_merged_since(screen, workload):
    """KSM merges two quiet processes' pages after both passes, and both had shared
    anonymous memory already (each forked): ksm_check sees their merged pages move and
    reads both again at once, so each one's cursor line names the other, as their
    pagemaps' PFNs say.  -i 2500: a quiet process is read again only 10 refreshes after
    its pass began (25 s, past the guard), so nothing else can have read them."""
    a_wl, b_wl = workload("share_wl"), workload("share_wl")
    for wl in (a_wl, b_wl):
        # Each one's anonymous memory shared with a child (pad's pages): passes read its
        # anonymous pages, and no pass found them private (the first merge would have
        # made it due then).
        wl.do("anon pad 16")
        wl.do("fork")
    a = int(a_wl.do("ksm k 64")[1][0], 16)  # after the fork: each one's alone
    b_wl.do("anon pad2 16")  # b's region at another address than a's
    b = int(b_wl.do("ksm k 64")[1][0], 16)
    scr = sharing_heatmap(screen, a_wl.pid, b_wl.pid, "2500")
    cursor_line(scr, a + 5 * PAGE, "mapped once (private)")  # a's pass, before the merge
    show_heatmap(scr, b_wl.pid)
    cursor_line(scr, b + 7 * PAGE, "mapped once (private)")  # b's, before the merge
    ksm_merge({a_wl.pid: 64, b_wl.pid: 64})
    pfn = pfn_at(a_wl.pid, a + 5 * PAGE)
    assert a != b and pfn is not None and pfn_at(b_wl.pid, b + 7 * PAGE) == pfn
    counts = kernel_truth(a_wl.pid, a + 5 * PAGE, a + 6 * PAGE)[3]
    assert counts.get(a // PAGE + 5, 1) >= 2, counts
    for pid, addr, other in ((a_wl.pid, a + 5 * PAGE, b_wl.pid),
                             (b_wl.pid, b + 7 * PAGE, a_wl.pid)):
        show_heatmap(scr, pid)
        # The first line with the count is the search's answer (made in the same frame).
        s = cursor_line(scr, addr, "mapped by ")
        line = next(ln for ln in s.split("\n") if ln.startswith("cursor "))
        pat = rf"cursor {addr:#x}: resident, mapped by (\d+) \(also pid {other} share_wl\)"
        assert re.match(pat, line), line
    scr.keys("F10")


def show_heatmap(scr, pid):
    """Tab to pid's heatmap (its header, the first line; the layer stays), one page a
    cell."""
    from test_ui import zoom_to_one_page

    def shown(s):  # the header's pid, 0: none
        m = re.search(r"pid (\d+) ", s.split("\n")[0])
        return int(m.group(1)) if m else 0
    was = shown(scr.wait(lambda s: "layer sharing" in s and shown(s), "a heatmap"))
    for _ in range(4):
        if was == pid:
            zoom_to_one_page(scr)
            return
        scr.keys("Tab")
        was = shown(scr.wait(lambda s, was=was: "layer sharing" in s and shown(s) != was,
                             "the next heatmap"))
    raise AssertionError(f"no heatmap of {pid} by Tab")


def sharing_heatmap(screen, pid, other, interval="100"):
    """tmux: mevitop -p pid,other --sharing, pid's heatmap in the sharing layer, one page a
    cell."""
    from test_ui import zoom_to_one_page
    scr = screen()
    scr.start(["-p", f"{pid},{other}", "-i", interval, "--sharing", "--layout", "labels"])
    scr.wait_for(f"pid {pid} share_wl")
    scr.keys("s")
    scr.wait_for("layer sharing")
    zoom_to_one_page(scr)
    return scr


def cursor_line(scr, addr, want):
    """Moves the heatmap's cursor to addr (one page a cell) and waits for its line."""
    scr.keys("g")
    scr.type(f"{addr:x}")
    scr.keys("Enter")
    return scr.wait_for(f"cursor {addr:#x}: resident, {want}")


def test_mremap_who(screen, workload):
    """A forked child moves the parent's copy-on-write pages with mremap: each page is
    mapped by both at other addresses (their pagemaps give the same PFN), and the cursor
    line on either names the other."""
    from test_ui import zoom_to_one_page
    wl = workload("share_wl")
    a = int(wl.do("anon a 64")[1][0], 16)
    d = int(wl.do("anon d 64")[1][0], 16)
    child = int(wl.do("fork")[1][0])
    wl.do("cmremap a d")  # the child's a now at d, where the parent has d's own pages
    pfn = pfn_at(wl.pid, a + 5 * PAGE)
    assert pfn is not None and pfn_at(child, d + 5 * PAGE) == pfn
    assert pfn_at(wl.pid, d + 5 * PAGE) not in (None, pfn) and pfn_at(child, a + 5 * PAGE) is None
    scr = sharing_heatmap(screen, child, wl.pid)
    cursor_line(scr, d + 5 * PAGE, f"mapped by 2 (also pid {wl.pid} share_wl)")
    scr.keys("Tab")  # the layer stays on
    scr.wait(lambda s: f"pid {wl.pid} share_wl" in s and "layer sharing" in s, "the parent")
    zoom_to_one_page(scr)
    cursor_line(scr, a + 5 * PAGE, f"mapped by 2 (also pid {child} share_wl)")
    cursor_line(scr, d + 5 * PAGE, "mapped once (private)")
    scr.keys("F10")


def test_disabled_fails_clearly():
    r = subprocess.run([harness.MEVITOP, "--json", "--sharing", "--disable", "kpagecount",
                        "-n", "1"], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, **harness.SAN_ENV))
    assert r.returncode != 0
    assert "kpagecount" in harness.json_error(r.stderr)
    assert not r.stdout


def test_off_by_default(mevitop, workload):
    wl = workload("share_wl")
    wl.do("anon a 16")
    mv = mevitop(["-p", str(wl.pid), "-i", "100"])
    entry = find_proc(mv.first, wl.pid)
    assert "pss" not in entry and "sharing" not in mv.first["stats"]
    json.dumps(entry)


def size_value(text):
    """fmt_pages' text ("1.5G", "12K", "0", "-") as bytes (an approximation for order)."""
    if text in ("-", ""):
        return -1
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    return float(text[:-1]) * mult[text[-1]] if text[-1] in mult else float(text)


def column(s, title):
    """Each list row's cell under a right-aligned 7-wide column header."""
    lines = s.split("\n")
    head = next(i for i, ln in enumerate(lines) if re.match(r".*PID\b.*COMMAND", ln))
    end = re.search(rf"\b{title}\b", lines[head]).end()
    return [ln[end - 7:end].strip() for ln in lines[head + 1:]
            if re.match(r"\s*\d+ ", ln)]


def pfn_at(pid, addr):
    """The PFN pid maps at addr (pagemap, read by the test), or None if not present."""
    fd = os.open(f"/proc/{pid}/pagemap", os.O_RDONLY)
    try:
        (v,) = struct.unpack("<Q", os.pread(fd, 8, addr // PAGE * 8))
    finally:
        os.close(fd)
    return v & ((1 << 55) - 1) if v >> 63 & 1 else None


def test_ui_layer_and_columns(screen, workload, tmp_path):
    from test_ui import zoom_to_one_page
    wl = workload("share_wl")
    _, words = wl.do("anon a 64")
    a = int(words[0], 16)
    _, words = wl.do(f"file f {tmp_path}/shared 8")
    f = int(words[0], 16)
    _, words = wl.do("fork")
    child = int(words[0])
    wl.do("cwrite a 0 16")
    wl.do("ctouch f")
    assert child
    # The truth the cursor line must name: the child maps the parent's physical page at
    # a + 16 pages and at the file's page 2, its own copy of page 0 (it wrote it).
    assert pfn_at(wl.pid, a + 16 * PAGE) == pfn_at(child, a + 16 * PAGE) is not None
    assert pfn_at(wl.pid, f + 2 * PAGE) == pfn_at(child, f + 2 * PAGE) is not None
    assert pfn_at(wl.pid, a) != pfn_at(child, a)
    also = f"(also pid {child} share_wl)"
    scr = screen()
    # The parent's heatmap: the pages its child copied are its own again.
    scr.start(["-p", str(wl.pid), "-i", "100", "--sharing", "--layout", "labels"])
    scr.wait_for(f"pid {wl.pid} share_wl")
    scr.keys("s")
    s = scr.wait_for("layer sharing")
    for word in ("private", "by 2", "3-8", "9+"):
        assert word in s.split("\n")[2], f"legend lacks {word!r}: {s.split(chr(10))[2]!r}"
    zoom_to_one_page(scr)
    for addr, want in ((a + 16 * PAGE, f"mapped by 2 {also}"),
                       (f + 2 * PAGE, f"mapped by 2 {also}"), (a, "mapped once (private)")):
        scr.keys("g")
        scr.type(f"{addr:x}")
        scr.keys("Enter")
        scr.wait_for(f"cursor {addr:#x}: resident, {want}")
    # A page of libc's text every process maps: its exact count (3 or more), and the child
    # named exactly when its page tables map that physical page too (fork copies no PTE of
    # a file mapping: the child maps the libc pages it has run since).
    libc = next(st for st, _e, perms, path in harness.read_maps(wl.pid)
                if "libc.so" in path and "x" in perms)
    scr.keys("g")
    scr.type(f"{libc:x}")
    scr.keys("Enter")
    pat = rf"cursor {libc:#x}: resident, mapped by (\d+) \(([^)]*)\)"
    s = scr.wait(lambda s: re.search(pat, s), "libc's first text page's count")
    n, who = re.search(pat, s).groups()
    assert int(n) >= 3, n
    want = also[1:-1] if pfn_at(child, libc) == pfn_at(wl.pid, libc) else "no other watched process"
    assert who == want, (who, want)
    scr.keys("t")
    scr.wait_for("layer heat")
    # The list: USS and PSS columns, sorted by their keys.
    scr.keys("Escape")
    scr.wait(lambda s: "USS" in s and "PSS" in s, "the USS and PSS columns")
    scr.keys("t")  # the flat list: one order for all rows
    scr.wait(lambda s: "view tree" not in s and "USS" in s, "the flat list")
    for key, title, name in (("X", "USS", "unique (USS)"), ("Y", "PSS", "proportional (PSS)")):
        scr.keys(key)

        def sorted_desc(s, title=title, name=name):
            col = [size_value(c) for c in column(s, title)]
            return f"sort {name} desc" in s and len(col) >= 2 and \
                col == sorted(col, reverse=True) and col[0] > 0
        scr.wait(sorted_desc, f"rows by {title}")
    scr.keys("F10")
    from test_ui import assert_clean_exit
    assert_clean_exit(scr)


def test_recording(workload, tmp_path):
    """record --sharing keeps each process's pass; replay prints what live mode did."""
    wl = workload("share_wl")
    _, words = wl.do("anon a 512")
    a = int(words[0], 16)
    _, words = wl.do("fork")
    child = int(words[0])
    t, _ = wl.do("cwrite a 0 128")
    rec = tmp_path / "s.rec"
    r = subprocess.run([harness.MEVITOP, "record", "-o", str(rec), "--sharing", "--maps",
                        "-p", str(wl.pid), "-i", "100", "--duration", "2"],
                       capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, **harness.SAN_ENV))
    assert r.returncode == 0, r.stderr
    r = subprocess.run([harness.MEVITOP, "replay", str(rec), "--json"], capture_output=True,
                       text=True, timeout=60, env=dict(os.environ, **harness.SAN_ENV))
    assert r.returncode == 0, r.stderr
    last = json.loads(r.stdout.strip().split("\n")[-1])
    for pid in (wl.pid, child):
        e = find_proc(last, pid)
        assert e and e["sharing_at"] > t, e
        # The region is the pair's alone and quiet since: page-exact against the kernel
        # now.  The whole process is not compared with smaps_rollup read now: a replayed
        # frame is the past, and libc's map count moves with every process the rest of the
        # box starts or ends (test_forked_pair checks the rollup live).
        check_exact(e, [a], "replayed")
        assert e["thp"] == rollup_thp(pid), (pid, e["thp"])  # section 8
    assert "sharing" in last["stats"]


def test_recording_exact_counts(screen, workload, tmp_path):
    """Section 8: replay's cursor line gives a page mapped by 3 its exact count (a class,
    3-8, without it), as kpagecount says: a MAP_SHARED file's pages mapped by the pair and
    by this test."""
    import mmap
    from test_ui import zoom_to_one_page
    path = tmp_path / "three"
    wl = workload("share_wl")
    _, words = wl.do(f"file f {path} 8")
    f = int(words[0], 16)
    wl.do("fork")
    wl.do("ctouch f")
    with open(path, "r+b") as fh:
        mine = mmap.mmap(fh.fileno(), 8 * PAGE, mmap.MAP_SHARED)
    try:
        sum(mine[i * PAGE] for i in range(8))   # this process maps every page too
        _, _, _, counts = kernel_truth(wl.pid, f, f + 8 * PAGE)
        assert counts == {f // PAGE + i: 3 for i in range(8)}, counts
        rec = tmp_path / "s.rec"
        r = subprocess.run([harness.MEVITOP, "record", "-o", str(rec), "--sharing", "-p",
                            str(wl.pid), "-i", "100", "--duration", "2"],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, **harness.SAN_ENV))
        assert r.returncode == 0, r.stderr
    finally:
        mine.close()
    scr = screen()
    scr.start(["replay", str(rec)])
    scr.wait_for(f"{wl.pid}")
    scr.keys("}")
    scr.keys("Enter")   # the parent's or the child's: both map the file there, by 3
    scr.wait(lambda s: re.search(r"pid \d+ share_wl", s), "a heatmap")
    scr.keys("s")
    scr.wait_for("layer sharing")
    zoom_to_one_page(scr)
    scr.keys("g")
    scr.type(f"{f + 3 * PAGE:x}")
    scr.keys("Enter")
    scr.wait_for(f"cursor {f + 3 * PAGE:#x}: resident, mapped by 3 ")
    scr.keys("q")
    status, _ = scr.wait_exit()
    assert status == 0, scr.stderr()


def redis_cli(sock, *args):
    return subprocess.run(["redis-cli", "-s", sock, *args], capture_output=True, text=True,
                          timeout=60).stdout.strip()


def children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(x) for x in f.read().split()]


def test_redis_bgsave_child_uss_grows(mevitop, tmp_path):
    """A real redis: BGSAVE's child shares the dataset with the server; as the server
    overwrites keys, the child's copies become its own and its USS grows (smaps_rollup
    agrees)."""
    sock = str(tmp_path / "redis.sock")
    srv = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", sock, "--dir",
                            str(tmp_path), "--save", "", "--appendonly", "no",
                            "--enable-debug-command", "yes"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + harness.GUARD_S
        while redis_cli(sock, "ping") != "PONG":
            assert srv.poll() is None and time.monotonic() < deadline, "redis did not start"
            time.sleep(0.02)  # redis-server's own start; a failure guard bounds it
        assert redis_cli(sock, "debug", "populate", "20000", "key", "4096") == "OK"
        # Slow the save down (0.5 ms a key: ~10 s) so the child lives through the test.
        assert redis_cli(sock, "config", "set", "rdb-key-save-delay", "500") == "OK"
        mv = mevitop(["-p", str(srv.pid), "-i", "100", "--sharing"])
        assert "started" in redis_cli(sock, "bgsave")
        t0 = time.monotonic()
        (child,) = children(srv.pid)
        _, (before,) = shared_snapshot(mv, (child,), t0)
        assert before["shared"] > 60 << 20, before  # the dataset, shared with the server
        script = "for i=0,9999 do redis.call('SET','key:'..i,string.rep('y',4096)) end"
        redis_cli(sock, "eval", script, "0")
        t1 = time.monotonic()
        _, (after,) = shared_snapshot(mv, (child,), t1)
        assert children(srv.pid) == [child], "the save ended before the check"
        assert after["uss"] > before["uss"] + (20 << 20), (before["uss"], after["uss"])
        check_rollup(after, "redis's BGSAVE child", mv.proc.pid)
    finally:
        try:
            kids = children(srv.pid)
        except OSError:
            kids = []
        for k in kids:  # the save's child outlives a killed server
            try:
                os.kill(k, 9)
            except OSError:
                pass
        srv.kill()
        srv.wait()


def test_postgres_backends_pss(mevitop):
    """Real postgres backends share shared_buffers and the server's pages: each backend's
    PSS and USS against smaps_rollup."""
    import glob
    import shutil
    import tempfile
    bindir = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
    top = tempfile.mkdtemp(prefix="mevitop-pg-")
    as_pg = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]
    srv = None
    sleepers = []
    try:
        os.chmod(top, 0o755)
        shutil.chown(top, "postgres", "postgres")
        data = os.path.join(top, "data")
        subprocess.run(as_pg + [f"{bindir}/initdb", "-D", data, "-A", "trust", "-U",
                                "postgres", "--no-sync"], check=True, capture_output=True,
                       timeout=120)
        srv = subprocess.Popen(as_pg + [f"{bindir}/postgres", "-D", data, "-k", top, "-c",
                                        "listen_addresses=", "-c", "shared_buffers=64MB",
                                        "-c", "fsync=off", "-c", "autovacuum=off", "-c",
                                        "jit=off"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def psql(sql, **kw):
            return subprocess.run(["psql", "-h", top, "-U", "postgres", "-At", "-c", sql],
                                  capture_output=True, text=True, timeout=120, **kw)
        deadline = time.monotonic() + harness.GUARD_S
        while psql("select 1").stdout.strip() != "1":
            assert srv.poll() is None and time.monotonic() < deadline, "postgres did not start"
            time.sleep(0.05)  # the server's own start; a failure guard bounds it
        assert psql("create table t as select g, repeat('x', 400) s "
                    "from generate_series(1, 60000) g").returncode == 0
        # Three backends read the table into shared_buffers, then sleep (quiet).
        for _ in range(3):
            sleepers.append(subprocess.Popen(
                ["psql", "-h", top, "-U", "postgres", "-At", "-c",
                 "select count(*) from t", "-c", "select pg_sleep(120)"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
        for s in sleepers:
            assert s.stdout.readline().strip() == "60000"
        while True:
            pids = [int(x) for x in psql("select pid from pg_stat_activity where query = "
                                         "'select pg_sleep(120)'").stdout.split()]
            if len(pids) == 3:
                break
            assert time.monotonic() < deadline, "the backends did not start sleeping"
        mv = mevitop(["-p", str(srv.pid), "-i", "100", "--sharing"])
        t = time.monotonic()
        _, entries = shared_snapshot(mv, pids, t)
        for e in entries:
            assert e["shared"] > 8 << 20, e  # shared_buffers the table went through
            check_rollup(e, "postgres backend", mv.proc.pid)
    finally:
        for s in sleepers:
            s.kill()
            s.wait()
        if srv:
            srv.send_signal(2)  # SIGINT: fast shutdown, the sleeping backends end too
            srv.wait(timeout=60)
        shutil.rmtree(top, ignore_errors=True)
