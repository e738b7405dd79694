"""Anchoring and ingest, the merge pass and attack settling: runs into one graph.

:func:`ingest_run` anchors one parsed run to the evidence (:func:`...checks.anchor.anchor_run`)
and asserts it as run ``r<i>``, holding its attack edges back; :func:`merge_pass` folds
paraphrases across runs; :func:`settle_attacks` asserts the held attacks that meet the quorum
(:func:`orchestrator.loop.policy.attack_counts`). What they establish accumulates in one
:class:`Ingested` record.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graph_server.errors import StoreError
from graph_server.records import NodeOut
from orchestrator.checks import ANSWER_PREFIX, AnchoredRun, anchor_run
from orchestrator.loop.policy import attack_counts
from orchestrator.loop.stages.context import GRAPH_ID, LoopContext
from orchestrator.loop.stages.runs import note_ingest, run_number, take_graph
from orchestrator.records import (
    AnswerRecord,
    AttackRecord,
    CitationRecord,
    ContradictionRecord,
    MergeRecord,
    RunRecord,
)
from orchestrator.reply import UNANSWERABLE, ReplyEdge


@dataclass
class Ingested:
    """What ingesting the runs established, for the assessment and the report.

    ``answers`` maps each answer node to its key and the runs that gave it; ``held_attacks``
    are the runs' attack edges, ``(run_id, edge)``, not yet asserted; ``attacks`` every attack
    once settled, counted or set aside.
    """

    citations: list[CitationRecord] = field(default_factory=list)
    answers: dict[str, AnswerRecord] = field(default_factory=dict)
    merges: list[MergeRecord] = field(default_factory=list)
    contradictions: list[ContradictionRecord] = field(default_factory=list)
    held_attacks: list[tuple[str, ReplyEdge]] = field(default_factory=list)
    attacks: list[AttackRecord] = field(default_factory=list)

    def unanswerable_runs(self) -> int:
        """Interrogation runs whose answer was "unanswerable"."""
        info = self.answers.get(ANSWER_PREFIX + UNANSWERABLE)
        return len(info["answers"]) if info is not None else 0


def ingest_run(ctx: LoopContext, ingested: Ingested, run: RunRecord) -> None:
    """Anchor one parsed run (its ``graph``, popped) to the evidence, assert it, and note in
    ``run`` and ``ingested`` what the store kept."""
    graph = take_graph(run)
    if graph is None:
        return
    run_id = run["run_id"]
    question = ctx.inputs.task.question
    anchored = anchor_run(run_id, graph, ctx.inputs.evidence, question, ctx.graph.claims)
    ingested.citations += anchored.citations
    edges = [e for e in anchored.edges if e["relation"] != "attacks"]
    ingested.held_attacks += [(run_id, e) for e in anchored.edges if e["relation"] == "attacks"]
    try:
        result = ctx.graph.store.assert_graph(GRAPH_ID, anchored.nodes, edges, run_id=run_id)
    except StoreError as refused:
        note_ingest(run, anchored, refused)
        ctx.trace.event("ingest", run_id=run_id, error=str(refused))
        return
    note_ingest(run, anchored, result)
    for node in anchored.nodes:
        ctx.graph.claims.setdefault(node["id"], node["claim"])
    if run["conclusion_node"] is not None:
        _note_answer(ingested, run_id, anchored)
    note_merges(
        ctx, ingested, f"ingest {run_id}", result.auto_merged, result.contradictions_created
    )
    ctx.trace.event(
        "ingest",
        run_id=run_id,
        accepted_nodes=len(result.accepted_nodes),
        accepted_edges=len(result.accepted_edges),
        rejected=run["rejected"],
        auto_merged=result.auto_merged,
        contradictions_created=result.contradictions_created,
        citations=[[c["node"], c["span"], c["reason"]] for c in anchored.citations],
    )


def _note_answer(ingested: Ingested, run_id: str, anchored: AnchoredRun) -> None:
    """Record which run gave which answer under which conclusion node."""
    node_id = anchored.conclusion
    assert node_id is not None
    info = ingested.answers.setdefault(node_id, {"key": anchored.answer_key, "answers": []})
    info["answers"].append(
        {
            "run_id": run_id,
            "answer": anchored.answer,
            "claim": anchored.conclusion_claim,
            "guessed_conclusion": anchored.guessed_conclusion,
        }
    )


def note_merges(
    ctx: LoopContext,
    ingested: Ingested,
    at: str,
    merges: list[list[str]],
    contradictions: list[list[str]],
) -> None:
    """Keep every merge and contradiction with the claims involved, for the report."""
    for kept, merged in merges:
        ingested.merges.append(
            {
                "at": at,
                "kept": kept,
                "merged": merged,
                "kept_claim": ctx.graph.claims.get(kept),
                "merged_claim": ctx.graph.claims.get(merged),
            }
        )
    for a, b in contradictions:
        ingested.contradictions.append(
            {"at": at, "pair": [a, b], "claims": [ctx.graph.claims.get(a), ctx.graph.claims.get(b)]}
        )


@dataclass(frozen=True)
class MergePass:
    """The merge pass: whether any run reached the graph, and the pass's own merges and
    contradictions (pairs of node ids; the report's records of them are in
    :class:`Ingested`)."""

    has_graph: bool
    merges: list[list[str]]
    contradictions_created: list[list[str]]


def merge_pass(ctx: LoopContext, ingested: Ingested) -> MergePass:
    """Fold duplicates across runs; the merges and contradictions also go into
    ``ingested``."""
    with ctx.timed("merge"):
        has_graph = ctx.graph.has_graph()
        merged = ctx.graph.store.merge_duplicates(GRAPH_ID) if has_graph else None
    if merged:
        note_merges(ctx, ingested, "merge pass", merged.merges, merged.contradictions_created)
    return MergePass(
        has_graph,
        merged.merges if merged else [],
        merged.contradictions_created if merged else [],
    )


def settle_attacks(ctx: LoopContext, ingested: Ingested, usable_runs: int) -> None:
    """Assert the held attack edges that meet the quorum; every attack, counted or set aside,
    goes into ``ingested.attacks``."""
    if not ingested.held_attacks or not ctx.graph.has_graph():
        return
    graph = ctx.graph.store.get_graph(GRAPH_ID)
    current = {node.id: node for node in graph.nodes}
    resolve = {old: node.id for node in graph.nodes for old in node.merged_ids}
    drawn_by: dict[tuple[str, str], set[str]] = {}
    for run_id, edge in ingested.held_attacks:
        src, dst = (resolve.get(end, end) for end in (edge["src"], edge["dst"]))
        if src in current and dst in current and src != dst:
            drawn_by.setdefault((src, dst), set()).add(run_id)
    for (src, dst), runs in sorted(drawn_by.items()):
        target_runs = sum(1 for r in current[dst].run_ids if r.startswith("r"))
        counted = attack_counts(
            len(runs),
            target_runs,
            usable_runs,
            on_evidence=_is_evidence(current[dst]),
            from_evidence=_is_evidence(current[src]),
        )
        ingested.attacks.append(
            {
                "src": src,
                "dst": dst,
                "runs": sorted(runs, key=run_number),
                "target_runs": target_runs,
                "counted": counted,
            }
        )
        if counted:
            for run_id in sorted(runs, key=run_number):
                attack: ReplyEdge = {
                    "src": src,
                    "dst": dst,
                    "relation": "attacks",
                    "confidence": 1.0,
                }
                ctx.graph.store.assert_graph(GRAPH_ID, [], [attack], run_id=run_id)
    ctx.trace.event("attacks", attacks=ingested.attacks)


def _is_evidence(node: NodeOut) -> bool:
    """A cited document sentence: a given anchored to an evidence span."""
    return node.type == "given" and bool(node.source)
