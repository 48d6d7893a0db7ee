#!/usr/bin/env python3
"""The web view's costs (issue 27), in one run on this machine: a process with --maps
mappings of --pages pages each (bench/manymaps: 1,000 x 4,096 = 4 Mi pages by default),
watched by `mevitop -p PID --json --listen`, viewed in Debian's headless Chromium.

- first paint: ms from the page's start (performance.now()) to its first heatmap drawn
  with data, over --loads fresh loads;
- panning: a mouse drag across the canvas, the frames drawn per second during it and each
  draw's time (the page's own performance.now());
- what updates cost mevitop: its CPU (schedstat) over --seconds without a viewer and with
  the page open, pushed to (the stream, /api/events) and polling once a second (?poll=1),
  interleaved --rounds times (--transport picks one of the two; "sse" is the stream read by
  this script instead of a browser: what a viewer on another machine costs, the browser's
  own CPU apart), and of that its server thread's (libmicrohttpd's, where the answers
  run); --pin keeps mevitop on CPU 0 and the browser off it (on a 2-CPU box a browser on
  the same machine preempts the engine, which then shows as mevitop's CPU); and, from mevitop's own
  /api/stats, per answer (a poll, or a stream's look at a snapshot): how long it held the
  engine's lock (the engine stalls that long), the whole answer's time, its bytes, and how
  many answers copied the process (--viewers pages open at once: the answers of one
  snapshot share one copy; a build before that has no count, "?").
Nothing here asserts a timing.

  sudo python3 bench/web_bench.py [--maps 1000] [--pages 4096] [--seconds 20] [--rounds 2]
                                  [--loads 3] [--transport both|all|stream|poll|sse]
                                  [--viewers 1] [--pin]
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser  # noqa: E402  (the tests' DevTools driver)
from idle_cost import cpu_s, server_cpu_s  # noqa: E402  (CPU from threads' schedstat)

MEVITOP = os.environ.get("MEVITOP_BIN", os.path.join(ROOT, "build", "mevitop"))
MANYMAPS = os.path.join(ROOT, "build", "bench", "manymaps")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api_stats(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/stats") as r:
        return json.loads(r.read())


class SseReader:
    """/api/events read by a thread of this script, no browser: the stream's cost to
    mevitop alone.  ready once the first event (the whole process) is read."""

    def __init__(self, port, pid):
        self.ready = threading.Event()
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(f"GET /api/events?pid={pid} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        got = b""
        try:
            while chunk := self.sock.recv(1 << 16):
                if not self.ready.is_set():
                    got += chunk
                    if b"\nid: " in got:  # the first event's end
                        self.ready.set()
        except OSError:
            pass

    def wait(self, *_):
        assert self.ready.wait(60), "the stream's first event"

    def close(self):
        self.sock.close()


def poll_costs(before, after, what="polls"):
    """Per answer (/api/process, or a stream's) between two /api/stats readings of its kind:
    the mean lock hold, the mean answer time (ms) and bytes, and the largest hold and answer
    over the whole run."""
    n = after["answered"] - before["answered"]
    if n <= 0:
        return f"no {what} answered"
    held = (after["held_ns"] - before["held_ns"]) / n / 1e6
    total = (after["total_ns"] - before["total_ns"]) / n / 1e6
    size = (after["bytes"] - before["bytes"]) / n
    copies = after["copies"] - before["copies"] if "copies" in after else "?"
    return (f"{n} {what}: lock held {held:.3f} ms, answer {total:.3f} ms, {size / 1024:.1f} KiB "
            f"each, {copies} copies (largest since start: held {after['held_max_ns'] / 1e6:.3f} "
            f"ms, answer {after['total_max_ns'] / 1e6:.3f} ms; "
            f"{after['busy'] - before['busy']} busy)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--maps", type=int, default=1000)
    ap.add_argument("--pages", type=int, default=4096)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--loads", type=int, default=3)
    ap.add_argument("--transport", choices=("both", "all", "stream", "poll", "sse"),
                    default="both", help="how the viewing page updates while its CPU is "
                    "measured (both: stream and poll; all: and sse)")
    ap.add_argument("--viewers", type=int, default=1,
                    help="pages open on the process at once while its CPU is measured")
    ap.add_argument("--pin", action="store_true",
                    help="mevitop on CPU 0, the browsers on the other CPUs")
    a = ap.parse_args()
    transports = {"both": ("stream", "poll"), "all": ("stream", "poll", "sse")}.get(
        a.transport, (a.transport,))
    cpus = sorted(os.sched_getaffinity(0))
    if a.pin and len(cpus) < 2:
        sys.exit("--pin needs two CPUs")
    pin0 = (lambda: os.sched_setaffinity(0, {cpus[0]})) if a.pin else None
    target = subprocess.Popen([MANYMAPS, str(a.maps), str(a.pages)], stdout=subprocess.PIPE,
                              text=True, preexec_fn=pin0)
    pid = int(target.stdout.readline().split()[1])
    port = free_port()
    # Snapshots to /dev/null: a pipe nobody reads would hold the engine (and its lock) up.
    mv = subprocess.Popen([MEVITOP, "--json", "-p", str(pid), "--listen", f"127.0.0.1:{port}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=pin0)
    if a.pin:                           # this script and the browsers it starts: the others
        os.sched_setaffinity(0, set(cpus[1:]))
    try:
        url = f"http://127.0.0.1:{port}/#pid={pid}"
        while True:                     # ready: the process is in the model
            try:
                with urllib.request.urlopen(
                        f"http://127.0.0.1:{port}/api/process?pid={pid}") as r:
                    full = len(r.read())
                first = api_stats(port)["process"]
                break
            except OSError:
                time.sleep(0.1)
        print(f"process: {a.maps} mappings x {a.pages} pages = {a.maps * a.pages} pages; "
              f"a full /api/process is {full / 1024:.0f} KiB, answered in "
              f"{first['total_max_ns'] / 1e6:.1f} ms holding the lock {first['held_max_ns'] / 1e6:.1f} ms; "
              f"load {open('/proc/loadavg').read().split()[0]}")
        paints = []
        for _ in range(a.loads):
            b = Browser(url, 1600, 1000)
            try:
                b.wait("window.mevitop && window.mevitop.firstDraw > 0", "the first paint", 60)
                paints.append(b.js("window.mevitop.firstDraw"))
            finally:
                b.close()
        print(f"first paint: {', '.join(f'{p:.0f}' for p in paints)} ms after load "
              f"(median {statistics.median(paints):.0f} ms)")
        b = Browser(url, 1600, 1000)
        try:
            b.wait("window.mevitop && window.mevitop.ready", "the heatmap", 60)
            b.js("window.mevitop.setZoom(0)")
            box = b.js("(() => { const r = document.getElementById('map')"
                       ".getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
            x, y = box[0] + box[2] / 2, box[1] + box[3] - 10
            d0, t0 = b.js("window.mevitop.draws"), time.monotonic()
            b.js("window.mevitop.drawMs.length = 0")
            b.mouse("mousePressed", x, y, button="left", clickCount=1)
            for i in range(240):        # up, then down again: 4 s of dragging
                yy = y - (i if i < 120 else 240 - i) * 6
                b.mouse("mouseMoved", x, yy, button="left")
                time.sleep(1 / 60)
            b.mouse("mouseReleased", x, y, button="left", clickCount=1)
            dt = time.monotonic() - t0
            draws = b.js("window.mevitop.draws") - d0
            ms = sorted(b.js("window.mevitop.drawMs"))
            p95 = ms[int(len(ms) * 0.95) - 1] if ms else 0
            print(f"panning: {draws / dt:.0f} frames/s drawn during a {dt:.1f} s drag; each draw "
                  f"median {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms "
                  f"(at most {1000 / max(p95, 0.001):.0f} fps)")
        finally:
            b.close()
        cpu = {None: [], **{t: [] for t in transports}}
        server = {None: [], **{t: [] for t in transports}}
        costs = {t: [] for t in transports}
        kinds = {"stream": ("events", "stream answers"), "poll": ("process", "polls"),
                 "sse": ("events", "stream answers")}
        for _ in range(a.rounds):
            for how in (None, *transports):
                pages = []
                try:
                    for _ in range(a.viewers if how else 0):
                        if how == "sse":
                            pages.append(SseReader(port, pid))
                            pages[-1].wait()
                            continue
                        pages.append(Browser(url.replace("/#", "/?poll=1#") if how == "poll"
                                             else url, 1600, 1000))
                        pages[-1].wait("window.mevitop && window.mevitop.ready && "
                                       f"window.mevitop.transport === '{how}'", "the heatmap",
                                       60)
                    b = pages[0] if pages else None
                    s0, c0, m0 = api_stats(port), cpu_s(mv.pid), server_cpu_s(mv.pid)
                    time.sleep(a.seconds)
                    cpu[how].append((cpu_s(mv.pid) - c0) / a.seconds * 100)
                    server[how].append((server_cpu_s(mv.pid) - m0) / a.seconds * 100)
                    if b:
                        s1 = api_stats(port)
                        kind, what = kinds[how]
                        line = poll_costs(s0[kind], s1[kind], what)
                        if how in ("stream", "sse"):
                            st0, st1 = s0["streams"], s1["streams"]
                            line += (f"; {st1['events'] - st0['events']} events sent of "
                                     f"{st1['frames'] - st0['frames']} snapshots")
                        if how == "poll":
                            line += f"; {b.js('window.mevitop.frames')} answers shown"
                        costs[how].append(line)
                finally:
                    for p in pages:
                        p.close()
        # Medians too: a round that holds one of the engine's periodic full rescans is an
        # outlier of +15 points, whichever mode it falls in.
        idle, idle_med = statistics.mean(cpu[None]), statistics.median(cpu[None])
        print(f"mevitop's CPU at 1 s{' (pinned)' if a.pin else ''}: {idle:.2f}% of a core "
              f"without a viewer, median {idle_med:.2f} "
              f"(rounds {', '.join(f'{v:.2f}' for v in cpu[None])}; its server thread "
              f"{statistics.mean(server[None]):.2f}%)")
        for how in transports:
            v, med = statistics.mean(cpu[how]), statistics.median(cpu[how])
            said = {"stream": "page(s) pushed to (stream)", "poll": "page(s) polling once a second",
                    "sse": "stream(s) read without a browser (sse)"}[how]
            print(f"  with {a.viewers} {said}{' (pinned)' if a.pin else ''}: "
                  f"{v:.2f}% (+{v - idle:.2f} points; median +{med - idle_med:.2f}; rounds "
                  f"{', '.join(f'{x:.2f}' for x in cpu[how])}); its server thread "
                  f"{statistics.mean(server[how]):.2f}%")
            for i, line in enumerate(costs[how]):
                print(f"  quiet {how}, round {i + 1}: {line}")
    finally:
        mv.terminate()
        mv.wait()
        target.kill()
        target.wait()


if __name__ == "__main__":
    main()
