"""Live progress on stderr while a run works (the CLI's ``--quiet`` turns it off).

:class:`LiveProgress` is a ``progress`` callback for :func:`orchestrator.api.run_task`, which
also lets it watch the run's guarded client so that long calls are reported while they run.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from orchestrator.llm import GuardedClient
from orchestrator.loop import TraceEvent
from orchestrator.records import RunConfig

TICK_S = 15.0
"""How often live progress reports the calls still running (a local call can take minutes)."""


# ---------------------------------------------------------------------------------- CLI


class LiveProgress:
    """Progress on stderr while a run works.

    * When each call ends: its step (and its role where that is not an interrogation:
      ``fan_out lookup``), ``call 3 of at most 20`` (calls made so far, against the
      run's ``--budget-calls`` cap), the tokens generated since the last line, the time so far
      and an estimate of what remains, and the known spend (left out for a free model, whose
      every call costs 0; calls of unknown cost are counted, never shown as $0).
    * A line when a corpus run rewrites its question or starts a retrieval round (the
      ``announce`` events of :mod:`orchestrator.loop.corpus_mode`).
    * Every :data:`TICK_S` seconds, the calls still running, each with its own age (a call
      waiting for a free place among ``--concurrency`` requests is shown as queued), so a long
      local call is never silent.

    The estimate counts the calls still expected: the rest of the fan-out, and for a corpus
    run a round like the ones so far for each retrieval round that may still come (never more
    than the calls left in the budget), at the pace so far.
    """

    def __init__(self, stream: Any = None) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._guard: GuardedClient | None = None
        self._fan_out = 0
        self._rounds_max = 1
        self._round = 1
        self._round_began_at = 0
        self._started = time.monotonic()
        self._last_tokens = 0

    @contextlib.contextmanager
    def watch(self, guard: GuardedClient, config: RunConfig, *, corpus: bool) -> Iterator[None]:
        """Follow ``guard``'s calls during the run (``corpus``: the task retrieves its evidence
        in up to ``config.max_retrieval_rounds`` rounds); the ticker thread stops on exit."""
        self._guard = guard
        self._fan_out = min(config.n * (2 if config.think_first else 1), config.budget_calls)
        self._rounds_max = config.max_retrieval_rounds if corpus else 1
        self._started = time.monotonic()
        stop = threading.Event()
        ticker = threading.Thread(target=self._tick, args=(stop,), daemon=True)
        ticker.start()
        try:
            yield
        finally:
            stop.set()
            ticker.join(timeout=5)

    def __call__(self, event: TraceEvent) -> None:
        if "announce" in event:
            self._announce(event)
            return
        done = event["calls_done"]
        cap = event["budget_calls"]
        elapsed = time.monotonic() - self._started
        tokens = ""
        if self._guard is not None:
            total = self._guard.completion_tokens
            tokens = f", {total - self._last_tokens} tokens" if total > self._last_tokens else ""
            self._last_tokens = total
        left = self._calls_left(done, cap)
        eta = f", about {_duration(elapsed / done * left)} left" if left and done else ""
        more_rounds = self._rounds_max - self._round
        if eta and more_rounds:
            eta += f" if {more_rounds} more retrieval round{'s' if more_rounds > 1 else ''} run"
        self._say(
            f"{_label(event)}: call {done} of at most {cap} done{tokens}; "
            f"{_duration(elapsed)} elapsed{eta}{_spend(event)}"
        )

    def _announce(self, event: TraceEvent) -> None:
        round_no = event.get("round")
        if isinstance(round_no, int):
            with self._lock:
                self._round = round_no
                self._round_began_at = self._guard.started if self._guard is not None else 0
        self._say(str(event["announce"]))

    def _calls_left(self, done: int, cap: int) -> int:
        """Calls still expected: the rest of this round's planned calls, then for each
        retrieval round that may follow, as many as a round has taken so far (the fan-out
        while no round has finished); at most what the budget leaves."""
        started = self._guard.started if self._guard is not None else 0
        with self._lock:
            this_round = max(started - self._round_began_at, self._fan_out)
            planned = self._round_began_at + this_round
            per_round = max(self._fan_out, this_round)
            more_rounds = self._rounds_max - self._round
        left = max(planned - done, 0) + more_rounds * per_round
        return max(min(left, cap - done), 0)

    def _tick(self, stop: threading.Event) -> None:
        while not stop.wait(TICK_S):
            guard = self._guard
            running = guard.running() if guard is not None else []
            if running:
                calls = ", ".join(
                    f"{label} {'queued ' if queued else ''}{_duration(s)}"
                    for label, s, queued in running[:4]
                )
                more = f" and {len(running) - 4} more" if len(running) > 4 else ""
                elapsed = _duration(time.monotonic() - self._started)
                self._say(f"in flight: {calls}{more}; {elapsed} elapsed")

    def _say(self, text: str) -> None:
        with self._lock:
            print(f"[logic-graph] {text}", file=self._stream or sys.stderr, flush=True)


def _label(event: TraceEvent) -> str:
    """The call's step, and its role where the step's calls differ: a hop's ``plan`` and
    ``lookup`` calls, a ``repair`` or a ``think`` call run in the fan-out beside its
    interrogations (``fan_out lookup``)."""
    step, role = str(event["step"]), event.get("role")
    return f"{step} {role}" if role not in (None, "interrogation", step) else step


def _spend(event: TraceEvent) -> str:
    """``; spend $0.000120`` (plus the calls of unknown cost), or nothing when every call so
    far was free: a local model's $0.000000 on every line says nothing."""
    known, unknown = event["cost_usd_known"], event["calls_cost_unknown"]
    parts = [f"${known:.6f}"] if known else []
    if unknown:
        parts.append(f"{unknown} call(s) of unknown cost")
    return f"; spend {' + '.join(parts)}" if parts else ""


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"
