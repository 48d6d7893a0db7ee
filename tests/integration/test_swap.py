"""Swapped pages: with a swap file, MADV_PAGEOUT of anonymous memory moves pages to swap;
mevitop shows them as swapped, page for page.  Swapping them back in with swapoff changes
the process without any fault or syscall of its own: the rss counters notice and the model
is healed -- in every mode."""
import subprocess
import time

import pytest

import harness
from harness import assert_matches, find_proc


@pytest.mark.parametrize("mode", ["sample", "trace", "chunk", "trace --rss-hook"])
def test_pageout_to_swap_and_back(mevitop, workload, swapfile, mode):
    wl = workload()
    mv = mevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", "--mode", *mode.split()])
    wl.do("map a 256")
    wl.do("touch a 0 256 1 w")
    t, _ = wl.do("advise a 0 128 pageout")
    snap = mv.snapshot_after(t)
    entry, truth = assert_matches(snap, wl.pid)
    swapped = entry["pages"]["swapped"]
    assert swapped > 64, f"only {swapped} pages went to swap"
    assert list(truth.values()).count("swapped") == swapped
    scans_before = snap["stats"]["scans"]
    # swapoff brings them back behind the process's back.
    subprocess.run(["swapoff", swapfile], check=True)
    t = time.monotonic()
    deadline = t + harness.GUARD_S
    while True:
        snap = mv.snapshot_after(t)
        if find_proc(snap, wl.pid)["pages"]["swapped"] == 0:
            break
        # Another swap device left on (by a test killed elsewhere) would keep pages out.
        assert time.monotonic() < deadline, "pages still swapped after swapoff: " + \
            subprocess.run(["swapon", "--show"], capture_output=True, text=True).stdout
        t = snap["monotonic"]
    assert_matches(snap, wl.pid)
    if mode.startswith("trace"):
        # Trace mode learns of it from the rss counters (polled, or kept by the rss_stat
        # hook with --rss-hook): a reconciliation.
        assert snap["stats"]["reconciles"] > 0
    elif mode == "chunk":
        # Chunk mode has no syscall records to explain rss with (layouts come from the
        # mmap_lock hook): rss that moved with no fault is its own rescan, as in sample mode,
        # which rescans any process whose counters moved.
        assert snap["stats"]["scans"] > scans_before
