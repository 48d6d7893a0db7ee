"""The production modes' layout hook: sample and chunk modes learn layout changes from
tp_btf/mmap_lock_released, enable no syscall tracepoint (any one sends every syscall of
every process down the kernel's slow path), re-read a busy process's layout at most once per
refresh, and --probe names the hook.  The accuracy suite (test_accuracy.py) checks the
models with the hook and with it forced off."""
import os
import subprocess

import pytest

from harness import MEVITOP, SAN_ENV, assert_matches, find_proc, json_messages


def links_of(pid):
    """(link_type, tp_name) of every BPF link the process holds, from the kernel's own
    /proc/PID/fdinfo -- not from anything mevitop reports."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:bpf_link":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
        except FileNotFoundError:
            continue
        out.append((info.get("link_type"), info.get("tp_name", "")))
    return out


def is_syscall_tp(name):
    return name.startswith(("sys_enter", "sys_exit"))


@pytest.mark.parametrize("mode", ["sample", "chunk"])
def test_production_modes_enable_no_syscall_tracepoint(mevitop, workload, mode):
    """Every link is a BTF tracepoint (raw_tracepoint: detached without an RCU wait) or the
    task iterator (an iter link: it runs only when mevitop reads it, at each refresh), none
    is on a syscall, and the layout hook is one of them."""
    wl = workload()
    mv = mevitop(["-p", str(wl.pid), "-i", "100", "--mode", mode])
    links = links_of(mv.proc.pid)
    names = {n for _, n in links}
    assert "mmap_lock_released" in names, links
    assert not [n for n in names if is_syscall_tp(n)], links
    assert {t for t, _ in links} == {"raw_tracepoint", "iter"}, links
    assert [t for t, _ in links].count("iter") == 1, links
    assert mv.first["stats"]["layout_source"] == "mmap_lock"


@pytest.mark.parametrize("mode,switches", [("trace", ()), ("sample", ("mmap_lock",))])
def test_syscall_records_where_they_are_needed(mevitop, workload, mode, switches):
    """The other side of the check above, so it can fail: trace mode (the ordered stream)
    and the forced fallback do hook the syscalls, and not mmap_lock."""
    wl = workload()
    mv = mevitop(["-p", str(wl.pid), "-i", "100", "--mode", mode], switches)
    names = {n for _, n in links_of(mv.proc.pid)}
    assert [n for n in names if is_syscall_tp(n)], names
    assert "mmap_lock_released" not in names
    assert mv.first["stats"]["layout_source"] == "syscalls"


def test_busy_layout_is_read_once_per_refresh(mevitop, workload):
    """A process flipping a page's protection hundreds of thousands of times a second (each
    flip takes and releases its mmap_lock for writing) costs one layout read per refresh,
    visible in stats; and the model still ends equal to pagemap."""
    wl = workload()
    mv = mevitop(["-p", str(wl.pid), "-i", "100", "--no-reconcile"])
    wl.do("map a 16")
    t0, _ = wl.do("touch a 0 16 1 w")
    before = mv.snapshot_after(t0)
    t1, extra = wl.do("protectloop a 1500")
    flips = int(extra[0])
    snaps = [before]
    while snaps[-1]["monotonic"] <= t1:
        snaps.append(mv.snapshot())
    after = mv.snapshot()
    snaps.append(after)
    assert flips > 10000, f"the workload flipped only {flips} times"
    for a, b in zip(snaps, snaps[1:]):
        assert b["stats"]["maps_reads"] - a["stats"]["maps_reads"] <= 1, (a["stats"], b["stats"])
        assert b["stats"]["layout_changes"] - a["stats"]["layout_changes"] <= 1
    changes = after["stats"]["layout_changes"] - before["stats"]["layout_changes"]
    assert changes >= 10, "the hook saw the flips in most refreshes of 1.5 s at 100 ms"
    # The cost is visible: layout reads per second over each interval.
    assert max(s["stats"]["maps_reads_per_sec"] for s in snaps) > 0
    assert_matches(after, wl.pid)
    assert find_proc(after, wl.pid)["state"] == "running"


def probe(*args):
    r = subprocess.run([MEVITOP, "--probe", *args], capture_output=True, text=True,
                       env=dict(os.environ, **SAN_ENV), timeout=30)
    assert r.returncode == 0, r.stderr
    return {l.strip().rsplit("  ", 1)[0].strip(): l.strip().rsplit("  ", 1)[-1].strip()
            for l in r.stdout.splitlines() if l.startswith("  ")}


def test_probe_names_the_layout_hook():
    assert probe()["layout changes"] == "tp_btf mmap_lock_released"
    assert probe("--disable", "mmap_lock")["layout changes"] == "none"
    # Only the BTF tracepoint is used: without tp_btf, the syscall hooks say it.
    assert probe("--disable", "tp_btf")["layout changes"] == "none"


def test_verbose_says_which_layout_source(workload):
    """-v names the layout source, and says what the fallback costs."""
    wl = workload()

    def said(*switches):
        r = subprocess.run([MEVITOP, "-v", "--json", "-n", "1", "-p", str(wl.pid), *switches],
                           capture_output=True, text=True, env=dict(os.environ, **SAN_ENV),
                           timeout=30)
        assert r.returncode == 0, r.stderr
        return [o["info"] for o in json_messages(r.stderr)
                if "layout changes:" in o.get("info", "")]
    assert said() == ["layout changes: tp_btf/mmap_lock_released (no syscall hook)"]
    line, = said("--disable", "mmap_lock")
    assert "syscalls/sys_exit_*" in line and "disabled by switch" in line and "slow path" in line
