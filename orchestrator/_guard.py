"""The run's guard around a chat client: a wall-clock budget and a stop on an unusable backend.

Re-exported by :mod:`orchestrator.client`; see :class:`GuardedClient`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NoReturn

from orchestrator._ledger import ChatResult
from orchestrator._request import require
from orchestrator.chat import ChatMiddleware, ChatRequest, ChatSeam
from orchestrator.errors import BackendUnusableError, CallTimeBudgetError, LLMError


class GuardedClient(ChatMiddleware):
    """Wraps a client for one run: a wall-clock budget, and a stop on an unusable backend.

    * ``budget_s``: calls that would start after ``budget_s`` seconds (from construction) are
      not made; they raise :class:`CallTimeBudgetError`. A :class:`ChatClient` call that does
      start is given the time left as its overall limit, so no call outlives the budget by
      more than the connection set-up.
    * After the first :class:`BackendUnusableError`, every later call raises the same error
      at once, without contacting the backend: one missing key must not become 24 requests.

    Both kinds of refused call are recorded in the wrapped client's ledger as failed calls
    with no attempts and no cost. ``unusable`` holds the first such error, ``succeeded``
    counts calls that returned, ``refused_for_time`` the calls the budget stopped, and
    ``deadline_reached`` whether the budget ran out. ``last_error`` is the latest failure of
    any kind (so a run in which no call returned can say why), ``completion_tokens`` sums what
    the returned calls generated, and :meth:`running` lists the calls in flight (for live
    progress).
    """

    def __init__(
        self,
        inner: ChatSeam,
        *,
        budget_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        require(
            budget_s is None or (math.isfinite(budget_s) and budget_s > 0),
            "budget_s",
            budget_s,
            "None or > 0",
        )
        super().__init__(inner)
        self.budget_s = budget_s
        self._clock = clock
        self._deadline = None if budget_s is None else clock() + budget_s
        self._lock = threading.Lock()
        self.unusable: BackendUnusableError | None = None
        self.last_error: LLMError | None = None
        self.succeeded = 0
        self.refused_for_time = 0
        self.started = 0
        self.completion_tokens = 0
        self._running: dict[int, tuple[str, float]] = {}

    def running(self) -> list[tuple[str, float]]:
        """``(label, seconds so far)`` of every call in flight, oldest first; the label is the
        call's role and subject (``interrogation r2``)."""
        now = self._clock()
        with self._lock:
            calls = sorted(self._running.values(), key=lambda item: item[1])
        return [(label, now - since) for label, since in calls]

    @property
    def deadline_reached(self) -> bool:
        """Whether the budget ran out: a call was refused for time, or the clock is past it
        (calls in flight were then cut at the deadline)."""
        past = self._deadline is not None and self._clock() >= self._deadline
        return self.refused_for_time > 0 or past

    def send(self, request: ChatRequest) -> ChatResult:
        """``inner.send`` with the guards described in the class docstring."""
        model, role, tags = request.model, request.role, request.tags
        with self._lock:
            known = self.unusable.fresh() if self.unusable is not None else None
        if known is not None:
            self._refuse(known, role, model, tags)
        left = None if self._deadline is None else self._deadline - self._clock()
        if left is not None and left <= 0:
            with self._lock:
                self.refused_for_time += 1
            self._refuse(
                CallTimeBudgetError(
                    f"the run's wall-clock budget of {self.budget_s:g} s is spent; call not made"
                ),
                role,
                model,
                tags,
            )
        subject = tags.get("subject")
        label = f"{role} {subject}" if subject else role
        with self._lock:
            self.started += 1
            key = self.started
            self._running[key] = (label, self._clock())
        try:
            # A call that starts gets the time left as its overall limit.
            limited = request if left is None else replace(request, timeout_s=left)
            result = self.inner.send(limited)
        except LLMError as exc:
            with self._lock:
                self.last_error = exc
                if isinstance(exc, BackendUnusableError) and self.unusable is None:
                    self.unusable = exc
            raise
        finally:
            with self._lock:
                del self._running[key]
        with self._lock:
            self.succeeded += 1
            self.completion_tokens += result.completion_tokens or 0
        return result

    def _refuse(self, error: LLMError, role: str, model: str, tags: dict[str, Any]) -> NoReturn:
        error.call_id = self.ledger.record_failure(role, model, error, latency_s=0.0, **tags)
        with self._lock:
            self.last_error = error
        raise error
