"""One model call, made and recorded: the only place that calls ``client.chat``.

:func:`make_call` sends one logical call, catches what it raises, times it and returns its
:func:`call_record` (with the ledger's cost when it failed, :func:`failure_cost`). The loop's
stages (:mod:`orchestrator.loop.stages`) and the calls of the corpus rounds
(:mod:`orchestrator.loop.corpus_calls`: the query rewrite, HyDE, the LLM reranker) both go
through it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from orchestrator.llm import (
    ChatMessage,
    ChatResult,
    JsonObject,
    LLMError,
    SupportsChat,
    UnexpectedClientError,
)
from orchestrator.records import CallRecord


@dataclass(frozen=True)
class CallSpec:
    """What one logical call sends, and the labels it is recorded under.

    ``step`` (``fan_out``, ``round_<n>``, ``query_rewrite``), ``role`` and ``subject`` (a run
    id, a node id, ``question``) are sent as the request's role and tags; ``vote`` numbers a
    verification call within its claim.
    """

    step: str
    role: str
    subject: str
    messages: list[ChatMessage]
    response_format: JsonObject | None
    max_tokens: int | None
    seed: int | None
    temperature: float
    vote: int | None = None


@dataclass
class CallOutcome:
    """A made call: the reply's text (None when it failed), its record and its error."""

    text: str | None
    record: CallRecord
    error: LLMError | None


def make_call(client: SupportsChat, model: str, spec: CallSpec) -> CallOutcome:
    """Make one logical call and record it whatever happens.

    Returns a :class:`CallOutcome`; never raises for a failed call: an :class:`LLMError` is
    kept as the outcome's error, and any other exception of the client is wrapped in
    :class:`UnexpectedClientError` (a client bug costs this call, never the whole run). A failed
    call's cost comes from the client's ledger (:func:`failure_cost`).
    """
    start = time.perf_counter()
    text: str | None = None
    error: LLMError | None = None
    result = None
    try:
        result = client.chat(
            model,
            spec.messages,
            temperature=spec.temperature,
            max_tokens=spec.max_tokens,
            response_format=spec.response_format,
            seed=spec.seed,
            role=spec.role,
            tags={"step": spec.step, "subject": spec.subject},
        )
        text = result.text
    except LLMError as exc:
        error = exc
    except Exception as exc:
        error = UnexpectedClientError(exc)
    latency = time.perf_counter() - start
    record = call_record(
        spec.step, spec.role, spec.subject, model, result, error, latency, vote=spec.vote
    )
    if error is not None:
        record["cost_usd"], record["cost_source"] = failure_cost(client, error)
    return CallOutcome(text, record, error)


def call_record(
    step: str,
    role: str,
    subject: str,
    model: str,
    result: ChatResult | None,
    error: LLMError | None,
    latency_s: float,
    *,
    vote: int | None = None,
) -> CallRecord:
    """The report's record of one logical call, whether it succeeded (``result``) or failed
    (``error``): tokens, cost, latency, attempts, finish reason. ``parse_outcome`` is filled
    in by whoever parses the reply."""
    return {
        "step": step,
        "role": role,
        "subject": subject,
        "vote": vote,
        "model": model,
        "ok": error is None,
        "prompt_tokens": result.prompt_tokens if result else None,
        "completion_tokens": result.completion_tokens if result else None,
        "cost_usd": result.cost_usd if result else None,
        "cost_source": result.cost_source if result else "unknown",
        "latency_s": round(latency_s, 6),
        "attempts": result.attempts if result else max(1, error.attempts if error else 1),
        "finish_reason": result.finish_reason if result else None,
        "parse_outcome": None,
        "error": f"{type(error).__name__}: {error}" if error else None,
    }


def failure_cost(client: SupportsChat, error: LLMError) -> tuple[float | None, str]:
    """The client ledger's cost for a failed call (0.0 for error answers, None when an
    attempt was abandoned mid-flight), or unknown when the client keeps no such record."""
    ledger = getattr(client, "ledger", None)
    if error.call_id is None or ledger is None:
        return None, "unknown"
    for record in ledger.records():
        if record.get("call_id") == error.call_id:
            return record.get("cost_usd"), str(record.get("cost_source", "unknown"))
    return None, "unknown"
