"""The grounding screen's models: which it calls, where, and what a call may cost.

``screen.py`` turns its ``--models`` names into :class:`ModelSpec` records from models.json
(:func:`load_models_config`, :func:`resolve_models`) and guards its spending with
:func:`worst_case_call_cost` and a :class:`Budget`. Refusals are :class:`ScreenError`.

It imports :mod:`evals.grounding` and the models.json reader and token estimate of
:mod:`orchestrator.llm`, never the evaluation harness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evals.grounding import Item, screen_messages
from orchestrator.llm import ModelsFile, ModelsFileError, prompt_tokens, read_models_file


class ScreenError(Exception):
    """A refusal before any call is made; the message says what to change."""


@dataclass(frozen=True)
class ModelSpec:
    """A model to screen: where it is served and what it costs (USD per token, None unknown)."""

    id: str
    base_url: str | None
    is_local: bool
    prompt_price: float | None
    completion_price: float | None
    listed: bool

    @property
    def price_per_token(self) -> float | None:
        if self.prompt_price is None or self.completion_price is None:
            return None
        return self.prompt_price + self.completion_price


# ---- configuration --------------------------------------------------------------------------


def load_models_config(path: Path) -> ModelsFile:
    """Read models.json (:func:`read_models_file`); ScreenError naming the field when its shape
    is wrong or it sets no ``max_leak_rate``."""
    try:
        models = read_models_file(path)
    except ModelsFileError as exc:
        raise ScreenError(str(exc)) from exc
    if models.max_leak_rate is None:
        raise ScreenError(f"{path}: field 'max_leak_rate' must be a number in (0, 1], got None")
    return models


def resolve_models(
    names: Sequence[str], config: ModelsFile, base_url: str | None, models_path: Path
) -> list[ModelSpec]:
    """One ModelSpec per requested name (duplicates dropped, order kept).

    A name listed in models.json takes its base URL (``--base-url`` overrides it, except for
    local models, which serve themselves) and prices from there; a local backend without
    prices costs 0. An unlisted name is allowed only with
    ``--base-url`` and has unknown prices. Anything else is a ScreenError.
    """
    entries = {e.id: e for e in config.models}
    specs: list[ModelSpec] = []
    for name in dict.fromkeys(names):
        entry = entries.get(name)
        if entry is None:
            if base_url is None:
                known = ", ".join(sorted(entries))
                raise ScreenError(
                    f"unknown model {name!r}: it is not in {models_path} and no --base-url was "
                    f"given. Known models: {known}"
                )
            specs.append(ModelSpec(name, base_url, False, None, None, listed=False))
            continue
        is_local = entry.backend == "local"
        prompt, completion = entry.pricing or ((0.0, 0.0) if is_local else (None, None))
        specs.append(
            ModelSpec(
                id=name,
                # Built-in local models start their own server and take no URL.
                base_url=None if is_local else base_url or entry.base_url,
                is_local=is_local,
                prompt_price=prompt,
                completion_price=completion,
                listed=True,
            )
        )
    return specs


def worst_case_call_cost(spec: ModelSpec, item: Item, max_tokens: int) -> float | None:
    """Upper bound on one call's cost: estimated prompt tokens and a full max_tokens answer."""
    if spec.prompt_price is None or spec.completion_price is None:
        return None
    prompt = prompt_tokens(screen_messages(item))
    return prompt * spec.prompt_price + max_tokens * spec.completion_price


@dataclass
class Budget:
    """What this invocation may still spend (USD). Calls with unknown prices are not capped
    (the user accepted that with --allow-unknown-cost)."""

    remaining: float

    def allows(self, worst_case: float | None) -> bool:
        return worst_case is None or worst_case <= self.remaining + 1e-12

    def spend(self, actual: float | None, worst_case: float | None) -> None:
        # An unreported cost on a priced model is charged at its worst case, to stay safe.
        charge = actual if actual is not None else worst_case
        if charge is not None:
            self.remaining -= charge
