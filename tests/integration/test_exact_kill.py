"""kill -9 of mevitop during the exact-mode attach (issue 9): the injection must be safe
against the injector's death at every instruction.  mevitop is SIGKILLed at delays swept
over the first 3 ms after the target becomes traced (where the scratch page's bootstrap,
the userfaultfd injection and the registrations run), 40 kills over four targets: a busy
multithreaded one, one blocked in read(), a stopped one and a fork/exec loop.  Every time
the target must run on (or stay stopped) with its own registers (it checks them itself),
maps, fds and signal masks.  Each sweep prints where its kills landed (the stage file,
user/exact/stage.h); test_exact_trace.py kills inside each injected call for sure.  The
>= 200-kill version is `make stress`."""
import collections

import pytest

import killsweep

KINDS = {
    "busy-threads": ("spin", 2, False),
    "blocked-read": ("block", 0, False),
    "stopped": ("spin", 1, True),
    "fork-exec": ("fork", 1, False),
}
if killsweep.HAS_AMX:   # the full-size (tile data) signal frame, on a CPU that has it
    KINDS["amx-tiles"] = ("amx", 1, False)


@pytest.mark.parametrize("kind", list(KINDS))
def test_kill9_during_attach(kind):
    stages = collections.Counter()
    kills, failures = killsweep.sweep(KINDS[kind], 10, stages=stages)
    print(f"{kind}: kills by stage: {killsweep.histogram(stages)}")
    assert not failures, f"{len(failures)} problems in {kills} kills: " + "; ".join(
        f"at {us} us: {p}" for us, p in failures[:5]) + \
        f" (kills by stage: {killsweep.histogram(stages)})"
