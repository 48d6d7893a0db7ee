"""A headless Firefox (Debian's firefox-esr) driven through WebDriver BiDi, which Firefox
serves itself on --remote-debugging-port (no geckodriver: Debian has none), over
python3-websocket: load a page, evaluate JavaScript in it.  The same calls as cdp.Browser
where the web view's tests need them, so a test can run in either browser."""
import json
import os
import shutil
import subprocess
import tempfile
import time

import websocket

from cdp import PageWaiter

FIREFOX = shutil.which("firefox-esr")
START_S = 60

# A profile that asks nothing of the network (the machine may have none) and shows no
# first-run pages.
PREFS = {
    "app.normandy.enabled": False,
    "app.update.auto": False,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": False,
    "messaging-system.rsexperimentloader.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "services.settings.server": "data:,",
    "toolkit.telemetry.reportingpolicy.firstRun": False,
}


def plain(v):
    """A BiDi RemoteValue as the Python value JSON would give."""
    t, val = v.get("type"), v.get("value")
    if t in ("undefined", "null"):
        return None
    if t == "number" and isinstance(val, str):     # NaN, Infinity, -0
        return float(val)
    if t in ("array", "set"):
        return [plain(x) for x in val or []]
    if t in ("object", "map"):
        return {(k if isinstance(k, str) else plain(k)): plain(x) for k, x in val or []}
    return val


class Browser(PageWaiter):
    def __init__(self, url, width=1280, height=800):
        self.dir = tempfile.mkdtemp(prefix="mevitop-bidi-")
        with open(os.path.join(self.dir, "user.js"), "w") as f:
            for k, v in PREFS.items():
                f.write(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n")
        self.proc = subprocess.Popen(
            [FIREFOX, "--headless", "--no-remote", "--profile", self.dir,
             "--remote-debugging-port", "0", "--width", str(width), "--height", str(height),
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=dict(os.environ, MOZ_CRASHREPORTER_DISABLE="1"))
        self.ws = None
        self.seq = 0
        self.errors = []            # the page's uncaught errors, as log.entryAdded tells them
        try:
            self._connect()
            self.call("session.subscribe", events=["log.entryAdded"])
            self.context = self.call("browsingContext.getTree")["contexts"][0]["context"]
            self.goto(url)
        except BaseException:
            self.close()
            raise

    def goto(self, url):
        """Load @url in the tab (a new test's page: the errors list starts empty)."""
        self.errors = []
        self.call("browsingContext.navigate", context=self.context, url=url, wait="complete")

    def _connect(self):
        # Firefox writes the port it listens on into the profile once it does.
        port_file = os.path.join(self.dir, "WebDriverBiDiServer.json")
        deadline = time.monotonic() + START_S
        while True:
            assert self.proc.poll() is None, "firefox-esr exited at start"
            try:
                with open(port_file) as f:
                    port = json.load(f)["ws_port"]
                self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}/session",
                                                      timeout=60, suppress_origin=True)
                break
            except (OSError, ValueError, KeyError, websocket.WebSocketException):
                pass
            assert time.monotonic() < deadline, "no WebDriver BiDi endpoint from firefox-esr"
            time.sleep(0.05)
        self.call("session.new", capabilities={})

    def call(self, method, **params):
        self.seq += 1
        self.ws.send(json.dumps({"id": self.seq, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("method") == "log.entryAdded" and msg["params"].get("level") == "error":
                self.errors.append(msg["params"].get("text"))
            if msg.get("id") == self.seq:
                assert msg.get("type") != "error", f"{method}: {msg}"
                return msg.get("result", {})

    def js(self, expr):
        """The value of a JavaScript expression or statements (a promise is awaited)."""
        r = self.call("script.evaluate", target={"context": self.context}, awaitPromise=True,
                      expression=expr, resultOwnership="none",
                      serializationOptions={"maxObjectDepth": 8})
        assert r.get("type") == "success", f"{expr}: {r.get('exceptionDetails')}"
        return plain(r["result"])

    def close(self):
        if self.ws:
            try:
                self.ws.close()
            except OSError:
                pass
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
