"""Opt-in persistence for the MCP server: ``logic-graph-server --state-file PATH``.

After every tool call that changes something, the whole store is written to PATH
before the reply goes out: to a temporary file beside it, flushed and fsync'd, then
moved over PATH with ``os.replace`` (atomic on POSIX), and the directory fsync'd. A
process killed at any instant (kill -9 included) leaves either the old file or the new
one, and a change the client saw acknowledged is on disk. At start the file is read
back through the store's own validation, so the memory limits apply to it as to any
client. A file that is not JSON, not written by this server, or of another version is
refused with an error naming the path, never overwritten.

Cost: each write rewrites the whole store (O(total size)); meant for agent-sized
graphs, not for bulk loads.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from graph_server.store import GraphStore

STATE_FORMAT = "logic-graph-state"
STATE_VERSION = 1


class StateFileError(Exception):
    """The state file cannot be used; the message names the path and what to do."""


class StateFile:
    """Where one server keeps its graphs between runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        """One write at a time: a later snapshot can never be overwritten by an older one."""

    def load_into(self, store: GraphStore) -> int:
        """Restore the saved graphs into ``store`` (no file yet: nothing). Returns their count."""
        if not self.path.parent.is_dir():
            raise StateFileError(
                f"state file {self.path}: directory {self.path.parent} does not exist"
            )
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return 0
        except (OSError, UnicodeDecodeError) as exc:
            raise StateFileError(f"state file {self.path} cannot be read: {exc}") from None
        saved = self._parse(text)
        try:
            store.restore_state(saved["graphs"])
        except ValueError as exc:
            raise StateFileError(f"state file {self.path} was refused: {exc}") from None
        return len(saved["graphs"])

    def save(self, store: GraphStore) -> None:
        """Write the whole store to the file atomically and durably (OSError on failure)."""
        with self._lock:
            body = {"format": STATE_FORMAT, "version": STATE_VERSION, "graphs": store.dump_state()}
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            try:
                with temporary.open("w", encoding="utf-8") as handle:
                    json.dump(body, handle, ensure_ascii=False, separators=(",", ":"))
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(temporary, self.path)
            finally:
                temporary.unlink(missing_ok=True)
            # The rename itself is only durable once the directory entry is on disk.
            directory = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)

    def _parse(self, text: str) -> dict[str, Any]:
        what = f"state file {self.path}"
        try:
            saved = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StateFileError(
                f"{what} is not valid JSON ({exc}); it is damaged or not a state file. "
                "Move it away or pass another --state-file"
            ) from None
        if not isinstance(saved, dict) or saved.get("format") != STATE_FORMAT:
            raise StateFileError(
                f"{what} was not written by logic-graph-server (no format {STATE_FORMAT!r}); "
                "it is left untouched. Pass a new path or an earlier state file"
            )
        if saved.get("version") != STATE_VERSION:
            raise StateFileError(
                f"{what} has version {saved.get('version')!r}; this server reads version "
                f"{STATE_VERSION} only"
            )
        if not isinstance(saved.get("graphs"), list):
            raise StateFileError(f"{what} has no list of graphs")
        return saved
