"""Exact mode honours or refuses every option --help lists, never ignores one: each option is
either refused with exit 2 and "mevitop: --X does not apply to exact mode", or given to a
real exact-mode session whose output shows its effect.  The options are read from --help, so
an option added later fails here until it is put in one of the tables below."""
import json
import os
import re
import socket
import subprocess
import time
import urllib.request

import pytest

import harness
from test_docs import help_text, options

ENV = dict(os.environ, **harness.SAN_ENV)

# Options exact mode cannot apply: (arguments, the name the message gives).
REFUSED = {
    "mode": (["--mode", "sample"], "--mode"),
    "user": (["-u", "root"], "--user"),
    "comm": (["--comm", "sh"], "--comm"),
    "cgroup": (["--cgroup", None], "--cgroup"),  # a real cgroup directory, found below
    "rss-hook": (["--rss-hook"], "--rss-hook"),
    "chunk-map-size": (["--chunk-map-size", "64"], "--chunk-map-size"),
    "folded": (["--folded"], "--folded"),
    "stack-interval": (["--stack-interval", "10"], "--stack-interval"),
    "stack-period": (["--stack-period", "10"], "--stack-period"),
    "stack-duty": (["--stack-duty", "10/100"], "--stack-duty"),
}

# Honoured, each checked by a test below.
HONOURED = {
    "pid", "json", "interval", "count", "maps", "exact", "attach-timeout", "no-children",
    "max-cpu", "listen", "metrics-top", "metrics-procs", "output", "record", "duration",
    "max-size", "probe", "verbose", "help", "version", "disable", "stacks", "heat", "fsync",
    "keys",
}

# Honoured (the same engine options as every mode: cli_engine_opts), but with no effect a
# short session can show: the periodic rescans run every 30 s, the ring size only shows as
# fewer losses under load.  Each must still be accepted and the session must work.
ACCEPTED = {
    "no-reconcile": ["--no-reconcile"],
    "ringbuf-size": ["--ringbuf-size", "65536"],
    # The view's layout: the same heatmap in every mode (test_ui_scale checks the layouts).
    "layout": ["--layout", "packed"],
    # The page cache's files: the engine's, the same in every mode (test_pagecache checks
    # them; test_ui_files the view --files opens).
    "files": ["--files"],
    "file": ["--file", "/etc/os-release"],
    "files-top": ["--files-top", "3"],
    "metrics-files": ["--metrics-files", "3"],
    "no-files": ["--no-files"],
    # Who shares the pages: the engine's pass after each refresh, the same in every mode
    # (test_sharing checks the figures).
    "sharing": ["--sharing"],
    "sharing-budget": ["--sharing", "--sharing-budget", "2000"],
}


# Options of the subcommands that read a recording (replay, report): no engine there, and
# the main command line does not take them (exit 2).
OTHER_COMMANDS = {"at", "from", "to"}


def a_cgroup():
    for d in ("unified", "", "systemd", "pids"):
        path = os.path.join("/sys/fs/cgroup", d)
        if os.path.exists(os.path.join(path, "cgroup.procs")):
            return path
    raise AssertionError("no cgroup directory with cgroup.procs under /sys/fs/cgroup")


def run(args, timeout=60):
    return subprocess.run([harness.MEVITOP, *args], capture_output=True, text=True,
                          timeout=timeout, env=ENV)


def snapshots(out):
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def test_every_help_option_is_classified():
    helped = options(help_text())
    classified = set(REFUSED) | HONOURED | set(ACCEPTED) | OTHER_COMMANDS
    assert helped - classified == set(), "options --help lists that exact mode neither " \
        f"honours nor refuses here: {sorted(helped - classified)}"
    assert classified - helped == set(), sorted(classified - helped)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name):
    args, shown = REFUSED[name]
    args = [a if a is not None else a_cgroup() for a in args]
    for cmd in (["--exact", "-p", "1", *args], ["run", *args, "--", "true"]):
        p = run(cmd)
        assert p.returncode == 2, (cmd, p.stderr)
        assert p.stderr.splitlines()[0] == f"mevitop: {shown} does not apply to exact mode", \
            (cmd, p.stderr)
        assert p.stdout == ""


@pytest.fixture
def wl(workload):
    w = workload()
    w.do("map a 64")
    w.do("touch a 0 16 1 w")
    return w


def test_session_options(wl):
    """-p, --json, -i, -n, --maps, --exact: N snapshots at the interval, the process's
    mappings, its private anonymous ones tracked by userfaultfd."""
    p = run(["--exact", "-p", str(wl.pid), "--json", "-i", "70", "-n", "3", "--maps"])
    assert p.returncode == 0, p.stderr
    snaps = snapshots(p.stdout)
    assert len(snaps) == 3
    assert all(s["interval_ms"] == 70 for s in snaps)
    procs = snaps[-1]["processes"]
    assert [q["pid"] for q in procs] == [wl.pid]
    assert any(m["tracker"] == "userfaultfd" for m in procs[0]["mappings"])
    for name in ACCEPTED:
        p = run(["--exact", "-p", str(wl.pid), "--json", "-n", "1", *ACCEPTED[name]])
        assert p.returncode == 0, (name, p.stderr)
        assert [q["pid"] for q in snapshots(p.stdout)[0]["processes"]] == [wl.pid], name


def test_no_children(wl):
    """A child forked while exact mode watches: followed by default, not with --no-children."""
    for extra, followed in (([], True), (["--no-children"], False)):
        mv = harness.Mevitop(["--exact", "-p", str(wl.pid), "-i", "50", *extra])
        child = None
        try:
            _, words = wl.do("fork a 0 4")
            child = int(words[0])
            deadline = time.monotonic() + 5
            seen = False
            while time.monotonic() < deadline and not seen:
                seen = any(q["pid"] == child for q in mv.snapshot()["processes"])
            assert seen == followed, (extra, child)
        finally:
            mv.stop()
            if child:
                os.kill(child, 9)


def test_max_cpu(wl):
    """--max-cpu 1 at a 10 ms interval: exact mode's engine widens the interval."""
    mv = harness.Mevitop(["--exact", "-p", str(wl.pid), "-i", "10", "--max-cpu", "1"])
    try:
        harness.widened_interval(mv)
    finally:
        mv.stop()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_metrics_options(wl):
    """--listen serves the metrics of the watched process; --metrics-top 0 leaves out the
    per-mapping series, --metrics-procs 1 exports one process."""
    port = free_port()
    mv = harness.Mevitop(["--exact", "-p", str(wl.pid), "-i", "50", "--listen",
                          f"127.0.0.1:{port}", "--metrics-top", "0", "--metrics-procs", "1"])
    try:
        mv.snapshot()
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
        text = text.decode()
        assert f'pid="{wl.pid}"' in text
        assert not re.search(r"^mevitop_mapping_\w+\{", text, re.M), text
        pids = set(re.findall(r'pid="(\d+)"', text))
        assert pids == {str(wl.pid)}
    finally:
        mv.stop()


def test_record_options(tmp_path):
    """run --record FILE --duration 1 --max-size: a recording of exact mode, which replay
    reads; so does record -o FILE --exact -p PID."""
    path = tmp_path / "x.rec"
    p = run(["run", "--record", str(path), "--max-size", "1M", "-i", "50", "--",
             "sh", "-c", "sleep 0.5"])
    assert p.returncode == 0, p.stderr
    r = run(["replay", str(path), "--json"])
    assert r.returncode == 0, r.stderr
    assert snapshots(r.stdout), r.stdout
    w = harness.Workload()
    try:
        out = tmp_path / "y.rec"
        start = time.monotonic()
        p = run(["record", "-o", str(out), "--duration", "1", "-i", "50", "--exact", "-p",
                 str(w.pid)])
        assert p.returncode == 0, p.stderr
        assert time.monotonic() - start < 30
        r = run(["replay", str(out), "--json"])
        assert r.returncode == 0 and snapshots(r.stdout), r.stderr
        # --heat: every mapping of every frame carries its heat; --fsync: accepted (its
        # syncs are counted with strace in test_record.py)
        hot = tmp_path / "z.rec"
        p = run(["record", "-o", str(hot), "-n", "3", "-i", "50", "--heat", "--fsync",
                 "--exact", "-p", str(w.pid)])
        assert p.returncode == 0, p.stderr
        frames = snapshots(run(["replay", str(hot), "--json"]).stdout)
        assert len(frames) == 3 and all(f["mode"] == "exact" for f in frames)
        assert all("heat" in m for f in frames for q in f["processes"] for m in q["mappings"])
    finally:
        w.close()


def test_keys():
    """--keys prints the key tables, with --exact as without."""
    plain, exact = run(["--keys"]), run(["--exact", "-p", "1", "--keys"])
    assert plain.returncode == exact.returncode == 0, exact.stderr
    assert exact.stdout == plain.stdout and "Heatmap" in exact.stdout


def test_probe_verbose_help_version(wl):
    p = run(["--exact", "--probe"])
    assert p.returncode == 0 and "userfaultfd" in p.stdout, p.stdout
    p = run(["--exact", "--help"])
    assert p.returncode == 0 and "--exact" in p.stdout
    p = run(["--exact", "-p", str(wl.pid), "--version"])
    assert p.returncode == 0 and p.stdout.startswith("mevitop ")
    quiet = run(["--exact", "-p", str(wl.pid), "--json", "-n", "1"])
    loud = run(["--exact", "-p", str(wl.pid), "--json", "-n", "1", "-v"])
    assert quiet.returncode == 0 and loud.returncode == 0, loud.stderr
    assert len(loud.stderr.splitlines()) > len(quiet.stderr.splitlines()), loud.stderr


def test_disable_and_attach_timeout(wl):
    """--disable uffd: exact mode says it cannot run (the switch reached it); an
    --attach-timeout out of range is refused, one in range attaches."""
    p = run(["--exact", "-p", str(wl.pid), "--json", "-n", "1", "--disable", "uffd"])
    assert p.returncode == 1 and "userfaultfd" in p.stderr, p.stderr
    p = run(["--exact", "-p", str(wl.pid), "--json", "-n", "1", "--attach-timeout", "0"])
    assert p.returncode == 2, p.stderr
    p = run(["--exact", "-p", str(wl.pid), "--json", "-n", "1", "--attach-timeout", "5000"])
    assert p.returncode == 0, p.stderr


def test_other_commands_options_refused():
    for name in sorted(OTHER_COMMANDS):
        p = run(["--exact", "-p", "1", f"--{name}=5"])
        assert p.returncode == 2, (name, p.stderr)


def test_stacks(wl):
    """--stacks: ordered exact mode gives each first touch its fault's stack (tested page by
    page in test_stacks.py); fast exact mode, which finds first touches in pagemap scans,
    refuses it with the reason."""
    for cmd in (["--exact", "-p", str(wl.pid), "--stacks"], ["run", "--stacks", "--", "true"]):
        p = run(cmd)
        assert p.returncode == 2, (cmd, p.stderr)
        assert p.stderr.splitlines()[0] == "mevitop: --stacks in exact mode needs " \
            "--exact=ordered: fast exact mode sees first touches in pagemap scans, not the " \
            "faults that made them", (cmd, p.stderr)
    p = run(["--exact=ordered", "-p", str(wl.pid), "--stacks", "--json", "-n", "1"])
    assert p.returncode == 0, p.stderr
    assert snapshots(p.stdout)[0]["stats"]["stacks"]["attribution"].startswith("exact"), \
        p.stdout
