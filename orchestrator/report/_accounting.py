"""The report's accounting: the calls and their totals, the budget, the run's limits and
schema compliance, and the timing. Unknown quantities (cost, tokens) are None, never 0."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from orchestrator.loop import LoopResult
from orchestrator.records import (
    AccountingPart,
    CallRecord,
    FailurePart,
    Limits,
    RunLimits,
    RunReport,
    Timing,
    Totals,
)
from orchestrator.report._outcome import BackendFailure

if TYPE_CHECKING:
    from orchestrator.loop import CorpusRun

BUDGET_COUNTS = (
    "logical calls (interrogations, repairs, verifications); HTTP retries inside a call are "
    "counted apart as http_attempts and do not count against the cap"
)
TokenField = Literal["prompt_tokens", "completion_tokens"]


def accounting_part(
    result: LoopResult,
    corpus: CorpusRun | None,
    limits: RunLimits,
    failure: BackendFailure | None,
) -> AccountingPart:
    """report.json ``calls``, ``totals``, ``budget``, ``limits`` and ``schema_compliance``:
    the loop's, or for a corpus run every round's and the rewrite's."""
    config = corpus.config if corpus is not None else result.config
    calls = corpus.calls if corpus is not None else result.calls
    used = corpus.budget_used if corpus is not None else result.budget_used
    return {
        "calls": calls,
        "totals": totals(calls, config.budget_calls),
        "budget": {
            "limit": config.budget_calls,
            "used": used,
            "unused": config.budget_calls - used,
            "counts": BUDGET_COUNTS,
        },
        "limits": _limits(limits, calls, failure),
        "schema_compliance": (
            corpus.schema_compliance() if corpus is not None else result.compliance
        ),
    }


def _limits(
    limits: RunLimits, calls: Sequence[CallRecord], failure: BackendFailure | None
) -> Limits:
    """report.json ``limits``: the run's bounds, the calls cut at ``max_tokens``, and the
    backend failure when there was one."""
    failed: FailurePart = (
        {"backend_failure": {"reason": failure.reason, "fix": failure.fix}}
        if failure is not None
        else {}
    )
    return {
        **limits,
        "calls_cut_at_max_tokens": sum(1 for call in calls if call["finish_reason"] == "length"),
        **failed,
    }


def timing(result: LoopResult, wall_s: float, corpus: CorpusRun | None) -> Timing:
    """report.json ``timing``: wall clock, model wait (every round's in a corpus run),
    overhead, phases, local seconds."""
    model_wait_s = corpus.model_wait_s() if corpus is not None else result.model_wait_s
    return {
        "started_at": result.started_at,
        "wall_s": round(wall_s, 6),
        "model_wait_s": model_wait_s,
        "overhead_s": round(max(0.0, wall_s - model_wait_s), 6),
        "phases": result.phases,
        "local_s": dict(result.local_s),
    }


def set_wall_clock(report: RunReport, wall_s: float) -> None:
    """Refresh ``timing.wall_s`` and ``timing.overhead_s`` once the whole run is over."""
    timing = report["timing"]
    timing["wall_s"] = round(wall_s, 6)
    timing["overhead_s"] = round(max(0.0, wall_s - timing["model_wait_s"]), 6)


def totals(calls: Sequence[CallRecord], budget_calls: int) -> Totals:
    """Sums over the per-call records.

    ``calls`` is what the budget caps; ``http_attempts`` includes retries. Token and cost
    totals are None when any call's figure is unknown (the ``*_known`` fields hold the known
    part). A failed call whose every attempt got an error answer (``cost_source ==
    "error_response"``) used no tokens; any other failed call's tokens are unknown.
    """
    by_role: dict[str, int] = {}
    for call in calls:
        by_role[call["role"]] = by_role.get(call["role"], 0) + 1
    prompt, prompt_known = _token_sums(calls, "prompt_tokens")
    completion, completion_known = _token_sums(calls, "completion_tokens")
    costs = [call["cost_usd"] for call in calls]
    # Rounded to 1e-12 USD only to hide float summation noise (0.1 + 0.2).
    known_cost = round(sum(c for c in costs if c is not None), 12)
    attempts = sum(int(call["attempts"]) for call in calls)
    return {
        "calls": len(calls),
        "calls_by_role": dict(sorted(by_role.items())),
        "failed_calls": sum(1 for call in calls if not call["ok"]),
        "budget_calls": budget_calls,
        "http_attempts": attempts,
        "retries": attempts - len(calls),
        "prompt_tokens": prompt,
        "prompt_tokens_known": prompt_known,
        "completion_tokens": completion,
        "completion_tokens_known": completion_known,
        "cost_usd": known_cost if None not in costs else None,
        "cost_usd_known": known_cost,
        "calls_cost_unknown": sum(1 for c in costs if c is None),
        "latency_s_sum": round(sum(call["latency_s"] for call in calls), 6),
    }


def _token_sums(calls: Sequence[CallRecord], field: TokenField) -> tuple[int | None, int]:
    """``(sum or None when any call's figure is unknown, sum of the known figures)``."""
    known = [_tokens(call, field) for call in calls]
    part = sum(t for t in known if t is not None)
    return (part if None not in known else None), part


def _tokens(call: CallRecord, field: TokenField) -> int | None:
    if call["ok"]:
        value = call[field]
        return int(value) if value is not None else None
    return 0 if call["cost_source"] == "error_response" else None
