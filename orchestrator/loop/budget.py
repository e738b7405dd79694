"""The hard cap on logical model calls for one orchestrator run.

A *logical call* is one ``chat`` invocation: an interrogation, a repair or a verification.
HTTP retries inside a call are not logical calls; the client counts them as ``attempts`` and
the report shows both. Callers reserve before calling, so concurrent workers can never
overshoot the cap, and a reservation is never returned: a call that was started has been
paid for (or may have been), whatever its outcome.
"""

from __future__ import annotations

import threading


class CallBudget:
    """Thread-safe counter of logical calls against a fixed ``limit`` (an int >= 1)."""

    def __init__(self, limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"budget limit={limit!r} is invalid: must be an integer >= 1")
        self.limit = limit
        self._used = 0
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        """Calls reserved so far (each was, or is being, made)."""
        with self._lock:
            return self._used

    @property
    def remaining(self) -> int:
        """Calls that may still be reserved."""
        with self._lock:
            return self.limit - self._used

    def try_reserve(self, count: int = 1) -> bool:
        """Reserve ``count`` calls at once, all or nothing. O(1)."""
        if count < 1:
            raise ValueError(f"count={count!r} is invalid: must be >= 1")
        with self._lock:
            if self._used + count > self.limit:
                return False
            self._used += count
            return True
