"""The cap on HTTP attempts in flight at once, and when each call got its place.

A :class:`~.client.ChatClient` with ``max_concurrency`` lets that many attempts run; the
others wait for a free place within their own call's time limit. Live progress reads
:meth:`Places.taken_at` to show a call's own age, not its time in the queue.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Places:
    """At most ``limit`` holders at once (None: no limit); ``clock`` is monotonic seconds."""

    def __init__(self, limit: int | None, clock: Callable[[], float]) -> None:
        self._slots = threading.BoundedSemaphore(limit) if limit else None
        self._clock = clock
        self._since: dict[int, float] = {}
        self._lock = threading.Lock()

    def taken_at(self, thread_id: int) -> float | None:
        """When the thread ``thread_id`` took its place (clock seconds), or None while it
        waits for one (or holds none)."""
        with self._lock:
            return self._since.get(thread_id)

    def wait(self, deadline: float | None) -> bool:
        """Wait for a free place until ``deadline`` (clock seconds; None: however long it
        takes); False when none came in time. A True answer must be followed by :meth:`hold`."""
        if self._slots is None:
            return True
        wait = None if deadline is None else max(deadline - self._clock(), 0.0)
        return self._slots.acquire(timeout=wait)

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the place :meth:`wait` gave this thread (taken now), then give it back."""
        thread = threading.get_ident()
        with self._lock:
            self._since[thread] = self._clock()
        try:
            yield
        finally:
            with self._lock:
                self._since.pop(thread, None)
            if self._slots is not None:
                self._slots.release()
