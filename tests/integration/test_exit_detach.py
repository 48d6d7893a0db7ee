"""Trace mode's exit: the last closes of its perf-based links (the per-syscall tracepoints'
programs; ~40 ms of RCU grace periods each) are left to a grandchild, `mevitop-detach`
(user/kernel/perf_release.c), so that mevitop itself is gone at once.  Checked against the
kernel's own list of BPF links (bpftool), by the link ids in mevitop's fdinfo.  A link's id
goes at its release, when its program is detached; a program's id goes an RCU grace
period later, so links are what is compared:
- when mevitop has been reaped, every one of its other links (the fault hook's, a tp_btf
  link, first) is gone: only perf links may remain;
- then the detacher exits and they go too, and every program of mevitop's is unloaded;
- with --disable detach_child, mevitop closes them itself: no link remains once it is
  reaped.
The detacher holds nothing else: a reader of mevitop's output sees EOF when mevitop exits
(every test reading mevitop's stdout would hang otherwise).
"""
import json
import os
import subprocess
import time

import pytest

import harness


def fdinfo_ids(pid, key):
    """{id} of the BPF objects pid holds, by their fdinfo key (link_id, prog_id)."""
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def bpftool(kind):
    """{id: type} of every BPF link or program (kind) there is now."""
    out = subprocess.run(["bpftool", kind, "show", "--json"], capture_output=True,
                         text=True, check=True).stdout
    return {o["id"]: o["type"] for o in json.loads(out)}


@pytest.mark.parametrize("disable", [(), ("detach_child",)], ids=["default", "no-detach_child"])
def test_trace_exit_leaves_only_perf_links(workload, disable):
    wl = workload()
    mv = harness.Mevitop(["-p", str(wl.pid), "-i", "100", "--mode", "trace", "--no-files"],
                         disable)
    try:
        mv.snapshot_after(0)
        links, progs = fdinfo_ids(mv.proc.pid, "link_id"), fdinfo_ids(mv.proc.pid, "prog_id")
        types = {i: t for i, t in bpftool("link").items() if i in links}
        assert "perf_event" in types.values() and "raw_tracepoint" in types.values(), types
    finally:
        assert mv.stop() == 0
    left = {i: t for i, t in bpftool("link").items() if i in links}
    assert all(t == "perf_event" for t in left.values()), \
        f"links other than perf links outlive mevitop: {left}"
    if disable:
        assert not left, f"links outlive mevitop: {left}"
    deadline = time.monotonic() + harness.GUARD_S
    while True:
        links_left = set(bpftool("link")) & links
        progs_left = set(bpftool("prog")) & progs
        if not links_left and not progs_left:
            break
        assert time.monotonic() < deadline, f"still there: links {links_left}, programs " \
            f"{progs_left}"
        time.sleep(0.05)  # the kernel's grace periods; a failure guard bounds it
    assert wl.do("map a 1")[0] > 0  # the target runs on
