"""What the merged graph says right now: ranked candidate answers and the disputed claims.

Every run marks one conclusion, stored under its normalised short answer
(:mod:`.anchor`), so each ``conclusion`` node is one cluster of runs that gave the
same answer, i.e. one *candidate*. A candidate is *grounded* when it is live, survives the
grounded semantics (reachable from a surviving given through unrefuted, undefeated claims),
has argument width >= 1 (at least one argument whose joint premises all reach live evidence)
and carries no flag. Flags:

* ``answer_missing``: the runs gave no usable short answer;
* ``answer_unanswerable``: the runs said the evidence does not decide the question;
* ``answer_not_in_evidence``: a name-like answer that occurs in no evidence span (the model
  brought it in from elsewhere);
* ``conclusion_guessed``: every run behind it left its conclusion unmarked and the parser
  found it (:data:`orchestrator.reply.parse.GUESSED_CONCLUSIONS`): such runs count toward run
  support, but cannot ground an answer by themselves;
* ``answer_other_kind`` (with a chain context): a yes or a no to a question that asks for a
  thing ("In which release ...?"), :meth:`ChainContext.answers_another_kind`;
* ``answer_not_an_option`` (with a chain context): a number given to a comparison between two
  named options ("484" for "Which river is longer, A or B?"),
  :meth:`ChainContext.number_for_a_choice`.

With a chain context, a derivation that does not state the answer (a name or number that no
claim of it holds or computes, a clause of a compound answer it does not reach:
:func:`orchestrator.checks.follows.answer_follows`) is no argument for it: it is set aside as
``answer_not_on_argument`` before arguments are reduced to the minimal ones, so one run's
short derivation that stops short of the answer cannot hide another run's that reaches it.

Candidates are ranked by

1. grounded first, then live before refuted;
2. argument width (arguments sharing no claim, :mod:`graph_server.arguments`), larger first;
3. max flow (confidence-capped evidence), larger first;
4. run support (interrogation runs that reached this answer), larger first;
5. node id, only to make the listing deterministic (never to pick an answer: equal keys 1-4
   between the top two is a tie, see :attr:`Assessment.top_tied`).

The disputed queue is the order re-interrogation follows (design §4.1 step 4): members of
contradiction pairs first, then single-run load-bearing claims of each live candidate in rank
order (claims on an evidence route before attackers). Givens anchored to a span are not in the
queue: the citation check already tied them to the document, and a model's opinion of a
document sentence adds nothing. Nor are a hop's values (``checked``): the hop check tied each
to the sentence it cites, and the 1.5B refutes a claim written as "When was Emrys Tarvard
born? 1858" whatever its sentence says.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from graph_server import arguments, semantics
from graph_server.record_data import GraphData, NodeData, graph_data
from graph_server.store import GraphStore
from orchestrator.checks.chain import ChainContext
from orchestrator.checks.links import FailedLink, failed_links, without_links
from orchestrator.checks.question import terms
from orchestrator.records import AnswerRecord
from orchestrator.reply import UNANSWERABLE, answer_clauses, is_entity, preferred_spelling

_INTERROGATION_RUN = re.compile(r"^r\d+$")


@dataclass(frozen=True)
class Candidate:
    """One candidate answer (a conclusion node after the merge) and its support."""

    node_id: str
    claim: str
    refuted: bool
    surviving: bool
    width: int
    """Argument width: how many arguments for this answer share no claim (the verdict's
    figure; joint premises count once)."""
    max_flow: float
    paths: tuple[tuple[str, ...], ...]
    """Node-disjoint evidence paths (Menger), which count each joint premise apart."""
    run_ids: tuple[str, ...]
    answer: str | None = None
    """The cluster's short answer as the runs wrote it (the most common spelling)."""
    answer_key: str = ""
    flags: tuple[str, ...] = ()
    failed_links: tuple[FailedLink, ...] = ()
    """Support links of its argument that the chain check refused (:mod:`.chain`);
    ``width``, ``paths``, ``max_flow`` and the arguments are measured without them."""
    arguments: tuple[tuple[str, ...], ...] = ()
    """The independent arguments counted by ``width``, each its claims without the answer."""
    argument_cut: tuple[str, ...] = ()
    """Fewest claims whose failure leaves no argument for this answer."""
    arguments_capped: bool = False
    """The argument search hit its cap: ``width`` is then a lower bound."""
    set_aside: tuple[tuple[tuple[str, ...], str], ...] = ()
    """Minimal derivations that do not count as arguments, each with why
    (:meth:`orchestrator.checks.chain.ChainContext.argument_problem`)."""

    @property
    def path_width(self) -> int:
        """Node-disjoint evidence paths (Menger's support width), kept beside ``width``."""
        return len(self.paths)

    @property
    def run_support(self) -> int:
        """Interrogation runs (``r<i>``) that asserted this answer; verifier ids not counted."""
        return sum(1 for run in self.run_ids if _INTERROGATION_RUN.match(run))

    @property
    def grounded(self) -> bool:
        """Live, surviving, resting on at least one argument from evidence, and with no flag."""
        return not self.refuted and self.surviving and self.width > 0 and not self.flags

    def rank_key(self) -> tuple[bool, int, float, int]:
        """The keys that decide between answers (larger is better)."""
        return (self.grounded, self.width, self.max_flow, self.run_support)

    def snapshot(self) -> tuple[Any, ...]:
        """What must not change for the candidate set to count as stable."""
        return (self.node_id, self.refuted, self.grounded, self.width, self.max_flow)


@dataclass(frozen=True)
class Assessment:
    """Candidates (best first), the grounded labelling and the disputes at one moment."""

    candidates: tuple[Candidate, ...]
    labels: dict[str, list[str]]
    contradiction_pairs: tuple[tuple[str, str], ...]
    isolated: tuple[dict[str, Any], ...]

    @property
    def live_candidates(self) -> tuple[Candidate, ...]:
        """Candidates not refuted, best first."""
        return tuple(c for c in self.candidates if not c.refuted)

    @property
    def top(self) -> Candidate | None:
        """The best-ranked candidate, or None when there is none."""
        return self.candidates[0] if self.candidates else None

    @property
    def top_tied(self) -> bool:
        """Whether the two best candidates are both grounded and equal on every ranking key."""
        if len(self.candidates) < 2:
            return False
        first, second = self.candidates[0], self.candidates[1]
        return first.grounded and second.grounded and first.rank_key() == second.rank_key()

    @property
    def disputed(self) -> tuple[str, ...]:
        """Disputed claim ids in re-interrogation order, each once."""
        order: list[str] = [node for pair in self.contradiction_pairs for node in pair]
        order += [item["id"] for item in self.isolated]
        return tuple(dict.fromkeys(order))

    def snapshot(self) -> tuple[Any, ...]:
        """Comparable summary of the candidate ranking (see :meth:`Candidate.snapshot`)."""
        return tuple(c.snapshot() for c in self.candidates)


def assess(
    store: GraphStore,
    graph_id: str,
    nodes: dict[str, NodeData],
    answers: Mapping[str, AnswerRecord] | None = None,
    evidence_texts: Sequence[str] | None = None,
    chain: ChainContext | None = None,
    checked: frozenset[str] = frozenset(),
) -> Assessment:
    """Rank every conclusion node of ``graph_id`` and collect the disputes.

    ``nodes`` maps id -> node (as :meth:`GraphStore.get_graph` exports it) and must be
    current. ``answers`` maps a conclusion id to ``{"key", "answers": [{"answer", ...}]}`` (the
    runs' short answers); ``evidence_texts`` are the evidence spans under
    :func:`orchestrator.reply.answers.normalise_text`, where entity answers are looked up. With a
    ``chain`` context each candidate's links are checked (:func:`orchestrator.checks.links.
    failed_links`) and its widths count only the links that pass. Cost: one
    surviving-claims pass plus, per live candidate, one support-width and one disputed-nodes
    query (each O(V*E) at worst) and one argument-width query (capped, see docs/engine.md).
    ``checked`` are claims the system itself checked against their sentences (a hop's value,
    :mod:`orchestrator.checks.hops`): like anchored givens, they are never disputed.
    """
    if not nodes:  # no run reached the store: nothing to rank, nothing disputed
        return Assessment((), {"in": [], "out": [], "undecided": [], "surviving": []}, (), ())
    if chain is not None:
        nodes = chain.read(nodes)  # the checks read "It (Harrow Mill) was ..." for "It was ..."
    labels = store.surviving_claims(graph_id).model_dump(by_alias=True)
    surviving = set(labels["surviving"])
    measure = _Measure(store, graph_id, nodes, chain)
    candidates = [
        _candidate(node_id, nodes, measure, surviving, answers, evidence_texts, chain)
        for node_id in sorted(n for n, node in nodes.items() if node["type"] == "conclusion")
    ]
    candidates.sort(
        key=lambda c: (
            not c.grounded,
            c.refuted,
            -c.width,
            -c.max_flow,
            -c.run_support,
            c.node_id,
        )
    )
    pairs, isolated = _disputes(store, graph_id, nodes, candidates, checked)
    return Assessment(
        candidates=tuple(candidates),
        labels={key: labels[key] for key in ("in", "out", "undecided", "surviving")},
        contradiction_pairs=tuple(pairs),
        isolated=tuple(isolated),
    )


@dataclass(frozen=True)
class _Support:
    """One conclusion's measures: its path width (the disjoint ``paths`` and ``max_flow``)
    and its argument width (``width`` arguments, the ``independent`` ones, their
    ``min_cut``, whether enumeration was ``capped``, and the derivations ``set_aside`` with
    why). The defaults are a refuted conclusion's."""

    paths: list[list[str]] = field(default_factory=list)
    max_flow: float = 0.0
    width: int = 0
    independent: list[list[str]] = field(default_factory=list)
    min_cut: list[str] = field(default_factory=list)
    capped: bool = False
    set_aside: list[tuple[tuple[str, ...], str]] = field(default_factory=list)


class _Measure:
    """One conclusion's path width, argument width and failed links (a refuted conclusion has
    none); the graph is read once, when a chain check first needs it."""

    def __init__(
        self,
        store: GraphStore,
        graph_id: str,
        nodes: dict[str, NodeData],
        chain: ChainContext | None,
    ) -> None:
        self.store, self.graph_id, self.nodes, self.chain = store, graph_id, nodes, chain
        self.export: GraphData | None = None

    def __call__(
        self, node_id: str, answer_key: str, stated: Sequence[str]
    ) -> tuple[_Support, list[FailedLink]]:
        if self.nodes[node_id]["refuted"]:
            return _Support(), []
        store, graph_id, nodes, chain = self.store, self.graph_id, self.nodes, self.chain
        width = store.support_width(graph_id, node_id)
        found = store.argument_width(graph_id, node_id)
        support = _Support(
            width.paths, width.max_flow, found.width, found.independent, found.min_cut, found.capped
        )
        if chain is None or not width.paths:
            return support, []  # no chain check asked for, or nothing to check
        self.export = self.export or graph_data(store.get_graph(graph_id))
        edges = self.export["edges"]
        failed = failed_links(nodes, edges, node_id, chain.subject, chain.names, chain.paired)
        counted = without_links(self.export, failed)
        problem = _problem(nodes, chain, answer_key, stated)
        return _widths(counted, node_id, problem), failed


def _candidate(
    node_id: str,
    nodes: dict[str, NodeData],
    measure: _Measure,
    surviving: set[str],
    answers: Mapping[str, AnswerRecord] | None,
    evidence_texts: Sequence[str] | None,
    chain: ChainContext | None,
) -> Candidate:
    """The candidate for conclusion ``node_id``: its widths, its runs' answer and its flags."""
    node = nodes[node_id]
    info = (answers or {}).get(node_id)
    spelled = [a["answer"] for a in info["answers"] if a["answer"]] if info else []
    key = info["key"] if info else ""
    stated = [a["claim"] for a in info["answers"] if a["claim"]] if info else []
    found, failed = measure(node_id, key, stated)
    return Candidate(
        node_id=node_id,
        claim=node["claim"],
        refuted=bool(node["refuted"]),
        surviving=node_id in surviving,
        width=found.width,
        max_flow=found.max_flow,
        paths=tuple(tuple(path) for path in found.paths),
        run_ids=tuple(node["run_ids"]),
        answer=preferred_spelling(spelled) if spelled else None,
        answer_key=key,
        flags=_flags(key, info, found, nodes, evidence_texts, chain),
        failed_links=tuple(failed),
        arguments=tuple(tuple(claims) for claims in found.independent),
        argument_cut=tuple(found.min_cut),
        arguments_capped=found.capped,
        set_aside=tuple(found.set_aside),
    )


def _flags(
    key: str,
    info: AnswerRecord | None,
    found: _Support,
    nodes: dict[str, NodeData],
    evidence_texts: Sequence[str] | None,
    chain: ChainContext | None,
) -> tuple[str, ...]:
    """A candidate's flags: the answer's own (:func:`answer_flags`), an answer that only
    repeats the question, is a yes/no to a question asking for a thing or a number for a
    choice between two options, a conclusion every run guessed, or an answer whose
    arguments' numbers decide the comparison against it (chain runs). An argument that does
    not state the answer is no argument for it (:meth:`ChainContext.argument_problem`)."""
    flags = answer_flags(key, evidence_texts)
    if chain is not None and chain.restates_question(key):
        flags += ("answer_restates_question",)
    if chain is not None and chain.answers_another_kind(key):
        flags += ("answer_other_kind",)
    if chain is not None and chain.number_for_a_choice(key):
        flags += ("answer_not_an_option",)
    if info and all(a.get("guessed_conclusion") for a in info["answers"]):
        flags += ("conclusion_guessed",)
    if chain is not None and found.independent:
        argument = sorted({n for claims in found.independent for n in claims})
        claims = [nodes[n]["claim"] for n in argument]
        if chain.against_comparison(key, claims):
            flags += ("answer_against_comparison",)
    return flags


def _disputes(
    store: GraphStore,
    graph_id: str,
    nodes: dict[str, NodeData],
    candidates: list[Candidate],
    checked: frozenset[str],
) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    """The contradiction pairs (the last live candidate's) and the isolated load-bearing
    claims of every live candidate but anchored givens and ``checked`` claims, each once, in
    candidate order."""
    pairs: list[tuple[str, str]] = []
    isolated: list[dict[str, Any]] = []
    for candidate in (c for c in candidates if not c.refuted):
        disputes = store.disputed_nodes(graph_id, candidate.node_id)
        pairs = [(a, b) for a, b in disputes.contradiction_pairs]
        ordered = sorted(
            (
                d
                for d in disputes.isolated_load_bearing
                if not _anchored_given(nodes, d.id) and d.id not in checked
            ),
            key=lambda d: (not d.on_path, d.id),
        )
        isolated += [{**item.model_dump(), "candidate": candidate.node_id} for item in ordered]
    seen: set[str] = set()
    unique_isolated = []
    for item in isolated:
        if item["id"] not in seen:
            seen.add(item["id"])
            unique_isolated.append(item)
    return pairs, unique_isolated


def _widths(
    counted: Any, node_id: str, problem: Callable[[frozenset[str]], str | None]
) -> _Support:
    """Path width and argument width on ``counted`` (the graph without the failed links);
    only derivations without a ``problem`` count as arguments, and the minimal ones that have
    one are listed as ``set_aside`` with it."""
    paths, flow = semantics.support_width(counted, node_id)
    kept = arguments.argument_width(
        counted, node_id, admissible=lambda claims: problem(claims) is None
    )
    derived, _ = arguments.enumerate_arguments(counted, node_id)
    return _Support(
        paths=paths,
        max_flow=flow,
        width=kept.width,
        independent=[list(kept.arguments[i]) for i in kept.independent],
        min_cut=list(kept.min_cut),
        capped=kept.capped,
        set_aside=[
            (tuple(sorted(claims)), why)
            for claims in derived
            if (why := problem(claims)) is not None
        ],
    )


def _problem(
    nodes: Mapping[str, Mapping[str, Any]],
    chain: ChainContext,
    answer_key: str,
    stated: Sequence[str],
) -> Callable[[frozenset[str]], str | None]:
    """Why a derivation does not count as an argument for ``answer_key``
    (:meth:`ChainContext.argument_problem` of its claims), None when it does. Applied before
    minimality (:func:`graph_server.arguments.enumerate_arguments`), so a run's chain that
    passes is not hidden by another run's shorter one that fails."""

    # Each claim set is judged once, though both the argument search and the set-aside list
    # ask about it (:func:`_widths`).
    judged: dict[frozenset[str], str | None] = {}

    def problem(claims: frozenset[str]) -> str | None:
        if claims not in judged:
            ordered = [n for n in sorted(claims) if n in nodes]
            texts = [nodes[n]["claim"] for n in ordered]
            cited = [nodes[n]["claim"] for n in ordered if _anchored_given(nodes, n)]
            judged[claims] = chain.argument_problem(answer_key, texts, cited, stated)
        return judged[claims]

    return problem


def answer_flags(key: str, evidence_texts: Sequence[str] | None) -> tuple[str, ...]:
    """Why a candidate with answer key ``key`` may not be chosen (empty: it may).
    ``evidence_texts``: normalised span texts (None: no lookup)."""
    if not key:
        return ("answer_missing",)
    if key == UNANSWERABLE:
        return ("answer_unanswerable",)
    if evidence_texts is not None and is_entity(key) and not _in_evidence(key, evidence_texts):
        return ("answer_not_in_evidence",)
    return ()


def _in_evidence(key: str, evidence_texts: Sequence[str]) -> bool:
    """Whether the evidence holds entity answer ``key``: as a phrase, or for a compound answer
    (:func:`orchestrator.reply.answers.answer_clauses`) the words of each clause, wherever they
    stand ("Aiden is a sinner" brings in nothing when the evidence names Aiden and sinners).
    O(total length)."""
    clauses = answer_clauses(key)
    if clauses:
        held = frozenset().union(*(terms(text) for text in evidence_texts))
        return all(terms(clause) <= held for clause in clauses)
    padded = f" {key} "
    return any(padded in f" {text} " for text in evidence_texts)


def _anchored_given(nodes: Mapping[str, Mapping[str, Any]], node_id: str) -> bool:
    node = nodes.get(node_id)
    return node is not None and node["type"] == "given" and bool(node.get("source"))
