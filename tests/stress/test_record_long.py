"""Long recording (`make stress`): a recorder with --max-size on a churning process for
MEVITOP_STRESS_S seconds (default 300).  Throughout: FILE + FILE.1 stay within the limit, the
recorder's memory (production build) stops growing after the first minute, the recording replays (both
segments, in time order) and the watched process keeps running."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "integration"))
from harness import BUILD, MEVITOP, SAN_ENV  # noqa: E402

# Memory is judged on the production build: ASan's quarantine holds freed memory back.
PLAIN = os.path.join(BUILD, "mevitop")

LIMIT = 1 << 20


def hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def test_long_recording_with_a_ring(tmp_path):
    seconds = int(os.environ.get("MEVITOP_STRESS_S", "300"))
    churn = subprocess.Popen([os.path.join(BUILD, "bench", "rec_churn"), "1024", "128", "1",
                              "4"], stdout=subprocess.PIPE, text=True)
    pid = int(churn.stdout.readline().split()[1])
    path = str(tmp_path / "rec")
    rec = subprocess.Popen([PLAIN, "record", "-o", path, "-p", str(pid), "-i", "100",
                            "--max-size", str(LIMIT)], stderr=subprocess.PIPE)
    try:
        t0 = time.monotonic()
        hwm_at_60 = None
        while time.monotonic() - t0 < seconds:
            time.sleep(1)
            assert rec.poll() is None, rec.stderr.read().decode()
            sizes = [os.path.getsize(p) for p in (path, path + ".1") if os.path.exists(p)]
            assert sum(sizes) <= LIMIT, sizes
            if hwm_at_60 is None and time.monotonic() - t0 > min(60, seconds / 2):
                hwm_at_60 = hwm_kib(rec.pid)
        hwm_end = hwm_kib(rec.pid)
        rec.terminate()
        assert rec.wait(timeout=30) == 0, rec.stderr.read().decode()
        assert hwm_end <= hwm_at_60 * 1.2 + 4096, (hwm_at_60, hwm_end)
        out = subprocess.run([MEVITOP, "replay", path, "--json"], capture_output=True,
                             env=dict(os.environ, **SAN_ENV), timeout=300)
        assert out.returncode == 0, out.stderr.decode()
        ts = [json.loads(line)["monotonic"] for line in out.stdout.splitlines()]
        assert len(ts) > 10 and ts == sorted(ts)
        assert churn.poll() is None
    finally:
        rec.kill()
        rec.wait()
        churn.kill()
        churn.wait()
