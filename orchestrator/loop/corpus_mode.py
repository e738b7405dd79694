"""Corpus tasks: bounded retrieval rounds around the control loop.

A task that names an index in ``corpus`` instead of carrying ``documents`` is answered in
rounds (at most ``config.max_retrieval_rounds``), all within one call budget:

1. **Rewrite** (one call, ``query_rewrite/v1``): the question becomes up to three keyword
   queries. An unusable reply (failed call, no JSON, no strings) falls back to the question
   alone; the report says which happened.
2. **Retrieve** the top ``config.retrieval_k`` chunks (in later rounds, the top
   ``retrieval_k`` chunks not retrieved before) for the question and the queries
   (:func:`corpus.retrieve`: BM25, plus dense vectors when installed, fused by
   RRF). Each chunk becomes one document, so ``D2.3`` is sentence 3 of the second chunk, and
   :meth:`~corpus.CorpusEvidence.locate` traces it to file, page and offsets.
3. **Answer** with :func:`orchestrator.loop.driver.run_loop` on those documents and the calls left.
   With ``config.context_tokens`` known, only the chunks that fit the window are shown, best
   first (:func:`_fit_round`, :func:`.context_window.pack`); each round records what it
   left out and why, and a round whose calls the server refused as too long is recorded
   (``context_overflow``) and reported as a backend failure by :mod:`orchestrator.cli.run`.
4. **Close the gap**: when the loop refused for lack of support (``no_grounded_conclusion``,
   ``runs_found_no_answer``, ``candidates_tied``, ``no_evidence``) and rounds and calls are
   left, the next round searches for what was missing (:func:`gap_queries`: the new names each
   cited sentence leads to, question words no retrieved chunk contains, claims no cited
   sentence supports, disputed claims). Each gap query is searched on its own and their
   unseen chunks are taken in turn (:func:`interleave_new`), ``retrieval_k`` at most; they
   are appended after the earlier ones, so earlier span ids keep their meaning, and the loop
   runs again on all of them. No new chunk ends the rounds.

A run that still lacks support after its last round is refused with
``refusal_reason: insufficient_evidence``; the last loop's own reason is kept in
``retrieval.last_refusal_reason``. Why the loop stopped (``stop_reason``) and why the rounds
ended (``retrieval.end``) are reported apart from the refusal. Each round's queries and hits
go to the trace and the report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from json_repair import repair_json

from corpus.documents import CorpusEvidence, hits_to_evidence
from corpus.index import CorpusIndexError, index_info
from corpus.retrieval import MAX_VARIANTS, Hit, query_terms, retrieve
from graph_server.citation import name_words
from graph_server.similarity import STOPWORDS
from orchestrator.llm import ContextOverflowError, SupportsChat
from orchestrator.loop.calls import CallSpec, make_call
from orchestrator.loop.context_window import evidence_room, pack
from orchestrator.loop.driver import LoopResult, Progress, run_loop
from orchestrator.loop.trace import Trace
from orchestrator.records import (
    CallRecord,
    Compliance,
    GivenSource,
    RefusalReason,
    RetrievalRound,
    RewriteRecord,
    RunConfig,
    Task,
    TaskError,
    given_source,
    hit_summary,
)
from orchestrator.reply import parse, prompts, schemas

GAP_REFUSALS = frozenset(
    {
        RefusalReason.NO_EVIDENCE,
        RefusalReason.NO_GROUNDED,
        RefusalReason.UNANSWERABLE,
        RefusalReason.TIED,
    }
)
"""Loop refusals that more evidence could overturn; others (all runs failed) end the rounds."""

END_ANSWERED = "answered"
END_NOT_EVIDENTIAL = "refusal_not_about_evidence"
END_MAX_ROUNDS = "max_retrieval_rounds"
END_NO_NEW_EVIDENCE = "no_new_evidence"
END_BUDGET = "budget_exhausted"
MAX_TOKENS_REWRITE = 256
MAX_GAP_CLAIM_CHARS = 200
MAX_GAP_QUERIES = 6
OVERFLOW_ERROR = ContextOverflowError.__name__
"""How a call record's ``error`` starts when the server found the prompt too long."""


@dataclass(frozen=True)
class CorpusRun:
    """Everything the rounds established; :func:`orchestrator.report.build.build_report` builds the
    report from ``result`` (the last round's loop) and, for the whole run, from the rest."""

    index: str
    result: LoopResult
    evidence: CorpusEvidence
    """The chunks the last loop was shown, in its order (earlier rounds' chunks first)."""
    rounds: list[RetrievalRound]
    calls: list[CallRecord]
    """Every logical call of every round (the rewrite first), tagged ``retrieval_round``."""
    rewrite: RewriteRecord
    refusal_reason: str | None
    end: str
    budget_used: int
    config: RunConfig
    """The run's own settings (each round's loop ran with what was left of the budget)."""

    def schema_compliance(self) -> Compliance:
        """Reply-parsing outcomes per model, summed over every round."""
        tally = parse.ComplianceTally()
        for round_info in self.rounds:
            for model, counts in round_info.get("schema_compliance", {}).items():
                for outcome in parse.OUTCOMES:
                    tally.record(model, outcome, counts[outcome])
        return tally.to_dict()

    def model_wait_s(self) -> float:
        """Seconds spent waiting on the model, summed over every round."""
        return round(sum(float(r.get("model_wait_s", 0.0)) for r in self.rounds), 6)

    def citation(self, span_id: str | None) -> GivenSource | None:
        """Where a span the last loop was shown lives (see :func:`citation_of`)."""
        return citation_of(self.evidence, span_id)

    def refusal_statement(self) -> str:
        """The report's statement when the rounds end in a refusal other than the last
        loop's (a refusal for lack of support becomes ``insufficient_evidence``)."""
        return (
            f"The documents retrieved from the corpus do not support a reliable answer after "
            f"{len(self.rounds)} retrieval round(s) ({self.end}); the last round ended with "
            f"{self.result.refusal_reason}."
        )


def run_corpus_task(
    task: Task,
    *,
    client: SupportsChat,
    model: str,
    config: RunConfig,
    trace: Trace,
    progress: Progress | None = None,
) -> CorpusRun:
    """Answer a corpus task (``task.corpus`` names the index) in retrieval rounds.

    Never makes more than ``config.budget_calls`` logical calls in all. Raises
    :class:`TaskError` when the task has no corpus or its index cannot be used (missing file,
    not an index), before any model call.
    """
    index = _usable_index(task, config)
    calls: list[CallRecord] = []
    _announce(progress, "rewriting the question into search queries", 1)
    rewrite, record = rewrite_question(client, model, task.question, config)
    if record is not None:
        calls.append({**record, "retrieval_round": 1})
    trace.event("query_rewrite", **rewrite)
    variants: list[str] = rewrite["queries"]
    hits: list[Hit] = []
    rounds: list[RetrievalRound] = []
    used = len(calls)
    result: LoopResult | None = None
    shown = hits_to_evidence(())
    cited: set[str] = set()
    end = END_MAX_ROUNDS
    for round_no in range(1, config.max_retrieval_rounds + 1):
        new, round_info = _retrieve_round(index, task.question, round_no, variants, hits, config)
        trace.event("retrieval", **round_info)
        rounds.append(round_info)
        if not new and result is not None:
            end = END_NO_NEW_EVIDENCE
            break
        hits += new
        left = config.budget_calls - used
        if left < 1:  # never in round 1: the rewrite is skipped unless a call is left
            end = END_BUDGET
            break
        _announce(
            progress,
            f"retrieval round {round_no} of at most {config.max_retrieval_rounds}: "
            f"{len(new)} new chunk(s)"
            + (f", searched for what round {round_no - 1} lacked" if round_no > 1 else ""),
            round_no,
        )
        kept, round_config = _fit_round(task.question, hits, new, cited, config, round_info)
        shown = hits_to_evidence(kept)
        round_task = Task(task.question, shown.documents, task.expected_answer)
        result = run_loop(
            round_task,
            client=client,
            model=model,
            config=replace(round_config, budget_calls=left),
            trace=trace,
            progress=_whole_run(progress, round_no, calls, config.budget_calls),
        )
        used += result.budget_used
        calls.extend({**call, "retrieval_round": round_no} for call in result.calls)
        _record_loop(round_info, result, shown)
        if result.chosen is not None:
            end = END_ANSWERED
            break
        if result.refusal_reason not in GAP_REFUSALS:
            end = END_NOT_EVIDENTIAL
            break
        variants = gap_queries(task.question, result, shown.documents)
        cited = cited_chunks(result, shown)
    assert result is not None  # round 1 always runs the loop
    refusal = result.refusal_reason
    if result.chosen is None and refusal in GAP_REFUSALS:
        refusal = RefusalReason.INSUFFICIENT_EVIDENCE
    trace.event("retrieval_end", end=end, refusal_reason=refusal, rounds=len(rounds))
    return CorpusRun(
        index=index,
        result=result,
        evidence=shown,
        rounds=rounds,
        calls=calls,
        rewrite=rewrite,
        refusal_reason=refusal,
        end=end,
        budget_used=used,
        config=config,
    )


def _usable_index(task: Task, config: RunConfig) -> str:
    """The task's corpus index; raises :class:`TaskError` before any call when there is no
    corpus, the index cannot be used, or the window is too small for any evidence."""
    if task.corpus is None:
        raise TaskError("task has no 'corpus' to retrieve from")
    index = task.corpus
    check_corpus(index)
    if config.context_tokens is not None:  # a window too small for any evidence: no call
        evidence_room(task.question, config, config.context_tokens)
    return index


def _retrieve_round(
    index: str,
    question: str,
    round_no: int,
    variants: list[str],
    hits: list[Hit],
    config: RunConfig,
) -> tuple[list[Hit], RetrievalRound]:
    """One round's retrieval: the new chunks (round 1: the question with its variants; later
    rounds: each gap query, new chunks interleaved) and the round's record so far."""
    if round_no == 1:
        found = [retrieve(index, question, variants, config.retrieval_k)]
        new = list(found[0].hits)
    else:
        found = [retrieve(index, query, (), config.retrieval_k + len(hits)) for query in variants]
        new = interleave_new([f.hits for f in found], hits, config.retrieval_k)
    round_info: RetrievalRound = {
        "round": round_no,
        "queries": [query for f in found for query in f.queries],
        "dense_used": all(f.dense_used for f in found),
        "dense_note": next((f.dense_note for f in found if f.dense_note), ""),
        "hits": [hit_summary(hit) for hit in new],
    }
    return new, round_info


def _record_loop(round_info: RetrievalRound, result: LoopResult, shown: CorpusEvidence) -> None:
    """Add what the round's loop did to its record (and the server's context overflow)."""
    round_info.update(
        {
            "refused": result.chosen is None,
            "refusal_reason": result.refusal_reason,
            "stop_reason": result.stop_reason,
            "calls": len(result.calls),
            "chunks_shown": len(shown.documents),
            "model_wait_s": result.model_wait_s,
            "schema_compliance": result.compliance,
        }
    )
    overflow = next(
        (c["error"] for c in result.calls if str(c["error"]).startswith(OVERFLOW_ERROR)), None
    )
    if overflow is not None:
        round_info["context_overflow"] = overflow


def _fit_round(
    question: str,
    hits: list[Hit],
    new: list[Hit],
    cited: set[str],
    config: RunConfig,
    round_info: RetrievalRound,
) -> tuple[list[Hit], RunConfig]:
    """The chunks a round shows (in retrieval order) and its settings, packed into
    ``config.context_tokens``; ``round_info`` gains ``context`` and ``left_out``.

    Best first: the chunks the previous round cited (the facts found so far, which the gap
    queries build on), then this round's new chunks in their retrieval order, then the other
    earlier chunks in theirs. Round 1 is simply retrieval order. With the window unknown
    every chunk is shown.
    """
    window = config.context_tokens
    if window is None:
        round_info.update({"context": {"context_tokens": None}, "left_out": []})
        return hits, config
    fresh = {hit.chunk_id for hit in new}
    ranked = sorted(
        range(len(hits)),
        key=lambda i: (
            0 if hits[i].chunk_id in cited else 1 if hits[i].chunk_id in fresh else 2,
            i,
        ),
    )
    fit = pack([hit.text for hit in hits], ranked, question, config, window)
    round_info.update(
        {
            "context": fit.to_dict(),
            "left_out": [{"chunk_id": hits[i].chunk_id, "reason": why} for i, why in fit.left_out],
        }
    )
    return [hits[i] for i in fit.kept], fit.config_for(config)


def cited_chunks(result: LoopResult, evidence: CorpusEvidence) -> set[str]:
    """The chunk ids whose sentences the givens of ``result``'s graph cite."""
    chunks: set[str] = set()
    for node in result.graph["nodes"]:
        source = evidence.locate(node.get("source")) if node["type"] == "given" else None
        if source is not None:
            chunks.add(source.hit.chunk_id)
    return chunks


def check_corpus(index: str) -> None:
    """Raise :class:`TaskError` naming the task field when ``index`` is missing or not a
    corpus index (it is opened and its counts read); nothing is written."""
    try:
        index_info(index)
    except (ValueError, CorpusIndexError) as exc:
        raise TaskError(f"task field 'corpus': {exc}") from exc


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
    outcome = make_call(
        client,
        model,
        CallSpec(
            step="query_rewrite",
            role="query_rewrite",
            subject="question",
            messages=messages,
            response_format=response_format,
            max_tokens=MAX_TOKENS_REWRITE,
            seed=config.seed,
            temperature=0.0,
        ),
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
    body = parse.extract_json_text(text or "")
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


def gap_queries(question: str, result: LoopResult, documents: Sequence[str]) -> list[str]:
    """Queries for what a refused round lacked, at most :data:`MAX_GAP_QUERIES`, in order:

    1. for each cited sentence (each given of the round's graph), its names that the
       question lacks: the entities a multi-hop question leads to (the company that built
       the bridge) but does not state, so the next round finds the facts about them;
    2. the question's search words that occur in none of ``documents`` (the retrieved chunks);
    3. claims of the round's graph that no cited sentence grounds: assumptions (including
       givens that failed the citation check) and candidate conclusions that are not grounded;
    4. disputed claims (contradictions, claims only one run asserts).

    Nodes are taken in id order and repeats dropped, so the queries are deterministic.
    Cost: O(size of the documents + size of the graph).
    """
    nodes = {node["id"]: node for node in result.graph["nodes"]}
    question_terms = query_terms(question)
    asked = set(question_terms)
    queries: list[str] = []

    def add(query: str) -> None:
        query = " ".join(query.split())[:MAX_GAP_CLAIM_CHARS]
        if query and query_terms(query) and query not in queries:
            queries.append(query)

    for _, node in sorted(nodes.items()):
        if node["type"] == "given":
            add(" ".join(w for w in name_words(node["claim"]) if w.casefold() not in asked))
    present = {term for document in documents for term in query_terms(document)}
    add(" ".join(term for term in question_terms if term not in present))
    ungrounded = {c.node_id for c in result.assessment.candidates if not c.grounded}
    unsupported = [
        node_id
        for node_id, node in sorted(nodes.items())
        if node["type"] == "assumption" or node_id in ungrounded
    ]
    for node_id in [*unsupported, *sorted(result.assessment.disputed)]:
        add(str(nodes.get(node_id, {}).get("claim", "")))
    return queries[:MAX_GAP_QUERIES]


def interleave_new(rankings: Sequence[Sequence[Hit]], seen: Sequence[Hit], k: int) -> list[Hit]:
    """Up to ``k`` chunks not in ``seen``, taken from ``rankings`` in turn (the best unseen
    chunk of the first ranking, then of the second, ..., then the second best of each), so
    every gap query gets its share and an earlier query its pick first. Cost: O(total)."""
    taken = {hit.chunk_id for hit in seen}
    queues = [[hit for hit in ranking if hit.chunk_id not in taken] for ranking in rankings]
    picked: list[Hit] = []
    depth = 0
    while len(picked) < k and any(depth < len(queue) for queue in queues):
        for queue in queues:
            if depth < len(queue) and queue[depth].chunk_id not in taken:
                picked.append(queue[depth])
                taken.add(queue[depth].chunk_id)
                if len(picked) == k:
                    break
        depth += 1
    return picked


def citation_of(evidence: CorpusEvidence, span_id: str | None) -> GivenSource | None:
    """Where a cited span lives: chunk id, file, page, offsets in the page, section, version
    and a one-line citation; None for an id that is not a span of ``evidence``."""
    source = evidence.locate(span_id)
    return given_source(source) if source is not None else None


def _announce(progress: Progress | None, text: str, round_no: int) -> None:
    """Tell ``progress`` what starts now (a line of live progress; no call is made by it)."""
    if progress is not None:
        progress({"announce": text, "round": round_no})


def _whole_run(
    progress: Progress | None, round_no: int, earlier: list[CallRecord], budget: int
) -> Progress | None:
    """The loop's progress events restated for the whole run: calls and known cost include
    the earlier rounds' (``earlier``), the budget is the run's, the step names the round."""
    if progress is None:
        return None
    done = len(earlier)
    known = sum(call["cost_usd"] for call in earlier if call["cost_usd"] is not None)
    unknown = sum(1 for call in earlier if call["cost_usd"] is None)
    report = progress

    def shifted(event: dict[str, Any]) -> None:
        report(
            {
                **event,
                "step": f"round {round_no} {event['step']}",
                "calls_done": done + event["calls_done"],
                "budget_calls": budget,
                "cost_usd_known": round(known + event["cost_usd_known"], 12),
                "calls_cost_unknown": unknown + event["calls_cost_unknown"],
            }
        )

    return shifted
