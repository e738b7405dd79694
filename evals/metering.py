"""Per-arm accounting and the hard cost cap, as thin wrappers around one shared chat client.

All arms call the same client, so they share one `CostLedger` and their costs are comparable.
Two wrappers sit in front of it, both with the client's ``chat`` signature:

* `CappedClient` (one per evaluation run) refuses any call whose worst-case cost could take the
  run past its ``--max-cost``. It raises `CostCapReached` *before* sending, so no money is
  spent on a call that might overshoot. Worst case = (UTF-8 bytes of every message + a
  per-message overhead) x prompt price + ``max_tokens`` x completion price: byte-level BPE
  tokenizers never produce more tokens than bytes, so this bounds the real cost. A call without
  ``max_tokens`` gets the cap's default so that its completion is bounded too.
* `CallRecorder` (one per arm and item) tags each call with the arm and item and remembers its
  ledger id, so the item's tokens and cost are read back from exactly its own ledger records,
  even when the orchestrator fans calls out over threads.

`usage_of` sums a list of ledger records honestly: cost is None (unknown) as soon as one
call's cost is unknown, with the known part kept separately.
"""

from __future__ import annotations

import math
import threading
from dataclasses import replace
from typing import Any

from orchestrator.llm import (
    ChatMessage,
    ChatMiddleware,
    ChatRequest,
    ChatResult,
    ChatSeam,
    CostLedger,
    LLMError,
    prompt_tokens,
)

# Matches screen.py's rounding guard: a charge within this of the cap still fits.
_EPSILON_USD = 1e-12


class CostCapReached(RuntimeError):
    """A call was refused because its worst case could exceed the run's cost cap.

    Deliberately not an `LLMError`: code that survives failed model calls (the orchestrator
    drops a failed run and carries on) must not swallow it and keep spending.
    """


def worst_case_prompt_tokens(messages: list[ChatMessage]) -> int:
    """Upper bound on the prompt tokens of `messages`: UTF-8 bytes plus a per-message overhead."""
    return prompt_tokens(messages, bound=True)


class CostCap:
    """Thread-safe USD budget for one evaluation run.

    Inputs: ``limit_usd`` (None: no cap), ``prices`` as (prompt, completion) USD per token (None:
    unknown, allowed only without a limit), ``default_max_tokens`` for calls that set none.
    ``spent_usd`` is what settled calls cost (an unknown actual cost is charged at its worst
    case, to stay safe); ``stopped`` is the reason the cap refused a call, or None.
    """

    def __init__(
        self,
        limit_usd: float | None,
        prices: tuple[float, float] | None,
        *,
        default_max_tokens: int,
    ) -> None:
        if limit_usd is not None and not (math.isfinite(limit_usd) and limit_usd >= 0):
            raise ValueError(f"limit_usd must be a finite number >= 0, got {limit_usd!r}")
        if limit_usd is not None and prices is None:
            raise ValueError("a cost limit needs known prices: the worst case cannot be bounded")
        if not (isinstance(default_max_tokens, int) and default_max_tokens >= 1):
            raise ValueError(
                f"default_max_tokens must be an integer >= 1, got {default_max_tokens!r}"
            )
        self.limit_usd = limit_usd
        self.prices = prices
        self.default_max_tokens = default_max_tokens
        self.spent_usd = 0.0
        self.stopped: str | None = None
        self._reserved = 0.0
        self._lock = threading.Lock()

    def worst_case(self, messages: list[ChatMessage], max_tokens: int) -> float | None:
        """Largest possible USD cost of one call, or None when prices are unknown."""
        if self.prices is None:
            return None
        prompt_price, completion_price = self.prices
        return worst_case_prompt_tokens(messages) * prompt_price + max_tokens * completion_price

    def reserve(self, worst: float | None, what: str) -> None:
        """Hold `worst` USD for a call about to be sent; raise CostCapReached if it may not fit."""
        with self._lock:
            if self.limit_usd is None or worst is None:
                return
            if self.stopped is None and (
                self.spent_usd + self._reserved + worst <= self.limit_usd + _EPSILON_USD
            ):
                self._reserved += worst
                return
            if self.stopped is None:
                self.stopped = (
                    f"cost cap reached: {what} could cost up to ${worst:.6f}, but only "
                    f"${self.limit_usd - self.spent_usd - self._reserved:.6f} of the "
                    f"${self.limit_usd:.6f} cap remained"
                )
            raise CostCapReached(self.stopped)

    def settle(self, worst: float | None, actual: float | None) -> None:
        """Release a reservation and charge the call's actual cost (worst case if unknown)."""
        with self._lock:
            if self.limit_usd is not None and worst is not None:
                self._reserved -= worst
            charge = actual if actual is not None else worst
            if charge is not None:
                self.spent_usd += charge


class CappedClient(ChatMiddleware):
    """A chat client that enforces a `CostCap` in front of `inner` (see the module docstring)."""

    def __init__(self, inner: ChatSeam, cap: CostCap) -> None:
        super().__init__(inner)
        self.cap = cap

    def send(self, request: ChatRequest) -> ChatResult:
        """Reserve the worst case, forward the call, then charge what it really cost."""
        limit = (
            request.max_tokens if request.max_tokens is not None else self.cap.default_max_tokens
        )
        worst = self.cap.worst_case(request.messages, limit)
        self.cap.reserve(worst, f"a {request.role!r} call to {request.model}")
        actual: float | None = None
        try:
            result = self.inner.send(replace(request, max_tokens=limit))
            actual = result.cost_usd
            return result
        except LLMError as exc:
            actual = _failure_cost(self.ledger, exc.call_id)
            raise
        finally:
            self.cap.settle(worst, actual)


def _failure_cost(ledger: CostLedger, call_id: int | None) -> float | None:
    """The recorded cost of a failed call (0.0 for rejected requests), None when unknown."""
    if call_id is None:
        return None
    records = ledger.records()
    cost = records[call_id].get("cost_usd") if 0 <= call_id < len(records) else None
    return float(cost) if isinstance(cost, int | float) else None


class CallRecorder(ChatMiddleware):
    """A chat client that tags calls with `tags` and remembers their ledger ids.

    Thread-safe, so the orchestrator may fan out through it. `records` returns the ledger
    records of exactly the calls made through this recorder, failed ones included.
    """

    def __init__(self, inner: ChatSeam, tags: dict[str, Any]) -> None:
        super().__init__(inner)
        self.tags = dict(tags)
        self._ids: list[int] = []
        self._lock = threading.Lock()

    def send(self, request: ChatRequest) -> ChatResult:
        """Forward the call with this recorder's tags added; remember its ledger id."""
        try:
            result = self.inner.send(replace(request, tags={**request.tags, **self.tags}))
        except LLMError as exc:
            self._remember(exc.call_id)
            raise
        self._remember(result.call_id)
        return result

    def _remember(self, call_id: int | None) -> None:
        if call_id is not None:
            with self._lock:
                self._ids.append(call_id)

    def records(self) -> list[dict[str, Any]]:
        """Ledger records of this recorder's calls, in call-id order."""
        with self._lock:
            ids = sorted(self._ids)
        everything = self.ledger.records()
        return [everything[i] for i in ids if 0 <= i < len(everything)]


def usage_of(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over ledger records: ``calls``, ``failed_calls``, ``prompt_tokens``,
    ``completion_tokens``, ``tokens`` (None when some successful call did not report its
    counts), ``cost_usd`` (None when any call's cost is unknown) and ``cost_usd_known``."""
    ok = [r for r in records if r.get("ok")]
    prompt = [r.get("prompt_tokens") for r in ok]
    completion = [r.get("completion_tokens") for r in ok]
    tokens_known = all(isinstance(t, int) for t in prompt + completion)
    costs = [r.get("cost_usd") for r in records]
    known = sum(c for c in costs if isinstance(c, int | float))
    return {
        "calls": len(records),
        "failed_calls": len(records) - len(ok),
        "prompt_tokens": sum(t for t in prompt if isinstance(t, int)),
        "completion_tokens": sum(t for t in completion if isinstance(t, int)),
        "tokens": sum(t for t in prompt + completion if isinstance(t, int))
        if tokens_known
        else None,
        "cost_usd": known if all(isinstance(c, int | float) for c in costs) else None,
        "cost_usd_known": known,
    }
