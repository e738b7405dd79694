"""The node, edge and span schema: which keys an incoming item may hold, and how one is
checked into a record (:class:`NodeRecord`, :class:`EdgeRecord`) or refused with a reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graph_server.limits import DEFAULT_CONFIDENCE, NODE_TYPES, RELATIONS, StoreLimits
from graph_server.validation_ids import normalise_id
from graph_server.validation_text import check_confidence, check_text, decode_json_text, shown

NODE_KEYS = ("id", "claim", "type", "confidence", "run_ids", "source")
EDGE_KEYS = ("src", "dst", "from", "to", "relation", "confidence", "run_ids")
SPAN_KEYS = ("id", "text")


@dataclass(frozen=True)
class NodeRecord:
    """One validated node, as :func:`parse_node` returns it.

    Examples
    --------
    >>> NodeRecord("A", "Acme paid", "given", 0.8, frozenset({"r1"}))
    NodeRecord(id='A', claim='Acme paid', type='given', confidence=0.8, run_ids=frozenset({'r1'}),
               source=None)
    """

    id: str
    claim: str
    type: str
    confidence: float
    run_ids: frozenset[str]
    source: str | None = None
    """What the claim is anchored to (a cited evidence span, or any caller identity key)."""


@dataclass(frozen=True)
class EdgeRecord:
    """One validated edge, as :func:`parse_edge` returns it.

    Examples
    --------
    >>> EdgeRecord("A", "B", "supports", 0.8, frozenset())
    EdgeRecord(src='A', dst='B', relation='supports', confidence=0.8, run_ids=frozenset())
    """

    src: str
    dst: str
    relation: str
    confidence: float
    run_ids: frozenset[str]


def unknown_keys(what: str, raw: dict[str, Any], accepted: tuple[str, ...]) -> str | None:
    """Reason naming the first unknown key of ``raw`` (sorted), with the accepted keys.

    Parameters
    ----------
    what : str
        What ``raw`` is ("node", "edge", ...), for the reason.
    raw : dict
        The object a caller sent.
    accepted : tuple of str
        The keys it may have.

    Returns
    -------
    str or None
        The reason, or None when every key is accepted.

    Examples
    --------
    >>> unknown_keys("span", {"id": "D1", "text": "...", "page": 2}, SPAN_KEYS)
    "unknown key 'page' in span; accepted keys: id, text"
    >>> unknown_keys("span", {"id": "D1"}, SPAN_KEYS) is None
    True
    """
    extra = sorted(str(key) for key in raw if key not in accepted)
    if not extra:
        return None
    return f"unknown key {shown(extra[0])} in {what}; accepted keys: {', '.join(sorted(accepted))}"


def _run_ids(
    raw: dict[str, Any], run_id: str | None, limits: StoreLimits
) -> tuple[frozenset[str], str | None]:
    given = decode_json_text(raw.get("run_ids"))
    if given is None:
        return (frozenset({run_id}) if run_id else frozenset()), None
    if isinstance(given, str | int) and not isinstance(given, bool):
        given = [given]
    if not isinstance(given, list | tuple | set | frozenset):
        return frozenset(), f"run_ids must be a list of strings, got {shown(given)}"
    clean: set[str] = set()
    for item in given:
        value, problem = normalise_id("run_ids item", item, limits)
        if problem or value is None:
            return frozenset(), problem or "run_ids item is missing"
        clean.add(value)
    return frozenset(clean), None


def parse_node(raw: Any, run_id: str | None, limits: StoreLimits) -> NodeRecord | str:
    """Validate one incoming node dict (or its JSON text). O(size of ``raw``).

    Parameters
    ----------
    raw : object
        The node as a caller sent it: ``id``, ``claim``, ``type`` and optionally
        ``confidence`` (default :data:`DEFAULT_CONFIDENCE`), ``run_ids`` and ``source``.
    run_id : str or None
        The run the node comes from when it names no ``run_ids`` of its own.
    limits : StoreLimits
        The id and claim limits.

    Returns
    -------
    NodeRecord or str
        The record with normalised id, claim and ``source``, or the first reason it is refused.

    Examples
    --------
    >>> parse_node({"id": "A", "claim": "Acme paid", "type": "given"}, "r1", StoreLimits())
    NodeRecord(id='A', claim='Acme paid', type='given', confidence=0.8, run_ids=frozenset({'r1'}),
               source=None)
    >>> parse_node('{"id": "A", "claim": "Acme paid", "type": "fact"}', "r1", StoreLimits())
    "type must be one of given, inference, assumption, conclusion; got 'fact'"
    """
    head = _id_and_text(raw, "node", NODE_KEYS, "claim", limits)
    if isinstance(head, str):
        return head
    raw, node_id, claim = head
    typed = _kind_and_weight(raw, "type", NODE_TYPES, run_id, limits)
    if isinstance(typed, str):
        return typed
    node_type, weight = typed
    source = raw.get("source")
    if source is not None:
        source, problem = normalise_id("source", source, limits)
        if problem:
            return problem
    return NodeRecord(node_id, claim, node_type, *weight, source=source)


def parse_span(raw: Any, limits: StoreLimits) -> tuple[str, str] | str:
    """Validate one evidence span ``{id, text}`` (or its JSON text). The id follows the
    node id rules; the text the claim rules. O(size of ``raw``).

    Parameters
    ----------
    raw : object
        The span as a caller sent it.
    limits : StoreLimits
        The id and claim limits.

    Returns
    -------
    tuple of str or str
        ``(id, text)``, or the reason it is refused.

    Examples
    --------
    >>> parse_span({"id": " D1.1 ", "text": "Acme paid. "}, StoreLimits())
    ('D1.1', 'Acme paid.')
    >>> parse_span({"id": "D1.1"}, StoreLimits())
    'text must be a non-empty string, got None'
    """
    head = _id_and_text(raw, "span", SPAN_KEYS, "text", limits)
    return head if isinstance(head, str) else head[1:]


def _id_and_text(
    raw: Any, what: str, keys: tuple[str, ...], text_field: str, limits: StoreLimits
) -> tuple[dict[str, Any], str, str] | str:
    """The part nodes and spans share: an object (or its JSON text) with only ``keys``, a
    valid ``id`` and a valid text in ``text_field``; returns ``(object, id, text)`` or the
    rejection reason."""
    raw = decode_json_text(raw)
    if not isinstance(raw, dict):
        return f"{what} must be an object, got {shown(raw)}"
    problem = unknown_keys(what, raw, keys)
    if problem:
        return problem
    item_id, problem = normalise_id("id", raw.get("id"), limits)
    if problem or item_id is None:
        return problem or "id is missing"
    text, problem = check_text(text_field, raw.get(text_field), limits.max_claim_chars)
    if problem or text is None:
        return problem or f"{text_field} is missing"
    return raw, item_id, text


def parse_edge(raw: Any, run_id: str | None, limits: StoreLimits) -> EdgeRecord | str:
    """Validate one incoming edge dict (or its JSON text). O(size of ``raw``).

    Parameters
    ----------
    raw : object
        The edge as a caller sent it: ``src`` and ``dst`` (or ``from`` and ``to``),
        ``relation`` and optionally ``confidence`` and ``run_ids``.
    run_id : str or None
        The run the edge comes from when it names no ``run_ids`` of its own.
    limits : StoreLimits
        The id limits.

    Returns
    -------
    EdgeRecord or str
        The record with both endpoints normalised (``src`` and ``dst``, whichever spelling
        came), or the first reason it is refused.

    Examples
    --------
    >>> parse_edge({"from": "A", "to": "B", "relation": "supports"}, None, StoreLimits())
    EdgeRecord(src='A', dst='B', relation='supports', confidence=0.8, run_ids=frozenset())
    >>> parse_edge({"src": "A", "dst": "A", "relation": "attacks"}, None, StoreLimits())
    "src and dst are both 'A': a claim cannot support or attack itself"
    """
    raw = decode_json_text(raw)
    if not isinstance(raw, dict):
        return f"edge must be an object, got {shown(raw)}"
    problem = unknown_keys("edge", raw, EDGE_KEYS)
    if problem:
        return problem
    endpoints: list[str] = []
    for name, alias in (("src", "from"), ("dst", "to")):
        if name in raw and alias in raw and raw[name] != raw[alias]:
            return (
                f"{name} {shown(raw[name])} and {alias} {shown(raw[alias])} disagree; "
                f"give one of them"
            )
        value, problem = normalise_id(f"{name} (or {alias})", raw.get(name, raw.get(alias)), limits)
        if problem or value is None:
            return problem or f"{name} is missing"
        endpoints.append(value)
    src, dst = endpoints
    if src == dst:
        return f"src and dst are both {src!r}: a claim cannot support or attack itself"
    typed = _kind_and_weight(raw, "relation", RELATIONS, run_id, limits)
    if isinstance(typed, str):
        return typed
    relation, weight = typed
    return EdgeRecord(src, dst, relation, *weight)


def _kind_and_weight(
    raw: dict[str, Any],
    field: str,
    allowed: tuple[str, ...],
    run_id: str | None,
    limits: StoreLimits,
) -> tuple[str, tuple[float, frozenset[str]]] | str:
    """What nodes and edges both carry: a kind in ``field`` (one of ``allowed``), a
    confidence and run ids; returns ``(kind, (confidence, run ids))`` or the rejection
    reason."""
    kind = raw.get(field)
    if kind not in allowed:
        return f"{field} must be one of {', '.join(allowed)}; got {shown(kind)}"
    weight = _confidence_and_run_ids(raw, run_id, limits)
    return weight if isinstance(weight, str) else (kind, weight)


def _confidence_and_run_ids(
    raw: dict[str, Any], run_id: str | None, limits: StoreLimits
) -> tuple[float, frozenset[str]] | str:
    confidence, problem = check_confidence("confidence", raw.get("confidence", DEFAULT_CONFIDENCE))
    if problem or confidence is None:
        return problem or "confidence is missing"
    run_ids, problem = _run_ids(raw, run_id, limits)
    return problem if problem else (confidence, run_ids)
