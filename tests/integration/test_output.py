"""-o FILE: --json's snapshots and --folded's stacks go to FILE, mevitop's stdout is left to
`run`'s CMD.  The truth: what CMD itself wrote (its "hello"), pagemap for the snapshots, the
workload's own call graph for the folded stacks; errors opening or writing FILE are one line
on stderr and exit 1, and a bad FILE starts nothing."""
import json
import os
import subprocess
import threading

import harness
from harness import assert_matches, find_proc
from test_exact import FifoWorkload, procs  # noqa: F401 (the fixture)
from test_errors import one_clear_line, run_mevitop
from test_stacks import CHAIN, LIB, PAGES

ENV = dict(os.environ, **harness.SAN_ENV)
# said as {"warning": WARNING} (run --json: stderr is JSON objects)
WARNING = "CMD writes to the same stdout as the snapshots: -o FILE keeps them apart"


def open_fifo_reader(path):
    """The read end of FIFO path, opened once mevitop opens its write end (a thread: the
    open blocks until then); returns a function giving the Reader."""
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("f", open(path, "rb")), daemon=True)
    t.start()

    def reader():
        t.join(timeout=harness.GUARD_S)
        assert "f" in box, f"mevitop never opened {path}"
        return harness.Reader(box["f"], "mevitop-output")
    return reader


def snapshot_after(out, t_mono):
    while True:
        s = json.loads(out.get(what="a snapshot in -o FILE"))
        if s["monotonic"] > t_mono:
            return s


def test_run_json_output_file_leaves_stdout_to_cmd(procs, tmp_path):
    """run --json -o FIFO -- sh -c 'echo hello; exec wl': the snapshots (each one JSON,
    matching pagemap) come through the FIFO, mevitop's stdout holds exactly CMD's hello,
    and nothing is said on stderr."""
    out_path = str(tmp_path / "snapshots")
    os.mkfifo(out_path)
    wl = FifoWorkload(tmp_path)
    wl.argv = ["sh", "-c", 'echo hello; exec "$0" <"$1" >"$2"', *wl.argv[3:]]
    reader = open_fifo_reader(out_path)
    mv = subprocess.Popen([harness.MEVITOP, "run", "--json", "-o", out_path, "-i", "50", "--",
                           *wl.argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    procs.append(wl)
    try:
        out = reader()
        wl.connect()
        wl.do("map a 64")
        t, _ = wl.do("touch a 0 24 1 w")
        snap = snapshot_after(out, t)
        assert_matches(snap, wl.pid)
        assert find_proc(snap, wl.pid)["pages"]["resident"] >= 24
        wl.send("exit")
        stdout, stderr = mv.communicate(timeout=harness.GUARD_S)
    finally:
        if mv.poll() is None:
            mv.kill()
            mv.wait()
    assert mv.returncode == 0, stderr
    assert stdout == b"hello\n"
    assert WARNING.encode() not in stderr, stderr
    while True:     # to the end of FILE: mevitop has closed it
        try:
            out.get(what="the rest of -o FILE")
        except EOFError:
            break
    assert all(json.loads(l)["mode"] == "exact" for l in out.all), out.all


def test_run_json_file_and_the_shared_stdout_warning(tmp_path):
    """A regular FILE: -n 2 snapshots in it, each a JSON line, and stdout only CMD's hello.
    Without -o the snapshots and CMD's hello share stdout, and stderr says so once."""
    path = tmp_path / "out.json"
    cmd = ["run", "--json", "-n", "2", "-i", "50"]
    cmd_sh = ["--", "sh", "-c", "echo hello; exec sleep 60"]
    rc, out, err = run_mevitop([*cmd, "-o", str(path), *cmd_sh])
    assert rc == 128 + 9, err        # CMD dies with mevitop (-n 2 ended it)
    assert out == "hello\n" and err == ""
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(l)["mode"] == "exact" for l in lines), lines
    # FILE is close-on-exec: CMD's own fds do not include it.
    rc, out, err = run_mevitop([*cmd, "-o", str(path), "--", "sh", "-c",
                                'for f in /proc/$$/fd/*; do readlink "$f"; done; exec sleep 60'])
    assert rc == 128 + 9 and out and str(path) not in out, (out, err)
    rc, out, err = run_mevitop([*cmd, *cmd_sh])
    assert rc == 128 + 9, err
    assert "hello" in out.splitlines(), out
    assert len([json.loads(l) for l in out.splitlines() if l != "hello"]) == 2
    # --json: mevitop's stderr is JSON objects, the warning one of them
    assert harness.json_messages(err) == [{"warning": WARNING}]


def start_folded(w, out):
    """mevitop --folded -o out on workload w, once ready (-v says so: the touches must come
    after); returns it and its stderr Reader."""
    mv = subprocess.Popen([harness.MEVITOP, "--mode", "trace", "--folded", "-v", "-o", out,
                           "-p", str(w.pid), "-i", "100"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=ENV)
    err = harness.Reader(mv.stderr, "mevitop-stderr")
    while "folded stacks are printed at exit" not in err.get(what="mevitop ready"):
        pass
    return mv, err


def test_folded_output_file(workload, tmp_path):
    """--folded -o FILE: the folded stacks in FILE (each region's whole call chain with its
    resident pages), nothing on stdout."""
    w = workload("wl_stacks_fp", [LIB])
    path = tmp_path / "folded.txt"
    mv, err = start_folded(w, str(path))
    for r in ("a", "b"):
        w.do(f"touch {r} {PAGES[r]}")
    w.do("exit")
    assert mv.stdout.read() == b""
    assert mv.wait(timeout=harness.GUARD_S) == 0, "\n".join(err.all)
    lines = dict(l.rsplit(" ", 1) for l in path.read_text().splitlines())
    for r in ("a", "b"):
        suffix = ";" + ";".join(reversed(CHAIN[r]))
        hits = [k for k in lines if k.startswith("wl_stacks_fp;") and k.endswith(suffix)]
        assert len(hits) == 1 and int(lines[hits[0]]) == PAGES[r], lines


def test_output_write_failures(workload):
    """-o /dev/full: the same line and exit as a full stdout; the target untouched."""
    wl = workload()
    rc, out, err = run_mevitop(["--json", "-n", "2", "-i", "50", "-p", str(wl.pid), "-o",
                                "/dev/full"])
    assert rc == 1 and out == ""
    assert harness.json_error(err) == "failed to write snapshot: No space left on device"
    assert wl.do("map a 1")[0] > 0          # still running, still answering
    # --folded writes at exit (here: once its process has exited), stacks it has seen.
    w = workload("wl_stacks_fp", [LIB])
    mv, errs = start_folded(w, "/dev/full")
    w.do(f"touch a {PAGES['a']}")
    w.do("exit")
    assert mv.stdout.read() == b""
    assert mv.wait(timeout=harness.GUARD_S) == 1
    errs.join(timeout=5)
    lines = [l for l in errs.all if "folded stacks are printed" not in l and "exited" not in l
             and "no watched process" not in l]
    assert lines == ["mevitop: failed to write folded stacks: No space left on device"], errs.all


def test_output_open_failures(tmp_path):
    """-o in a missing directory: one line, exit 1, and run's CMD is never started; -o with
    nothing to write there is a usage error."""
    missing = tmp_path / "no-such-dir" / "out.json"
    marker = tmp_path / "cmd-ran"
    for cmd in (["--json", "-n", "1", "-o", str(missing)],
                ["run", "--json", "-o", str(missing), "--", "touch", str(marker)]):
        rc, out, err = run_mevitop(cmd)
        assert rc == 1 and out == "", cmd
        assert harness.json_error(err) == f"failed to open {missing}: No such file or " \
                                          "directory", cmd
    assert not marker.exists()
    for cmd in (["-o", str(tmp_path / "x")], ["--probe", "--json", "-o", str(tmp_path / "x")],
                ["serve", "-o", str(tmp_path / "x")]):
        rc, out, err = run_mevitop(cmd)
        assert rc == 2 and out == "", cmd
        usage = ("-o FILE takes --json's snapshots or --folded's stacks (a recording: mevitop "
                 "record -o FILE)")
        if "--json" in cmd:
            assert harness.json_error(err) == usage, cmd
        else:
            assert one_clear_line(err) == "mevitop: " + usage, cmd
    assert not (tmp_path / "x").exists()
