"""A headless Chromium driven through the DevTools protocol (Debian's chromium and
python3-websocket): load a page, evaluate JavaScript in it, move the mouse, take a
screenshot.  What the web view's tests need, nothing more."""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

import websocket

CHROMIUM = shutil.which("chromium")
START_S = 30


class PageWaiter:
    """What both browsers' drivers share: waiting on the page's own readiness flags, through
    the driver's js() and the errors it collects."""

    def wait(self, expr, what, timeout=30):
        """Until a JavaScript expression is truthy (the page's own readiness flags)."""
        deadline = time.monotonic() + timeout
        while True:
            v = self.js(expr)
            if v:
                return v
            assert time.monotonic() < deadline, \
                f"timed out waiting for {what}; the page's errors: {self.errors}"
            time.sleep(0.02)


class Browser(PageWaiter):
    def __init__(self, url, width=1280, height=800):
        self.dir = tempfile.mkdtemp(prefix="mevitop-cdp-")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             f"--user-data-dir={self.dir}", "--remote-debugging-port=0",
             f"--window-size={width},{height}", "--force-device-scale-factor=1", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.ws = None
        self.seq = 0
        self.errors = []            # the page's uncaught exceptions, as DevTools tells them
        try:
            self._connect()
        except BaseException:
            self.close()
            raise

    def _connect(self):
        port_file = os.path.join(self.dir, "DevToolsActivePort")
        deadline = time.monotonic() + START_S
        while True:
            assert self.proc.poll() is None, "chromium exited at start"
            try:
                with open(port_file) as f:
                    port = int(f.readline())
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                            timeout=5) as r:
                    pages = [t for t in json.load(r) if t["type"] == "page"]
                if pages:
                    break
            except (OSError, ValueError):
                pass
            assert time.monotonic() < deadline, "no DevTools page from chromium"
            time.sleep(0.05)
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60,
                                              suppress_origin=True)
        self.call("Runtime.enable")

    def call(self, method, **params):
        self.seq += 1
        self.ws.send(json.dumps({"id": self.seq, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("method") == "Runtime.exceptionThrown":
                d = msg["params"]["exceptionDetails"]
                self.errors.append(d.get("exception", {}).get("description") or d.get("text"))
            if msg.get("id") == self.seq:
                assert "error" not in msg, f"{method}: {msg['error']}"
                return msg.get("result", {})

    def js(self, expr):
        """The value of a JavaScript expression (a promise is awaited)."""
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in r, f"{expr}: {r['exceptionDetails']}"
        return r["result"].get("value")

    def mouse(self, kind, x, y, **extra):
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, **extra)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        if self.ws:
            self.ws.close()
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
