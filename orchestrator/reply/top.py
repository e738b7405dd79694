"""The top of a loaded reply, which every reply shape (graph, chain, verdict) reads first: one
JSON object, and the field that carries the shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orchestrator.llm import JsonObject
from orchestrator.reply.fields import kind_of, single_object


@dataclass
class ReplyTop:
    """What :func:`read_top` found: the object and its main field, or the fatal problem;
    ``errors`` holds the notes made so far (the shape's reader adds its own)."""

    obj: JsonObject = field(default_factory=dict)
    value: Any = None
    errors: list[str] = field(default_factory=list)
    problem: str | None = None


def read_top(value: Any, name: str, kind: type, kind_name: str) -> ReplyTop:
    """The object ``value`` holds (a one-object list is unwrapped, noted) and its field
    ``name``, which must be a ``kind`` (``kind_name`` in the message: ``"a list"``). Never
    raises. Cost: O(1)."""
    errors: list[str] = []
    obj = single_object(value, errors)
    if obj is None:
        return ReplyTop(errors=errors, problem=f"top level is {kind_of(value)}, not an object")
    found = obj.get(name)
    if not isinstance(found, kind):
        problem = f"field {name!r} must be {kind_name}, got {kind_of(found)}"
        return ReplyTop(obj, found, errors, problem)
    return ReplyTop(obj, found, errors)
