"""The result of one model call and the thread-safe ledger that accounts for every call.

Public through :mod:`orchestrator.llm`.

Cost semantics (documented once, here):

* a successful call costs ``usage.cost`` when the server reports it (``cost_source="usage"``),
  else tokens x the pricing table (``"pricing"``), else it is unknown (``None``, ``"unknown"``);
* a failed call whose attempts all received an HTTP error answer costs 0.0 with
  ``cost_source="error_response"``: providers do not bill a request they rejected or failed;
* a failed call with any timed-out or broken attempt has unknown cost: the server may have
  generated (and billed) an answer we never received;
* :meth:`CostLedger.totals` gives ``cost_usd`` only when every call's cost is known and no
  attempt was abandoned mid-flight; otherwise ``cost_usd`` is None, ``cost_complete`` is False
  and ``cost_usd_known`` holds the (lower-bound) sum of the known part.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from orchestrator.llm.errors import LLMError
from orchestrator.llm.json_object import JsonObject


@dataclass(frozen=True)
class ChatResult:
    """One successful logical call.

    ``latency_s`` is the wall time of the whole logical call, retries and back-off included;
    ``attempts`` counts HTTP attempts (1 = no retry); ``transport_failures`` counts attempts
    that timed out or lost the connection; ``call_id`` is the ledger record id (None when the
    result was not recorded).
    """

    text: str
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    cost_source: str
    latency_s: float
    attempts: int
    finish_reason: str | None
    transport_failures: int = 0
    call_id: int | None = None
    cached_tokens: int | None = None
    """Of ``prompt_tokens``, those the server read from its prompt cache (None: not said)."""


class CallFacts(TypedDict):
    """What every record of one logical model call says, whoever keeps it: the ledger
    (:class:`CallOutcome`) and the loop's report (:class:`orchestrator.records.CallRecord`).
    Both extend it, so the two records of a call cannot drift apart."""

    role: str
    model: str
    ok: bool
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    cost_source: str
    latency_s: float
    attempts: int
    finish_reason: str | None
    error: str | None


class CallOutcome(CallFacts):
    """What the ledger records of every call (its record adds ``call_id`` and the caller's
    fields, such as ``run_id``)."""

    cached_tokens: int | None
    transport_failures: int


# The keys a caller's fields may not overwrite: every key of the ledger's own record.
_CORE_KEYS = frozenset({"call_id", *CallOutcome.__required_keys__, *CallOutcome.__optional_keys__})


class RoleTotals(TypedDict):
    """:meth:`CostLedger.totals` for the calls of one role."""

    calls: int
    failed_calls: int
    attempts: int
    cost_usd_known: float
    calls_cost_unknown: int


class LedgerTotals(TypedDict):
    """Aggregates over a ledger's records (see the module docstring for the cost fields)."""

    calls: int
    ok_calls: int
    failed_calls: int
    attempts: int
    retries: int
    transport_failures: int
    prompt_tokens: int
    completion_tokens: int
    calls_tokens_unknown: int
    cost_usd: float | None
    cost_usd_known: float
    calls_cost_unknown: int
    cost_complete: bool
    latency_s: float
    by_role: dict[str, RoleTotals]


class CostLedger:
    """Thread-safe list of per-call records plus totals. See the module docstring for costs.

    A record is open: the keys of :class:`CallOutcome` and ``call_id``, plus whatever fields
    the caller attached (tags such as ``run_id`` or ``eval_arm``, chosen by each caller), so
    records are :data:`~orchestrator.llm.json_object.JsonObject`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[JsonObject] = []

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def record(self, role: str, result: ChatResult, **fields: Any) -> int:
        """Add a successful call; ``fields`` are caller extras (e.g. ``run_id``). Returns its id."""
        return self._append(
            {
                "role": role,
                "model": result.model,
                "ok": True,
                "prompt_tokens": result.prompt_tokens,
                "cached_tokens": result.cached_tokens,
                "completion_tokens": result.completion_tokens,
                "cost_usd": result.cost_usd,
                "cost_source": result.cost_source,
                "latency_s": result.latency_s,
                "attempts": result.attempts,
                "transport_failures": result.transport_failures,
                "finish_reason": result.finish_reason,
                "error": None,
            },
            fields,
        )

    def record_failure(
        self,
        role: str,
        model: str,
        error: LLMError,
        *,
        latency_s: float,
        transport_failures: int = 0,
        **fields: Any,
    ) -> int:
        """Add a failed call (``error.attempts`` HTTP attempts). Returns its id."""
        abandoned = transport_failures > 0
        return self._append(
            {
                "role": role,
                "model": model,
                "ok": False,
                "prompt_tokens": None,
                "cached_tokens": None,
                "completion_tokens": None,
                "cost_usd": None if abandoned else 0.0,
                "cost_source": "unknown" if abandoned else "error_response",
                "latency_s": latency_s,
                "attempts": error.attempts,
                "transport_failures": transport_failures,
                "finish_reason": None,
                "error": f"{type(error).__name__}: {error}",
            },
            fields,
        )

    def annotate(self, call_id: int, **fields: Any) -> None:
        """Attach caller fields (e.g. ``parse_outcome``) to an existing record."""
        _check_fields(fields)
        with self._lock:
            if not 0 <= call_id < len(self._records):
                raise ValueError(f"call_id {call_id!r} is not a record of this ledger")
            self._records[call_id].update(fields)

    def records(self) -> list[JsonObject]:
        """Copies of all records, in call_id order."""
        with self._lock:
            return [dict(r) for r in self._records]

    def totals(self) -> LedgerTotals:
        """Aggregates over all records (see the module docstring for the cost fields)."""
        records = self.records()
        by_role: dict[str, RoleTotals] = {}
        for rec in records:
            role = by_role.setdefault(
                rec["role"],
                {
                    "calls": 0,
                    "failed_calls": 0,
                    "attempts": 0,
                    "cost_usd_known": 0.0,
                    "calls_cost_unknown": 0,
                },
            )
            role["calls"] += 1
            role["failed_calls"] += 0 if rec["ok"] else 1
            role["attempts"] += rec["attempts"]
            role["cost_usd_known"] += rec["cost_usd"] or 0.0
            role["calls_cost_unknown"] += rec["cost_usd"] is None
        calls = len(records)
        attempts = sum(r["attempts"] for r in records)
        transport_failures = sum(r["transport_failures"] for r in records)
        cost_unknown = sum(r["cost_usd"] is None for r in records)
        known = sum(r["cost_usd"] for r in records if r["cost_usd"] is not None)
        complete = cost_unknown == 0 and transport_failures == 0
        ok = [r for r in records if r["ok"]]
        return {
            "calls": calls,
            "ok_calls": len(ok),
            "failed_calls": calls - len(ok),
            "attempts": attempts,
            "retries": attempts - calls,
            "transport_failures": transport_failures,
            "prompt_tokens": sum(r["prompt_tokens"] or 0 for r in ok),
            "completion_tokens": sum(r["completion_tokens"] or 0 for r in ok),
            "calls_tokens_unknown": sum(
                r["prompt_tokens"] is None or r["completion_tokens"] is None for r in ok
            ),
            "cost_usd": known if complete else None,
            "cost_usd_known": known,
            "calls_cost_unknown": cost_unknown,
            "cost_complete": complete,
            "latency_s": sum(r["latency_s"] for r in records),
            "by_role": dict(sorted(by_role.items())),
        }

    def _append(self, record: CallOutcome, fields: Mapping[str, object]) -> int:
        _check_fields(fields)
        with self._lock:
            call_id = len(self._records)
            self._records.append({"call_id": call_id, **record, **fields})
            return call_id


def _check_fields(fields: Mapping[str, object]) -> None:
    clash = sorted(_CORE_KEYS.intersection(fields))
    if clash:
        raise ValueError(f"ledger fields {clash} are reserved; choose other names")
