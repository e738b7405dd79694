"""The run's guard around a chat client: a wall-clock budget, a stop on an unusable backend,
and a stop on request (Ctrl-C, SIGTERM).

Public through :mod:`orchestrator.llm`; see :class:`GuardedClient` and :class:`RunStop`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import NoReturn

from orchestrator.llm._ledger import ChatResult
from orchestrator.llm._request import require
from orchestrator.llm.chat import ChatMiddleware, ChatRequest, ChatSeam
from orchestrator.llm.errors import (
    BackendUnusableError,
    CallTimeBudgetError,
    LLMError,
    RunInterruptedError,
)
from orchestrator.llm.json_object import JsonObject


class RunStop:
    """A request to end a run early, keeping what it did: the caller (the CLI's signal
    handling, :mod:`orchestrator.cli.interrupt`) calls :meth:`request`; the run's
    :class:`GuardedClient` then makes no further call and cuts the calls in flight, so the
    run finishes its report from what was done.

    :meth:`request` may be called from any thread but not from a signal handler (it takes
    locks). ``reason`` says what asked (``"SIGINT"``), ``started`` whether a run is attached.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []
        self.reason: str | None = None
        self.started = False

    @property
    def requested(self) -> bool:
        return self.reason is not None

    def request(self, reason: str) -> None:
        """Ask the run to stop (again: no effect)."""
        with self._lock:
            if self.reason is not None:
                return
            self.reason = reason
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    def attach(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` when a stop is requested (at once when it already was)."""
        with self._lock:
            self.started = True
            self._listeners.append(listener)
            already = self.reason is not None
        if already:
            listener()


class GuardedClient(ChatMiddleware):
    """Wraps a client for one run: a wall-clock budget, and a stop on an unusable backend.

    * ``budget_s``: calls that would start after ``budget_s`` seconds (from construction, or
      from ``started`` when given) are
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

    * ``stop``: once :meth:`RunStop.request` is called, no call starts (each raises
      :class:`RunInterruptedError`, recorded like a refusal for time) and the calls in flight
      are cut (``inner.abort()``, when the inner client has it, ends their HTTP attempts); they
      raise :class:`RunInterruptedError` too. ``interrupted`` says it happened.
    """

    def __init__(
        self,
        inner: ChatSeam,
        *,
        budget_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        stop: RunStop | None = None,
        started: float | None = None,
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
        # ``started`` (a ``clock`` time): when the budget began, if before now (the CLI
        # counts start-up and probes in it).
        begin = clock() if started is None else started
        self._deadline = None if budget_s is None else begin + budget_s
        self._lock = threading.Lock()
        self.unusable: BackendUnusableError | None = None
        self.last_error: LLMError | None = None
        self.succeeded = 0
        self.refused_for_time = 0
        self.started = 0
        self.completion_tokens = 0
        self._running: dict[int, tuple[str, float, int]] = {}
        self.interrupted = False
        self.stop = stop
        if stop is not None:
            stop.attach(self._interrupt)

    def _interrupt(self) -> None:
        self.interrupted = True
        abort = getattr(self.inner, "abort", None)
        if callable(abort):
            abort()

    def running(self) -> list[tuple[str, float, bool]]:
        """``(label, seconds, queued)`` of every call in flight, oldest first; the label is the
        call's role and subject (``interrogation r2``). When the inner client says when each
        call got its place among the requests sent at once (``attempt_started``), a call still
        waiting for one is ``queued`` and its seconds are its wait; otherwise its seconds count
        from that place, so two calls behind one slot do not show the same age."""
        now = self._clock()
        with self._lock:
            calls = sorted(self._running.values(), key=lambda item: item[1])
        started = getattr(self.inner, "attempt_started", None)
        shown = []
        for label, since, thread in calls:
            began = started(thread) if callable(started) else since
            if began is None:
                shown.append((label, now - since, True))
            else:
                shown.append((label, now - max(began, since), False))
        return shown

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
        if self.interrupted:
            self._refuse(
                RunInterruptedError(f"the run was interrupted ({self._why()}); call not made"),
                role,
                model,
                tags,
            )
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
            self._running[key] = (label, self._clock(), threading.get_ident())
        try:
            # A call that starts gets the time left as its overall limit.
            limited = request if left is None else replace(request, timeout_s=left)
            result = self.inner.send(limited)
        except LLMError as exc:
            if self.interrupted and not isinstance(exc, BackendUnusableError):
                cut = RunInterruptedError(
                    f"the run was interrupted ({self._why()}) while this call was in flight; "
                    "its reply was not waited for"
                )
                cut.attempts, cut.call_id = exc.attempts, exc.call_id
                raise cut from None
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

    def _why(self) -> str:
        reason = self.stop.reason if self.stop is not None else None
        return reason or "stop requested"

    def _refuse(self, error: LLMError, role: str, model: str, tags: JsonObject) -> NoReturn:
        error.call_id = self.ledger.record_failure(role, model, error, latency_s=0.0, **tags)
        with self._lock:
            self.last_error = error
        raise error
