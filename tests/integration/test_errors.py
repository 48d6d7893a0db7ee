"""Bad input gets one clear line on stderr and a non-zero exit, never a crash or a hang; lost
events are counted, shown and healed from pagemap."""
import json
import os
import signal
import subprocess

import harness
from harness import assert_matches, find_proc


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


def test_no_such_pid():
    rc, out, err = run_mevitop(["-p", "999999999", "--json"])
    assert rc == 1 and out == ""
    assert one_clear_line(err) == "mevitop: no such process: 999999999"


def test_pid_not_a_number():
    rc, _, err = run_mevitop(["-p", "12ab", "--json"])
    assert rc == 2
    assert "invalid pid '12ab'" in one_clear_line(err)


def test_bad_interval():
    for bad in ("0", "-5", "abc", "5"):
        rc, _, err = run_mevitop(["--json", "-i", bad])
        assert rc == 2, bad
        assert f"invalid interval '{bad}'" in one_clear_line(err)


def test_unknown_option_and_argument():
    rc, _, err = run_mevitop(["--frobnicate"])
    assert rc == 2 and "mevitop --help" in err
    rc, _, err = run_mevitop(["extra"])
    assert rc == 2 and "unexpected argument 'extra'" in err


def test_not_root():
    rc, out, err = run_mevitop(["--json", "-n", "1"], user=65534)
    assert rc == 1 and out == ""
    assert "must be run as root" in one_clear_line(err)


def test_no_btf():
    rc, _, err = run_mevitop(["--json", "-n", "1", "--disable", "btf"])
    assert rc == 1
    assert "no BTF" in one_clear_line(err)


def test_no_fault_hook():
    # No tp_btf and no tracefs, and this kernel has neither kprobes nor fentry.
    rc, _, err = run_mevitop(["--json", "-n", "1", "--disable", "tp_btf,tracefs,fentry,kprobe"])
    assert rc == 1
    assert "no page-fault hook is available" in one_clear_line(err)


def test_uid_must_fit_and_be_digits_only():
    # 4294967296 wrapped to uid 0 (root's processes); (uid_t)-1 means "no uid".
    for bad in ("4294967296", "4294967295", " 0", "+0", "0x1", ""):
        rc, out, err = run_mevitop(["--json", "-n", "1", "-u", bad])
        assert rc == 2 and out == "", bad
        assert one_clear_line(err) == f"mevitop: no such user: '{bad}' (a user name, or a " \
                                      "uid from 0 to 4294967294)", bad


def test_disable_needs_a_feature():
    for bad in ("", ",", " , "):
        rc, _, err = run_mevitop(["--json", "-n", "1", "--disable", bad])
        assert rc == 2, repr(bad)
        assert one_clear_line(err).startswith("mevitop: --disable needs a feature name")
    rc, _, err = run_mevitop(["--json", "-n", "1"], env_extra={"MEVITOP_DISABLE": ","})
    assert rc == 2 and "--disable needs a feature name" in one_clear_line(err)


def test_pid_with_blank_or_sign():
    for bad in (" 1", "+1", "1 ", "\t1"):
        rc, _, err = run_mevitop(["--json", "-p", bad])
        assert rc == 2, repr(bad)
        assert f"invalid pid '{bad}'" in one_clear_line(err)


def test_snapshot_write_failures(workload):
    """stdout closed or full: one line saying why, exit 1 -- the target is untouched."""
    wl = workload()
    args = ["--json", "-n", "2", "-i", "50", "-p", str(wl.pid)]
    with open("/dev/full", "w") as full:
        rc, _, err = run_mevitop(args, stdout=full)
    assert rc == 1
    assert one_clear_line(err) == "mevitop: failed to write snapshot: No space left on device"
    rc, _, err = run_mevitop(args, stdout=subprocess.DEVNULL, preexec_fn=lambda: os.close(1))
    assert rc == 1
    assert one_clear_line(err) == "mevitop: failed to write snapshot: Bad file descriptor"
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
        want = (f"mevitop: process {pid} is 32-bit: 32-bit processes are not supported in "
                "exact mode")
        rc, out, err = run_mevitop(["--json", "-n", "1", "--exact", "-p", str(pid)])
        assert rc == 1 and out == ""
        assert one_clear_line(err) == want + "; watch it without --exact (mevitop -p PID)"
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
        assert one_clear_line(err).startswith("mevitop: cannot watch ")
        assert "is 32-bit: 32-bit processes are not supported in exact mode" in err
    finally:
        wl32.kill()
        wl32.wait()


def test_kernel_thread_refused():
    rc, _, err = run_mevitop(["--json", "-p", "2"])
    assert rc == 1
    assert "kernel thread" in one_clear_line(err)


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


def test_lost_events_are_counted_and_healed(mevitop, workload):
    """A consumer that stalls (here: SIGSTOP) while a 4 KiB ring buffer takes a burst of 4096
    faults must lose records.  The losses are counted, and the process they touched is
    rescanned until the model equals pagemap again, even with --no-reconcile."""
    wl = workload()
    mv = mevitop(["-p", str(wl.pid), "-i", "50", "--no-reconcile", "--mode", "trace",
                  "--ringbuf-size", "4096"])
    wl.do("map a 4096")
    os.kill(mv.proc.pid, signal.SIGSTOP)
    try:
        t, _ = wl.do("touch a 0 4096 1 w")
    finally:
        os.kill(mv.proc.pid, signal.SIGCONT)
    snap = mv.snapshot_after(t)
    for _ in range(100):  # the tick that reads the losses schedules the rescan
        if snap["stats"]["reconciles"]:
            break
        snap = mv.snapshot()
    assert snap["stats"]["lost"] > 0
    assert snap["stats"]["reconciles"] > 0
    assert snap["stats"]["drift_pages"] > 0
    assert_matches(snap, wl.pid)
    assert find_proc(snap, wl.pid)["pages"]["resident"] >= 4096
