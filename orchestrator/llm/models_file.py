"""models.json, read once: the file's typed record and its one reader.

``models.json`` lists the models a run may name (``{"default_model", "max_leak_rate",
"models": [{"id", "backend", "base_url", "pricing": {"prompt", "completion"}, ...}]}``).
:func:`read_models_file` is the only function that parses it; prices, backends, the run
command's per-model settings, the evaluation harness and the screen all read the
:class:`ModelsFile` it returns.

One error rule: a field of the wrong type or value raises :class:`ModelsFileError`, whose
message names the file, the field (``models[3].timeout_s``) and the problem. A missing file is
an error too, except the repository's own default file (an installed package has none), which
reads as a file that lists no model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from orchestrator.llm.json_object import JsonObject

DEFAULT_MODELS_PATH = Path(__file__).resolve().parents[2] / "models.json"


class ModelsFileError(ValueError):
    """models.json cannot be read, or one of its fields is wrong; the message names both."""


class SamplingSettings(TypedDict, total=False):
    """The :class:`orchestrator.records.RunConfig` fields a models.json entry may set for its
    model, only those it sets: how many runs, at which temperature, within how many calls,
    chosen per model from measurements (docs/results/verdicts-small-models.md: the 1.5B is
    most accurate as one greedy run)."""

    n: int
    temperature: float
    budget_calls: int


def sampling_settings(
    n: int | None, temperature: float | None, budget_calls: int | None
) -> SamplingSettings:
    """The settings given (not None), by field name."""
    settings: SamplingSettings = {}
    if n is not None:
        settings["n"] = n
    if temperature is not None:
        settings["temperature"] = temperature
    if budget_calls is not None:
        settings["budget_calls"] = budget_calls
    return settings


@dataclass(frozen=True)
class ModelEntry:
    """One model of models.json. Every setting is None when the entry leaves it out."""

    id: str
    backend: str | None = None
    """``local`` for a built-in llama.cpp model, ``openrouter`` or absent otherwise."""
    base_url: str | None = None
    pricing: tuple[float, float] | None = None
    """(prompt, completion) USD per token."""
    timeout_s: float | None = None
    max_retries: int | None = None
    concurrency: int | None = None
    structured_output: bool | None = None
    context_tokens: int | None = None
    interrogation_shape: str | None = None
    greedy_first: bool | None = None
    hops: str | None = None
    n: int | None = None
    temperature: float | None = None
    budget_calls: int | None = None
    hop_budget_calls: int | None = None
    """The budget of a run whose hops are asked first (a plan of up to four lookups, then the
    chain if they fail), in place of ``budget_calls``."""
    word_problems: WordProblemSettings | None = None
    """What a numeric word problem gets in place of the settings above, where it sets them."""

    def sampling(self, hops_first: bool = False, word_problem: bool = False) -> SamplingSettings:
        """The sampling settings this entry sets (see :class:`SamplingSettings`), for a run
        that asks its hops first when ``hops_first`` (``hop_budget_calls`` then, if set), of a
        numeric word problem when ``word_problem`` (``word_problems``' own, where set)."""
        budget = self.budget_calls
        if hops_first and self.hop_budget_calls is not None:
            budget = self.hop_budget_calls
        settings = sampling_settings(self.n, self.temperature, budget)
        if word_problem and self.word_problems is not None:
            own = self.word_problems
            settings |= sampling_settings(own.n, own.temperature, own.budget_calls)
        return settings


@dataclass(frozen=True)
class WordProblemSettings:
    """The settings models.json gives a model for a numeric word problem (a task whose one
    document is its own statement, which writes a number in digits), each None where the
    entry's own setting holds: its shape and sampling, measured on word problems apart from
    questions over documents (docs/results/reasoned-shape.md)."""

    interrogation_shape: str | None = None
    diversity: str | None = None
    n: int | None = None
    temperature: float | None = None
    budget_calls: int | None = None
    adaptive: bool | None = None
    greedy_first: bool | None = None


@dataclass(frozen=True)
class ModelsFile:
    """The whole of models.json: its entries, the default model and the screen's leak bound.

    ``raw`` is the parsed document as written, for a tool that rewrites the file and must keep
    the fields it does not know (the screen records its chosen default there)."""

    path: Path
    models: tuple[ModelEntry, ...]
    default_model: str | None
    max_leak_rate: float | None
    raw: JsonObject

    def entry(self, model: str) -> ModelEntry | None:
        """The entry whose id is ``model``, or None when the file does not list it."""
        return next((entry for entry in self.models if entry.id == model), None)

    def ids(self) -> list[str]:
        """The listed model ids, in file order."""
        return [entry.id for entry in self.models]


# What each typed setting of an entry must be: (Python types accepted, the rule's words).
_NUMBER = (int, float)
_SETTINGS: dict[str, tuple[tuple[type, ...], str]] = {
    "backend": ((str,), "a string"),
    "base_url": ((str,), "a string"),
    "timeout_s": (_NUMBER, "a number"),
    "max_retries": ((int,), "an integer"),
    "concurrency": ((int,), "an integer"),
    "structured_output": ((bool,), "true or false"),
    "context_tokens": ((int,), "an integer"),
    "interrogation_shape": ((str,), "a string"),
    "greedy_first": ((bool,), "true or false"),
    "hops": ((str,), "a string"),
    "n": ((int,), "an integer"),
    "temperature": (_NUMBER, "a number"),
    "budget_calls": ((int,), "an integer"),
    "hop_budget_calls": ((int,), "an integer"),
}
# A word problem's own settings: those of an entry that shape a run, and two only it sets.
_WORD_PROBLEM_SETTINGS: dict[str, tuple[tuple[type, ...], str]] = {
    key: _SETTINGS[key]
    for key in ("interrogation_shape", "n", "temperature", "budget_calls", "greedy_first")
} | {"diversity": ((str,), "a string"), "adaptive": ((bool,), "true or false")}


def read_models_file(
    path: Path | str | None = None, *, choices: Mapping[str, Sequence[str]] | None = None
) -> ModelsFile:
    """The models file at ``path`` (default: :data:`DEFAULT_MODELS_PATH`), checked.

    ``choices`` maps a setting to the values it may take, for the settings whose values a
    higher room defines (``orchestrator.api`` passes ``hops`` and ``interrogation_shape``
    with the values :class:`orchestrator.records.RunConfig` accepts, which this room may not
    import).

    Raises :class:`ModelsFileError` naming the file, the field and the problem when the file
    is missing (unless it is the default one: then no model is listed), not JSON, or holds a
    field of the wrong type or, for a setting in ``choices``, a value not listed there.
    """
    file = Path(path) if path is not None else DEFAULT_MODELS_PATH
    if not file.is_file():
        if file == DEFAULT_MODELS_PATH:
            return ModelsFile(file, (), None, None, {})
        raise ModelsFileError(f"models file {str(file)!r} does not exist")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelsFileError(f"cannot read the models file {str(file)!r}: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelsFileError(f"{file}: must be a JSON object, got {type(data).__name__}")
    entries = data.get("models", [])
    if not isinstance(entries, list):
        raise ModelsFileError(f"{file}: field 'models' must be a list")
    models = tuple(_entry(file, index, entry, choices or {}) for index, entry in enumerate(entries))
    default = data.get("default_model")
    if default is not None and not (isinstance(default, str) and default.strip()):
        raise ModelsFileError(f"{file}: field 'default_model' must be a model id, got {default!r}")
    return ModelsFile(file, models, default, _leak_rate(file, data.get("max_leak_rate")), data)


def _entry(
    file: Path, index: int, entry: object, choices: Mapping[str, Sequence[str]]
) -> ModelEntry:
    """``models[index]`` as a :class:`ModelEntry`; ModelsFileError names the bad field."""
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
        raise ModelsFileError(f"{file}: models[{index}] must be an object with a string 'id'")
    where = f"{file}: models[{index}]"
    owner = f" of {entry['id']!r}"
    settings = _typed_settings(where, owner, entry, _SETTINGS, choices)
    if entry.get("word_problems") is not None:
        settings["word_problems"] = _word_problems(
            f"{where}.word_problems", owner, entry["word_problems"], choices
        )
    pricing = entry.get("pricing")
    prices = price_pair(pricing) if pricing is not None else None
    if pricing is not None and prices is None:
        raise ModelsFileError(
            f"{file}: models[{index}].pricing of {entry['id']!r} must be "
            f"{{'prompt': usd_per_token, 'completion': usd_per_token}} with non-negative "
            f"finite numbers, got {pricing!r}"
        )
    return ModelEntry(id=entry["id"], pricing=prices, **settings)


def _word_problems(
    where: str, owner: str, value: object, choices: Mapping[str, Sequence[str]]
) -> WordProblemSettings:
    """An entry's ``word_problems`` object, checked: only the settings it may set, each of its
    type (and one of ``choices``' values); ModelsFileError names the bad field."""
    if not isinstance(value, dict):
        raise ModelsFileError(f"{where}{owner} must be an object, got {value!r}")
    unknown = sorted(set(value) - set(_WORD_PROBLEM_SETTINGS))
    if unknown:
        raise ModelsFileError(
            f"{where}{owner} sets {', '.join(unknown)}; it may set only "
            f"{', '.join(_WORD_PROBLEM_SETTINGS)}"
        )
    return WordProblemSettings(
        **_typed_settings(where, owner, value, _WORD_PROBLEM_SETTINGS, choices)
    )


def _typed_settings(
    where: str,
    owner: str,
    source: Mapping[str, object],
    table: Mapping[str, tuple[tuple[type, ...], str]],
    choices: Mapping[str, Sequence[str]],
) -> dict[str, Any]:
    """The settings of ``table`` that ``source`` gives (not null), each checked against its
    type and, where ``choices`` lists its values, against them. A bad one raises
    ModelsFileError naming the field as ``{where}.{setting}{owner}``."""
    settings: dict[str, Any] = {}
    for key, (kinds, rule) in table.items():
        value = source.get(key)
        if value is None:
            continue
        field = f"{where}.{key}{owner}"
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise ModelsFileError(f"{field} must be {rule}, got {value!r}")
        if key in choices and value not in choices[key]:
            allowed = ", ".join(choices[key])
            raise ModelsFileError(f"{field} must be one of {allowed}, got {value!r}")
        settings[key] = value
    return settings


def _leak_rate(file: Path, value: object) -> float | None:
    """``max_leak_rate``: a number in (0, 1], or None when absent."""
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value <= 1:
        raise ModelsFileError(
            f"{file}: field 'max_leak_rate' must be a number in (0, 1], got {value!r}"
        )
    return float(value)


def usd_per_token(value: object) -> float | None:
    """A per-token price as a finite, non-negative float, or None if it is not one.

    Catalogs write prices as decimal strings; OpenRouter uses "-1" for routers whose price
    depends on the model they pick, which is not a price we can charge against.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def price_pair(pricing: object) -> tuple[float, float] | None:
    """``{"prompt", "completion"}`` as a (prompt, completion) pair, or None if either is no
    price (see :func:`usd_per_token`)."""
    if not isinstance(pricing, dict):
        return None
    prompt = usd_per_token(pricing.get("prompt"))
    completion = usd_per_token(pricing.get("completion"))
    if prompt is None or completion is None:
        return None
    return prompt, completion
