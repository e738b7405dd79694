"""A step-by-step trace of one orchestrator run, kept in memory and streamed to JSON Lines.

Every event is ``{"seq": int, "t_s": float, "event": str, ...fields}``: ``seq`` counts from 0,
``t_s`` is seconds since the trace started (monotonic clock). Events are appended under a lock,
so worker threads may record too, and each event is written and flushed at once: when a run
dies half-way, the file still holds every step up to the failure.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import IO, Any

TraceEvent = dict[str, Any]
"""One step of a run's trace: ``seq``, ``t_s``, ``event`` (the step's name) and its own fields."""


class Trace:
    """Thread-safe event log; ``path`` (optional) receives one JSON object per line.

    Use as a context manager (or call :meth:`close`) so the file is closed.
    """

    def __init__(self, path: Path | None = None) -> None:
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._events: list[TraceEvent] = []
        self.path = path
        self._file: IO[str] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("w", encoding="utf-8")

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def event(self, name: str, /, **fields: Any) -> TraceEvent:
        """Record one step called ``name``; ``fields`` should be JSON-serialisable (anything
        else is written with ``str``). Returns the stored event."""
        with self._lock:
            record = {
                "seq": len(self._events),
                "t_s": round(time.monotonic() - self._start, 6),
                "event": name,
                **fields,
            }
            self._events.append(record)
            if self._file is not None:
                self._file.write(json.dumps(record, sort_keys=True, default=str) + "\n")
                self._file.flush()
            return record

    def events(self) -> list[TraceEvent]:
        """Copies of every event so far, in order."""
        with self._lock:
            return [dict(e) for e in self._events]

    def close(self) -> None:
        """Close the file (idempotent); the in-memory events stay readable."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
