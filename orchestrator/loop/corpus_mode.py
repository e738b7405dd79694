"""Corpus tasks: bounded retrieval rounds around the control loop.

A task that names an index in ``corpus`` instead of carrying ``documents`` is answered in
rounds (at most ``config.max_retrieval_rounds``), all within one call budget:

1. **Rewrite** (one call, ``query_rewrite/v1``, :mod:`.corpus_calls`): the question becomes
   up to three keyword queries. An unusable reply (failed call, no JSON, no strings) falls
   back to the question alone; the report says which happened. With ``config.hyde``, one
   more call writes a hypothetical answer passage for the dense rankings of round 1.
2. **Retrieve** (:mod:`.corpus_search`) the top ``config.retrieval_k`` chunks: in round 1
   for the question and the queries, hop by hop when the question has a grammar plan and
   ``config.subquestions`` is on; in later rounds the top ``retrieval_k`` chunks not
   retrieved before. With a reranker (``config.rerank``), twice as many are drawn and the
   reranker's top ``retrieval_k`` kept. Each chunk becomes one document, so ``D2.3`` is
   sentence 3 of the second chunk, and :meth:`~corpus.CorpusEvidence.locate` traces it to
   file, page and offsets. Each round records the chunks it dropped and why.
3. **Answer** with :func:`orchestrator.loop.driver.run_loop` on those documents and the calls left.
   With ``config.context_tokens`` known, only the chunks that fit the window are shown, best
   first (:func:`_fit_round`, :func:`.context_window.pack`); each round records what it
   left out and why, and a round whose calls the server refused as too long is recorded
   (``context_overflow``) and reported as a backend failure by :mod:`orchestrator.cli.run`.
4. **Close the gap**: when the loop refused for lack of support (``no_grounded_conclusion``,
   ``runs_found_no_answer``, ``candidates_tied``, ``no_evidence``) and rounds and calls are
   left, the next round searches for what was missing
   (:func:`~.corpus_search.gap_queries`: the new names each cited sentence leads to,
   question words no retrieved chunk contains, claims no cited sentence supports, disputed
   claims). Each gap query is searched on its own and their unseen chunks are taken in turn
   (:func:`~.corpus_search.interleave_new`), ``retrieval_k`` at most; they are appended after
   the earlier ones, so earlier span ids keep their meaning, and the loop runs again on all
   of them. No new chunk ends the rounds.

A run that still lacks support after its last round is refused with
``refusal_reason: insufficient_evidence``; the last loop's own reason is kept in
``retrieval.last_refusal_reason``. Why the loop stopped (``stop_reason``) and why the rounds
ended (``retrieval.end``) are reported apart from the refusal. Each round's queries and hits
go to the trace and the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from corpus.documents import CorpusEvidence, hits_to_evidence
from corpus.index import CorpusIndexError, index_info
from corpus.rerank import RerankerUnavailable, load_cross_encoder, rerank_hits
from corpus.retrieval import Hit
from orchestrator.llm import ContextOverflowError, SupportsChat
from orchestrator.loop.context_window import evidence_room, pack
from orchestrator.loop.corpus_calls import hypothetical_passage, rerank_by_model, rewrite_question
from orchestrator.loop.corpus_search import (
    Reranker,
    RoundSearch,
    first_round,
    gap_queries,
    gap_round,
)
from orchestrator.loop.driver import LoopResult, Progress, run_loop
from orchestrator.loop.trace import Trace
from orchestrator.records import (
    CallRecord,
    Compliance,
    GivenSource,
    HydeRecord,
    RefusalReason,
    RetrievalRound,
    RewriteRecord,
    RunConfig,
    Task,
    TaskError,
    given_source,
)
from orchestrator.reply import OUTCOMES, ComplianceTally

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
    hyde: HydeRecord | None
    """The HyDE passage (``config.hyde``), or None when HyDE was off."""
    refusal_reason: str | None
    end: str
    budget_used: int
    config: RunConfig
    """The run's own settings (each round's loop ran with what was left of the budget)."""

    def schema_compliance(self) -> Compliance:
        """Reply-parsing outcomes per model, summed over every round."""
        tally = ComplianceTally()
        for round_info in self.rounds:
            for model, counts in round_info.get("schema_compliance", {}).items():
                for outcome in OUTCOMES:
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
    :class:`TaskError` when the task has no corpus, its index cannot be used (missing file,
    not an index) or the cross-encoder of ``config.reranker_path`` cannot be loaded, before
    any model call.
    """
    index = _usable_index(task, config)
    rounds = _Rounds(task, client, model, config, trace, progress)
    reranker = _reranker(client, model, config, rounds)
    rewrite, hyde = _prepare(rounds)
    gaps: list[str] = rewrite["queries"]
    hits: list[Hit] = []
    result: LoopResult | None = None
    shown = hits_to_evidence(())
    cited: set[str] = set()
    end = END_MAX_ROUNDS
    for round_no in range(1, config.max_retrieval_rounds + 1):
        if round_no == 1:
            passage = hyde["passage"] if hyde is not None else None
            found = first_round(index, task.question, gaps, config, reranker=reranker, hyde=passage)
            _note_hyde(hyde, found.record)
        else:
            found = gap_round(index, task.question, round_no, gaps, hits, config, reranker=reranker)
        round_info = rounds.record(found, round_no)
        if not found.new and result is not None:
            end = END_NO_NEW_EVIDENCE
            break
        hits += found.new
        if rounds.left() < 1:  # never in round 1: the rewrite is skipped unless a call is left
            end = END_BUDGET
            break
        result, shown = rounds.answer(hits, found.new, cited, round_info)
        if result.chosen is not None:
            end = END_ANSWERED
            break
        if result.refusal_reason not in GAP_REFUSALS:
            end = END_NOT_EVIDENTIAL
            break
        gaps = gap_queries(task.question, result, shown.documents)
        cited = cited_chunks(result, shown)
    assert result is not None  # round 1 always runs the loop
    return rounds.finish(index, result, shown, rewrite, hyde, end)


class _Rounds:
    """One corpus run in the making: its round records, its calls (each tagged with its
    round), the calls used, and the loop run on each round's evidence."""

    def __init__(
        self,
        task: Task,
        client: SupportsChat,
        model: str,
        config: RunConfig,
        trace: Trace,
        progress: Progress | None,
    ) -> None:
        self.task, self.client, self.model, self.config = task, client, model, config
        self.trace, self.progress = trace, progress
        self.rounds: list[RetrievalRound] = []
        self.calls: list[CallRecord] = []
        self.used = 0

    def left(self) -> int:
        """Calls left of the run's budget."""
        return self.config.budget_calls - self.used

    def add_call(self, record: CallRecord | None, round_no: int) -> None:
        """Count a call made around the loop (a rewrite, HyDE, a rerank)."""
        if record is not None:
            self.calls.append({**record, "retrieval_round": round_no})
            self.used += 1

    def record(self, found: RoundSearch, round_no: int) -> RetrievalRound:
        """Keep a round's record and count its calls; the record goes to the trace too."""
        for call in found.calls:
            self.add_call(call, round_no)
        self.rounds.append(found.record)
        self.trace.event("retrieval", **found.record)
        return found.record

    def answer(
        self, hits: list[Hit], new: list[Hit], cited: set[str], round_info: RetrievalRound
    ) -> tuple[LoopResult, CorpusEvidence]:
        """Run the loop on the round's chunks that fit the window, with the calls left."""
        round_no = round_info["round"]
        _announce(
            self.progress,
            f"retrieval round {round_no} of at most {self.config.max_retrieval_rounds}: "
            f"{len(new)} new chunk(s)"
            + (f", searched for what round {round_no - 1} lacked" if round_no > 1 else ""),
            round_no,
        )
        question = self.task.question
        kept, round_config = _fit_round(question, hits, new, cited, self.config, round_info)
        shown = hits_to_evidence(kept)
        headings = shown.headings if self.config.chunk_headings else ()
        result = run_loop(
            Task(question, shown.documents, self.task.expected_answer, headings=headings),
            client=self.client,
            model=self.model,
            config=replace(round_config, budget_calls=self.left()),
            trace=self.trace,
            progress=_whole_run(self.progress, round_no, self.calls, self.config.budget_calls),
        )
        self.used += result.budget_used
        self.calls.extend({**call, "retrieval_round": round_no} for call in result.calls)
        _record_loop(round_info, result, shown)
        return result, shown

    def finish(
        self,
        index: str,
        result: LoopResult,
        shown: CorpusEvidence,
        rewrite: RewriteRecord,
        hyde: HydeRecord | None,
        end: str,
    ) -> CorpusRun:
        """The run's outcome: a refusal for lack of support becomes ``insufficient_evidence``."""
        refusal = result.refusal_reason
        if result.chosen is None and refusal in GAP_REFUSALS:
            refusal = RefusalReason.INSUFFICIENT_EVIDENCE
        self.trace.event("retrieval_end", end=end, refusal_reason=refusal, rounds=len(self.rounds))
        return CorpusRun(
            index=index,
            result=result,
            evidence=shown,
            rounds=self.rounds,
            calls=self.calls,
            rewrite=rewrite,
            hyde=hyde,
            refusal_reason=refusal,
            end=end,
            budget_used=self.used,
            config=self.config,
        )


def _prepare(rounds: _Rounds) -> tuple[RewriteRecord, HydeRecord | None]:
    """The calls before round 1: the query rewrite, then (``config.hyde``) the HyDE passage."""
    client, model, config, question = (
        rounds.client,
        rounds.model,
        rounds.config,
        rounds.task.question,
    )
    _announce(rounds.progress, "rewriting the question into search queries", 1)
    rewrite, record = rewrite_question(client, model, question, config)
    rounds.add_call(record, 1)
    rounds.trace.event("query_rewrite", **rewrite)
    if not config.hyde:
        return rewrite, None
    hyde, record = hypothetical_passage(client, model, question, config, rounds.left())
    rounds.add_call(record, 1)
    rounds.trace.event("hyde", **hyde)
    return rewrite, hyde


def _reranker(
    client: SupportsChat, model: str, config: RunConfig, rounds: _Rounds
) -> Reranker | None:
    """The run's reranker (``config.rerank``), or None. The cross-encoder is loaded here,
    before any call (:class:`TaskError` naming ``reranker`` when it cannot be); the LLM
    reranker skips a pool when fewer than two calls are left (the loop needs one)."""
    if config.rerank == "cross-encoder":
        assert config.reranker_path is not None  # RunConfig checks it
        try:
            scorer = load_cross_encoder(config.reranker_path)
        except (ValueError, RerankerUnavailable) as exc:
            raise TaskError(f"reranker: {exc}") from exc

        def by_scorer(question: str, pool: Sequence[Hit]) -> tuple[list[Hit], str | None, None]:
            return (*rerank_hits(question, pool, scorer), None)

        return Reranker("cross-encoder", by_scorer)
    if config.rerank == "llm":

        def by_model(
            question: str, pool: Sequence[Hit]
        ) -> tuple[list[Hit], str | None, CallRecord | None]:
            if rounds.left() < 2:
                return list(pool), "budget leaves no call for reranking", None
            return rerank_by_model(client, model, question, pool, config)

        return Reranker("llm", by_model)
    return None


def _note_hyde(hyde: HydeRecord | None, round_info: RetrievalRound) -> None:
    """Say in ``hyde`` when its passage was not used because round 1 had no dense rankings."""
    if hyde is not None and hyde["passage"] is not None and not round_info["dense_used"]:
        hyde["fallback"] = f"the passage was not used: {round_info['dense_note']}"


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
    texts = [hit.text for hit in hits]
    headings = [hit.heading for hit in hits] if config.chunk_headings else []
    fit = pack(texts, ranked, question, config, window, headings)
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
