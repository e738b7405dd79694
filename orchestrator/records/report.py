"""The report, typed once: report.json's sections as :func:`orchestrator.report.build.build_report`
builds them and :func:`orchestrator.report.markdown.render_markdown` reads them.

They are TypedDicts (plain dicts at run time), so report.json is written from them unchanged.
A key is ``NotRequired`` only where some reports lack it: the corpus section (``retrieval``),
a given's corpus ``citation``, ``limits.backend_failure``, ``interrupted`` (only in the report
of a run stopped early), and what a retrieval round records
once its loop ran. Field meanings are documented in docs/orchestrator.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from graph_server.record_data import GraphData
from orchestrator.records.loop import (
    AttackRecord,
    CallRecord,
    CitationRecord,
    ContradictionRecord,
    HopsRecord,
    LeaveOutRecord,
    MergeRecord,
    PhaseRecord,
    RunAnswer,
    RunRecord,
    VerificationRecord,
)

if TYPE_CHECKING:  # the corpus's retrieval and index modules load only in a corpus run
    from corpus.documents import SpanSource
    from corpus.retrieval import Hit

Compliance = dict[str, dict[str, Any]]
"""Reply-parsing outcomes per model (``ComplianceTally.to_dict``, :mod:`..reply.compliance`)."""


class ClaimRef(TypedDict):
    """A node named by id, with its claim ("" for an id the graph lacks)."""

    id: str
    claim: str


class SupportRecord(TypedDict):
    """How an answer is supported: what a candidate and the chosen answer both report."""

    width: int
    path_width: int
    max_flow: float
    run_support: int
    meets_k: bool
    arguments: list[list[ClaimRef]]
    argument_cut: list[str]
    arguments_capped: bool
    paths: list[list[ClaimRef]]


class SetAsideArgument(TypedDict):
    """A minimal derivation of a candidate that does not count as an argument, and why
    (``names_no_subject``, ``one_sided``, ``not_what_was_asked``, ``not_one_chain``,
    ``false_arithmetic``, ``statement_not_in_evidence``, ``named_thing_not_cited``,
    ``name_from_outside`` or ``answer_not_on_argument``)."""

    claims: list[ClaimRef]
    reason: str


class CandidateRecord(SupportRecord):
    """One candidate answer, best first (``rank`` 1)."""

    rank: int
    node_id: str
    answer: str | None
    answer_key: str
    claim: str
    flags: list[str]
    failed_links: list[dict[str, str]]
    set_aside: list[SetAsideArgument]
    answers_by_run: list[RunAnswer]
    grounded: bool
    refuted: bool
    surviving: bool
    run_ids: list[str]
    structure: dict[str, Any] | None


class ChosenRecord(SupportRecord):
    """The answer's support and its critical links; on refusal no answer and width 0."""

    node_id: str | None
    answer: str | None
    claim: str | None
    min_cut_nodes: list[str]
    bridge_edges: list[list[str]]


class KilledRecord(TypedDict):
    """A refuted claim and why."""

    id: str
    claim: str
    reason: str | None


class Disputes(TypedDict):
    """What the loop left disputed. ``isolated_load_bearing`` items are the store's payload
    with the claim and whether it was verified added."""

    contradiction_pairs: list[list[ClaimRef]]
    isolated_load_bearing: list[dict[str, Any]]
    unverified: list[str]


class GivenSource(TypedDict):
    """Where a corpus run's cited sentence lives: a view of :class:`corpus.retrieval.Hit`
    (the one record of a retrieved chunk), with the sentence's offsets in the chunk's page
    and a one-line citation. Built only by :func:`given_source`."""

    chunk_id: str
    path: str
    page: int
    start: int
    end: int
    section: str
    version: str | None
    citation: str


class GivenRecord(TypedDict):
    """A given of the graph with the span it stands for (None where it cites none)."""

    id: str
    span: str | None
    document: int | None
    sentence: int | None
    text: str | None
    claim: str
    run_ids: list[str]
    refuted: bool
    citation: NotRequired[GivenSource | None]
    """Corpus runs only."""


class Totals(TypedDict):
    """Sums over the call records (:func:`orchestrator.report.build.totals`); a token or cost sum
    is None when any call's figure is unknown, its ``*_known`` twin holds the known part."""

    calls: int
    calls_by_role: dict[str, int]
    failed_calls: int
    budget_calls: int
    http_attempts: int
    retries: int
    prompt_tokens: int | None
    prompt_tokens_known: int
    completion_tokens: int | None
    completion_tokens_known: int
    cost_usd: float | None
    cost_usd_known: float
    calls_cost_unknown: int
    latency_s_sum: float


class Budget(TypedDict):
    """The call budget: its cap, what was used and left, and what it counts."""

    limit: int
    used: int
    unused: int
    counts: str


class HttpLimits(TypedDict):
    """An HTTP client's bounds per call."""

    timeout_s_per_attempt: float
    max_retries: int
    default_max_tokens: int | None


class RunLimits(TypedDict):
    """Every bound a run ran under, and whether it bit (:func:`orchestrator.api.run_task`)."""

    budget_seconds: float | None
    max_concurrency: int | None
    deadline_reached: bool
    calls_not_made_for_time: int
    max_tokens: dict[str, int | None]
    http: HttpLimits | None
    backend_error: str | None


class BackendFailureRecord(TypedDict):
    """Why no reply the outcome rests on arrived, and what to do."""

    reason: str
    fix: str


class FailurePart(TypedDict):
    """``limits.backend_failure``, present only when the backend failed."""

    backend_failure: NotRequired[BackendFailureRecord]


class Limits(RunLimits, FailurePart):
    """report.json ``limits``: the run's bounds and the calls cut at ``max_tokens``."""

    calls_cut_at_max_tokens: int


class Timing(TypedDict):
    """Wall clock, model wait, overhead, the phases' waits and local seconds."""

    started_at: str
    wall_s: float
    model_wait_s: float
    overhead_s: float
    phases: list[PhaseRecord]
    local_s: dict[str, float]


class OutcomePart(TypedDict):
    """The outcome first: the headline, the question, the answer or the refusal, in words."""

    headline: str
    question: str
    expected_answer: str | None
    answer: str | None
    conclusion: str | None
    refused: bool
    refusal_reason: str | None
    statement: str


class AssessmentPart(TypedDict):
    """What the assessment of the merged graph found: the chosen answer's support, every
    candidate, the surviving claims, the labels, the claims refuted and the disputes left."""

    chosen: ChosenRecord
    candidates: list[CandidateRecord]
    surviving_claims: list[ClaimRef]
    labels: dict[str, list[str]]
    killed: list[KilledRecord]
    remaining_disputes: Disputes


class StopPart(TypedDict):
    """Why the loop ended."""

    stop_reason: str
    stop_detail: str


class AccountingPart(TypedDict):
    """The calls and what they used: the loop's, or every round's of a corpus run."""

    calls: list[CallRecord]
    totals: Totals
    budget: Budget
    limits: Limits
    schema_compliance: Compliance


# ----------------------------------------------------------------------------- corpus runs


class RewriteRecord(TypedDict):
    """The query rewrite: the queries it gave, or (``fallback``) why the question is
    searched alone."""

    queries: list[str]
    fallback: str | None


class HitSummary(TypedDict):
    """One retrieved chunk as a round records it: a view of :class:`corpus.retrieval.Hit`
    (the one record of a retrieved chunk; ``search_evidence`` answers another view of it,
    :class:`corpus.views.ChunkView`). Built only by :func:`hit_summary`."""

    chunk_id: str
    path: str
    page: int
    score: float
    keyword_rank: int | None
    dense_rank: int | None


class ContextRecord(TypedDict):
    """The context window a round's evidence was packed into; the estimates only when the
    window is known (:meth:`orchestrator.loop.context_window.Fit.to_dict`)."""

    context_tokens: int | None
    prompt_tokens_estimate: NotRequired[int]
    max_tokens_interrogation: NotRequired[int]


class LeftOut(TypedDict):
    """A chunk a round did not show, and why."""

    chunk_id: str
    reason: str


class DroppedChunk(TypedDict):
    """A chunk that fusion ranked among a round's top ``k`` but the round left out, and why:
    to keep one of the question's own best hits (``kept_for`` names it), or because the
    reranker placed it lower (``kept_for`` is None)."""

    chunk_id: str
    fused_rank: int
    kept_for: str | None
    reason: str


class HopSummary(TypedDict):
    """One sub-question of a round's plan: as planned, the queries it ran (each ``#k``
    filled with hop k's bridge) and the bridge names it gave the later hops."""

    sub_question: str
    queries: list[str]
    bridge: list[str]


class RerankRecord(TypedDict):
    """A round's reranking: by whom (``llm`` or ``cross-encoder``), the pool in fused order,
    and why the fused order was kept (None when the reranker's order was used)."""

    method: str
    pool: list[str]
    fallback: str | None


class HydeRecord(TypedDict):
    """HyDE: the hypothetical answer passage whose dense ranking joined round 1, or (``fallback``)
    why there is none or it was not used."""

    passage: str | None
    fallback: str | None


class RetrievalRound(TypedDict):
    """One retrieval round: its queries and new chunks, then, when its loop ran, the window
    and what the loop did (a round that ends the rounds before its loop holds none of that).
    ``plan``: the sub-questions, when the round retrieved hop by hop; ``plan_note``: why it
    did not although sub-questions were on; ``rerank``: when a reranker ran."""

    round: int
    queries: list[str]
    dense_used: bool
    dense_note: str
    hits: list[HitSummary]
    dropped: list[DroppedChunk]
    plan: NotRequired[list[HopSummary]]
    plan_note: NotRequired[str]
    rerank: NotRequired[RerankRecord]
    context: NotRequired[ContextRecord]
    left_out: NotRequired[list[LeftOut]]
    refused: NotRequired[bool]
    refusal_reason: NotRequired[str | None]
    stop_reason: NotRequired[str]
    calls: NotRequired[int]
    chunks_shown: NotRequired[int]
    model_wait_s: NotRequired[float]
    schema_compliance: NotRequired[Compliance]
    context_overflow: NotRequired[str]
    """The server found the round's prompt too long for its window."""


class Retrieval(TypedDict):
    """report.json ``retrieval``: the index, the rewrite, each round and how they ended."""

    index: str
    rewrite: RewriteRecord
    rounds: list[RetrievalRound]
    end: str
    last_refusal_reason: str | None
    chunks_shown: list[str]
    context_tokens: int | None
    hyde: NotRequired[HydeRecord]


class CorpusPart(TypedDict):
    """``retrieval``, present only in a corpus run's report."""

    retrieval: NotRequired[Retrieval]


# ----------------------------------------------------------------------------- the report


class InterruptRecord(TypedDict):
    """report.json ``interrupted``: what stopped the run early and how many calls it cost."""

    by: str
    calls_stopped: int


class InterruptPart(TypedDict):
    """``interrupted``, present only when the run was stopped early (set after building, by
    :func:`orchestrator.api.mark_interrupted`)."""

    interrupted: NotRequired[InterruptRecord]


class RunReport(OutcomePart, StopPart, AssessmentPart, AccountingPart, CorpusPart, InterruptPart):
    """report.json: the outcome first, then the evidence, the graph, the costs and settings."""

    report_version: int
    verifications: list[VerificationRecord]
    hops: HopsRecord | None
    """The hop-by-hop interrogation, when it ran (``config.hops``); else None."""
    leave_out: LeaveOutRecord | None
    """Leave-the-argument-out, when it applied (``config.leave_out``); else None."""
    rounds: int
    runs: list[RunRecord]
    givens: list[GivenRecord]
    citations: list[CitationRecord]
    rejected_citations: list[CitationRecord]
    attacks: list[AttackRecord]
    evidence_spans: int
    merges: list[MergeRecord]
    contradictions_created: list[ContradictionRecord]
    prompt_versions: dict[str, str]
    model: str
    config: dict[str, Any]
    context: dict[str, Any]
    timing: Timing
    graph: GraphData
    trace_file: str | None


def hit_summary(hit: Hit) -> HitSummary:
    """``hit`` as a retrieval round records it (see :class:`HitSummary`)."""
    return {
        "chunk_id": hit.chunk_id,
        "path": hit.path,
        "page": hit.page,
        "score": round(hit.score, 6),
        "keyword_rank": hit.keyword_rank,
        "dense_rank": hit.dense_rank,
    }


def given_source(source: SpanSource) -> GivenSource:
    """Where the sentence ``source`` locates lives (see :class:`GivenSource`)."""
    hit = source.hit
    return {
        "chunk_id": hit.chunk_id,
        "path": hit.path,
        "page": hit.page,
        "start": source.start,
        "end": source.end,
        "section": hit.section,
        "version": hit.version,
        "citation": source.citation(),
    }
