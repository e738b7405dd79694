"""A spawned ``python -m graph_server.server`` spoken to in raw JSON-RPC lines, as a host
would (the stdio, hostile-input and state-file tests share it)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
SERVER_COMMAND = [sys.executable, "-m", "graph_server.server"]
HELLO = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"},
}
"""The ``initialize`` params of a plain client."""


class RawServer:
    """The server process, its stdout read line by line into a queue by a daemon thread (so
    a test waits with a timeout instead of hanging); its stderr goes to ``errlog``."""

    def __init__(self, *args: str, errlog: Path) -> None:
        with errlog.open("a") as err:
            self.process = subprocess.Popen(
                [*SERVER_COMMAND, *args],
                cwd=REPO_ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )
        self.lines: queue.Queue[bytes] = queue.Queue()
        stdout = self.process.stdout
        assert stdout is not None

        def pump() -> None:
            for line in stdout:
                self.lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        self.next_id = 0

    def send_line(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def send(self, message: dict[str, Any] | str) -> None:
        """One message (a string is sent as it is: junk for the server to refuse)."""
        text = message if isinstance(message, str) else json.dumps(message)
        self.send_line(text.encode())

    def reply(self, timeout: float = 120.0) -> dict[str, Any]:
        """The next line the server writes."""
        reply: dict[str, Any] = json.loads(self.lines.get(timeout=timeout))
        return reply

    def answer_to(self, request_id: int | None, timeout: float = 60.0) -> dict[str, Any]:
        """The reply with id ``request_id`` (None: a line with no readable id), skipping
        others; each wait raises ``queue.Empty`` after ``timeout`` seconds."""
        while True:
            reply = self.reply(timeout)
            if reply.get("id") == request_id:
                return reply

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request with the next id (from 0) and wait for its answer."""
        request_id, self.next_id = self.next_id, self.next_id + 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return self.answer_to(request_id)

    def start(self) -> None:
        """The MCP handshake: ``initialize``, then ``notifications/initialized``."""
        assert self.request("initialize", HELLO)["result"]["serverInfo"]["name"] == "logic-graph"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send_call(self, request_id: int, tool: str, arguments: dict[str, Any]) -> None:
        """A ``tools/call`` request, not waited for."""
        params = {"name": tool, "arguments": arguments}
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call ``tool``; its structured result, which must not be an error."""
        result: dict[str, Any] = self.request("tools/call", {"name": tool, "arguments": arguments})[
            "result"
        ]
        assert result["isError"] is False, result
        structured: dict[str, Any] = result["structuredContent"]
        return structured

    def stop(self) -> int:
        """Close stdin (a clean exit for the server) and return its exit code; raises
        ``subprocess.TimeoutExpired`` after 30 s, the server then killed."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=30)
        finally:
            self.kill()

    def kill(self) -> None:
        """Kill the server if it still runs, and reap it."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)


@contextmanager
def raw_server(tmp_path: Path) -> Iterator[RawServer]:
    """A started server (stderr in ``tmp_path/server.stderr``), stopped at the end."""
    server = RawServer(errlog=tmp_path / "server.stderr")
    try:
        server.start()
        yield server
    finally:
        server.stop()
