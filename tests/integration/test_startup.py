"""Start-up (issue 24): the kernel's BTF is parsed once per start, however many BPF objects
load (the feature probe, the main skeleton and the page cache's each parsed it before), and
counted independently: strace's opens of /sys/kernel/btf/vmlinux.  Sample mode maps a
small ring buffer (only process records flow there), so the BPF maps' pages mevitop maps
stay small: measured from its own /proc/PID/smaps.  The layouts the start's second thread
reads ahead of the initial scans (user/engine/start_ahead.c) give the same model as the
scans' own reads: checked page for page against pagemap."""
import json
import os
import subprocess

import pytest

from harness import MEVITOP, SAN_ENV, assert_matches, json_messages

BTF = '"/sys/kernel/btf/vmlinux"'


def btf_opens(args, tmp_path):
    trace = str(tmp_path / "strace")
    env = dict(os.environ, **SAN_ENV)
    # LeakSanitizer cannot run under ptrace; the other tests check for leaks.
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", trace, MEVITOP,
                        "--json", "-n", "1", *args], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    snap = json.loads(p.stdout.splitlines()[0])
    assert snap["processes"], snap["stats"]
    with open(trace) as f:
        return sum(1 for line in f if BTF in line and "= -1" not in line)


@pytest.mark.parametrize("args", [[], ["--mode", "trace"], ["--no-files"]],
                         ids=["sample", "trace", "no-files"])
def test_btf_parsed_once(args, tmp_path):
    assert btf_opens(args, tmp_path) == 1


def bpf_map_rss_kib(pid):
    kib, name = 0, ""
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            first = line.split(None, 1)[0]
            if "-" in first and not first.endswith(":"):
                parts = line.split()
                name = parts[5] if len(parts) > 5 else ""
            elif first == "Rss:" and name == "anon_inode:bpf-map":
                kib += int(line.split()[1])
    return kib


@pytest.mark.parametrize("mode,most_kib,least_kib", [("sample", 4096, 0),
                                                     ("trace", 1 << 30, 16 << 10)])
def test_ring_buffer_by_mode(mode, most_kib, least_kib):
    """Sample mode's BPF maps in mevitop's RSS: under 4 MiB (they were 19 MiB with the 8 MiB
    ring buffer mapped twice); trace mode keeps its 8 MiB ring (16 MiB mapped)."""
    p = subprocess.Popen([MEVITOP, "--json", "-i", "60000", "--mode", mode],
                         env=dict(os.environ, **SAN_ENV), stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        assert json.loads(p.stdout.readline())["mode"] == mode
        kib = bpf_map_rss_kib(p.pid)
    finally:
        p.terminate()
        p.wait(timeout=30)
    assert least_kib <= kib <= most_kib, kib


@pytest.mark.parametrize("disable", [(), ("vma_pass",)], ids=["vma-pass", "no-vma_pass"])
def test_layouts_read_ahead(workload, mevitop, disable):
    """Processes there before a whole-system start are modelled page for page as pagemap
    has them, whichever thread read their layout; with --no-files the second thread has no
    BPF object to load first, so with 60 processes it reads some of them (-v says how many:
    more than none, or this test would not test it).  By default those layouts come from
    the VMA pass (bpf/vmas.bpf.c), which -v says named at least half as many;
    with --disable vma_pass from /proc/PID/maps, and -v says nothing of a pass."""
    wls = [workload() for _ in range(60)]
    for i, wl in enumerate(wls):
        pages = 8 * (i % 7 + 1)
        wl.do(f"map a {pages}")
        wl.do(f"touch a 0 {pages} {i % 3 + 1} w")
    mv = mevitop(["-i", "60000", "--maps", "--no-files", "-v"], disable=disable)
    for wl in wls:
        assert_matches(mv.first, wl.pid, f"(workload {wl.pid})")
    mv.stop()
    infos = [m.get("info", "") for m in json_messages(mv.stderr_text())]
    said = [m for m in infos if "read ahead" in m]
    assert len(said) == 1, mv.stderr_text()
    assert int(said[0].split()[1]) > 0, said
    passed = [m for m in infos if "VMA pass" in m]
    if disable:
        assert not passed, passed
    else:
        assert len(passed) == 1, mv.stderr_text()
        assert int(passed[0].split("named ")[1].split()[0]) >= 30, passed


@pytest.mark.parametrize("args", [["-p"], []], ids=["pid", "whole-system"])
def test_walks_across_holes(workload, mevitop, args):
    """A process's neighbouring mappings are one PAGEMAP_SCAN walk while they hold at most
    16,384 pages between them, however far apart (user/engine/scan.c: scan_all): pieces of
    a mapping 155 MiB apart, a mapping of more pages than that (walked in chunks), and two
    neighbours that together hold more (two walks) are modelled page for page as pagemap
    has them."""
    wl = workload()
    wl.do("map a 40000")
    wl.do("touch a 0 40000 7 w")
    wl.do("unmap a 100 39800")          # [0, 100) and [39900, 40000): a 155 MiB hole
    wl.do("map b 20000")                # more than one walk holds: chunks
    wl.do("touch b 0 20000 5 w")
    wl.do("map c 16000")                # c and d: more than one walk together
    wl.do("touch c 0 16000 3 w")
    wl.do("map d 1000")
    wl.do("touch d 0 1000 2 w")
    mv = mevitop(["-i", "60000", "--maps", "--no-files"] + (args and ["-p", str(wl.pid)]))
    assert_matches(mv.first, wl.pid)
    mv.stop()


def test_layouts_not_waited_for(workload, mevitop):
    """A layout the second thread is still reading when the scans reach it is waited for
    200 µs at most, then read by the scans (the thread, stalled here 2 ms a layout by
    MEVITOP_TEST_AHEAD_STALL_US, throws its read away): those processes too are modelled
    page for page as pagemap has them, and -v says how many there were (more than none)."""
    wls = [workload() for _ in range(60)]
    for i, wl in enumerate(wls):
        pages = 8 * (i % 7 + 1)
        wl.do(f"map a {pages}")
        wl.do(f"touch a 0 {pages} {i % 3 + 1} w")
    mv = mevitop(["-i", "60000", "--maps", "--no-files", "-v"],
                 env_extra={"MEVITOP_TEST_AHEAD_STALL_US": "2000"})
    for wl in wls:
        assert_matches(mv.first, wl.pid, f"(workload {wl.pid})")
    mv.stop()
    said = [m["info"] for m in json_messages(mv.stderr_text()) if "read ahead" in m.get("info", "")]
    assert len(said) == 1, mv.stderr_text()
    assert int(said[0].split("(")[1].split()[0]) > 0, said


@pytest.mark.parametrize("disable", [(), ("maps_text",), ("vma_pass",)],
                         ids=["vma-pass", "no-maps_text", "text"])
def test_layout_names_exact(workload, mevitop, tmp_path, disable):
    """A whole-system start names layouts from the VMA pass (each name asked of
    PROCMAP_QUERY once); without it a layout is read from the text of /proc/PID/maps, unless
    a name in it may be escaped (the text writes a newline as \\012, and a backslash as
    itself): then by PROCMAP_QUERY.
    Files named with a newline and with a backslash, and a plain one, are named as the
    kernel's d_path has them (readlink of /proc/PID/map_files), and their pages match
    pagemap."""
    names = ["plain", "new\nline", "back\\012slash"]
    wls = []
    for i, name in enumerate(names):
        path = tmp_path / f"f{i}"
        path.write_bytes(b"x" * 8 * 4096)
        wl = workload()
        wl.do(f"map f 8 file={path}")
        wl.do("touch f 0 8 2 r")
        path.rename(tmp_path / name)    # the workload's commands are words: named after
        wls.append(wl)
    mv = mevitop(["-i", "60000", "--maps", "--no-files"], disable=disable)
    for wl, name in zip(wls, names):
        entry, _ = assert_matches(mv.first, wl.pid, f"(workload {wl.pid})")
        truth = {}
        for f in os.listdir(f"/proc/{wl.pid}/map_files"):
            truth[f] = os.readlink(f"/proc/{wl.pid}/map_files/{f}")
        mapped = [m for m in entry["mappings"] if m.get("path", "").endswith(name)]
        assert len(mapped) == 1, (name, [m.get("path") for m in entry["mappings"]])
        m = mapped[0]
        key = f"{int(m['start'], 16):x}-{int(m['end'], 16):x}"
        assert m["path"] == truth[key], (m["path"], truth[key])
    mv.stop()
