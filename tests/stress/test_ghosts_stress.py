"""The lost-exit load of test_ghosts.py for 15 s (issue 22's figure: 2,000 fork+exec per
second, a 4 KiB ring), in sample, chunk and trace mode, with the task iterator and with
/proc (`make stress`)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
os.environ.setdefault("MEVITOP_GHOST_LOAD_MS", "15000")

from test_ghosts import test_lost_exits_leave_no_ghost  # noqa: E402,F401
from conftest import mevitop, workload  # noqa: E402,F401
