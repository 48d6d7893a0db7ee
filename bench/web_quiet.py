#!/usr/bin/env python3
"""What one stream costs mevitop while its process is quiet (issue 27): bench/manymaps'
--maps x --pages process, untouched once started, watched by `mevitop -p PID --listen`
at -i MS, with one /api/events stream on it read by this script (web_bench.py's SseReader,
no browser).  Over --seconds, from mevitop's /api/stats: the ticks the stream was told of,
its looks at them (answers; a tick whose lock it could not take at once is skipped,
`busy`), how many copied the process and how many found it as the
last copy left it (`unchanged`: no copy; a build before that count prints "?"), and the
engine's lock held per look and per tick.  Nothing here asserts a timing.

  sudo python3 bench/web_quiet.py [--maps 1000] [--pages 4096] [--seconds 10] [-i 1000]
"""
import argparse
import subprocess
import time
import urllib.request

from web_bench import MANYMAPS, MEVITOP, SseReader, api_stats, free_port


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--maps", type=int, default=1000)
    ap.add_argument("--pages", type=int, default=4096)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("-i", "--interval", type=int, default=1000, help="mevitop's -i (ms)")
    a = ap.parse_args()
    target = subprocess.Popen([MANYMAPS, str(a.maps), str(a.pages)], stdout=subprocess.PIPE,
                              text=True)
    pid = int(target.stdout.readline().split()[1])
    port = free_port()
    mv = subprocess.Popen([MEVITOP, "--json", "-i", str(a.interval), "-p", str(pid),
                           "--listen", f"127.0.0.1:{port}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sse = None
    try:
        while True:                     # ready: the process is in the model
            try:
                with urllib.request.urlopen(
                        f"http://127.0.0.1:{port}/api/process?pid={pid}") as r:
                    r.read()
                break
            except OSError:
                time.sleep(0.1)
        sse = SseReader(port, pid)
        sse.wait()
        time.sleep(2 * a.interval / 1000)   # past the first looks (the whole process)
        s0 = api_stats(port)
        time.sleep(a.seconds)
        s1 = api_stats(port)
        ev0, ev1 = s0["events"], s1["events"]
        ticks = s1["streams"]["frames"] - s0["streams"]["frames"]
        looks = ev1["answered"] - ev0["answered"]
        copies = ev1["copies"] - ev0["copies"]
        same = ev1["unchanged"] - ev0["unchanged"] if "unchanged" in ev1 else "?"
        held = (ev1["held_ns"] - ev0["held_ns"]) / 1e6
        print(f"{a.maps} mappings x {a.pages} pages, -i {a.interval}, {a.seconds:g} s: "
              f"{ticks} ticks, {looks} looks ({ev1['busy'] - ev0['busy']} skipped: lock busy), "
              f"{copies} copies, {same} unchanged, "
              f"{s1['streams']['events'] - s0['streams']['events']} events; "
              f"copies/tick {copies / max(ticks, 1):.2f}; lock held "
              f"{held / max(looks, 1):.4f} ms a look, {held / max(ticks, 1):.4f} ms a tick "
              f"(largest since start {ev1['held_max_ns'] / 1e6:.3f} ms)")
    finally:
        if sse:
            sse.close()
        mv.terminate()
        mv.wait(timeout=30)
        target.kill()
        target.wait()


if __name__ == "__main__":
    main()
