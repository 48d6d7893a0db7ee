"""Stress (make stress): exact mode's quit against a churning target, 20 times in a row per
variant and signal, each within 0.5 s (issue 9).  Long, so not in the default suite; the
default suite has the same check twice each (tests/integration/test_exact_churn.py)."""
import os
import signal
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))

from test_exact_churn import churn, quit_time  # noqa: E402,F401  (churn: a fixture)

REPEAT = 20
QUIT_S = 0.5


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("variant", ["fast", "ordered"])
def test_churn_quits_20_times(churn, variant, sig):
    wl = churn()
    times = []
    for _ in range(REPEAT):
        took, rc, err = quit_time(wl.pid, variant, sig)
        assert rc == 0, err
        times.append(took)
        assert wl.proc.poll() is None
        assert wl.progresses(), "the target stopped making progress after mevitop left"
    print(f"\n{variant} {sig.name}: quit in {min(times):.3f}-{max(times):.3f} s "
          f"(median {sorted(times)[len(times) // 2]:.3f}) over {REPEAT} runs")
    assert max(times) < QUIT_S, [round(t, 3) for t in times]
