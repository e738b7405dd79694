"""Limits and ingest validation for the graph store.

Validators return either a clean record or a human-readable reason naming the
field, the offending value and the rule it breaks; they never raise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from graph_server.views import SUPER_SOURCE

NODE_TYPES = ("given", "inference", "assumption", "conclusion")
RELATIONS = ("supports", "attacks", "assumes")
DEFAULT_CONFIDENCE = 0.8
_SHOWN_CHARS = 60


@dataclass(frozen=True)
class StoreLimits:
    """Hard limits; every one is enforced with an error that names it."""

    max_graphs: int = 1_000
    max_nodes_per_graph: int = 20_000
    max_edges_per_graph: int = 100_000
    max_claim_chars: int = 2_000
    max_id_chars: int = 200
    max_reason_chars: int = 2_000
    max_items_per_call: int = 50_000


@dataclass(frozen=True)
class NodeRecord:
    id: str
    claim: str
    type: str
    confidence: float
    run_ids: frozenset[str]
    source: str | None = None
    """What the claim is anchored to (a cited evidence span, or any caller identity key)."""


@dataclass(frozen=True)
class EdgeRecord:
    src: str
    dst: str
    relation: str
    confidence: float
    run_ids: frozenset[str]


def shown(value: Any) -> str:
    """A short repr of a caller value for error messages."""
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + f"... ({len(text)} chars)"


def check_id(field: str, value: Any, limits: StoreLimits) -> str | None:
    """Reason why ``value`` is not a usable id, or None when it is."""
    if not isinstance(value, str) or not value.strip():
        return f"{field} must be a non-empty string, got {shown(value)}"
    if len(value) > limits.max_id_chars:
        return (
            f"{field} {shown(value)} is longer than the limit of {limits.max_id_chars} characters"
        )
    if value == SUPER_SOURCE:
        return f"{field} {value!r} is reserved for the virtual super-source"
    return None


def check_confidence(field: str, value: Any) -> tuple[float | None, str | None]:
    """Parse a confidence in [0, 1]; numeric strings such as ``"0.9"`` are accepted."""
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
    return float(value), None


def check_flag(field: str, value: Any) -> tuple[bool | None, str | None]:
    """Parse a yes/no switch: a bool, or the strings ``"true"``/``"false"`` (any case,
    surrounding spaces ignored) as JSON-minded clients send them. Anything else,
    including 0/1 and "yes"/"no", is refused with a reason naming ``field``. O(1).
    """
    if isinstance(value, bool):
        return value, None
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true", None
    return None, f"{field} must be true or false, got {shown(value)}"


def _run_ids(
    raw: dict[str, Any], run_id: str | None, limits: StoreLimits
) -> tuple[frozenset[str], str | None]:
    given = raw.get("run_ids")
    if given is None:
        return (frozenset({run_id}) if run_id else frozenset()), None
    if isinstance(given, str):
        given = [given]
    if not isinstance(given, list | tuple | set | frozenset):
        return frozenset(), f"run_ids must be a list of strings, got {shown(given)}"
    for item in given:
        problem = check_id("run_ids item", item, limits)
        if problem:
            return frozenset(), problem
    return frozenset(given), None


def parse_node(raw: Any, run_id: str | None, limits: StoreLimits) -> NodeRecord | str:
    """Validate one incoming node dict; returns the record or the rejection reason."""
    if not isinstance(raw, dict):
        return f"node must be an object, got {shown(raw)}"
    problem = check_id("id", raw.get("id"), limits)
    if problem:
        return problem
    claim = raw.get("claim")
    if not isinstance(claim, str) or not claim.strip():
        return f"claim must be a non-empty string, got {shown(claim)}"
    if len(claim) > limits.max_claim_chars:
        return f"claim has {len(claim)} characters, over the limit of {limits.max_claim_chars}"
    node_type = raw.get("type")
    if node_type not in NODE_TYPES:
        return f"type must be one of {', '.join(NODE_TYPES)}; got {shown(node_type)}"
    weight = _confidence_and_run_ids(raw, run_id, limits)
    if isinstance(weight, str):
        return weight
    source = raw.get("source")
    if source is not None:
        problem = check_id("source", source, limits)
        if problem:
            return problem
        source = source.strip()
    return NodeRecord(raw["id"], claim.strip(), node_type, *weight, source=source)


def parse_edge(raw: Any, run_id: str | None, limits: StoreLimits) -> EdgeRecord | str:
    """Validate one incoming edge dict (``src``/``dst`` or ``from``/``to``)."""
    if not isinstance(raw, dict):
        return f"edge must be an object, got {shown(raw)}"
    endpoints: list[str] = []
    for name, alias in (("src", "from"), ("dst", "to")):
        value = raw.get(name, raw.get(alias))
        problem = check_id(f"{name} (or {alias})", value, limits)
        if problem:
            return problem
        endpoints.append(str(value))
    src, dst = endpoints
    if src == dst:
        return f"src and dst are both {src!r}: a claim cannot support or attack itself"
    relation = raw.get("relation")
    if relation not in RELATIONS:
        return f"relation must be one of {', '.join(RELATIONS)}; got {shown(relation)}"
    weight = _confidence_and_run_ids(raw, run_id, limits)
    if isinstance(weight, str):
        return weight
    return EdgeRecord(src, dst, relation, *weight)


def _confidence_and_run_ids(
    raw: dict[str, Any], run_id: str | None, limits: StoreLimits
) -> tuple[float, frozenset[str]] | str:
    confidence, problem = check_confidence("confidence", raw.get("confidence", DEFAULT_CONFIDENCE))
    if problem or confidence is None:
        return problem or "confidence is missing"
    run_ids, problem = _run_ids(raw, run_id, limits)
    return problem if problem else (confidence, run_ids)
