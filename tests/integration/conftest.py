"""Shared fixtures.  BPF tests need root; without it they skip with a clear message (CI runs
as root and runs them all: tests/run-all.sh fails if anything was skipped there)."""
import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import harness  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if harness.is_root():
        return
    skip = pytest.mark.skip(reason="needs root: loads BPF programs and reads other "
                                   "processes' pagemap (run: sudo make test)")
    for item in items:
        item.add_marker(skip)


DAMON_KDAMONDS = "/sys/kernel/mm/damon/admin/kdamonds"


@pytest.fixture(scope="session", autouse=True)
def damon_paused():
    """This machine runs a DAMON physical-address scheme that pages out memory it finds
    unaccessed for a minute (kdamond, `pageout` action): it sampled regions of gigabytes and
    evicted pages a test had just read or written, between the test's read of pagemap or
    mincore and mevitop's.  Like any reclaim, mevitop follows that (a rescan heals it, counted
    as drift), but a test comparing exact page sets, or asserting that nothing needed
    healing, is then comparing against a moving truth.  So every running kdamond is turned
    off for the session and turned on again after it, as the KSM tests restore ksm's run."""
    paused = []
    if harness.is_root() and os.path.isdir(DAMON_KDAMONDS):
        for k in sorted(os.listdir(DAMON_KDAMONDS)):
            state = os.path.join(DAMON_KDAMONDS, k, "state")
            try:
                with open(state) as f:
                    if f.read().strip() != "on":
                        continue
                with open(state, "w") as f:
                    f.write("off")
                paused.append(state)
            except OSError:
                continue
    if paused:
        print(f"\ntests: DAMON paused for the session ({', '.join(paused)}), restored after")
    yield
    for state in paused:
        with open(state, "w") as f:
            f.write("on")


@pytest.fixture
def workload():
    made = []

    def make(*args, **kw):
        w = harness.Workload(*args, **kw)
        made.append(w)
        return w
    yield make
    for w in made:
        w.close()


@pytest.fixture
def mevitop():
    made = []

    def make(*args, **kw):
        m = harness.Mevitop(*args, **kw)
        made.append(m)
        return m
    yield make
    for m in made:
        m.stop()


@pytest.fixture
def datafile(tmp_path):
    """A file of N pages with distinct contents, in the page cache.  Written a page at a
    time, the page cache holds small folios; with one_write=True, one large write leaves
    large folios (up to 2 MiB) on filesystems that support them (ext4 since 6.16).  That
    file goes to /var/tmp: /tmp may be a tmpfs (Debian 13's default), whose folios stay
    small unless it is mounted with huge=."""
    made = []

    def make(pages, name="data.bin", one_write=False):
        if one_write:
            d = tempfile.mkdtemp(prefix="mevitop-test-", dir="/var/tmp")
            made.append(d)
            path = os.path.join(d, name)
        else:
            path = tmp_path / name
        with open(path, "wb") as f:
            if one_write:
                f.write(b"".join(bytes([i % 251 + 1]) * harness.PAGE for i in range(pages)))
            else:
                for i in range(pages):
                    f.write(bytes([i % 251 + 1]) * harness.PAGE)
        with open(path, "rb") as f:
            while f.read(1 << 20):
                pass
        return str(path)
    yield make
    for d in made:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def swapfile():
    """A 64 MiB swap file, switched on for the test (the swap tests and the UI's swapped
    cells)."""
    with harness.swap_file(64) as path:
        yield path
