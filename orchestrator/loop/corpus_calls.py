"""The model calls of the retrieval rounds of a corpus task (:mod:`.corpus_mode`), each one
greedy call through :func:`orchestrator.loop.calls.make_call`, each with a fallback that
leaves retrieval as it would be without it:

- :func:`rewrite_question` (``query_rewrite/v1``): the question as up to three search
  queries; an unusable reply leaves the question alone;
- :func:`hypothetical_passage` (``hyde/v1``, with ``config.hyde``): a passage answering the
  question, whose dense ranking joins round 1 (HyDE); an unusable reply leaves none;
- :func:`rerank_by_model` (``rerank/v1``, with ``config.rerank == "llm"``): a round's pool
  ordered by usefulness; an invalid ordering leaves the fused order, and says why.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from json_repair import repair_json

from corpus.rerank import apply_order
from corpus.retrieval import MAX_VARIANTS, Hit, query_terms
from graph_server.similarity import STOPWORDS
from orchestrator.llm import ChatMessage, SupportsChat
from orchestrator.loop.calls import CallOutcome, CallSpec, make_call
from orchestrator.records import CallRecord, HydeRecord, RewriteRecord, RunConfig
from orchestrator.reply import extract_json_text, parse_order, prompts, schemas

MAX_TOKENS_REWRITE = 256
MAX_TOKENS_HYDE = 200
MAX_HYDE_CHARS = 1000
"""A hypothetical passage is cut to this many characters before it is embedded."""
MAX_TOKENS_RERANK = 512


def rewrite_question(
    client: SupportsChat, model: str, question: str, config: RunConfig
) -> tuple[RewriteRecord, CallRecord | None]:
    """One ``query_rewrite`` call: ``({"queries", "fallback"}, call record)``.

    ``queries`` holds up to :data:`~corpus.retrieval.MAX_VARIANTS` distinct
    queries other than the question itself; ``fallback`` is None when the reply was usable,
    else why the question is searched alone. With a budget of one call there is no rewrite
    (and no record): the loop needs that call.
    """
    if config.budget_calls < 2:
        return {"queries": [], "fallback": "budget leaves no call for a rewrite"}, None
    messages = prompts.query_rewrite_messages(question)
    response_format = schemas.query_rewrite_response_format() if config.structured_output else None
    outcome = _greedy_call(
        client, model, config, "query_rewrite", messages, response_format, MAX_TOKENS_REWRITE
    )
    record = outcome.record
    if outcome.text is None:
        return {"queries": [], "fallback": f"the rewrite call failed: {outcome.error}"}, record
    queries, problem = parse_queries(outcome.text, question)
    record["parse_outcome"] = "ok" if problem is None else "unusable"
    return {"queries": queries, "fallback": problem}, record


def parse_queries(text: str, question: str) -> tuple[list[str], str | None]:
    """The search queries in a rewrite reply: ``(queries, None)``, or ``([], problem)`` when
    the reply holds none. Queries are whitespace-collapsed, cut to
    :data:`~orchestrator.reply.schemas.MAX_QUERY_CHARS`, and kept when they have a word that is
    not a stopword and differ from the question and from each other; at most three.
    Cost: O(len(text))."""
    body = extract_json_text(text or "")
    if body is None:
        return [], "the reply holds no JSON object"
    try:
        data = json.loads(repair_json(body))
    except (ValueError, RecursionError):
        return [], "the reply's JSON cannot be read"
    items = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return [], "the reply has no 'queries' list"
    asked = " ".join(question.split()).casefold()
    queries: dict[str, str] = {}  # casefolded -> first spelling, in order
    for item in items:
        if not isinstance(item, str):
            continue
        query = " ".join(item.split())[: schemas.MAX_QUERY_CHARS]
        if set(query_terms(query)) - STOPWORDS and query.casefold() != asked:
            queries.setdefault(query.casefold(), query)
    if not queries:
        return [], "the reply's 'queries' holds no usable query"
    return list(queries.values())[:MAX_VARIANTS], None


def hypothetical_passage(
    client: SupportsChat, model: str, question: str, config: RunConfig, calls_left: int
) -> tuple[HydeRecord, CallRecord | None]:
    """One ``hyde`` call: ``({"passage", "fallback"}, call record)``. The passage is the
    reply's text, whitespace-collapsed and cut to :data:`MAX_HYDE_CHARS`; ``fallback`` says
    why there is none (failed call, empty reply, or fewer than two calls left: the loop
    needs one)."""
    if calls_left < 2:
        return {"passage": None, "fallback": "budget leaves no call for a HyDE passage"}, None
    messages = prompts.hyde_messages(question)
    outcome = _greedy_call(client, model, config, "hyde", messages, None, MAX_TOKENS_HYDE)
    record = outcome.record
    if outcome.text is None:
        return {"passage": None, "fallback": f"the HyDE call failed: {outcome.error}"}, record
    passage = " ".join(outcome.text.split())[:MAX_HYDE_CHARS]
    record["parse_outcome"] = "ok" if passage else "unusable"
    if not passage:
        return {"passage": None, "fallback": "the HyDE reply is empty"}, record
    return {"passage": passage, "fallback": None}, record


def rerank_by_model(
    client: SupportsChat, model: str, question: str, pool: Sequence[Hit], config: RunConfig
) -> tuple[list[Hit], str | None, CallRecord]:
    """One ``rerank`` call over ``pool``: ``(hits, fallback, call record)``. The reply's
    passage numbers are mapped to the pool's chunks and checked by
    :func:`corpus.rerank.apply_order` (every chunk once, no other); a failed call, an
    unreadable reply or an invalid ordering leaves the fused order, ``fallback`` saying why."""
    response_format = (
        schemas.rerank_response_format(len(pool)) if config.structured_output else None
    )
    messages = prompts.rerank_messages(question, [hit.text for hit in pool])
    outcome = _greedy_call(
        client, model, config, "rerank", messages, response_format, MAX_TOKENS_RERANK
    )
    record = outcome.record
    if outcome.text is None:
        return list(pool), f"the rerank call failed: {outcome.error}", record
    parsed = parse_order(outcome.text)
    if parsed.value is None:
        record["parse_outcome"] = "unusable"
        return list(pool), f"the rerank reply cannot be read: {'; '.join(parsed.errors)}", record
    order = [
        pool[number - 1].chunk_id if 1 <= number <= len(pool) else f"passage {number}"
        for number in parsed.value
    ]
    hits, problem = apply_order(pool, order)
    record["parse_outcome"] = "ok" if problem is None else "unusable"
    return hits, problem, record


def _greedy_call(
    client: SupportsChat,
    model: str,
    config: RunConfig,
    step: str,
    messages: list[ChatMessage],
    response_format: dict[str, Any] | None,
    max_tokens: int,
) -> CallOutcome:
    """One greedy call of the rounds, recorded under ``step`` (its role too); its subject
    is the question (the rewrite, HyDE) or the pool (the reranker)."""
    spec = CallSpec(
        step=step,
        role=step,
        subject="pool" if step == "rerank" else "question",
        messages=messages,
        response_format=response_format,
        max_tokens=max_tokens,
        seed=config.seed,
        temperature=0.0,
    )
    return make_call(client, model, spec)
