"""Bad input gets one clear line on stderr and a non-zero exit, never a crash or a hang; lost
events are counted, shown and healed from pagemap."""
import json
import os
import signal
import subprocess

import pytest

import harness
from harness import assert_matches, find_proc, json_error


def run_mevitop(args, user=None, timeout=30, env_extra=None, **kw):
    cmd = [harness.MEVITOP, *args]
    if user:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    env = dict(os.environ, **harness.SAN_ENV, **(env_extra or {}))
    if "stdout" in kw:
        p = subprocess.run(cmd, stderr=subprocess.PIPE, text=True, timeout=timeout, env=env,
                           **kw)
    else:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                           **kw)
    return p.returncode, p.stdout, p.stderr


def one_clear_line(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()]
    assert lines, "no message on stderr"
    assert all("ERROR: AddressSanitizer" not in l and "runtime error" not in l for l in lines)
    return lines[0]


def fails(args, rc, message, headless=None, prefix=False, **kw):
    """The error in both forms, with the same exit code: `mevitop: MESSAGE` as the first
    line (args without --json; headless: prepended so that it does not need a terminal,
    e.g. serve) and, with --json, the one object {"error": MESSAGE}."""
    text = [a for a in args if a not in ("--json", "-j")]
    if headless:
        text = [*headless, *text]
    got, out, err = run_mevitop(text, **kw)
    assert got == rc and out == "", (text, got, err)
    line = one_clear_line(err)
    assert (line.startswith if prefix else line.__eq__)("mevitop: " + message), (text, err)
    at = 1 if args and args[0] in ("run", "serve", "record", "replay") else 0
    jargs = args if "--json" in args or "-j" in args else [*args[:at], "--json", *args[at:]]
    got, out, err = run_mevitop(jargs, **kw)
    assert got == rc and out == "", (jargs, got, err)
    msg = json_error(err)
    assert (msg.startswith if prefix else msg.__eq__)(message), (jargs, err)
    return msg


def test_no_such_pid():
    fails(["-p", "999999999", "--json"], 1, "no such process: 999999999")


def test_pid_not_a_number():
    fails(["-p", "12ab", "--json"], 2, "invalid pid '12ab': expected a positive number")


def test_bad_interval():
    for bad in ("0", "-5", "abc", "5"):
        fails(["--json", "-i", bad], 2,
              f"invalid interval '{bad}': expected milliseconds between 10 and 3600000")
    # --json anywhere among the options makes every usage error JSON, earlier ones too
    _, _, err = run_mevitop(["-i", "5", "-n", "1", "--json"])
    assert json_error(err) == "invalid interval '5': expected milliseconds between 10 " \
                              "and 3600000"


def test_unknown_option_and_argument():
    rc, _, err = run_mevitop(["--frobnicate"])
    assert rc == 2 and err == "mevitop: unrecognized option '--frobnicate'\n" \
                             "Try 'mevitop --help'.\n"
    fails(["--frobnicate"], 2, "unrecognized option '--frobnicate'")
    fails(["-x"], 2, "invalid option -- 'x'")
    fails(["-n", "1", "-i"], 2, "option '-i' requires an argument")
    fails(["--interval"], 2, "option '--interval' requires an argument")
    fails(["--maps=1"], 2, "option '--maps=1' doesn't allow an argument")
    fails(["extra"], 2, "unexpected argument 'extra'")
    # after `run`, too (getopt would have said "run: ...")
    fails(["run", "--frobnicate", "--", "true"], 2, "unrecognized option '--frobnicate'")
    fails(["run", "-n", "1"], 2, "run needs a command: mevitop run [OPTIONS] -- CMD")
    # What follows run's CMD is CMD's: a --json there is not mevitop's.
    rc, _, err = run_mevitop(["run", "-x", "--", "true", "--json"])
    assert rc == 2 and err.startswith("mevitop: invalid option -- 'x'\n"), err


def test_not_root():
    fails(["--json", "-n", "1"], 1, "must be run as root: loading BPF programs and reading "
          "other processes' page tables need CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE (try "
          "sudo)", user=65534)


def test_nested_pid_namespace_refused():
    """Every BPF program names a process by its pid in the kernel's root pid namespace: in
    a pid namespace of its own (a container without --pid=host, here unshare's) those are
    not /proc's pids, so mevitop refuses to start, in both forms, instead of listing the
    host's processes under this namespace's pids.  It starts in the root one (the rest of
    the suite)."""
    message = ("mevitop runs in the root pid namespace only: its BPF programs see the "
               "kernel's pids, not this namespace's (run it on the host, or in a container "
               "that shares the host's, e.g. docker run --pid=host)")
    env = dict(os.environ, **harness.SAN_ENV)
    for args in (["serve", "-n", "1"], ["--json", "-n", "1"]):
        p = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", harness.MEVITOP,
                            *args], capture_output=True, text=True, timeout=30, env=env)
        assert p.returncode == 1 and p.stdout == "", (args, p.returncode, p.stderr)
        if "--json" in args:
            assert json_error(p.stderr) == message, p.stderr
        else:
            assert one_clear_line(p.stderr) == "mevitop: " + message, p.stderr


def test_no_btf():
    fails(["--json", "-n", "1", "--disable", "btf"], 1, "this kernel has no BTF "
          "(/sys/kernel/btf/vmlinux is missing): mevitop's CO-RE programs need "
          "CONFIG_DEBUG_INFO_BTF=y", headless=["serve"])


def test_no_fault_hook():
    # No tp_btf and no tracefs, and this kernel has neither kprobes nor fentry.
    fails(["--json", "-n", "1", "--disable", "tp_btf,tracefs,fentry,kprobe"], 1,
          "no page-fault hook is available: need tp_btf or the exceptions tracepoints (x86), "
          "or fentry/kprobes on handle_mm_fault", headless=["serve"])


def test_bpf_load_failure():
    """A ring buffer the kernel refuses (4 GiB): the BPF object fails to load.  With -vv
    libbpf's lines are JSON objects too (debug, its warnings info), and the one error is
    mevitop's."""
    args = ["--json", "-n", "1", "--ringbuf-size", str(1 << 32)]
    want = "failed to load BPF programs: Invalid argument (run with -vv for the verifier log)"
    fails(args, 1, want, headless=["serve"])
    rc, out, err = run_mevitop([*args, "-vv"])
    assert rc == 1 and out == ""
    objs = harness.json_messages(err)
    assert [o for o in objs if "error" in o] == [{"error": want}] and objs[-1] == {"error": want}
    assert any(o.get("debug", "").startswith("libbpf: ") for o in objs), objs[:5]


def test_uid_must_fit_and_be_digits_only():
    # 4294967296 wrapped to uid 0 (root's processes); (uid_t)-1 means "no uid".
    for bad in ("4294967296", "4294967295", " 0", "+0", "0x1", ""):
        fails(["--json", "-n", "1", "-u", bad], 2,
              f"no such user: '{bad}' (a user name, or a uid from 0 to 4294967294)")


def test_disable_needs_a_feature():
    for bad in ("", ",", " , "):
        fails(["--json", "-n", "1", "--disable", bad], 2, "--disable needs a feature name",
              prefix=True)
    rc, _, err = run_mevitop(["--json", "-n", "1"], env_extra={"MEVITOP_DISABLE": ","})
    assert rc == 2 and json_error(err).startswith("--disable needs a feature name")
    rc, _, err = run_mevitop(["-n", "1"], env_extra={"MEVITOP_DISABLE": ","})
    assert rc == 2 and "--disable needs a feature name" in one_clear_line(err)


def test_pid_with_blank_or_sign():
    for bad in (" 1", "+1", "1 ", "\t1"):
        fails(["--json", "-p", bad], 2, f"invalid pid '{bad}': expected a positive number")


def test_json_errors_escape_what_the_user_typed():
    """Quotes, backslashes, control characters and bytes that are not UTF-8 in an argument
    quoted by an error: the object is still one valid line of JSON, the text exact (an
    invalid byte as U+FFFD)."""
    bad = b'a"b\\c\nd\te\x01\x7f\xff\xc3(' + "é".encode() + b"0123456789"
    p = subprocess.run([harness.MEVITOP.encode(), b"--json", b"--comm", bad],
                       capture_output=True, timeout=30, env=dict(os.environ, **harness.SAN_ENV))
    assert p.returncode == 2 and p.stdout == b""
    assert p.stderr.count(b"\n") == 1
    shown = bad.decode(errors="replace")
    assert json_error(p.stderr.decode()) == (f"invalid command name '{shown}': 1 to 15 "
                                             "characters, as in /proc/PID/comm")
    # The raw bytes never reach stderr: only JSON's escapes and valid UTF-8.
    assert b"\xff" not in p.stderr and b"\x01" not in p.stderr and b"\x7f" not in p.stderr


def test_json_messages_of_a_run_are_objects(workload, tmp_path):
    """--json -v: every line on stderr is an object -- info for -v, notice for news (a
    watched process that exited, even one named with quotes, a newline and a byte that is
    not UTF-8), never an error when mevitop ends well."""
    # A process may only rename itself (/proc/PID/comm): exec's name is the file's.
    name = b'q"\\\n\xffz'
    link = os.path.join(os.fsencode(tmp_path), name)
    os.symlink(os.fsencode(os.path.join(harness.WORKLOADS, "wl")), link)
    wl = workload(os.fsdecode(link))
    with open(f"/proc/{wl.pid}/comm", "rb") as f:
        assert f.read() == name + b"\n"
    comm = name.decode(errors="replace")
    # The snapshot itself is valid UTF-8 JSON with that comm too.
    p = subprocess.run([harness.MEVITOP, "--json", "-n", "1", "-p", str(wl.pid)],
                       capture_output=True, timeout=30, env=dict(os.environ, **harness.SAN_ENV))
    assert p.returncode == 0, p.stderr
    assert find_proc(json.loads(p.stdout.decode("utf-8")), wl.pid)["comm"] == comm
    mv = harness.Mevitop(["-p", str(wl.pid), "-i", "50", "-v"])
    try:
        wl.do("exit")
        rc = mv.proc.wait(timeout=harness.GUARD_S)
    finally:
        mv.stop()
    assert rc == 0, mv.stderr_text()
    objs = harness.json_messages(mv.stderr_text())
    keys = {k for o in objs for k in o}
    assert keys <= {"info", "notice", "warning"}, mv.stderr_text()
    assert {"info": "process %d (%s) exited" % (wl.pid, comm)} not in objs
    assert {"notice": "process %d (%s) exited" % (wl.pid, comm)} in objs, objs
    assert objs[-1] == {"notice": "no watched process is left"}, objs
    assert any("info" in o for o in objs), objs


def test_snapshot_write_failures(workload):
    """stdout closed or full: one line saying why, exit 1 -- the target is untouched."""
    wl = workload()
    args = ["--json", "-n", "2", "-i", "50", "-p", str(wl.pid)]
    with open("/dev/full", "w") as full:
        rc, _, err = run_mevitop(args, stdout=full)
    assert rc == 1
    assert json_error(err) == "failed to write snapshot: No space left on device"
    rc, _, err = run_mevitop(args, stdout=subprocess.DEVNULL, preexec_fn=lambda: os.close(1))
    assert rc == 1
    assert json_error(err) == "failed to write snapshot: Bad file descriptor"
    rc, _, err = run_mevitop(["-p", str(wl.pid)], stdout=subprocess.DEVNULL,
                             preexec_fn=lambda: os.close(1))
    assert rc == 1
    assert one_clear_line(err) == "mevitop: failed to write to stdout: Bad file descriptor"
    assert wl.do("map a 1")[0] > 0          # still running, still answering


def test_32bit_process_refused_in_exact_mode():
    """An i386 process: exact mode says why it cannot, and leaves it running, unstopped;
    the pagemap engine watches it."""
    wl32 = subprocess.Popen([os.path.join(harness.WORKLOADS, "wl32")], stdout=subprocess.PIPE)
    try:
        pid = int(wl32.stdout.readline().split()[1])
        want = (f"process {pid} is 32-bit: 32-bit processes are not supported in "
                "exact mode")
        fails(["--json", "-n", "1", "--exact", "-p", str(pid)], 1,
              want + "; watch it without --exact (mevitop -p PID)", headless=["serve"])
        with open(f"/proc/{pid}/stat") as f:
            assert f.read().rsplit(")", 1)[1].split()[0] == "S"     # paused, not stopped
        with open(f"/proc/{pid}/status") as f:
            assert "TracerPid:\t0\n" in f.read()
        rc, out, err = run_mevitop(["--json", "-n", "1", "-p", str(pid)])
        assert rc == 0, err
        assert_matches(json.loads(out), pid)
        rc, _, err = run_mevitop(["run", "--json", "-n", "1", "--",
                                  os.path.join(harness.WORKLOADS, "wl32")])
        assert rc == 1
        msg = json_error(err)
        assert msg.startswith("cannot watch ")
        assert "is 32-bit: 32-bit processes are not supported in exact mode" in msg
    finally:
        wl32.kill()
        wl32.wait()


def test_kernel_thread_refused():
    fails(["--json", "-p", "2"], 1, "process 2 is a kernel thread or a zombie: it has no "
          "user address space to show")


def test_probe_lists_hooks():
    rc, out, err = run_mevitop(["--probe"])
    assert rc == 0, err
    for hook in ("user page faults", "kernel faults on user memory", "mm syscalls", "fork",
                 "exec", "exit", "rss counters", "PAGEMAP_SCAN", "tp_btf"):
        assert hook in out
    rc, out, _ = run_mevitop(["--probe", "--disable", "tp_btf"])
    assert rc == 0
    assert [l for l in out.splitlines() if l.strip().startswith("user page faults")][0].split()[-1] == "tracepoint"


def test_help_and_version():
    rc, out, _ = run_mevitop(["--help"])
    assert rc == 0 and "--interval" in out and "--no-reconcile" in out
    rc, out, _ = run_mevitop(["--version"])
    assert rc == 0 and out.startswith("mevitop ")


@pytest.mark.parametrize("switches", [(), ("fault_rings",)], ids=["fault_rings", "events_ring"])
def test_lost_events_are_counted_and_healed(mevitop, workload, switches):
    """A consumer that stalls (here: SIGSTOP) while a 4 KiB ring buffer (and, with them, fault
    rings of the least size, 4,096 records a CPU) takes a burst of 8,192 faults must lose
    records.  The losses are counted, and the process they touched is rescanned until the
    model equals pagemap again, even with --no-reconcile."""
    wl = workload()
    mv = mevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", "--mode", "trace",
                  "--ringbuf-size", "4096"], switches)
    wl.do("map a 8192")
    os.kill(mv.proc.pid, signal.SIGSTOP)
    try:
        t, _ = wl.do("touch a 0 8192 1 w")
    finally:
        os.kill(mv.proc.pid, signal.SIGCONT)
    snap = mv.snapshot_after(t)
    for _ in range(100):  # the tick that reads the losses schedules the rescan
        if snap["stats"]["reconciles"]:
            break
        snap = mv.snapshot()
    assert snap["stats"]["lost_by_kind"]["fault"] > 0, snap["stats"]
    assert snap["stats"]["fault_rings"] == (not switches), snap["stats"]
    assert snap["stats"]["reconciles"] > 0
    assert snap["stats"]["drift_pages"] > 0
    assert_matches(snap, wl.pid)
    assert find_proc(snap, wl.pid)["pages"]["resident"] >= 8192


def test_replay_errors_in_both_forms(tmp_path):
    """replay's own options: usage errors and a file that cannot be read, as text and, with
    --json wherever it stands, as the one JSON object (issue 12's item 7 for replay too)."""
    missing = tmp_path / "none"
    fails(["replay"], 2, "replay needs a recording: mevitop replay FILE --json")
    fails(["replay", "--bogus"], 2, "unrecognized option '--bogus'")
    # getopt permutes what it scans: the silent pass looking for --json must not, or a
    # missing argument would be read as the file name taken for a time.
    fails(["replay", str(missing), "--at"], 2, "option '--at' requires an argument")
    fails(["replay", str(missing), "--at", "soon"], 2,
          "invalid time 'soon': expected seconds from the start of the recording")
    fails(["replay", str(missing), "--at", "1", "--from", "0"], 2,
          "--at and --from/--to do not mix")
    fails(["replay", str(missing)], 1,
          f"failed to open recording {missing}: No such file or directory")
    # text: getopt's words, mevitop's prefix, and the hint
    rc, out, err = run_mevitop(["replay", "--bogus"])
    assert rc == 2 and err.splitlines() == ["mevitop: unrecognized option '--bogus'",
                                            "Try 'mevitop replay --help'."], err
    rc, out, err = run_mevitop(["report", "x", "-o"])
    assert rc == 2 and err.splitlines() == ["mevitop: option '-o' requires an argument",
                                            "Try 'mevitop report --help'."], err
