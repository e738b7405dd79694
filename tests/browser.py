"""Headless Chromium driven over its DevTools protocol, for the report.html tests and benchmark.

The protocol runs over a pair of pipes (``--remote-debugging-pipe``: Chromium reads commands on
fd 3 and writes replies and events on fd 4, each message JSON ended by a NUL byte), so no
websocket client and no port are needed. Every wait is for a protocol message (a reply, the
load event), bounded by a generous timeout, never a sleep: the tests are not timing-dependent.

:func:`find_chromium` gives None when no Chromium is installed; tests then skip.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

TIMEOUT_S = 60.0
"""Upper bound on any one wait; a healthy run answers in milliseconds."""
PROBLEM_CONSOLE = ("error", "warning", "assert")


def find_chromium() -> str | None:
    """The Chromium to drive: ``$LOGIC_GRAPH_CHROMIUM``, else ``chromium`` on the PATH."""
    named = os.environ.get("LOGIC_GRAPH_CHROMIUM")
    if named:
        return named if Path(named).exists() else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium; :meth:`open` gives a :class:`Tab` on a page."""

    def __init__(self, executable: str, width: int = 1400, height: int = 1000) -> None:
        self.width, self.height = width, height
        self._profile = tempfile.TemporaryDirectory(prefix="lg-chromium-")
        commands_r, self._commands = os.pipe()
        self._replies, replies_w = os.pipe()

        def wire() -> None:  # in the child, before exec: the pipes become fds 3 and 4
            # Through fresh copies: dup2 onto the same number would keep close-on-exec.
            commands, replies = os.dup(commands_r), os.dup(replies_w)
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        self._process = subprocess.Popen(
            [
                executable,
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--hide-scrollbars",
                "--mute-audio",
                f"--user-data-dir={self._profile.name}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire,
            close_fds=False,
        )
        os.close(commands_r)
        os.close(replies_w)
        self._next = 0
        self._lock = threading.Lock()
        self._waiting: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._replies, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self.events.put({"method": "closed"})
                for waiting in list(self._waiting.values()):
                    waiting.put({"error": {"message": "chromium closed the pipe"}})
                return
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for raw in messages:
                message = json.loads(raw)
                if "id" in message and message["id"] in self._waiting:
                    self._waiting.pop(message["id"]).put(message)
                else:
                    self.events.put(message)

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> Any:
        """Send one command and wait for its reply; raises :class:`BrowserError` on an error."""
        with self._lock:
            self._next += 1
            number = self._next
            reply: queue.Queue[dict[str, Any]] = queue.Queue()
            self._waiting[number] = reply
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        try:
            answer = reply.get(timeout=TIMEOUT_S)
        except queue.Empty:
            raise BrowserError(f"{method}: no reply in {TIMEOUT_S} s") from None
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error'].get('message')}")
        return answer.get("result", {})

    def open(self, url: str) -> Tab:
        """A new tab that has loaded ``url`` (its load event fired), recording what it did."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        tab = Tab(self, session, target)
        for domain in ("Runtime", "Log", "Network", "Page"):
            tab.send(f"{domain}.enable")
        tab.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
        )
        tab.send("Page.navigate", {"url": url})
        tab.wait_for("Page.loadEventFired")
        return tab

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.send("Browser.close")
        try:
            self._process.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._commands)
        self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class Tab:
    """One page: commands go to its session; ``problems`` and ``requests`` fill as it runs."""

    def __init__(self, browser: Browser, session: str, target: str) -> None:
        self.browser = browser
        self.session = session
        self.target = target
        self.problems: list[str] = []
        """Console errors and warnings, uncaught exceptions, log errors (CSP refusals too)."""
        self.requests: list[str] = []
        """The URL of every request the page started (its own document included)."""

    def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        result = self.browser.send(method, params, self.session)
        self._drain()
        return result

    def wait_for(self, method: str) -> dict[str, Any]:
        while True:
            try:
                event = self.browser.events.get(timeout=TIMEOUT_S)
            except queue.Empty:
                raise BrowserError(f"no {method} in {TIMEOUT_S} s") from None
            self._note(event)
            if event.get("method") == "closed":
                raise BrowserError(f"chromium closed while waiting for {method}")
            if event.get("method") == method and event.get("sessionId") == self.session:
                return event

    def _drain(self) -> None:
        while True:
            try:
                self._note(self.browser.events.get_nowait())
            except queue.Empty:
                return

    def _note(self, event: dict[str, Any]) -> None:
        if event.get("sessionId") != self.session:
            return
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            thrown = details.get("exception", {}).get("description") or details.get("text")
            self.problems.append(f"exception: {thrown}")
        elif method == "Runtime.consoleAPICalled" and params["type"] in PROBLEM_CONSOLE:
            texts = [str(arg.get("value", arg.get("description"))) for arg in params["args"]]
            self.problems.append(f"console.{params['type']}: {' '.join(texts)}")
        elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            self.problems.append(f"log: {params['entry']['text']}")
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])

    def evaluate(self, expression: str) -> Any:
        """The JSON value of ``expression`` in the page (promises awaited)."""
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression!r} threw: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (press and release) at the middle of ``selector``'s box, which
        must be on screen and not covered (checked with ``elementFromPoint``)."""
        where = self.evaluate(
            f"""(() => {{
              const el = document.querySelector({json.dumps(selector)});
              const r = el.getBoundingClientRect();
              const x = r.left + r.width / 2, y = r.top + r.height / 2;
              const hit = document.elementFromPoint(x, y);
              return {{x, y, reachable: !!hit && (hit === el || el.contains(hit))}};
            }})()"""
        )
        if not where["reachable"]:
            raise BrowserError(f"{selector} is off screen or covered")
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": where["x"], "y": where["y"], "button": "left", "clickCount": 1},
            )

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target})

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))
