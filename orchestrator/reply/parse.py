"""Turn model replies into validated graphs and verdicts without ever crashing (design §4.3).

Each reply goes through up to four stages; the first that yields a usable value names the
outcome:

1. ``strict``   - fences and the text around the outermost ``{...}`` are stripped, then
                  ``json.loads``;
2. ``repaired`` - the caller's ``repair(error)`` callable makes one follow-up model call
                  stating what was wrong, and its reply is parsed strictly;
3. ``salvaged`` - the lenient ``json_repair`` parser is run on the repaired reply, then on the
                  original (trailing commas, missing quotes, truncated output);
4. ``dropped``  - nothing usable; ``graph``/``verdict`` is None and ``errors`` says why.

A graph reply is usable when it has a ``nodes`` list and a conclusion can be found. Lenient
structure, strict evidence: a slip that does not change what a reply claims costs nothing but
a note. A confidence that is not a number in 0..1 is replaced by the default; a missing or
dangling ``conclusion_node`` is resolved deterministically (:mod:`orchestrator.reply.graph_shape`);
a reason naming an unknown node drops that reason only. Invalid items (no claim, unknown type) are
dropped one by one, each with a reason in ``errors``, and every leniency is also listed in the
graph's ``leniencies`` so that the usable-run rate can be measured (:func:`usable_runs`).

The normalised graph is ``{"conclusion_node": id, "conclusion_from": one of
CONCLUSION_SOURCES, "answer": str | None, "nodes": [{"id", "claim", "type", "confidence",
"source"}], "edges": [{"src", "dst", "relation", "confidence"}], "leniencies": [tag]}``.
``source`` is the cited span id or None; ``answer`` is the short answer or None when the reply
has none (noted in ``errors``; the run still counts, but its conclusion
cannot be chosen). Edges come from each node's ``because`` list (reason -> node, ``supports``,
or ``assumes`` when the reason is an assumption) and ``against`` list (``attacks``), and from
an explicit ``edges`` list when a reply has one (keys ``from``/``to`` or ``src``/``dst``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import json_repair

from orchestrator.llm import LLMError
from orchestrator.reply.chain_shape import normalise_chain
from orchestrator.reply.compliance import OUTCOMES, ComplianceTally
from orchestrator.reply.fields import (
    CONCLUSION_ANSWER_NODE,
    CONCLUSION_BUILT,
    CONCLUSION_DECLARED,
    CONCLUSION_LAST_TYPED,
    CONCLUSION_ONLY_TYPED,
    CONCLUSION_SOURCES,
    CONFIDENCE_DEFAULTED,
    DEFAULT_CONFIDENCE,
    GUESSED_CONCLUSIONS,
    MAX_CLAIM_CHARS,
    MAX_ID_CHARS,
)
from orchestrator.reply.graph_record import ReplyGraph
from orchestrator.reply.graph_shape import normalise_graph
from orchestrator.reply.hop_shape import normalise_lookup, normalise_plan
from orchestrator.reply.rerank_shape import normalise_order
from orchestrator.reply.verdict_shape import MAX_REASON_CHARS, normalise_verdict

__all__ = [
    "CONCLUSION_ANSWER_NODE",
    "CONCLUSION_BUILT",
    "CONCLUSION_DECLARED",
    "CONCLUSION_LAST_TYPED",
    "CONCLUSION_ONLY_TYPED",
    "CONCLUSION_SOURCES",
    "CONFIDENCE_DEFAULTED",
    "DEFAULT_CONFIDENCE",
    "GUESSED_CONCLUSIONS",
    "MAX_CLAIM_CHARS",
    "MAX_EDGES",
    "MAX_ID_CHARS",
    "MAX_NODES",
    "MAX_REASON_CHARS",
    "MAX_REPLY_CHARS",
    "OUTCOMES",
    "ComplianceTally",
    "GraphParse",
    "GraphParseData",
    "Repair",
    "UsableRuns",
    "VerdictParse",
    "VerdictParseData",
    "extract_json_text",
    "parse_chain",
    "parse_graph",
    "parse_verdict",
    "usable_runs",
]

MAX_REPLY_CHARS = 200_000
MAX_NODES = 100
MAX_EDGES = 300

_FENCE = re.compile(r"^\s*```[\w-]*\s*$", re.MULTILINE)

Repair = Callable[[str], str]
# A normaliser turns a loaded JSON value into (value or None, item errors, fatal problem).
_Normaliser = Callable[[Any], tuple[Any, list[str], str | None]]


class GraphParseData(TypedDict):
    """:meth:`GraphParse.to_dict`."""

    outcome: str
    graph: ReplyGraph | None
    errors: list[str]
    repair_attempted: bool


class VerdictParseData(TypedDict):
    """:meth:`VerdictParse.to_dict`."""

    outcome: str
    verdict: str | None
    reason: str | None
    errors: list[str]
    repair_attempted: bool


@dataclass(frozen=True)
class GraphParse:
    """Outcome of :func:`parse_graph`; ``graph`` is None exactly when ``outcome == "dropped"``."""

    outcome: str
    graph: ReplyGraph | None
    errors: tuple[str, ...]
    repair_attempted: bool = False

    def to_dict(self) -> GraphParseData:
        """A JSON-serialisable copy (errors as a list)."""
        return {
            "outcome": self.outcome,
            "graph": self.graph,
            "errors": list(self.errors),
            "repair_attempted": self.repair_attempted,
        }


@dataclass(frozen=True)
class VerdictParse:
    """Outcome of :func:`parse_verdict`; ``verdict`` is None exactly when dropped."""

    outcome: str
    verdict: str | None
    reason: str | None
    errors: tuple[str, ...]
    repair_attempted: bool = False

    def to_dict(self) -> VerdictParseData:
        """A JSON-serialisable copy (errors as a list)."""
        return {
            "outcome": self.outcome,
            "verdict": self.verdict,
            "reason": self.reason,
            "errors": list(self.errors),
            "repair_attempted": self.repair_attempted,
        }


class UsableRuns(TypedDict):
    """:func:`usable_runs`: replies, how many were usable before and after issue 19's lenient
    rules, the two rates (None for no replies) and how many replies each leniency kind
    touched."""

    replies: int
    usable_before: int
    usable_after: int
    rate_before: float | None
    rate_after: float | None
    leniencies: dict[str, int]


def extract_json_text(text: str) -> str | None:
    """The span from the first ``{`` to the last ``}`` after removing markdown fence lines.

    If there is a ``{`` but no later ``}`` (a truncated reply) the span runs to the end, which
    strict parsing rejects and salvage may still recover. None when there is no ``{`` at all.
    """
    body = _FENCE.sub("", text)
    start = body.find("{")
    if start < 0:
        return None
    end = body.rfind("}")
    return body[start : end + 1] if end > start else body[start:]


def parse_graph(
    text: str,
    repair: Repair | None = None,
    *,
    max_nodes: int = MAX_NODES,
    max_edges: int = MAX_EDGES,
) -> GraphParse:
    """Parse an interrogation reply into a normalised argument graph (see module docstring).

    ``repair`` receives a one-line description of the problem and returns the model's new
    reply; it is called at most once, and an :class:`LLMError` it raises is recorded, not
    propagated. Nodes beyond ``max_nodes`` and edges beyond ``max_edges`` are dropped with an
    error. Cost: linear in the reply length plus O(nodes + edges).
    """

    def normalise(value: Any) -> tuple[Any, list[str], str | None]:
        return normalise_graph(value, max_nodes, max_edges)

    outcome, graph, errors, attempted = _stages(text, repair, normalise)
    return GraphParse(outcome, graph, tuple(errors), attempted)


def parse_chain(
    text: str, spans: Mapping[str, str], repair: Repair | None = None, *, max_steps: int = 20
) -> GraphParse:
    """Parse a chain-shaped reply (``{"steps": [{"sentence", "inference"}], "answer"}``, see
    :func:`orchestrator.reply.prompts.chain_messages`) and build the normalised graph from it.

    ``spans`` maps evidence span ids to their sentences: each step's sentence becomes a given
    whose claim *is* that sentence (so it always passes the citation check), and a step's
    inference rests on the givens since the last inference and on that inference. Reasons are
    joint: the chain is one argument. The conclusion states the answer and rests on what the
    last step left. A step naming no evidence sentence is dropped with a note; a reply without
    an answer is dropped (a chain concludes nothing else). Steps beyond ``max_steps`` are
    dropped. Same stages and outcomes as :func:`parse_graph`. Cost: O(reply + steps).
    """

    def normalise(value: Any) -> tuple[Any, list[str], str | None]:
        return normalise_chain(value, spans, max_steps)

    outcome, graph, errors, attempted = _stages(text, repair, normalise)
    return GraphParse(outcome, graph, tuple(errors), attempted)


def parse_verdict(text: str, repair: Repair | None = None) -> VerdictParse:
    """Parse a verification reply into ``supported``/``refuted``/``not_determinable`` + reason.

    Verdict spellings are normalised (case, spaces or hyphens for underscores); any other
    verdict drops the reply. A missing reason is recorded as an error and given as "".
    """
    outcome, value, errors, attempted = _stages(text, repair, normalise_verdict)
    verdict, reason = value if value is not None else (None, None)
    return VerdictParse(outcome, verdict, reason, tuple(errors), attempted)


@dataclass(frozen=True)
class ShapeParse:
    """Outcome of :func:`parse_plan`, :func:`parse_lookup` and :func:`parse_order`: ``value``
    (the lookups, the ``(span id, answer)`` pair, or the passage numbers) is None exactly when
    ``outcome == "dropped"``."""

    outcome: str
    value: Any
    errors: tuple[str, ...]


def parse_plan(text: str) -> ShapeParse:
    """Parse a hop plan reply (``{"lookups": [...]}``, :mod:`.hop_shape`); no
    repair call: a plan that cannot be read costs its call and nothing more."""
    outcome, value, errors, _ = _stages(text, None, normalise_plan)
    return ShapeParse(outcome, value, tuple(errors))


def parse_lookup(text: str) -> ShapeParse:
    """Parse a hop lookup reply (``{"sentence", "answer"}``, :mod:`.hop_shape`)."""
    outcome, value, errors, _ = _stages(text, None, normalise_lookup)
    return ShapeParse(outcome, value, tuple(errors))


def parse_order(text: str) -> ShapeParse:
    """Parse an LLM reranker's reply (``{"order": [...]}``, :mod:`.rerank_shape`); no repair
    call: an ordering that cannot be read leaves the fused order."""
    outcome, value, errors, _ = _stages(text, None, normalise_order)
    return ShapeParse(outcome, value, tuple(errors))


def usable_runs(replies: Sequence[str]) -> UsableRuns:
    """How many raw interrogation replies give a usable graph, now and under the rules before
    structure became lenient (issue 19), on the same texts (no repair call is made).

    *Before* is read off each reply's ``leniencies``: a reply was usable then when its
    conclusion was the declared or the only conclusion-typed node and that node's own
    confidence was a number in 0..1 (the old rules dropped such a node, and the run with it).
    Returns :class:`UsableRuns`. Cost: one parse per reply.
    """
    before = after = 0
    kinds: dict[str, int] = {}
    for text in replies:
        parsed = parse_graph(text)
        if parsed.graph is None:
            continue
        after += 1
        tags = parsed.graph["leniencies"]
        for kind in sorted(
            {tag.split(":")[0] if tag.startswith(CONFIDENCE_DEFAULTED) else tag for tag in tags}
        ):
            kinds[kind] = kinds.get(kind, 0) + 1
        own = f"{CONFIDENCE_DEFAULTED}:{parsed.graph['conclusion_node']}"
        if parsed.graph["conclusion_from"] not in GUESSED_CONCLUSIONS and own not in tags:
            before += 1
    total = len(replies)
    return {
        "replies": total,
        "usable_before": before,
        "usable_after": after,
        "rate_before": before / total if total else None,
        "rate_after": after / total if total else None,
        "leniencies": dict(sorted(kinds.items())),
    }


# -- stages ---------------------------------------------------------------------------------


def _stages(
    text: str, repair: Repair | None, normalise: _Normaliser
) -> tuple[str, Any, list[str], bool]:
    errors: list[str] = []
    if not isinstance(text, str):
        return "dropped", None, [f"reply is {type(text).__name__}, not text"], False
    value, item_errors, problem = _strict(text, normalise)
    if value is not None:
        return "strict", value, item_errors, False
    errors.append(f"strict parse: {problem}")
    repaired_text: str | None = None
    if repair is not None:
        try:
            answer = repair(problem or "unusable reply")
        except LLMError as exc:
            errors.append(f"repair call failed: {exc}")
        else:
            if isinstance(answer, str):
                repaired_text = answer
                value, item_errors, problem = _strict(answer, normalise)
                if value is not None:
                    return "repaired", value, errors + item_errors, True
                errors.append(f"repaired reply: {problem}")
            else:
                errors.append(f"repair returned {type(answer).__name__}, not text")
    for label, candidate in (("repaired reply", repaired_text), ("original reply", text)):
        if candidate is None:
            continue
        value, item_errors, problem = _lenient(candidate, normalise)
        if value is not None:
            return (
                "salvaged",
                value,
                [*errors, f"salvaged from the {label}", *item_errors],
                (repair is not None),
            )
        errors.append(f"salvage of the {label}: {problem}")
    return "dropped", None, errors, repair is not None


def _load(text: str, *, lenient: bool) -> tuple[Any, str | None]:
    """(the JSON value of the reply's outermost object, None) or (None, why there is none).
    A runaway reply past ``MAX_REPLY_CHARS`` is not searched; ``lenient`` reads it with
    json_repair instead of the standard parser."""
    if len(text) > MAX_REPLY_CHARS:
        return None, f"reply has {len(text)} characters, over the {MAX_REPLY_CHARS} limit"
    span = extract_json_text(text)
    if span is None:
        return None, "no JSON object found (no '{' in the reply)"
    if lenient:
        try:
            return json_repair.loads(span), None
        except Exception as exc:  # third-party parser on arbitrary model output: any failure
            return None, f"lenient parser failed: {exc!r}"  # just means "not salvageable"
    try:
        return json.loads(span), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc}"
    except RecursionError:
        return None, "invalid JSON: nested too deeply"


def _strict(text: str, normalise: _Normaliser) -> tuple[Any, list[str], str | None]:
    loaded, problem = _load(text, lenient=False)
    return (None, [], problem) if problem is not None else normalise(loaded)


def _lenient(text: str, normalise: _Normaliser) -> tuple[Any, list[str], str | None]:
    loaded, problem = _load(text, lenient=True)
    if problem is not None:
        return None, [], problem
    # Several top-level objects come back as a list (say, the model echoed a shape before its
    # answer, or answered twice): the last usable one is the model's final word.
    if isinstance(loaded, dict):
        candidates = [loaded]
    elif isinstance(loaded, list):
        candidates = [item for item in reversed(loaded) if isinstance(item, dict)]
    else:
        candidates = []
    problem = None
    for candidate in candidates:
        if not candidate:
            continue
        value, errors, issue = normalise(candidate)
        if value is not None:
            return value, errors, None
        problem = problem or issue
    return None, [], problem or "no JSON object could be recovered"
