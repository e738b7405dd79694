"""Limits and input validation for the graph store.

Validators return either a clean value or a human-readable reason naming the
field, the offending value and the rule it breaks; they never raise. The MCP
server hands its arguments to the same validators, so both modes refuse and
accept exactly the same input.

**Ids** (graph ids, node ids, edge endpoints, run ids, sources) are normalised by
:func:`normalise_id`: a JSON integer becomes its decimal string; the text is put in
Unicode NFC; whitespace and invisible format characters (zero-width space, joiner,
byte-order mark, ...) are stripped from both ends; what remains must be non-empty,
at most ``max_id_chars`` long and free of control, format, surrogate and line or
paragraph separator characters. So ``"A"``, ``" A "`` and ``"A\\u200b"`` are one id,
and ``"A\\u200bB"`` is refused.
"""

from __future__ import annotations

import json
import math
import unicodedata
from dataclasses import dataclass
from typing import Any

from corpus.limits import MAX_SEARCH_K as MAX_SEARCH_K
from graph_server.views import SUPER_SOURCE

# The single source of the store's enums and defaults: the store, the MCP tool schemas
# (graph_server.tools) and their descriptions all read them from here.
NODE_TYPES = ("given", "inference", "assumption", "conclusion")
RELATIONS = ("supports", "attacks", "assumes")
DEFAULT_CONFIDENCE = 0.8
DEFAULT_JACCARD_THRESHOLD = 0.7
"""Word-overlap score at or above which two claims count as duplicates."""
DEFAULT_RATIO_THRESHOLD = 0.85
"""Character-similarity score (0..1) at or above which two claims count as duplicates."""
DEFAULT_SEARCH_K = 5
"""Chunks ``search_evidence`` returns when no ``k`` is given."""
MAX_SEARCH_QUERY_CHARS = 1_000
"""Longest ``search_evidence`` query (the corpus layer enforces it)."""
EXPORT_FORMATS = ("graphml", "json", "mermaid", "html")
"""What ``export_graph`` writes (graph_server.export)."""
NODE_KEYS = ("id", "claim", "type", "confidence", "run_ids", "source")
EDGE_KEYS = ("src", "dst", "from", "to", "relation", "confidence", "run_ids")
SPAN_KEYS = ("id", "text")
_SHOWN_CHARS = 60
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Control, format (zero-width), surrogate, line and paragraph separator characters."""


@dataclass(frozen=True)
class StoreLimits:
    """Hard limits; every one is enforced with an error that names it.

    Examples
    --------
    >>> limits = StoreLimits(max_id_chars=3)
    >>> limits.max_id_chars, limits.max_graphs
    (3, 1000)
    >>> normalise_id("id", "ABCD", limits)
    (None, "id 'ABCD' is longer than the limit of 3 characters")
    """

    max_graphs: int = 1_000
    max_nodes_per_graph: int = 20_000
    max_edges_per_graph: int = 100_000
    max_claim_chars: int = 2_000
    max_id_chars: int = 200
    max_reason_chars: int = 2_000
    max_items_per_call: int = 50_000
    max_claim_bytes: int = 200_000_000
    """Memory budget: UTF-8 bytes of claim text held across all graphs together."""
    max_request_seconds: float = 30.0
    """Longest an argument search (``argument_width``) may run for one request; past it
    the call ends with an error naming this limit. The search is memoised and capped in
    work too, so this bites only on very large graphs."""
    max_rival_claims: int = 32
    """Largest group of claims that differ only in one number (or only in negation) whose
    pairs dedup turns into mutual attacks. A bigger group is a list of different things
    ("rack 1" ... "rack 2000"), not rival readings of one value: its claims stay apart,
    with no attack edges, and the reply's ``contradictions_withheld`` says so. Without
    this cap n such claims make n(n-1) attack edges."""


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


def shown(value: Any) -> str:
    """A short repr of a caller value for error messages. O(len(repr(value))).

    Parameters
    ----------
    value : object
        Anything a caller sent.

    Returns
    -------
    str
        Its ``repr``, cut after 60 characters with the full length noted.

    Examples
    --------
    >>> shown("A")
    "'A'"
    >>> shown("x" * 100)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (102 chars)"
    """
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + f"... ({len(text)} chars)"


def decode_json_text(value: Any) -> Any:
    """Decode a string that JSON-encodes an array or object; pass anything else on.

    Models often send a list or an object as a JSON string. Strings that are not such
    JSON (including nesting too deep to parse) are returned untouched, so the caller's
    check reports the field with its usual message. O(len(value)).

    Parameters
    ----------
    value : object
        A field as a caller sent it.

    Returns
    -------
    object
        The decoded list or dict, or ``value`` itself.

    Examples
    --------
    >>> decode_json_text('["r1", "r2"]'), decode_json_text('{"id": "A"}')
    (['r1', 'r2'], {'id': 'A'})
    >>> decode_json_text("[not json"), decode_json_text('"A"'), decode_json_text(3)
    ('[not json', '"A"', 3)
    """
    if not isinstance(value, str) or not value.lstrip().startswith(("[", "{")):
        return value
    try:
        decoded = json.loads(value)
    except (ValueError, RecursionError):
        return value
    return decoded if isinstance(decoded, list | dict) else value


def _is_edge_junk(char: str) -> bool:
    return char.isspace() or unicodedata.category(char) == "Cf"


def normalise_id(field: str, value: Any, limits: StoreLimits) -> tuple[str | None, str | None]:
    """``(id, None)`` for a usable id after normalisation, else ``(None, reason)``.

    The rule is in the module docstring. Booleans are refused (JSON ``true`` is not
    an id); integers are accepted as their decimal string; the virtual super-source's id
    is reserved. O(len(value)).

    Parameters
    ----------
    field : str
        The field's name, for the reason.
    value : object
        The id as a caller sent it.
    limits : StoreLimits
        Gives ``max_id_chars``.

    Returns
    -------
    id : str or None
        The normalised id, or None when it is refused.
    reason : str or None
        Why it is refused, or None.

    Examples
    --------
    >>> limits = StoreLimits()
    >>> normalise_id("src", " A\\u200b", limits), normalise_id("src", 7, limits)
    (('A', None), ('7', None))
    >>> normalise_id("src", True, limits)
    (None, 'src must be a non-empty string, got True')
    >>> print(normalise_id("src", "A\\u200bB", limits)[1])
    src 'A\\u200bB' holds U+200B (ZERO WIDTH SPACE), a control or invisible character; ids
    may not contain one
    """
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None, f"{field} must be a non-empty string, got {shown(value)}"
    text = unicodedata.normalize("NFC", value) if not value.isascii() else value
    start, end = 0, len(text)
    while start < end and _is_edge_junk(text[start]):
        start += 1
    while end > start and _is_edge_junk(text[end - 1]):
        end -= 1
    text = text[start:end]
    if not text:
        return None, f"{field} must be a non-empty string, got {shown(value)}"
    if len(text) > limits.max_id_chars:
        return None, (
            f"{field} {shown(value)} is longer than the limit of {limits.max_id_chars} characters"
        )
    if not text.isprintable():
        for char in text:
            if unicodedata.category(char) in _REFUSED_CATEGORIES:
                return None, (
                    f"{field} {shown(value)} holds U+{ord(char):04X} "
                    f"({unicodedata.name(char, 'unnamed')}), a control or invisible "
                    "character; ids may not contain one"
                )
    if text == SUPER_SOURCE:
        return None, f"{field} {text!r} is reserved for the virtual super-source"
    return text, None


def check_text(field: str, value: Any, limit: int) -> tuple[str | None, str | None]:
    """A non-empty string of at most ``limit`` characters, surrounding spaces dropped,
    holding valid Unicode only (no lone surrogate). O(len(value)).

    Parameters
    ----------
    field : str
        The field's name, for the reason.
    value : object
        The text as a caller sent it.
    limit : int
        The most characters it may have (surrounding spaces count).

    Returns
    -------
    text : str or None
        The text without surrounding spaces, or None when it is refused.
    reason : str or None
        Why it is refused, or None.

    Examples
    --------
    >>> check_text("claim", "  Acme paid ", 20)
    ('Acme paid', None)
    >>> check_text("claim", "Acme paid", 5)
    (None, 'claim has 9 characters, over the limit of 5')
    >>> check_text("claim", "  ", 5)
    (None, "claim must be a non-empty string, got '  '")
    """
    if not isinstance(value, str) or not value.strip():
        return None, f"{field} must be a non-empty string, got {shown(value)}"
    if len(value) > limit:
        return None, f"{field} has {len(value)} characters, over the limit of {limit}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return None, (
            f"{field} holds a lone surrogate U+{ord(value[exc.start]):04X} at character "
            f"{exc.start}, which is not valid Unicode"
        )
    return value.strip(), None


def check_confidence(field: str, value: Any) -> tuple[float | None, str | None]:
    """Parse a number in [0, 1]. Numeric strings such as ``"0.9"`` are accepted;
    booleans are not numbers; ``-0.0`` comes back as ``0.0``. O(1).

    Parameters
    ----------
    field : str
        The field's name, for the reason.
    value : object
        The confidence as a caller sent it.

    Returns
    -------
    confidence : float or None
        The number, or None when it is refused.
    reason : str or None
        Why it is refused, or None.

    Examples
    --------
    >>> check_confidence("confidence", "0.9"), check_confidence("confidence", -0.0)
    ((0.9, None), (0.0, None))
    >>> check_confidence("confidence", 2)
    (None, 'confidence 2 is outside [0, 1]')
    >>> check_confidence("confidence", True)
    (None, 'confidence must be a number in [0, 1], got True')
    """
    if isinstance(value, bool):
        return None, f"{field} must be a number in [0, 1], got {shown(value)}"
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None, f"{field} must be a number in [0, 1], got {shown(value)}"
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None, f"{field} must be a number in [0, 1], got {shown(value)}"
    if not 0.0 <= value <= 1.0:
        return None, f"{field} {value} is outside [0, 1]"
    return float(value) + 0.0, None  # + 0.0 turns -0.0 into 0.0


def check_flag(field: str, value: Any) -> tuple[bool | None, str | None]:
    """Parse a yes/no switch: a bool, or the strings ``"true"``/``"false"`` (any case,
    surrounding spaces ignored) as JSON-minded clients send them. Anything else,
    including 0/1 and "yes"/"no", is refused with a reason naming ``field``. O(1).

    Parameters
    ----------
    field : str
        The field's name, for the reason.
    value : object
        The switch as a caller sent it.

    Returns
    -------
    flag : bool or None
        The switch, or None when it is refused.
    reason : str or None
        Why it is refused, or None.

    Examples
    --------
    >>> check_flag("force", " TRUE "), check_flag("force", False)
    ((True, None), (False, None))
    >>> check_flag("force", 1)
    (None, 'force must be true or false, got 1')
    """
    if isinstance(value, bool):
        return value, None
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true", None
    return None, f"{field} must be true or false, got {shown(value)}"


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
        The record, or the reason it is refused.

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
        The record, or the reason it is refused.

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
