#!/usr/bin/env python3
"""`make stress`: the full kill -9 sweep of issue 9.  mevitop --exact is SIGKILLed at
delays spread over the first 3 ms after its first PTRACE_SEIZE (and a tail over the
whole ~30 ms the attach holds the target), >= 200 kills for each of: a busy
multithreaded target, a fork/exec-loop target, a stopped target, and one blocked in
read(); and busy, stopped and blocked targets running as nobody (the /dev/userfaultfd
handoff); and busy targets under seccomp filters (suspended while held): one that kills
userfaultfd() (so the handoff is taken: the call is never made) and one that makes it fail
(survivable, so the call is made).  Prints one line per target kind with its counts and
where its kills landed (stage by stage, user/exact/stage.h), and exits 1 if any kill left
the target dead, changed (maps but the scratch page, fds, signal masks, credentials and
seccomp state, stop state) or
with a register of its own changed.

    MEVITOP_BIN (default build/mevitop) MEVITOP_BUILD (build) KILLS (200) SEED (9)
"""
import collections
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("MEVITOP_BUILD", os.path.join(ROOT, "build"))
os.environ.setdefault("MEVITOP_BIN", os.path.join(ROOT, "build", "mevitop"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

import killsweep  # noqa: E402

AS_NOBODY = ("setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups")
WITNESS = "errno=getpgid"	# the filter's witness, checked in force after each kill
# (name, (mode, threads, stopped), wrap, seccomp): nobody targets get their userfaultfd
# through the /dev/userfaultfd handoff chain (issue 13), root ones by the syscall
KINDS = [
    ("busy multithreaded (4 checking threads)", ("spin", 4, False), (), ()),
    ("fork/exec loop", ("fork", 1, False), (), ()),
    ("stopped (SIGSTOP)", ("spin", 1, True), (), ()),
    ("blocked in read()", ("block", 0, False), (), ()),
    ("nobody, busy (/dev/userfaultfd)", ("spin", 2, False), AS_NOBODY, ()),
    ("nobody, stopped (/dev/userfaultfd)", ("spin", 1, True), AS_NOBODY, ()),
    ("nobody, blocked in read() (/dev/userfaultfd)", ("block", 0, False), AS_NOBODY, ()),
    ("filter kills userfaultfd (/dev/userfaultfd)", ("spin", 1, False), (),
     ("kill=userfaultfd", WITNESS)),
    ("filter fails userfaultfd (ERRNO)", ("spin", 1, False), (),
     ("errno=userfaultfd", WITNESS)),
]
if killsweep.HAS_AMX:
    KINDS.append(("AMX tile data in use (full-size signal frame)", ("amx", 1, False), (), ()))


def main():
    kills = int(os.environ.get("KILLS", "200"))
    seed = int(os.environ.get("SEED", "9"))
    total_bad = 0
    all_stages = collections.Counter()
    for name, kind, wrap, seccomp in KINDS:
        t0 = time.monotonic()
        # most kills over 0-3 ms, where bootstrap, injection and registration run
        stages = collections.Counter()
        n1, bad1 = killsweep.sweep(kind, kills, 0.003, seed=seed, wrap=wrap, seccomp=seccomp,
                                   stages=stages)
        n2, bad2 = killsweep.sweep(kind, max(kills // 10, 1), 0.030, seed=seed + 1, wrap=wrap,
                                   seccomp=seccomp, stages=stages)
        all_stages.update(stages)
        bad = bad1 + bad2
        total_bad += len(bad)
        print(f"{name}: {n1 + n2} kills ({n1} over 0-3 ms, {n2} over 0-30 ms), "
              f"{len(bad)} problems, {time.monotonic() - t0:.0f} s", flush=True)
        print(f"    kills by stage: {killsweep.histogram(stages)}", flush=True)
        for us, problem in bad[:10]:
            print(f"    at {us} us: {problem[:400]}", flush=True)
    print(f"all kills by stage: {killsweep.histogram(all_stages)}")
    print("stress: " + ("PASS" if not total_bad else f"FAIL ({total_bad} problems)"))
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
