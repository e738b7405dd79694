"""Anchor one parsed run to the evidence before it reaches the graph store.

This is where a model's say-so stops being trusted. For one run's parsed graph
(:func:`orchestrator.reply.parse.parse_graph`), :func:`anchor_run` decides what each node becomes in
the store:

* **givens** pass the citation check (:mod:`orchestrator.citation`, with its repair of a
  wrong span number) or are demoted. A checked
  given is stored as the span itself: node id = span id (``D2.3``), claim = the span's text,
  ``source`` = span id. Runs that cite one span therefore meet in one node, by identity and not
  by fuzzy text, and a given can only ever say what its document says. A given that fails
  stays in the graph as an ``assumption`` under its run-scoped id, with the reason recorded.
* **the conclusion** is stored under its *answer*: id ``answer:<key>`` where ``key`` is
  :func:`~orchestrator.reply.answers.answer_key` of the run's answer, with ``source`` set to the
  same id so that no fuzzy merge can join two different answers. Runs that give the same
  answer share the node, so its ``run_ids`` are the runs that really gave it. Its claim is the
  first run's sentence when that sentence states the answer about the question's subject
  (:func:`states_answer`), else a sentence made of the answer and the question: the claim
  shown for an answer is never an unrelated sentence that happened to come first (each run's
  own sentence is kept in the record). A run with no usable answer keeps a run-scoped
  conclusion that can never be chosen.
* **the answer** is cut to a short value when it is long (:func:`orchestrator.reply.answers.
  shorten_answer`); one that cannot be cut counts as no answer, a compliance failure noted in
  ``leniencies`` as ``answer:too_long`` (``answer:cut`` when the cut worked).
* **nodes that restate the question** (a question, or the question's own words in its own
  order) are dropped with their edges: the question is never evidence and never a node. A
  conclusion that does so is kept when the run has an answer, with the answer as its
  sentence ("Yes, according to the passage ..., is the claim true?" concluding "yes"). A
  yes/no conclusion in statement form ("x9 can be used ...") is kept.
* everything else keeps a run-scoped id ``r<i>:<id>``.

Edges follow their nodes; two givens of one run citing one span collapse, and an edge that
would join a node to itself is dropped with a note. Nothing supports a checked given: it is a
document sentence. A reason the model gave for one ("D3.1 because D2.1") becomes a premise of
what that sentence supports, so the chain survives as joint premises; one drawn backwards from
what the sentence supports (the 0.5B does this, and it would only close a cycle) is dropped
with a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from corpus.evidence import Evidence
from graph_server.citation import anchor_citation
from graph_server.dedup import same_claim
from graph_server.similarity import NEGATIONS, claim_key, normalize
from orchestrator.checks.asserted import asserted_parts
from orchestrator.checks.question import subject_terms, terms
from orchestrator.records import CitationRecord
from orchestrator.reply import (
    ANSWER_SHORT,
    GUESSED_CONCLUSIONS,
    NO,
    YES,
    ReplyEdge,
    ReplyGraph,
    ReplyNode,
    answer_clauses,
    answer_key,
    asked_category,
    normalise_text,
    shorten_answer,
)

ANSWER_PREFIX = "answer:"


@dataclass
class AnchoredRun:
    """One run, ready for ``GraphStore.assert_graph`` (see the module docstring)."""

    nodes: list[ReplyNode] = field(default_factory=list)
    edges: list[ReplyEdge] = field(default_factory=list)
    conclusion: str | None = None
    """Store id of the run's conclusion node (None when it was dropped)."""
    conclusion_claim: str | None = None
    """The run's own conclusion sentence."""
    answer: str | None = None
    answer_key: str = ""
    citations: list[CitationRecord] = field(default_factory=list)
    """One record per given the model wrote: claim, source, span, ok, reason, detail."""
    notes: list[str] = field(default_factory=list)
    leniencies: list[str] = field(default_factory=list)
    """Every slip this run was forgiven (parse's tags, then the answer's form)."""
    guessed_conclusion: bool = False
    """The conclusion was not marked by the model (see :data:`orchestrator.reply.parse.
    GUESSED_CONCLUSIONS`): the run supports its answer's count but cannot ground it alone."""


def anchor_run(
    run_id: str,
    graph: ReplyGraph,
    evidence: Evidence,
    question: str,
    answer_claims: Mapping[str, str],
) -> AnchoredRun:
    """Translate ``graph`` (a parsed run) into store nodes and edges for run ``run_id``.

    ``answer_claims`` maps store ids (answer nodes among them) to the claim an earlier run
    stored under them: a later run giving the same answer reuses that claim, since the store
    refuses a second claim under one id. Pure: nothing is mutated. Cost: O(nodes +
    edges) citation checks, each linear in the claim and span length.
    """
    out = _answered(graph, evidence, asked_category(question))
    subject = subject_terms(question)
    store_id: dict[str, str] = {}
    question_form = normalize(question)
    for node in graph["nodes"]:
        local = node["id"]
        if node["claim"].rstrip().endswith("?") or normalize(node["claim"]) == question_form:
            if local != graph["conclusion_node"] or out.answer is None or not out.answer_key:
                out.notes.append(f"node {local!r} dropped: it restates the question")
                continue
            # The conclusion is stored under its answer anyway: keep the run's argument and
            # let the answer, not the question, be the conclusion's sentence.
            out.notes.append(f"conclusion {local!r} restates the question; kept as its answer")
            node = {**node, "claim": out.answer}
        record = _store_node(node, run_id, evidence, question, subject, answer_claims, out)
        if record["id"] in store_id.values():
            out.notes.append(f"node {local!r} cites the same span as an earlier node; joined")
        else:
            out.nodes.append(record)
        store_id[local] = record["id"]
    _fold_restatements(graph["edges"], store_id, out)
    out.conclusion = store_id.get(graph["conclusion_node"])
    _add_edges(graph["edges"], store_id, evidence, out)
    return out


def _fold_restatements(
    edges: Sequence[ReplyEdge], store_id: dict[str, str], out: AnchoredRun
) -> None:
    """Join each inference that only restates a cited span it rests on
    (:func:`graph_server.dedup.same_claim`) to that span, with a note: the store would fold
    the two anyway, and folding them here, before the edges are mapped, lets the reasons
    given for the inference become premises of what it supports (see :func:`_add_edges`)
    instead of a support link between two document sentences. ``store_id`` and
    ``out.nodes`` are updated in place. O(edges) claim comparisons."""
    records = {record["id"]: record for record in out.nodes}
    folded: set[str] = set()
    for edge in edges:
        src, dst = store_id.get(edge["src"]), store_id.get(edge["dst"])
        span, inference = records.get(src or ""), records.get(dst or "")
        if (
            edge["relation"] == "attacks"
            or span is None
            or inference is None
            or dst in folded
            or span["source"] != span["id"]
            or span["type"] != "given"
            or inference["type"] != "inference"
            or not same_claim(inference["claim"], span["claim"])
        ):
            continue
        folded.add(inference["id"])
        for local, stored in store_id.items():
            if stored == inference["id"]:
                store_id[local] = span["id"]
        out.notes.append(f"inference {edge['dst']!r} restates {span['id']}; joined to it")
    out.nodes[:] = [record for record in out.nodes if record["id"] not in folded]


def _answered(graph: ReplyGraph, evidence: Evidence, category: frozenset[str]) -> AnchoredRun:
    """A new :class:`AnchoredRun` holding the run's short answer, its key (folding the
    question's ``category``: :func:`orchestrator.reply.answers.asked_category`), the graph's
    leniencies and whether its conclusion was guessed; a long answer cut short (or dropped)
    is noted. Pure."""
    own_claim = next(
        (n["claim"] for n in graph["nodes"] if n["id"] == graph["conclusion_node"]), None
    )
    texts = [normalise_text(span.text) for span in evidence.spans]
    answer, form = shorten_answer(graph.get("answer"), own_claim, texts)
    out = AnchoredRun(answer=answer, answer_key=answer_key(answer, category))
    out.leniencies = list(graph.get("leniencies", []))
    out.guessed_conclusion = graph.get("conclusion_from") in GUESSED_CONCLUSIONS
    if form != ANSWER_SHORT:
        out.leniencies.append(f"answer:{form}")
        out.notes.append(
            f"answer {graph.get('answer')!r} is not short; "
            + (f"cut to {answer!r}" if answer else "no short form found, treated as no answer")
        )
    return out


def _store_node(
    node: ReplyNode,
    run_id: str,
    evidence: Evidence,
    question: str,
    subject: frozenset[str],
    answer_claims: Mapping[str, str],
    out: AnchoredRun,
) -> ReplyNode:
    """The store record for one parsed ``node`` of run ``run_id``: a given whose citation
    checks out becomes its span (else an assumption), and the conclusion becomes the shared
    answer node when the run has an answer. Appends the citation check to ``out.citations``
    and sets ``out.conclusion_claim``; raises nothing."""
    local, claim = node["id"], node["claim"]
    scoped = f"{run_id}:{local}"
    record: ReplyNode = {
        "id": scoped,
        "claim": claim,
        "type": node["type"],
        "confidence": node["confidence"],
        "source": None,
    }
    if node["type"] == "given":
        check = anchor_citation(claim, node.get("source"), evidence)
        out.citations.append(
            {
                "run_id": run_id,
                "node": local,
                "claim": claim,
                "source": node.get("source"),
                "span": check.span.id if check.span else None,
                "ok": check.ok,
                "corrected_from": check.corrected_from,
                "reason": check.reason,
                "detail": check.detail,
            }
        )
        if check.span is not None and check.ok:
            # The given says what the sentence states on its own: "It (Harrow Mill) was
            # founded in 1790.", not a bare "It" that the store would take for every subject.
            cited = evidence.get(check.span.id)
            own = cited.statement if cited is not None else None
            record["id"], record["claim"] = check.span.id, own or check.span.text
            record["source"] = check.span.id
        else:
            record["type"] = "assumption"
    elif node["type"] == "conclusion":
        out.conclusion_claim = claim
        # A run without an answer keeps its own node, anchored to itself so that no fuzzy
        # merge can fold it into an answer it never gave.
        record["source"] = scoped
        if out.answer_key:
            anchor = ANSWER_PREFIX + out.answer_key
            shown = answer_claims.get(anchor)
            if shown is None:
                stated = states_answer(claim, out.answer_key, subject)
                shown = claim if stated else f"{out.answer} (the answer to: {question})"
            record["id"], record["source"], record["claim"] = anchor, anchor, shown
    return record


def _add_edges(
    edges: Sequence[ReplyEdge],
    store_id: Mapping[str, str],
    evidence: Evidence,
    out: AnchoredRun,
) -> None:
    """Append to ``out.edges`` each parsed edge with its ends mapped to store ids, once;
    an edge with a dropped end is skipped, and one joining a span to itself is dropped with a
    note in ``out.notes``.

    Nothing supports a cited span, but a reason given for one is kept as a premise of what
    the span supports: "D3.1 because D2.1" and "answer because D3.1" become D2.1 and D3.1
    jointly supporting the answer, so the chain the model drew survives. A reason that the
    span itself leads to (an edge drawn backwards, which would only close a cycle), or one
    for a span that supports nothing, is dropped with a note. Cost: O(edges^2) per distinct
    span an edge points into."""
    mapped: list[tuple[ReplyEdge, ReplyEdge]] = [
        ({**edge, "src": store_id[edge["src"]], "dst": store_id[edge["dst"]]}, edge)
        for edge in edges
        if edge["src"] in store_id and edge["dst"] in store_id  # else an end was dropped
    ]
    supports = [e for e, _ in mapped if e["relation"] != "attacks" and e["src"] != e["dst"]]
    # Reachability from a span depends on the span alone: walk the run's graph once per span.
    spans = {e["dst"] for e in supports if evidence.get(e["dst"]) is not None}
    below = {span: _downstream(span, supports) for span in spans}
    onward = {span: _supported_through_spans(span, supports, evidence) for span in spans}
    seen: set[tuple[str, str, str]] = set()

    def add(edge: ReplyEdge) -> None:
        key = (edge["src"], edge["dst"], edge["relation"])
        if key not in seen:
            seen.add(key)
            out.edges.append(edge)

    for edge, parsed in mapped:
        src, dst = edge["src"], edge["dst"]
        named = f"edge {parsed['src']}->{parsed['dst']}"
        if src == dst:
            out.notes.append(f"{named} dropped: both ends are one span {src!r}")
        elif edge["relation"] == "attacks" or evidence.get(dst) is None:
            add(edge)
        elif src in below[dst]:
            out.notes.append(
                f"{named} dropped: a cited span ({dst}) needs no support, and "
                f"this one runs backwards from what the span supports"
            )
        else:
            targets = sorted(set(onward[dst]) - {src})
            if not targets:
                out.notes.append(f"{named} dropped: a cited span ({dst}) needs no support")
            for target in targets:
                # An inline edge carries the confidence of the node it bears on: now that one.
                add({**edge, "dst": target, "confidence": onward[dst][target]})
            if targets:
                out.notes.append(
                    f"{named}: a cited span ({dst}) needs no support; the reason joins the "
                    f"premises of {', '.join(targets)}"
                )


def _downstream(start: str, supports: Sequence[ReplyEdge]) -> set[str]:
    """Every node reachable from ``start`` along ``supports`` edges. O(edges^2)."""
    found: set[str] = set()
    frontier = [start]
    while frontier:
        node = frontier.pop()
        for edge in supports:
            if edge["src"] == node and edge["dst"] not in found:
                found.add(edge["dst"])
                frontier.append(edge["dst"])
    return found


def _supported_through_spans(
    span: str, supports: Sequence[ReplyEdge], evidence: Evidence
) -> dict[str, float]:
    """The nodes other than cited spans that ``span`` supports, directly or through a chain
    of cited spans, each with the confidence of the edge that reaches it. O(edges^2)."""
    found: dict[str, float] = {}
    visited = {span}
    frontier = [span]
    while frontier:
        node = frontier.pop()
        for edge in supports:
            if edge["src"] != node or edge["dst"] in visited:
                continue
            visited.add(edge["dst"])
            if evidence.get(edge["dst"]) is None:
                found[edge["dst"]] = edge["confidence"]
            else:
                frontier.append(edge["dst"])
    return found


def states_answer(sentence: str, key: str, subject: frozenset[str]) -> bool:
    """Whether ``sentence`` states answer ``key`` about the question's ``subject``: it
    mentions a subject term (when there are any), and it holds the answer itself, or for
    yes/no answers, a negation exactly when the answer is no."""
    if subject and not terms(sentence) & subject:
        return False
    if key in (YES, NO):
        return bool(claim_key(sentence).tokens & NEGATIONS) == (key == NO)
    clauses = answer_clauses(key)
    if clauses:  # in any order, each asserted (not in a quotation)
        return set(clauses) <= set(asserted_parts(sentence))
    return f" {key} " in f" {normalise_text(sentence)} "
