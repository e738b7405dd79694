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

from orchestrator.client import GuardedClient
from orchestrator.task import RunConfig

TICK_S = 15.0
"""How often live progress reports the calls still running (a local call can take minutes)."""


# ---------------------------------------------------------------------------------- CLI


class LiveProgress:
    """Progress on stderr while a run works: a line when each call ends (its role and run,
    seconds, tokens generated, calls done of those planned so far, elapsed time and an
    estimate of what remains), and every :data:`TICK_S` seconds a line for the calls still
    running, so a long local call is never silent.

    The denominator is the calls planned so far (the fan-out's runs, then every call started),
    never the ``--budget-calls`` cap, which a run rarely reaches. Tokens are counted when a
    call ends: a call that is still running shows its time only.
    """

    def __init__(self, stream: Any = None) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._guard: GuardedClient | None = None
        self._fan_out = 0
        self._started = time.monotonic()
        self._last_tokens = 0

    @contextlib.contextmanager
    def watch(self, guard: GuardedClient, config: RunConfig) -> Iterator[None]:
        """Follow ``guard``'s calls during the run; the ticker thread stops on exit."""
        self._guard = guard
        self._fan_out = min(config.n * (2 if config.think_first else 1), config.budget_calls)
        self._started = time.monotonic()
        stop = threading.Event()
        ticker = threading.Thread(target=self._tick, args=(stop,), daemon=True)
        ticker.start()
        try:
            yield
        finally:
            stop.set()
            ticker.join(timeout=5)

    def __call__(self, event: dict[str, Any]) -> None:
        spend = f"${event['cost_usd_known']:.6f}"
        if event["calls_cost_unknown"]:
            spend += f" + {event['calls_cost_unknown']} call(s) of unknown cost"
        done = event["calls_done"]
        planned = max(done, self._planned())
        elapsed = time.monotonic() - self._started
        tokens = ""
        if self._guard is not None:
            total = self._guard.completion_tokens
            tokens = f", {total - self._last_tokens} tokens" if total > self._last_tokens else ""
            self._last_tokens = total
        left = planned - done
        eta = f", about {_duration(elapsed / done * left)} left" if left and done else ""
        self._say(
            f"{event['step']}: call {done} of {planned} planned done{tokens} (cap "
            f"{event['budget_calls']}); {_duration(elapsed)} elapsed{eta}; spend {spend}"
        )

    def _planned(self) -> int:
        started = self._guard.started if self._guard is not None else 0
        return max(started, self._fan_out)

    def _tick(self, stop: threading.Event) -> None:
        while not stop.wait(TICK_S):
            guard = self._guard
            running = guard.running() if guard is not None else []
            if running:
                calls = ", ".join(f"{label} {_duration(s)}" for label, s in running[:4])
                more = f" and {len(running) - 4} more" if len(running) > 4 else ""
                elapsed = _duration(time.monotonic() - self._started)
                self._say(f"in flight (running or queued): {calls}{more}; {elapsed} elapsed")

    def _say(self, text: str) -> None:
        with self._lock:
            print(f"[logic-graph] {text}", file=self._stream or sys.stderr, flush=True)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"
