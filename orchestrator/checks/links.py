"""The link checks of the chain check: does each ``supports`` link of an argument hold?

The citation check (:mod:`graph_server.citation`) sees every given alone. These checks look at
the links between claims of the merged graph, with no model involved (docs/orchestrator.md,
*Chain check*, states the rules):

* **bridge**: the two ends of a ``supports`` link share a content word or a number
  (:func:`orchestrator.checks.question.terms`). A link whose ends share nothing is ``no_bridge``;
* **look-alike**: a link is ``look_alike`` when its ends name two different entities of the
  evidence that look alike: a shared name word inside two different names ("Embstone
  Ironworks" / "Embstone Foundry"), or two names of the evidence that differ by a near miss
  (rapidfuzz ratio >= :data:`NEAR_MISS_RATIO`, "Vance" / "Vane");
* **subject**: a link into the conclusion is ``off_subject`` when nothing upstream of it,
  over links that passed, mentions the question's subject
  (:func:`orchestrator.checks.question.subject_terms`: its names and numbers, else its content
  words), nor anything upstream of a reason the same run gave
  with it (joint premises reach the subject together). A line of evidence that never touches
  "x9" does not support "x9 can run the job", however true its sentences are.

A flagged link stays in the graph and in the report; it only stops counting toward width
(:func:`without_links`). :func:`chain_parts` cuts an argument's claims into the chains the
same link rule joins.

All functions are pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
from rapidfuzz import fuzz

from orchestrator.checks.question import name_runs, terms

NO_BRIDGE = "no_bridge"
LOOK_ALIKE = "look_alike"
OFF_SUBJECT = "off_subject"
NEAR_MISS_RATIO = 80.0
"""rapidfuzz ``ratio`` from which two different names count as look-alikes ("vance"/"vane"
scores 88.9; "braskthorpe"/"braskmere" 60)."""
MIN_NAME_CHARS = 4
"""Shorter names are too short for a ratio to mean anything."""


@dataclass(frozen=True)
class FailedLink:
    """One support link that does not count, and why (one of the reasons above)."""

    src: str
    dst: str
    reason: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready."""
        return {"src": self.src, "dst": self.dst, "reason": self.reason, "detail": self.detail}


def evidence_names(texts: Iterable[str]) -> frozenset[str]:
    """Every name in ``texts``, folded (see :func:`orchestrator.checks.question.name_runs`)."""
    found: set[str] = set()
    for text in texts:
        found.update(name_runs(text))
    return frozenset(found)


def failed_links(
    nodes: Mapping[str, Mapping[str, Any]],
    edges: Sequence[Mapping[str, Any]],
    conclusion: str,
    subject: frozenset[str],
    names: frozenset[str],
    paired: frozenset[str] = frozenset(),
) -> list[FailedLink]:
    """The ``supports`` links of the argument for ``conclusion`` that do not count.

    ``nodes`` maps id -> node with ``claim``; ``edges`` have ``src``, ``dst``, ``relation``
    and optionally ``run_ids`` (as ``get_graph`` exports them);
    ``subject`` is :func:`subject_terms` of the question (empty: no subject rule);
    ``names`` is :func:`evidence_names` of the evidence; ``paired``, the names the question
    itself holds (:func:`question_names`), are never look-alikes of each other: the question
    tells them apart ("Carrworth Foundry or Inglridge Foundry"). Links are checked upstream of the
    conclusion only. Sorted by (src, dst). Cost: O(E * claim length), plus the near-miss test
    over each link's differing names.
    """
    support = [
        (str(e["src"]), str(e["dst"]))
        for e in edges
        if e["relation"] == "supports" and e["src"] in nodes and e["dst"] in nodes
    ]
    upstream = _upstream(support, conclusion)
    premises = _premise_sets(edges)
    partners = _co_premises(edges, premises)
    failed: dict[tuple[str, str], FailedLink] = {}
    for src, dst in support:
        if dst not in upstream:
            continue
        problem = _link_problem(nodes[src]["claim"], nodes[dst]["claim"], names, paired)
        if problem is not None and any(
            _partner_mends(
                problem[0], nodes[src]["claim"], nodes[dst]["claim"], partner, names, paired
            )
            for partner in (nodes[p]["claim"] for p in partners.get((src, dst), ()))
        ):
            problem = None
        if problem is not None:
            failed[(src, dst)] = FailedLink(src, dst, *problem)
    if subject:
        reached = {n for n in upstream if terms(nodes[n]["claim"]) & subject and n != conclusion}
        _spread(reached, [link for link in support if link not in failed], conclusion)
        # Reasons one run gave together are joint premises: the set reaches the subject when
        # one of its members does ("x9 runs Linux" and "cron needs Linux", jointly).
        joint = [members for (claim, _), members in premises.items() if claim == conclusion]
        carried = set().union(*(members for members in joint if members & reached))
        for src, dst in support:
            if dst == conclusion and src not in carried and (src, dst) not in failed:
                detail = f"nothing on this line mentions the question's {sorted(subject)}"
                failed[(src, dst)] = FailedLink(src, dst, OFF_SUBJECT, detail)
    return [failed[key] for key in sorted(failed)]


def chain_parts(
    claims: Sequence[str], names: frozenset[str], paired: frozenset[str] = frozenset()
) -> list[list[int]]:
    """The connected parts of the claims of one argument (its conclusion left out), each a
    sorted list of indices, in order of their first claim. Two claims are linked by the rule
    of a support link: a shared content word or number, and no look-alike names but those
    ``paired`` (as in :func:`failed_links`). One part is one chain; "Vidar Tarvelm was born in
    Quelmere" with "Rookcombe Foundry built the Faldcrest Bridge" is two facts with a hop
    missing between them, even when each shares words with the conclusion. O(c^2) link
    tests for ``c`` claims."""
    parts: list[list[int]] = []
    seen: set[int] = set()
    for start in range(len(claims)):
        if start in seen:
            continue
        part, frontier = {start}, [start]
        while frontier:
            i = frontier.pop()
            for j in range(len(claims)):
                if j not in part and _link_problem(claims[i], claims[j], names, paired) is None:
                    part.add(j)
                    frontier.append(j)
        seen |= part
        parts.append(sorted(part))
    return parts


def without_links(graph: Mapping[str, Any], links: Iterable[FailedLink]) -> nx.MultiDiGraph:
    """The store's multigraph rebuilt from its export (``get_graph``), minus the ``supports``
    edges of ``links``, for the engine's width measures. O(V + E)."""
    dropped = {(link.src, link.dst) for link in links}
    rebuilt = nx.MultiDiGraph()
    for node in graph["nodes"]:
        rebuilt.add_node(node["id"], **{**node, "run_ids": set(node["run_ids"])})
    for edge in graph["edges"]:
        if edge["relation"] == "supports" and (edge["src"], edge["dst"]) in dropped:
            continue
        rebuilt.add_edge(
            edge["src"],
            edge["dst"],
            key=edge["relation"],
            confidence=edge["confidence"],
            run_ids=set(edge["run_ids"]),
        )
    return rebuilt


# -- helpers --------------------------------------------------------------------------------


def _partner_mends(
    problem: str, src: str, dst: str, partner: str, names: frozenset[str], paired: frozenset[str]
) -> bool:
    """Whether ``partner``, a claim given together with ``src`` for ``dst``, mends the link's
    ``problem``. A middle hop listed with other reasons bridges to them, not to the claim they
    support together ("founded by Vidar Tarvard" between "Rookcombe Foundry built the bridge"
    and "Vidar Tarvard was born in Quelheim"). Two names that a partner names side by side
    are two things it tells apart, as the question does for ``paired`` names: "The Hyva River
    empties into the Askul River" joins the hop values "Hyva River" and "Askul River"."""
    if problem == NO_BRIDGE:
        return _link_problem(src, partner, names, paired) is None
    if problem == LOOK_ALIKE:
        told_apart = paired | frozenset(name_runs(partner))
        return _link_problem(src, dst, names, told_apart) is None
    return False


def _link_problem(
    src: str, dst: str, names: frozenset[str], paired: frozenset[str] = frozenset()
) -> tuple[str, str] | None:
    shared = terms(src) & terms(dst)
    if not shared:
        return NO_BRIDGE, "the two claims share no content word or number"
    src_names, dst_names = set(name_runs(src)), set(name_runs(dst))
    for a in sorted(src_names - dst_names):
        for b in sorted(dst_names - src_names):
            if a not in names or b not in names:
                continue  # a look-alike is two entities the evidence really has
            if a in paired and b in paired:
                continue  # the question names both: it tells them apart itself
            how = look_alike(a, b)
            if how is not None:
                return LOOK_ALIKE, f"{a!r} and {b!r} are different names {how}"
    return None


def look_alike(a: str, b: str) -> str | None:
    """How two different folded names look alike, or None: "sharing a word" ("embton
    shipwrights", "embley shipwrights") or "that look alike" (rapidfuzz ratio at least
    :data:`NEAR_MISS_RATIO`, both at least :data:`MIN_NAME_CHARS` long: "vance", "vane").

    >>> look_alike("embton shipwrights", "embley shipwrights")
    'sharing a word'
    >>> look_alike("halla corvist", "isolde korelm") is None
    True
    """
    if set(a.split()) & set(b.split()):
        return "sharing a word"
    if min(len(a), len(b)) >= MIN_NAME_CHARS and fuzz.ratio(a, b) >= NEAR_MISS_RATIO:
        return "that look alike"
    return None


def _premise_sets(edges: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], set[str]]:
    """(claim, run) -> the sources of the ``supports`` edges that run drew into the claim: its
    joint premises. Edges without provenance form one set under run ``""``. O(E)."""
    sets: dict[tuple[str, str], set[str]] = {}
    for edge in edges:
        if edge["relation"] == "supports":
            for run in edge.get("run_ids") or ("",):
                sets.setdefault((str(edge["dst"]), str(run)), set()).add(str(edge["src"]))
    return sets


def _co_premises(
    edges: Sequence[Mapping[str, Any]], premises: Mapping[tuple[str, str], set[str]]
) -> dict[tuple[str, str], set[str]]:
    """(src, dst) of each supports edge a run drew -> the other sources that run gave for
    ``dst`` too (``premises`` is :func:`_premise_sets`). An edge without provenance has none.
    O(E) set unions."""
    partners: dict[tuple[str, str], set[str]] = {}
    for edge in edges:
        if edge["relation"] == "supports":
            src, dst = str(edge["src"]), str(edge["dst"])
            for run in edge.get("run_ids") or ():
                partners.setdefault((src, dst), set()).update(premises[(dst, str(run))] - {src})
    return partners


def _upstream(support: list[tuple[str, str]], conclusion: str) -> set[str]:
    """``conclusion`` and every claim with a support path to it."""
    into: dict[str, list[str]] = {}
    for src, dst in support:
        into.setdefault(dst, []).append(src)
    seen, stack = {conclusion}, [conclusion]
    while stack:
        for src in into.get(stack.pop(), []):
            if src not in seen:
                seen.add(src)
                stack.append(src)
    return seen


def _spread(reached: set[str], support: list[tuple[str, str]], conclusion: str) -> None:
    """Add to ``reached`` every claim a reached claim supports (not the conclusion itself:
    its own sentence always names the subject)."""
    out: dict[str, list[str]] = {}
    for src, dst in support:
        out.setdefault(src, []).append(dst)
    stack = list(reached)
    while stack:
        for dst in out.get(stack.pop(), []):
            if dst not in reached and dst != conclusion:
                reached.add(dst)
                stack.append(dst)
