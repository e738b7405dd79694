"""The graph shape of an interrogation reply: nodes with reasons, normalised (design §4.3).

:func:`normalise_graph` is the normaliser :func:`orchestrator.reply.parse.parse_graph` runs on a
loaded JSON value; the normalised graph is described in :mod:`orchestrator.reply.parse`.
"""

from __future__ import annotations

from typing import Any

from graph_server.validation import NODE_TYPES, RELATIONS
from orchestrator.llm import JsonObject
from orchestrator.reply.answers import NO, UNANSWERABLE, YES, answer_key, normalise_text
from orchestrator.reply.fields import (
    CONCLUSION_ANSWER_NODE,
    CONCLUSION_BUILT,
    CONCLUSION_DECLARED,
    CONCLUSION_LAST_TYPED,
    CONCLUSION_ON_GIVEN,
    CONCLUSION_ONLY_TYPED,
    CONFIDENCE_DEFAULTED,
    DEFAULT_CONFIDENCE,
    MAX_CLAIM_CHARS,
    kind_of,
    read_answer,
    read_confidence,
    read_identifier,
    read_source,
)
from orchestrator.reply.graph_record import ReplyEdge, ReplyGraph, ReplyNode
from orchestrator.reply.top import read_top


def normalise_graph(
    value: Any, max_nodes: int, max_edges: int
) -> tuple[ReplyGraph | None, list[str], str | None]:
    """(the normalised graph or None, item errors, the fatal problem or None) for a loaded
    reply ``value``: nodes past ``max_nodes`` and edges past ``max_edges`` are dropped (noted).
    Never raises. Cost: O(nodes + edges)."""
    top = read_top(value, "nodes", list, "a list")
    obj, raw_nodes, errors = top.obj, top.value, top.errors
    if top.problem is not None:
        return None, errors, top.problem
    if len(raw_nodes) > max_nodes:
        errors.append(f"nodes: {len(raw_nodes)} given, limit {max_nodes}; the rest dropped")
    leniencies: list[str] = []
    nodes, by_id, kept = _valid_nodes(raw_nodes[:max_nodes], errors, leniencies)
    answer = read_answer(obj, errors)
    if not nodes and answer is None:
        return None, errors, "no valid node in 'nodes'"
    declared_given = _declared_given(obj, by_id, answer)
    if declared_given is not None:
        conclusion: str | None = _built_conclusion(nodes, by_id, answer or "")
        how = CONCLUSION_ON_GIVEN
        errors.append(
            f"node {declared_given!r} is the conclusion_node but is a cited given; added "
            f"conclusion {conclusion!r} stating the answer, resting on it"
        )
    else:
        conclusion, how = _conclusion(obj, nodes, by_id, answer, errors)
    if conclusion is None:
        return None, errors, how
    if how not in (CONCLUSION_DECLARED, CONCLUSION_ONLY_TYPED):
        leniencies.append(f"conclusion:{how}")
    candidates = _edge_list(obj, by_id, errors) + _reason_edges(kept, by_id, errors)
    if declared_given is not None:
        rests_on: ReplyEdge = {
            "src": declared_given,
            "dst": conclusion,
            "relation": "supports",
            "confidence": DEFAULT_CONFIDENCE,
        }
        candidates.append(("conclusion_node", rests_on, None))
    edges = _unique_edges(candidates, max_edges, errors)
    graph: ReplyGraph = {
        "conclusion_node": conclusion,
        "conclusion_from": how,
        "answer": answer,
        "nodes": nodes,
        "edges": edges,
        "leniencies": leniencies,
    }
    return graph, errors, None


def _valid_nodes(
    raw_nodes: list[Any], errors: list[str], leniencies: list[str]
) -> tuple[list[ReplyNode], dict[str, ReplyNode], list[tuple[int, JsonObject]]]:
    """(the valid nodes in order, the same by id, the (index, raw item) of each) of
    ``raw_nodes``; an invalid node, or one whose id an earlier node has, is dropped (noted)."""
    nodes: list[ReplyNode] = []
    by_id: dict[str, ReplyNode] = {}
    kept: list[tuple[int, JsonObject]] = []
    for index, item in enumerate(raw_nodes):
        node, problem = _node(item, errors, index, leniencies)
        if node is not None and node["id"] in by_id:
            problem = f"duplicate id {node['id']!r}"
        if node is None or problem:
            errors.append(f"nodes[{index}] dropped: {problem}")
            continue
        nodes.append(node)
        by_id[node["id"]] = node
        kept.append((index, item))
    return nodes, by_id, kept


def _node(
    item: Any, errors: list[str], index: int, leniencies: list[str]
) -> tuple[ReplyNode | None, str | None]:
    if not isinstance(item, dict):
        return None, f"is {kind_of(item)}, not an object"
    node_id, problem = read_identifier(item.get("id"), "id")
    if node_id is None:
        return None, problem
    claim = item.get("claim")
    if not isinstance(claim, str) or not claim.strip():
        return None, f"claim must be a non-empty string, got {kind_of(claim)}"
    claim = " ".join(claim.split())
    if not any(char.isalnum() for char in claim):
        return None, f"claim {claim!r} has no words (a placeholder?)"
    if len(claim) > MAX_CLAIM_CHARS:
        return None, f"claim has {len(claim)} characters, limit {MAX_CLAIM_CHARS}"
    node_type = item.get("type")
    normal_type = node_type.strip().lower() if isinstance(node_type, str) else None
    if normal_type not in NODE_TYPES:
        return None, f"type {node_type!r} is not one of {list(NODE_TYPES)}"
    confidence, defaulted = read_confidence(item, f"nodes[{index}]", errors)
    if defaulted:
        leniencies.append(f"{CONFIDENCE_DEFAULTED}:{node_id}")
    source = read_source(item.get("source"), f"nodes[{index}]", errors)
    node: ReplyNode = {
        "id": node_id,
        "claim": claim,
        "type": normal_type,
        "confidence": confidence,
        "source": source,
    }
    return node, None


def _conclusion(
    obj: JsonObject,
    nodes: list[ReplyNode],
    by_id: dict[str, ReplyNode],
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
    declared_id, problem = read_identifier(declared, "conclusion_node")
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


def _declared_given(obj: JsonObject, by_id: dict[str, ReplyNode], answer: str | None) -> str | None:
    """The declared ``conclusion_node`` when it is a given that cites a sentence and the reply
    has an answer, else None. Small models often name the one sentence that settles the
    question as their conclusion; retyping it would throw its citation away, so the answer is
    stated in a new conclusion that rests on it instead."""
    declared_id, problem = read_identifier(obj.get("conclusion_node"), "conclusion_node")
    node = by_id.get(declared_id) if declared_id is not None and problem is None else None
    if node is None or answer is None or node["type"] != "given" or node["source"] is None:
        return None
    return declared_id


def _answer_holder(nodes: list[ReplyNode], answer: str | None) -> str | None:
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


def _built_conclusion(nodes: list[ReplyNode], by_id: dict[str, ReplyNode], answer: str) -> str:
    """Add a conclusion node that states ``answer`` and rests on nothing; return its id."""
    node_id = next(f"c{i}" for i in range(len(nodes) + 1) if f"c{i}" not in by_id)
    node: ReplyNode = {
        "id": node_id,
        "claim": answer,
        "type": "conclusion",
        "confidence": DEFAULT_CONFIDENCE,
        "source": None,
    }
    nodes.append(node)
    by_id[node_id] = node
    return node_id


def _edge_list(
    obj: JsonObject, by_id: dict[str, ReplyNode], errors: list[str]
) -> list[tuple[str, ReplyEdge | None, str | None]]:
    """(where, edge or None, problem) for each entry of an explicit ``edges`` list. A reply
    without the field is fine (its reasons sit on the nodes)."""
    if "edges" not in obj:
        return []
    raw = obj["edges"]
    if not isinstance(raw, list):
        errors.append(f"field 'edges' must be a list, got {kind_of(raw)}; treated as no edges")
        return []
    return [
        (f"edges[{index}]", *_edge(item, by_id, f"edges[{index}]", errors))
        for index, item in enumerate(raw)
    ]


def _reason_edges(
    kept: list[tuple[int, JsonObject]], by_id: dict[str, ReplyNode], errors: list[str]
) -> list[tuple[str, ReplyEdge | None, str | None]]:
    """Edges from each node's ``because`` (reason -> node: ``supports``, or ``assumes`` when
    the reason is an assumption) and ``against`` (counter-evidence -> node: ``attacks``) lists.
    An inline edge carries the confidence of the node it bears on."""
    found: list[tuple[str, ReplyEdge | None, str | None]] = []
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
                reason_id, problem = read_identifier(reason, field)
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
                edge: ReplyEdge = {
                    "src": reason_id,
                    "dst": target["id"],
                    "relation": relation,
                    "confidence": target["confidence"],
                }
                found.append((where, edge, None))
    return found


def _unique_edges(
    candidates: list[tuple[str, ReplyEdge | None, str | None]],
    max_edges: int,
    errors: list[str],
) -> list[ReplyEdge]:
    """The valid, distinct edges among `candidates`, at most `max_edges`; every drop noted."""
    edges: list[ReplyEdge] = []
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
    item: Any, by_id: dict[str, ReplyNode], where: str, errors: list[str]
) -> tuple[ReplyEdge | None, str | None]:
    if not isinstance(item, dict):
        return None, f"is {kind_of(item)}, not an object"
    ends: list[str] = []
    for names in (("from", "src"), ("to", "dst")):
        present = [item[name] for name in names if name in item]
        if not present:
            return None, f"missing '{names[0]}' (or '{names[1]}')"
        end, problem = read_identifier(present[0], names[0])
        if problem:
            return None, problem
        if len(present) == 2 and read_identifier(present[1], names[1])[0] != end:
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
    confidence, _ = read_confidence(item, where, errors)
    return {"src": ends[0], "dst": ends[1], "relation": normal, "confidence": confidence}, None
