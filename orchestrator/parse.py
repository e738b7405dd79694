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
dangling ``conclusion_node`` is resolved deterministically (:func:`_conclusion`); a reason
naming an unknown node drops that reason only. Invalid items (no claim, unknown type) are
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
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import json_repair

from graph_server.validation import NODE_TYPES, RELATIONS
from orchestrator.answers import NO, UNANSWERABLE, YES, answer_key, normalise_text
from orchestrator.errors import LLMError
from orchestrator.schemas import NO_SOURCE, VERDICTS

OUTCOMES: tuple[str, ...] = ("strict", "repaired", "salvaged", "dropped")
DEFAULT_CONFIDENCE = 0.8
CONFIDENCE_DEFAULTED = "confidence_defaulted"
"""Leniency tag of a node whose confidence was not a number in 0..1 (see :func:`_confidence`)."""
CONCLUSION_DECLARED = "declared"
CONCLUSION_ONLY_TYPED = "only_typed"
CONCLUSION_LAST_TYPED = "last_typed"
CONCLUSION_ANSWER_NODE = "answer_node"
CONCLUSION_BUILT = "built"
CONCLUSION_SOURCES = (
    CONCLUSION_DECLARED,
    CONCLUSION_ONLY_TYPED,
    CONCLUSION_LAST_TYPED,
    CONCLUSION_ANSWER_NODE,
    CONCLUSION_BUILT,
)
"""How a run's conclusion was found. The first two are the model's own marking; the others
are guesses, so such a run counts toward its answer's run support but cannot ground the
answer by itself (:func:`orchestrator.assess.answer_flags`)."""
GUESSED_CONCLUSIONS = frozenset({CONCLUSION_LAST_TYPED, CONCLUSION_ANSWER_NODE, CONCLUSION_BUILT})
MAX_REPLY_CHARS = 200_000
MAX_NODES = 100
MAX_EDGES = 300
# A model's reply is held to tighter bounds than the store accepts from an MCP agent
# (graph_server.validation.StoreLimits: ids 200, claims 2,000 characters): a node id longer than
# 64 characters or a claim past 1,000 is a runaway reply, not a claim, and anchoring prefixes
# ids with the run id, which must still fit the store's limit
# (tests/test_parse.py checks the two stay in that order).
MAX_ID_CHARS = 64
MAX_CLAIM_CHARS = 1000
MAX_REASON_CHARS = 2000

_FENCE = re.compile(r"^\s*```[\w-]*\s*$", re.MULTILINE)

Repair = Callable[[str], str]
# A normaliser turns a loaded JSON value into (value or None, item errors, fatal problem).
_Normaliser = Callable[[Any], tuple[Any, list[str], str | None]]


@dataclass(frozen=True)
class GraphParse:
    """Outcome of :func:`parse_graph`; ``graph`` is None exactly when ``outcome == "dropped"``."""

    outcome: str
    graph: dict[str, Any] | None
    errors: tuple[str, ...]
    repair_attempted: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable copy (errors as a list)."""
        return _as_dict(self)


@dataclass(frozen=True)
class VerdictParse:
    """Outcome of :func:`parse_verdict`; ``verdict`` is None exactly when dropped."""

    outcome: str
    verdict: str | None
    reason: str | None
    errors: tuple[str, ...]
    repair_attempted: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable copy (errors as a list)."""
        return _as_dict(self)


def _as_dict(parsed: GraphParse | VerdictParse) -> dict[str, Any]:
    data = asdict(parsed)
    data["errors"] = list(parsed.errors)
    return data


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
        return _normalise_graph(value, max_nodes, max_edges)

    outcome, graph, errors, attempted = _stages(text, repair, normalise)
    return GraphParse(outcome, graph, tuple(errors), attempted)


def parse_chain(
    text: str, spans: Mapping[str, str], repair: Repair | None = None, *, max_steps: int = 20
) -> GraphParse:
    """Parse a chain-shaped reply (``{"steps": [{"sentence", "inference"}], "answer"}``, see
    :func:`orchestrator.prompts.chain_messages`) and build the normalised graph from it.

    ``spans`` maps evidence span ids to their sentences: each step's sentence becomes a given
    whose claim *is* that sentence (so it always passes the citation check), and a step's
    inference rests on the givens since the last inference and on that inference. Reasons are
    joint: the chain is one argument. The conclusion states the answer and rests on what the
    last step left. A step naming no evidence sentence is dropped with a note; a reply without
    an answer is dropped (a chain concludes nothing else). Steps beyond ``max_steps`` are
    dropped. Same stages and outcomes as :func:`parse_graph`. Cost: O(reply + steps).
    """

    def normalise(value: Any) -> tuple[Any, list[str], str | None]:
        return _normalise_chain(value, spans, max_steps)

    outcome, graph, errors, attempted = _stages(text, repair, normalise)
    return GraphParse(outcome, graph, tuple(errors), attempted)


def parse_verdict(text: str, repair: Repair | None = None) -> VerdictParse:
    """Parse a verification reply into ``supported``/``refuted``/``not_determinable`` + reason.

    Verdict spellings are normalised (case, spaces or hyphens for underscores); any other
    verdict drops the reply. A missing reason is recorded as an error and given as "".
    """
    outcome, value, errors, attempted = _stages(text, repair, _normalise_verdict)
    verdict, reason = value if value is not None else (None, None)
    return VerdictParse(outcome, verdict, reason, tuple(errors), attempted)


def usable_runs(replies: Sequence[str]) -> dict[str, Any]:
    """How many raw interrogation replies give a usable graph, now and under the rules before
    structure became lenient (issue 19), on the same texts (no repair call is made).

    *Before* is read off each reply's ``leniencies``: a reply was usable then when its
    conclusion was the declared or the only conclusion-typed node and that node's own
    confidence was a number in 0..1 (the old rules dropped such a node, and the run with it).
    Returns ``{"replies", "usable_before", "usable_after", "rate_before", "rate_after",
    "leniencies": {kind: replies}}`` (rates None for no replies). Cost: one parse per reply.
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


class ComplianceTally:
    """Thread-safe per-model counts of parse outcomes, with rates.

    ``to_dict()`` gives ``{model: {"strict": n, "repaired": n, "salvaged": n, "dropped": n,
    "total": n, "rates": {outcome: share or None}, "usable_rate": share or None}}`` where
    ``usable_rate`` is the share not dropped; rates are None while a model has no records.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, dict[str, int]] = {}

    def record(self, model: str, outcome: str, count: int = 1) -> None:
        """Count ``count`` (default one) parse ``outcome`` (one of :data:`OUTCOMES`) for
        ``model``."""
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome={outcome!r} is invalid: must be one of {list(OUTCOMES)}")
        if not isinstance(model, str) or not model:
            raise ValueError(f"model={model!r} is invalid: must be a non-empty string")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"count={count!r} is invalid: must be an integer >= 0")
        with self._lock:
            counts = self._counts.setdefault(model, dict.fromkeys(OUTCOMES, 0))
            counts[outcome] += count

    def counts(self, model: str) -> dict[str, int]:
        """Outcome counts for ``model`` (all zero if never recorded)."""
        with self._lock:
            return dict(self._counts.get(model) or dict.fromkeys(OUTCOMES, 0))

    def merge(self, other: ComplianceTally) -> None:
        """Add every count of ``other`` into this tally."""
        with other._lock:
            snapshot = {model: dict(c) for model, c in other._counts.items()}
        with self._lock:
            for model, counts in snapshot.items():
                mine = self._counts.setdefault(model, dict.fromkeys(OUTCOMES, 0))
                for outcome, n in counts.items():
                    mine[outcome] += n

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Counts, totals and rates per model, models sorted by id."""
        with self._lock:
            snapshot = {model: dict(c) for model, c in sorted(self._counts.items())}
        result: dict[str, dict[str, Any]] = {}
        for model, counts in snapshot.items():
            total = sum(counts.values())
            rates = {o: (counts[o] / total if total else None) for o in OUTCOMES}
            usable = (total - counts["dropped"]) / total if total else None
            result[model] = {**counts, "total": total, "rates": rates, "usable_rate": usable}
        return result


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


def _strict(text: str, normalise: _Normaliser) -> tuple[Any, list[str], str | None]:
    if len(text) > MAX_REPLY_CHARS:
        return None, [], f"reply has {len(text)} characters, over the {MAX_REPLY_CHARS} limit"
    span = extract_json_text(text)
    if span is None:
        return None, [], "no JSON object found (no '{' in the reply)"
    try:
        loaded = json.loads(span)
    except json.JSONDecodeError as exc:
        return None, [], f"invalid JSON: {exc}"
    except RecursionError:
        return None, [], "invalid JSON: nested too deeply"
    return normalise(loaded)


def _lenient(text: str, normalise: _Normaliser) -> tuple[Any, list[str], str | None]:
    if len(text) > MAX_REPLY_CHARS:
        return None, [], f"reply has {len(text)} characters, over the {MAX_REPLY_CHARS} limit"
    span = extract_json_text(text)
    if span is None:
        return None, [], "no JSON object found (no '{' in the reply)"
    try:
        loaded = json_repair.loads(span)
    except Exception as exc:  # third-party parser on arbitrary model output: any failure
        return None, [], f"lenient parser failed: {exc!r}"  # just means "not salvageable"
    # Several top-level objects come back as a list (say, the model echoed a shape before its
    # answer, or answered twice): the last usable one is the model's final word.
    if isinstance(loaded, dict):
        candidates = [loaded]
    elif isinstance(loaded, list):
        candidates = [item for item in reversed(loaded) if isinstance(item, dict)]
    else:
        candidates = []
    problem: str | None = None
    for candidate in candidates:
        if not candidate:
            continue
        value, errors, issue = normalise(candidate)
        if value is not None:
            return value, errors, None
        problem = problem or issue
    return None, [], problem or "no JSON object could be recovered"


# -- graph normalisation --------------------------------------------------------------------


def _normalise_graph(
    value: Any, max_nodes: int, max_edges: int
) -> tuple[dict[str, Any] | None, list[str], str | None]:
    errors: list[str] = []
    obj = _single_object(value, errors)
    if obj is None:
        return None, errors, f"top level is {_kind(value)}, not an object"
    raw_nodes = obj.get("nodes")
    if not isinstance(raw_nodes, list):
        return None, errors, f"field 'nodes' must be a list, got {_kind(raw_nodes)}"
    if len(raw_nodes) > max_nodes:
        errors.append(f"nodes: {len(raw_nodes)} given, limit {max_nodes}; the rest dropped")
    nodes: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    kept: list[tuple[int, dict[str, Any]]] = []  # (index, raw item) of each kept node
    leniencies: list[str] = []
    for index, item in enumerate(raw_nodes[:max_nodes]):
        node, problem = _node(item, errors, index, leniencies)
        if node is not None and node["id"] in by_id:
            problem = f"duplicate id {node['id']!r}"
        if node is None or problem:
            errors.append(f"nodes[{index}] dropped: {problem}")
            continue
        nodes.append(node)
        by_id[node["id"]] = node
        kept.append((index, item))
    answer = _answer(obj, errors)
    if not nodes and answer is None:
        return None, errors, "no valid node in 'nodes'"
    conclusion, how = _conclusion(obj, nodes, by_id, answer, errors)
    if conclusion is None:
        return None, errors, how
    if how not in (CONCLUSION_DECLARED, CONCLUSION_ONLY_TYPED):
        leniencies.append(f"conclusion:{how}")
    candidates = _edge_list(obj, by_id, errors) + _reason_edges(kept, by_id, errors)
    edges = _unique_edges(candidates, max_edges, errors)
    graph = {
        "conclusion_node": conclusion,
        "conclusion_from": how,
        "answer": answer,
        "nodes": nodes,
        "edges": edges,
        "leniencies": leniencies,
    }
    return graph, errors, None


def _normalise_chain(
    value: Any, spans: Mapping[str, str], max_steps: int
) -> tuple[dict[str, Any] | None, list[str], str | None]:
    errors: list[str] = []
    obj = _single_object(value, errors)
    if obj is None:
        return None, errors, f"top level is {_kind(value)}, not an object"
    steps = obj.get("steps")
    if not isinstance(steps, list):
        return None, errors, f"field 'steps' must be a list, got {_kind(steps)}"
    answer = _answer(obj, errors)
    if answer is None:
        return None, errors, "the chain has no answer"
    if len(steps) > max_steps:
        errors.append(f"steps: {len(steps)} given, limit {max_steps}; the rest dropped")
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    pending: list[str] = []  # what the next inference (or the conclusion) rests on
    cited: dict[str, str] = {}  # span id -> given node id, one node per sentence

    def rests_on(node_id: str) -> None:
        for src in dict.fromkeys(pending):
            edges.append(
                {"src": src, "dst": node_id, "relation": "supports"}
                | {"confidence": DEFAULT_CONFIDENCE}
            )
        pending[:] = [node_id]

    for index, step in enumerate(steps[:max_steps], 1):
        where = f"steps[{index - 1}]"
        if not isinstance(step, dict):
            errors.append(f"{where} dropped: is {_kind(step)}, not an object")
            continue
        span_id = _source(step.get("sentence"), where, errors)
        if span_id is None or span_id not in spans:
            errors.append(f"{where} dropped: {step.get('sentence')!r} is no evidence sentence")
            continue
        if span_id not in cited:
            cited[span_id] = f"g{index}"
            given = {"id": f"g{index}", "claim": spans[span_id], "type": "given"}
            nodes.append(given | {"confidence": DEFAULT_CONFIDENCE, "source": span_id})
        pending.append(cited[span_id])
        raw = step.get("inference")
        inference = " ".join(raw.split()) if isinstance(raw, str) else ""
        if len(inference) > MAX_CLAIM_CHARS:
            errors.append(f"{where}.inference has {len(inference)} characters; ignored")
        elif any(char.isalnum() for char in inference):
            nodes.append(
                {"id": f"i{index}", "claim": inference, "type": "inference"}
                | {"confidence": DEFAULT_CONFIDENCE, "source": None}
            )
            rests_on(f"i{index}")
    nodes.append(
        {"id": "c", "claim": answer, "type": "conclusion"}
        | {"confidence": DEFAULT_CONFIDENCE, "source": None}
    )
    rests_on("c")
    graph = {
        "conclusion_node": "c",
        "conclusion_from": CONCLUSION_DECLARED,
        "answer": answer,
        "nodes": nodes,
        "edges": edges,
        "leniencies": [],
    }
    return graph, errors, None


def _node(
    item: Any, errors: list[str], index: int, leniencies: list[str]
) -> tuple[dict[str, Any] | None, str | None]:
    if not isinstance(item, dict):
        return None, f"is {_kind(item)}, not an object"
    node_id, problem = _identifier(item.get("id"), "id")
    if problem:
        return None, problem
    claim = item.get("claim")
    if not isinstance(claim, str) or not claim.strip():
        return None, f"claim must be a non-empty string, got {_kind(claim)}"
    claim = " ".join(claim.split())
    if not any(char.isalnum() for char in claim):
        return None, f"claim {claim!r} has no words (a placeholder?)"
    if len(claim) > MAX_CLAIM_CHARS:
        return None, f"claim has {len(claim)} characters, limit {MAX_CLAIM_CHARS}"
    node_type = item.get("type")
    normal_type = node_type.strip().lower() if isinstance(node_type, str) else None
    if normal_type not in NODE_TYPES:
        return None, f"type {node_type!r} is not one of {list(NODE_TYPES)}"
    confidence, defaulted = _confidence(item, f"nodes[{index}]", errors)
    if defaulted:
        leniencies.append(f"{CONFIDENCE_DEFAULTED}:{node_id}")
    source = _source(item.get("source"), f"nodes[{index}]", errors)
    node = {"id": node_id, "claim": claim, "type": normal_type, "confidence": confidence}
    return {**node, "source": source}, None


def _source(value: Any, where: str, errors: list[str]) -> str | None:
    """A node's cited span id as trimmed text; absent, empty or ``"none"`` is no source."""
    if value is None:
        return None
    if not isinstance(value, str):
        errors.append(f"{where}: source {_kind(value)} is not text; treated as no source")
        return None
    text: str = value.strip().strip("[]").strip()
    if not text or text.lower() == NO_SOURCE:
        return None
    if len(text) > MAX_ID_CHARS:
        errors.append(f"{where}: source has {len(text)} characters; treated as no source")
        return None
    return text


def _answer(obj: dict[str, Any], errors: list[str]) -> str | None:
    """The reply's answer, whitespace collapsed; None (noted) when missing or unusable. A long
    answer is kept here (up to a claim's length): :func:`orchestrator.answers.shorten_answer`
    cuts it to its short value once the evidence is at hand."""
    raw = obj.get("answer")
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        raw = str(raw)
    if not isinstance(raw, str) or not raw.strip():
        errors.append(f"field 'answer' must be a short non-empty string, got {_kind(raw)}")
        return None
    answer = " ".join(raw.split())
    if len(answer) > MAX_CLAIM_CHARS:
        errors.append(f"answer has {len(answer)} characters, limit {MAX_CLAIM_CHARS}; ignored")
        return None
    return answer


def _conclusion(
    obj: dict[str, Any],
    nodes: list[dict[str, Any]],
    by_id: dict[str, dict[str, Any]],
    answer: str | None,
    errors: list[str],
) -> tuple[str | None, str]:
    """(the conclusion's id, how it was found: one of :data:`CONCLUSION_SOURCES`), or (None,
    the problem). Order: the declared ``conclusion_node``; the only conclusion-typed node; the
    last of several (a conclusion is asked for last); the last inference or assumption whose
    claim holds the answer; a new node stating the answer with no reasons. The node chosen is
    typed conclusion and any other conclusion-typed node becomes an inference."""
    typed = [n["id"] for n in nodes if n["type"] == "conclusion"]
    declared = obj.get("conclusion_node")
    declared_id, problem = _identifier(declared, "conclusion_node")
    if declared_id is not None and declared_id in by_id:
        chosen, how = declared_id, CONCLUSION_DECLARED
    else:
        if declared is None:
            missing = "conclusion_node missing"
        elif problem:
            missing = problem
        else:
            missing = f"conclusion_node {declared_id!r} names no valid node"
        holder = _answer_holder(nodes, answer)
        if len(typed) == 1:
            chosen, how = typed[0], CONCLUSION_ONLY_TYPED
            errors.append(f"{missing}; used the only conclusion-typed node {chosen!r}")
        elif typed:
            chosen, how = typed[-1], CONCLUSION_LAST_TYPED
            errors.append(f"{missing}; used the last of {len(typed)} conclusion-typed nodes")
        elif holder is not None:
            chosen, how = holder, CONCLUSION_ANSWER_NODE
            errors.append(f"{missing}; used node {chosen!r}, whose claim holds the answer")
        elif answer is not None:
            chosen, how = _built_conclusion(nodes, by_id, answer), CONCLUSION_BUILT
            errors.append(f"{missing}; built conclusion {chosen!r} from the answer, no reasons")
        else:
            return None, f"{missing}, no node has type 'conclusion' and the reply has no answer"
    if by_id[chosen]["type"] != "conclusion":
        errors.append(
            f"node {chosen!r} is the conclusion_node but had type {by_id[chosen]['type']!r}; "
            "retyped 'conclusion'"
        )
        by_id[chosen]["type"] = "conclusion"
    for other in typed:
        if other != chosen:
            errors.append(
                f"node {other!r} had type 'conclusion' but is not the conclusion_node; "
                "retyped 'inference'"
            )
            by_id[other]["type"] = "inference"
    return chosen, how


def _answer_holder(nodes: list[dict[str, Any]], answer: str | None) -> str | None:
    """The last inference or assumption whose claim contains the answer (folded as answers
    are). Givens are passed over: retyping one would throw its citation away."""
    key = answer_key(answer)
    if not key or key in (YES, NO, UNANSWERABLE):
        return None  # "yes" inside a sentence says nothing about which node concludes
    holders = [
        n["id"]
        for n in nodes
        if n["type"] in ("inference", "assumption")
        and f" {key} " in f" {normalise_text(n['claim'])} "
    ]
    return holders[-1] if holders else None


def _built_conclusion(
    nodes: list[dict[str, Any]], by_id: dict[str, dict[str, Any]], answer: str
) -> str:
    """Add a conclusion node that states ``answer`` and rests on nothing; return its id."""
    node_id = next(f"c{i}" for i in range(len(nodes) + 1) if f"c{i}" not in by_id)
    node: dict[str, Any] = {"id": node_id, "claim": answer, "type": "conclusion"}
    node.update(confidence=DEFAULT_CONFIDENCE, source=None)
    nodes.append(node)
    by_id[node_id] = node
    return node_id


def _edge_list(
    obj: dict[str, Any], by_id: dict[str, dict[str, Any]], errors: list[str]
) -> list[tuple[str, dict[str, Any] | None, str | None]]:
    """(where, edge or None, problem) for each entry of an explicit ``edges`` list. A reply
    without the field is fine (its reasons sit on the nodes)."""
    if "edges" not in obj:
        return []
    raw = obj["edges"]
    if not isinstance(raw, list):
        errors.append(f"field 'edges' must be a list, got {_kind(raw)}; treated as no edges")
        return []
    return [
        (f"edges[{index}]", *_edge(item, by_id, f"edges[{index}]", errors))
        for index, item in enumerate(raw)
    ]


def _reason_edges(
    kept: list[tuple[int, dict[str, Any]]], by_id: dict[str, dict[str, Any]], errors: list[str]
) -> list[tuple[str, dict[str, Any] | None, str | None]]:
    """Edges from each node's ``because`` (reason -> node: ``supports``, or ``assumes`` when
    the reason is an assumption) and ``against`` (counter-evidence -> node: ``attacks``) lists.
    An inline edge carries the confidence of the node it bears on."""
    found: list[tuple[str, dict[str, Any] | None, str | None]] = []
    for index, item in kept:
        target = by_id[str(item["id"]).strip()]
        for field in ("because", "against"):
            raw = item.get(field)
            if raw is None:
                continue
            if not isinstance(raw, list):
                errors.append(f"nodes[{index}].{field} must be a list of ids; ignored")
                continue
            for position, reason in enumerate(raw):
                where = f"nodes[{index}].{field}[{position}]"
                reason_id, problem = _identifier(reason, field)
                if problem is None and reason_id not in by_id:
                    problem = f"names unknown node {reason_id!r}"
                if problem is None and reason_id == target["id"]:
                    problem = f"node {reason_id!r} cannot be its own reason"
                if problem is not None or reason_id is None:
                    found.append((where, None, problem))
                    continue
                relation = "attacks" if field == "against" else "supports"
                if relation == "supports" and by_id[reason_id]["type"] == "assumption":
                    relation = "assumes"
                edge = {
                    "src": reason_id,
                    "dst": target["id"],
                    "relation": relation,
                    "confidence": target["confidence"],
                }
                found.append((where, edge, None))
    return found


def _unique_edges(
    candidates: list[tuple[str, dict[str, Any] | None, str | None]],
    max_edges: int,
    errors: list[str],
) -> list[dict[str, Any]]:
    """The valid, distinct edges among `candidates`, at most `max_edges`; every drop noted."""
    edges: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    for where, edge, problem in candidates:
        if edge is not None:
            key = (edge["src"], edge["dst"], edge["relation"])
            if key in seen:
                edge, problem = None, f"duplicate of an earlier {key[2]} edge {key[0]}->{key[1]}"
            elif len(edges) == max_edges:
                edge, problem = None, f"over the limit of {max_edges} edges"
            seen.add(key)
        if edge is None:
            errors.append(f"{where} dropped: {problem}")
            continue
        edges.append(edge)
    return edges


def _edge(
    item: Any, by_id: dict[str, dict[str, Any]], where: str, errors: list[str]
) -> tuple[dict[str, Any] | None, str | None]:
    if not isinstance(item, dict):
        return None, f"is {_kind(item)}, not an object"
    ends: list[str] = []
    for names in (("from", "src"), ("to", "dst")):
        present = [item[name] for name in names if name in item]
        if not present:
            return None, f"missing '{names[0]}' (or '{names[1]}')"
        end, problem = _identifier(present[0], names[0])
        if problem:
            return None, problem
        if len(present) == 2 and _identifier(present[1], names[1])[0] != end:
            return None, f"'{names[0]}' and '{names[1]}' disagree"
        assert end is not None  # _identifier returns an id whenever it reports no problem
        if end not in by_id:
            return None, f"'{names[0]}' names unknown node {end!r}"
        ends.append(end)
    if ends[0] == ends[1]:
        return None, f"self-loop on {ends[0]!r}"
    relation = item.get("relation")
    normal = relation.strip().lower() if isinstance(relation, str) else None
    if normal not in RELATIONS:
        return None, f"relation {relation!r} is not one of {list(RELATIONS)}"
    confidence, _ = _confidence(item, where, errors)
    return {"src": ends[0], "dst": ends[1], "relation": normal, "confidence": confidence}, None


def _identifier(value: Any, field: str) -> tuple[str | None, str | None]:
    """A node id as a trimmed string; integer ids are accepted and written as strings."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        return None, f"{field} must be a non-empty string, got {_kind(value)}"
    value = value.strip()
    if len(value) > MAX_ID_CHARS:
        return None, f"{field} has {len(value)} characters, limit {MAX_ID_CHARS}"
    return value, None


def _confidence(item: dict[str, Any], where: str, errors: list[str]) -> tuple[float, bool]:
    """The item's confidence in 0..1 (numeric strings are read), and whether a value the
    model wrote was replaced. A non-numeric or out-of-range value becomes
    :data:`DEFAULT_CONFIDENCE` with a note naming :data:`CONFIDENCE_DEFAULTED`: small models
    number their nodes (2, 3, 4 ...) or write "high", which says nothing about the claim, so
    the item is kept and the slip recorded. A missing one gets the default too (noted)."""
    if "confidence" not in item or item["confidence"] is None:
        errors.append(f"{where}: confidence missing; default {DEFAULT_CONFIDENCE} used")
        return DEFAULT_CONFIDENCE, False
    raw = item["confidence"]
    number: float | None = None
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        number = float(raw)
    elif isinstance(raw, str):
        try:
            number = float(raw.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number):
        problem = f"confidence {_kind(raw)} is not a number"
    elif not 0.0 <= number <= 1.0:
        problem = f"confidence {raw!r} is outside 0..1"
    else:
        return number, False
    errors.append(f"{where}: {CONFIDENCE_DEFAULTED}: {problem}; default {DEFAULT_CONFIDENCE} used")
    return DEFAULT_CONFIDENCE, True


# -- verdict normalisation ------------------------------------------------------------------


def _normalise_verdict(value: Any) -> tuple[tuple[str, str] | None, list[str], str | None]:
    errors: list[str] = []
    obj = _single_object(value, errors)
    if obj is None:
        return None, errors, f"top level is {_kind(value)}, not an object"
    raw = obj.get("verdict")
    if not isinstance(raw, str):
        return None, errors, f"field 'verdict' must be a string, got {_kind(raw)}"
    verdict = re.sub(r"[\s\-]+", "_", raw.strip().lower())
    if verdict not in VERDICTS:
        return None, errors, f"verdict {raw!r} is not one of {list(VERDICTS)}"
    reason = obj.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        errors.append(f"reason missing or not text ({_kind(reason)}); recorded as ''")
        return (verdict, ""), errors, None
    reason = " ".join(reason.split())
    if len(reason) > MAX_REASON_CHARS:
        errors.append(f"reason has {len(reason)} characters; cut to {MAX_REASON_CHARS}")
        reason = reason[:MAX_REASON_CHARS]
    return (verdict, reason), errors, None


# -- helpers --------------------------------------------------------------------------------


def _single_object(value: Any, errors: list[str]) -> dict[str, Any] | None:
    """The value if it is an object; a list holding exactly one object is unwrapped (noted)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        errors.append("top level was a one-element list; used the object inside")
        return value[0]
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    text = repr(value)
    shown = text if len(text) <= 40 else text[:37] + "..."
    return f"{type(value).__name__} {shown}"
