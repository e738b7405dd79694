"""One retrieval round of a corpus task (:mod:`.corpus_mode`): what is searched, fused,
reranked and handed to the loop, and the round's record.

Every search is keyword (BM25) alone, or with ``config.dense`` keyword and dense rankings
fused (when the index holds vectors; the round's record says which).

- **Round 1** searches the question with its rewrites. With ``config.subquestions`` and a
  plan read off the question's grammar (:func:`orchestrator.checks.decompose.decompose`,
  checked by :func:`corpus.multihop.check_plan`; no model call), it retrieves hop by hop
  (:func:`corpus.multihop.retrieve_plan`); else as one query set
  (:func:`corpus.retrieval.retrieve`). A HyDE passage, when there is one, joins the dense
  rankings (``config.hyde`` needs ``config.dense``).
- **Later rounds** search each gap query (:func:`gap_queries`: what the previous round
  lacked) on its own and take their unseen chunks in turn (:func:`interleave_new`).
- Every round fuses the entity-graph ranking in with ``config.entity_weight`` (0: none).
- With a reranker, a round draws :func:`corpus.rerank.pool_size` chunks, the reranker
  orders them, and the top ``config.retrieval_k`` are kept.

A round records the chunks it dropped and why: those the question's own best hits displaced
(:func:`corpus.retrieval.keep_own`) and those the reranker placed below the top ``k``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from corpus.multihop import PlanError, check_plan, retrieve_plan
from corpus.rerank import pool_size
from corpus.retrieval import Dropped, Hit, query_terms, retrieve
from graph_server.citation import name_words
from orchestrator.checks import decompose
from orchestrator.loop.driver import LoopResult
from orchestrator.records import (
    CallRecord,
    DroppedChunk,
    HopSummary,
    RerankRecord,
    RetrievalRound,
    RunConfig,
    hit_summary,
)

MAX_GAP_CLAIM_CHARS = 200
MAX_GAP_QUERIES = 6

Reorder = Callable[[str, Sequence[Hit]], tuple[list[Hit], str | None, CallRecord | None]]
"""A reranker: ``(question, pool) -> (the pool reordered, why the fused order stands or
None, the call it made or None)``."""


@dataclass(frozen=True)
class Reranker:
    """The reranker of a run: ``method`` (``llm`` or ``cross-encoder``) and what it does."""

    method: str
    reorder: Reorder


@dataclass(frozen=True)
class RoundSearch:
    """A round's retrieval: its new chunks (best first), its record so far, and the calls
    it made (the LLM reranker's)."""

    new: list[Hit]
    record: RetrievalRound
    calls: list[CallRecord]


def plan_for(question: str) -> tuple[list[str] | None, str]:
    """The question's checked grammar plan and ``""``, or None and why there is none."""
    plan = decompose(question)
    if plan is None:
        return None, "the question has no plan: the grammar planner reads none off it"
    try:
        return check_plan(question, plan), ""
    except PlanError as exc:
        return None, f"the grammar plan was rejected: {exc}"


@dataclass(frozen=True)
class Found:
    """What a round's searches gave, before reranking: the queries run, the pool (best
    first), whether dense rankings were used (and why not), the chunks the question's own
    hits displaced, and the sub-questions (or why there were none)."""

    queries: list[str]
    pool: list[Hit]
    dense_used: bool
    dense_note: str
    dropped: Sequence[Dropped]
    plan: list[HopSummary] | None = None
    plan_note: str = ""


def search_question(
    index: str,
    question: str,
    variants: Sequence[str],
    k: int,
    *,
    subquestions: bool,
    dense: bool,
    entity_weight: float = 0.0,
    hyde: str | None = None,
) -> Found:
    """The top ``k`` chunks for ``question`` and its ``variants``: hop by hop
    (:func:`corpus.multihop.retrieve_plan`) when ``subquestions`` is on and the question has a
    plan (:func:`plan_for`), else :func:`corpus.retrieval.retrieve`; with dense rankings
    when ``dense`` and the index holds vectors. Shared by round 1 and ``logic-graph search``."""
    plan, note = plan_for(question) if subquestions else (None, "")
    if plan is None:
        one = retrieve(index, question, variants, k, dense=dense, entities=entity_weight, hyde=hyde)
        return Found(
            list(one.queries),
            list(one.hits),
            one.dense_used,
            one.dense_note,
            one.dropped,
            plan_note=note,
        )
    hopped = retrieve_plan(
        index,
        question,
        plan,
        k,
        dense=dense,
        entities=entity_weight,
        variants=variants,
        hyde=hyde,
    )
    hops = [_hop_summary(hop.sub_question, hop.queries, hop.bridge) for hop in hopped.hops]
    asked = [" ".join(q.split()) for q in (question, *variants) if q.strip()]
    queries = [*asked, *(q for hop in hops for q in hop["queries"])]
    return Found(
        list(dict.fromkeys(queries)),
        list(hopped.hits),
        hopped.dense_used,
        hopped.dense_note,
        hopped.dropped,
        plan=hops,
    )


def first_round(
    index: str,
    question: str,
    variants: Sequence[str],
    config: RunConfig,
    *,
    reranker: Reranker | None = None,
    hyde: str | None = None,
) -> RoundSearch:
    """Round 1: :func:`search_question` with the run's settings, then the reranker."""
    want = pool_size(config.retrieval_k) if reranker is not None else config.retrieval_k
    found = search_question(
        index,
        question,
        variants,
        want,
        subquestions=config.subquestions,
        dense=config.dense,
        entity_weight=config.entity_weight,
        hyde=hyde,
    )
    return _finish(1, question, found, config, reranker)


def gap_round(
    index: str,
    question: str,
    round_no: int,
    gaps: Sequence[str],
    seen: Sequence[Hit],
    config: RunConfig,
    *,
    reranker: Reranker | None = None,
) -> RoundSearch:
    """A later round: each gap query searched on its own, the unseen chunks interleaved."""
    want = pool_size(config.retrieval_k) if reranker is not None else config.retrieval_k
    searched = [
        retrieve(
            index, query, (), want + len(seen), dense=config.dense, entities=config.entity_weight
        )
        for query in gaps
    ]
    found = Found(
        [query for f in searched for query in f.queries],
        interleave_new([f.hits for f in searched], seen, want),
        all(f.dense_used for f in searched),
        next((f.dense_note for f in searched if f.dense_note), ""),
        [d for f in searched for d in f.dropped],
    )
    return _finish(round_no, question, found, config, reranker)


def _finish(
    round_no: int, question: str, found: Found, config: RunConfig, reranker: Reranker | None
) -> RoundSearch:
    """The round's kept chunks and record: the pool reranked (when a reranker is on) and cut
    to ``config.retrieval_k``."""
    k = config.retrieval_k
    pool = found.pool
    calls: list[CallRecord] = []
    dropped = [_dropped(d) for d in found.dropped]
    new = pool[:k]
    rerank: RerankRecord | None = None
    if reranker is not None and pool:
        ordered, fallback, call = reranker.reorder(question, pool)
        calls += [call] if call is not None else []
        new = ordered[:k]
        rerank = {
            "method": reranker.method,
            "pool": [h.chunk_id for h in pool],
            "fallback": fallback,
        }
        dropped += reranked_out(pool, new, reranker.method)
    record: RetrievalRound = {
        "round": round_no,
        "queries": found.queries,
        "dense_used": found.dense_used,
        "dense_note": found.dense_note,
        "hits": [hit_summary(hit) for hit in new],
        "dropped": dropped,
    }
    if found.plan is not None:
        record["plan"] = found.plan
    if found.plan_note:
        record["plan_note"] = found.plan_note
    if rerank is not None:
        record["rerank"] = rerank
    return RoundSearch(new, record, calls)


def reranked_out(pool: Sequence[Hit], kept: Sequence[Hit], method: str) -> list[DroppedChunk]:
    """The chunks of the fused top ``len(kept)`` of ``pool`` that the reranking left below
    it, each with its fused rank and where the reranker placed it."""
    k = len(kept)
    chosen = {hit.chunk_id for hit in kept}
    return [
        {
            "chunk_id": hit.chunk_id,
            "fused_rank": rank,
            "kept_for": None,
            "reason": (
                f"fused rank {rank} of the top {k}: the {method} reranker placed it below the "
                f"top {k} of the pool of {len(pool)}"
            ),
        }
        for rank, hit in enumerate(pool[:k], 1)
        if hit.chunk_id not in chosen
    ]


def _dropped(item: Dropped) -> DroppedChunk:
    return {
        "chunk_id": item.chunk_id,
        "fused_rank": item.fused_rank,
        "kept_for": item.kept_for,
        "reason": item.reason,
    }


def _hop_summary(sub_question: str, queries: Sequence[str], bridge: Sequence[str]) -> HopSummary:
    return {"sub_question": sub_question, "queries": list(queries), "bridge": list(bridge)}


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
        add(nodes[node_id]["claim"] if node_id in nodes else "")
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
