"""How an MCP tool is described: its function, and the JSON Schemas derived from it.

A tool runs one function (a :class:`~graph_server.store.GraphStore` method or a plain
function); :func:`arguments_model` derives its arguments model from the function's
signature, as the MCP SDK does, and its answer is the function's return type (a record of
:mod:`graph_server.records`). :func:`render_schema` makes a model's JSON Schema
self-contained and plain and writes in the running store's limits and thresholds
(``$name`` placeholders, :func:`placeholder_values`). The tools themselves are listed in
:mod:`graph_server.tools`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import asdict, dataclass
from string import Template
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import mcp_types as types
from pydantic import BaseModel, ConfigDict, create_model

from graph_server.records import Wire
from graph_server.store import CancelCheck, GraphStore
from graph_server.validation import DEFAULT_CONFIDENCE, StoreLimits

Schema = dict[str, Any]
_NUMERIC_KEYS = frozenset({"maxLength", "minLength", "maxItems", "minItems", "minimum", "maximum"})
_NULL: Schema = {"type": "null"}


def placeholder_values(
    limits: StoreLimits, jaccard_threshold: float, ratio_threshold: float
) -> dict[str, float]:
    """The values of the ``$name`` placeholders in the models and descriptions.

    Parameters
    ----------
    limits : StoreLimits
        The store's limits (``$max_id_chars`` and the rest, one per field).
    jaccard_threshold, ratio_threshold : float
        The store's duplicate thresholds (``$jaccard_threshold``, ``$ratio_threshold``).

    Returns
    -------
    dict
        Placeholder name -> number; :func:`render_schema` formats them.
    """
    values: dict[str, float] = {**asdict(limits)}
    values.update(
        jaccard_threshold=jaccard_threshold,
        ratio_threshold=ratio_threshold,
        default_confidence=DEFAULT_CONFIDENCE,
    )
    return values


def fill(text: str, values: dict[str, float]) -> str:
    """``text`` with each ``$name`` replaced by its value (integers with thousands commas).

    Unknown names are left as they are; nothing raises.
    """
    shown = {k: f"{v:,}" if isinstance(v, int) else str(v) for k, v in values.items()}
    return Template(text).safe_substitute(shown)


@functools.cache
def _generated(model: type[BaseModel]) -> Schema:
    schema = model.model_json_schema(by_alias=True)
    # A model's docstring is for readers of the code: only fields' descriptions are shown.
    for part in [schema, *schema.get("$defs", {}).values()]:
        part.pop("description", None)
    return schema


def render_schema(model: type[BaseModel], values: dict[str, float]) -> Schema:
    """The JSON Schema of ``model`` as ``tools/list`` shows it.

    Pydantic's schema is made self-contained and plain: ``$ref`` inlined, titles
    dropped, ``additionalProperties: true`` dropped (it is the default), an optional
    argument (``X | None = None``) shown as ``X`` (null means "not given"), a nullable
    answer field as ``{"type": [X, "null"]}``, and placeholders filled from ``values``
    (see :func:`placeholder_values`). Cost: linear in the schema's size.

    Raises
    ------
    KeyError
        If a numeric constraint names a placeholder missing from ``values``.
    """
    generated = _generated(model)
    schema: Schema = _plain(generated, generated.get("$defs", {}), values)
    return schema


def _plain(node: Any, defs: Schema, values: dict[str, float]) -> Any:
    if isinstance(node, list):
        return [_plain(item, defs, values) for item in node]
    if isinstance(node, str):
        return fill(node, values)
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        return _plain({**target, **{k: v for k, v in node.items() if k != "$ref"}}, defs, values)
    out: Schema = {}
    for key, value in node.items():
        if key in ("title", "$defs") or (key == "additionalProperties" and value is True):
            continue
        if key == "properties":
            out[key] = {name: _plain(prop, defs, values) for name, prop in value.items()}
        elif key in _NUMERIC_KEYS and isinstance(value, str):
            out[key] = values[value.lstrip("$")]
        else:
            out[key] = _plain(value, defs, values)
    if "properties" in out:
        out.setdefault("required", [])
    return _without_null_branch(out)


def _without_null_branch(schema: Schema) -> Schema:
    branches = schema.get("anyOf")
    if not isinstance(branches, list) or len(branches) != 2 or _NULL not in branches:
        return schema
    other = branches[1] if branches[0] == _NULL else branches[0]
    rest = {k: v for k, v in schema.items() if k != "anyOf"}
    if "default" in rest and rest["default"] is None:  # optional argument
        del rest["default"]
        return {**other, **rest}
    if set(other) == {"type"} and isinstance(other["type"], str):  # nullable answer field
        return {"type": [other["type"], "null"], **rest}
    return schema


# ------------------------------------------------------------------ tools


_NOT_ARGUMENTS = frozenset({"self", "cancel"})
"""Parameters of a tool's function that are not the tool's arguments."""


def _on_the_wire(hint: Any) -> Any:
    """``hint`` as the tool's schema shows it: an ``Annotated`` type carrying a
    :class:`~graph_server.records.Wire` takes the wire shape, keeping its other metadata."""
    if get_origin(hint) is not Annotated:
        return hint
    _, *metadata = get_args(hint)
    wire = [item.shape for item in metadata if isinstance(item, Wire)]
    if not wire:
        return hint
    return Annotated[(wire[0], *[item for item in metadata if not isinstance(item, Wire)])]


@functools.cache
def arguments_model(call: Callable[..., BaseModel]) -> type[BaseModel]:
    """The arguments of ``call`` as one pydantic model, derived from its signature.

    Every parameter but ``self`` and ``cancel`` is a field, in signature order, with its
    type hint (on the wire, see :func:`_on_the_wire`) and its default; unknown keys are
    forbidden. The model only draws the schema: the store validates the values.

    Examples
    --------
    >>> list(arguments_model(GraphStore.mark_refuted).model_fields)
    ['graph_id', 'node_id', 'reason', 'conclusion_id']
    """
    hints = get_type_hints(call, include_extras=True)
    fields: dict[str, Any] = {}
    for name, parameter in inspect.signature(call).parameters.items():
        if name not in _NOT_ARGUMENTS:
            default = ... if parameter.default is parameter.empty else parameter.default
            fields[name] = (_on_the_wire(hints[name]), default)
    model: type[BaseModel] = create_model(
        call.__name__, __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: the function it runs and what ``tools/list`` shows of it.

    ``call`` is a :class:`~graph_server.store.GraphStore` method (taken from the class) or
    a plain function; the tool's name, arguments and answer are the function's.
    """

    call: Callable[..., BaseModel]
    title: str
    description: str
    """May hold ``$name`` placeholders (see :func:`placeholder_values`)."""
    annotations: types.ToolAnnotations

    @property
    def name(self) -> str:
        """The tool's name: its function's."""
        return self.call.__name__

    @property
    def arguments(self) -> type[BaseModel]:
        """The arguments, as a model derived from the function (:func:`arguments_model`)."""
        return arguments_model(self.call)

    @property
    def answer(self) -> type[BaseModel]:
        """The record the function returns (its return type hint)."""
        answer: type[BaseModel] = get_type_hints(self.call)["return"]
        return answer

    @property
    def accepted(self) -> tuple[str, ...]:
        """Every argument name, as the client spells it, in schema order."""
        return tuple(f.alias or n for n, f in self.arguments.model_fields.items())

    @property
    def required(self) -> tuple[str, ...]:
        """The argument names a call must give (a null counts as not given)."""
        fields = self.arguments.model_fields.items()
        return tuple(f.alias or n for n, f in fields if f.is_required())

    @property
    def defaults(self) -> dict[str, object]:
        """Argument name -> default, for the optional arguments whose default is not None."""
        fields = self.arguments.model_fields.items()
        return {
            f.alias or n: f.default
            for n, f in fields
            if not f.is_required() and f.default is not None
        }

    def run(
        self, store: GraphStore, arguments: dict[str, object], cancel: CancelCheck
    ) -> BaseModel:
        """Call the function with ``arguments`` (on ``store`` if it is a store method),
        passing ``cancel`` where it takes one. Raises what the function raises."""
        parameters = inspect.signature(self.call).parameters
        extra = {"cancel": cancel} if "cancel" in parameters else {}
        if "self" in parameters:
            return self.call(store, **arguments, **extra)
        return self.call(**arguments, **extra)

    def tool(self, values: dict[str, float]) -> types.Tool:
        """The ``tools/list`` entry, with the placeholders filled from ``values``."""
        return types.Tool(
            name=self.name,
            title=self.title,
            description=fill(self.description, values),
            input_schema=render_schema(self.arguments, values),
            output_schema=render_schema(self.answer, values),
            annotations=self.annotations,
        )
