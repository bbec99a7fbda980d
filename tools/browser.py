"""Load a rendered report in headless Chromium and say what the browser saw.

Chromium is driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: JSON messages separated by NUL bytes on file
descriptors 3 and 4), with the standard library only: no port, no websocket
package, no network. We collect

- every console message, uncaught exception and log entry (Runtime/Log
  domains), from the page and from each embedded frame;
- every request the page made (Network domain), to prove it fetched nothing
  from outside;
- facts read from the DOM, including inside each flame graph frame;
- optionally a PNG screenshot of the page.

Frames that Chromium moves to their own renderer (out-of-process iframes, e.g.
blob: documents of a file:// page) are auto-attached as child sessions, paused
until their Runtime/Log/Network domains are on, so their errors count too.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--hide-scrollbars", "--remote-debugging-pipe"]
DOMAINS = ("Runtime", "Log", "Network")
AUTO_ATTACH = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}


class BrowserError(RuntimeError):
    """Chromium could not be started or stopped answering."""


@dataclass
class PageReport:
    """What the browser saw while loading one page."""

    errors: list[str] = field(default_factory=list)      # console errors/exceptions/log errors
    messages: list[str] = field(default_factory=list)    # every console message
    requests: list[str] = field(default_factory=list)    # URLs the page requested
    facts: dict[str, Any] = field(default_factory=dict)  # from the DOM
    frames: list[dict[str, Any]] = field(default_factory=list)  # per embedded frame
    screenshot: Path | None = None


class _Pipe:
    """A DevTools session over Chromium's debugging pipe."""

    def __init__(self, chromium: str, profile: str, extra: list[str]):
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()

        def pipe_fds() -> None:
            # In the child: Chromium reads commands on fd 3 and writes replies on fd 4.
            # Copy both ends above 10 first, so neither dup2 overwrites the other.
            a = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.close(a)
            os.close(b)

        # close_fds=False keeps the dup2'ed fds 3 and 4; Python's own descriptors
        # are close-on-exec, so nothing else leaks into the browser.
        self.proc = subprocess.Popen(
            [chromium, *FLAGS, f"--user-data-dir={profile}", *extra, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=pipe_fds)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        self.children: list[str] = []   # sessions of auto-attached frames

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self._w, data):]
        return self._next

    def _read(self, deadline: float) -> dict[str, Any] | None:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._r], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed the DevTools pipe")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        msg = json.loads(raw)
        # Our own attach to the page is reported too; adopt only embedded frames.
        if (msg.get("method") == "Target.attachedToTarget"
                and msg["params"].get("targetInfo", {}).get("type") == "iframe"):
            self._adopt(msg["params"])
        return msg

    def _adopt(self, params: dict[str, Any]) -> None:
        """Switch on the domains of a newly attached frame, then let it run."""
        sid = params["sessionId"]
        self.children.append(sid)
        for domain in DOMAINS:
            self.send(f"{domain}.enable", session=sid)
        self.send("Target.setAutoAttach", AUTO_ATTACH, session=sid)
        self.send("Runtime.runIfWaitingForDebugger", session=sid)

    def call(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 30.0) -> dict[str, Any]:
        """Send a command and wait for its reply, keeping the events that arrive meanwhile."""
        want = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            msg = self._read(deadline)
            if msg is None:
                raise BrowserError(f"no reply to {method} within {timeout:.0f} s")
            if msg.get("id") == want:
                if "error" in msg:
                    raise BrowserError(f"{method}: {msg['error'].get('message')}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def pump(self, seconds: float) -> None:
        """Collect events for a while."""
        deadline = time.monotonic() + seconds
        while True:
            msg = self._read(deadline)
            if msg is None:
                return
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        if any(e["method"] == method for e in self.events):
            return True
        while True:
            msg = self._read(deadline)
            if msg is None:
                return False
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == method:
                    return True

    def close(self) -> None:
        try:
            self.send("Browser.close")
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            for fd in (self._r, self._w):
                try:
                    os.close(fd)
                except OSError:
                    pass


def find_chromium() -> str | None:
    """Debian's chromium, or another Chrome-like browser on PATH."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


# Runs in the page: open every <details> (flame graphs unpack on open) and report facts.
_OPEN_ALL = "document.querySelectorAll('details').forEach(function (d) { d.open = true; }); 1"
_FACTS = """JSON.stringify({
  title: document.title,
  sections: Array.from(document.querySelectorAll('section[id]')).map(function (s) { return s.id; }),
  plots: Array.from(document.querySelectorAll('figure.plot')).map(function (f) {
    var svg = f.querySelector('svg'); var r = svg ? svg.getBoundingClientRect() : null;
    return {id: f.id, svg: !!svg, width: r ? r.width : 0, height: r ? r.height : 0}; }),
  flames: document.querySelectorAll('[data-flame]').length,
  iframes: Array.from(document.querySelectorAll('iframe')).map(function (f) {
    var r = f.getBoundingClientRect(); return {title: f.title, width: r.width, height: r.height}; }),
  flameErrors: Array.from(document.querySelectorAll('.flamehost.failed')).map(function (e) {
    return e.textContent; }),
  tables: document.querySelectorAll('table').length,
  text: document.body.innerText.length,
  height: document.documentElement.scrollHeight
})"""
_FRAME_FACTS = """JSON.stringify({
  url: location.href.slice(0, 64),
  root: document.documentElement ? document.documentElement.nodeName : null,
  frames: document.querySelectorAll('#frames > g').length,
  title: (document.getElementById('title') || {}).textContent || null
})"""


def check_page(path: str | os.PathLike, *, screenshot: str | os.PathLike | None = None,
               width: int = 1280, height: int = 900, settle_s: float = 0.5,
               full_page: bool = False, max_height: int = 16000,
               chromium: str | None = None, timeout: float = 60.0) -> PageReport:
    """Load `path` (a local HTML file) and return what the browser saw.

    All <details> are opened so that every embedded flame graph is unpacked
    and loaded; `screenshot` is taken before that, of the first viewport, or of
    the whole page (up to `max_height` px) with `full_page`.
    """
    exe = chromium or find_chromium()
    if not exe:
        raise BrowserError("chromium not found (apt-get install chromium)")
    url = Path(path).resolve().as_uri()
    report = PageReport()
    with tempfile.TemporaryDirectory(prefix="lockscope-chromium-") as profile:
        pipe = _Pipe(exe, profile, [])
        try:
            target = pipe.call("Target.createTarget", {"url": "about:blank"},
                               timeout=timeout)["targetId"]
            session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                timeout=timeout)["sessionId"]
            for domain in ("Page",) + DOMAINS:
                pipe.call(f"{domain}.enable", session=session, timeout=timeout)
            pipe.call("Target.setAutoAttach", AUTO_ATTACH, session=session, timeout=timeout)
            pipe.call("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1,
                       "mobile": False}, session=session)
            pipe.call("Page.navigate", {"url": url}, session=session, timeout=timeout)
            if not pipe.wait_event("Page.loadEventFired", timeout):
                raise BrowserError(f"{url} did not finish loading within {timeout:.0f} s")
            _wait_flames(pipe, session, timeout)     # the ones open from the start
            pipe.pump(settle_s)
            if screenshot is not None:
                report.screenshot = _screenshot(pipe, session, Path(screenshot), width,
                                                full_page, max_height, timeout)
            _evaluate(pipe, session, _OPEN_ALL, None, timeout)
            report.facts["all_flames_unpacked"] = _wait_flames(pipe, session, timeout)
            pipe.pump(settle_s)
            report.facts.update(json.loads(_evaluate(pipe, session, _FACTS, None, timeout)))
            # Frames in the page's renderer are contexts of its session; the others
            # are child sessions of their own.
            where = [(session, ctx["id"]) for ctx in _frame_contexts(pipe.events, session)]
            where += [(child, None) for child in pipe.children]
            for sid, ctx_id in where:
                try:
                    facts = json.loads(_evaluate(pipe, sid, _FRAME_FACTS, ctx_id, timeout))
                except (BrowserError, TypeError, ValueError):
                    continue
                report.frames.append(facts)
        finally:
            pipe.close()
    _collect(pipe.events, report)
    return report


def _evaluate(pipe: _Pipe, session: str, expr: str, context: int | None, timeout: float):
    params: dict[str, Any] = {"expression": expr, "returnByValue": True}
    if context is not None:
        params["contextId"] = context
    res = pipe.call("Runtime.evaluate", params, session=session, timeout=timeout)
    if "exceptionDetails" in res:
        raise BrowserError(f"evaluation failed: {res['exceptionDetails'].get('text')}")
    return res.get("result", {}).get("value")


def _frame_contexts(events: list[dict[str, Any]], session: str) -> list[dict[str, Any]]:
    """Execution contexts of embedded frames in the page's renderer, latest per frame."""
    top = None
    by_frame: dict[str, dict[str, Any]] = {}
    for e in events:
        if e.get("sessionId") != session:
            continue
        if e["method"] == "Page.frameNavigated" and not e["params"]["frame"].get("parentId"):
            top = e["params"]["frame"]["id"]
        if e["method"] == "Runtime.executionContextCreated":
            ctx = e["params"]["context"]
            aux = ctx.get("auxData") or {}
            if aux.get("isDefault") and aux.get("frameId"):
                by_frame[aux["frameId"]] = ctx
    return [c for f, c in by_frame.items() if f != top]


def _screenshot(pipe: _Pipe, session: str, out: Path, width: int, full_page: bool,
                max_height: int, timeout: float) -> Path:
    if full_page:
        # Grow the viewport to the page instead of capturing beyond it: frames in
        # other renderers (the flame graphs) are only painted inside the viewport.
        metrics = pipe.call("Page.getLayoutMetrics", session=session, timeout=timeout)
        size = metrics.get("cssContentSize") or metrics.get("contentSize") or {}
        h = min(int(size.get("height", 900)), max_height)
        pipe.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": h, "deviceScaleFactor": 1, "mobile": False},
                  session=session, timeout=timeout)
        pipe.pump(1.0)
    data = pipe.call("Page.captureScreenshot", {"format": "png"}, session=session,
                     timeout=timeout)["data"]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(base64.b64decode(data))
    return out


_LOADED = """(function () {
  var want = document.querySelectorAll('details[data-flame][open]').length;
  var have = document.querySelectorAll('.flamehost iframe, .flamehost.failed').length;
  return have >= want;
})()"""


def _wait_flames(pipe: _Pipe, session: str, timeout: float) -> bool:
    """Wait until every open flame graph was unpacked into a frame (or failed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _evaluate(pipe, session, _LOADED, None, timeout):
            return True
        pipe.pump(0.1)
    return False


def _collect(events: list[dict[str, Any]], report: PageReport) -> None:
    for e in events:
        m, p = e["method"], e.get("params", {})
        if m == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            report.messages.append(f"console.{p.get('type')}: {text}")
            if p.get("type") in ("error", "assert", "warning"):
                report.errors.append(f"console.{p.get('type')}: {text}")
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            desc = (d.get("exception") or {}).get("description") or d.get("text")
            report.errors.append(f"uncaught: {desc} ({d.get('url', '')}:{d.get('lineNumber')})")
        elif m == "Log.entryAdded":
            entry = p.get("entry", {})
            report.messages.append(f"log.{entry.get('level')}: {entry.get('text')}")
            if entry.get("level") in ("error", "warning"):
                report.errors.append(f"log.{entry.get('level')} ({entry.get('source')}): "
                                     f"{entry.get('text')} {entry.get('url', '')}".strip())
        elif m == "Network.requestWillBeSent":
            report.requests.append(p.get("request", {}).get("url", ""))
