"""Per-token USD prices for cost accounting when a server does not report ``usage.cost``.

Two sources, both mapping a model id to (prompt, completion) USD per token:

* the project's ``models.json`` (``{"models": [{"id", "pricing": {"prompt", "completion"}}]}``);
* an OpenRouter-style catalog (``{"data": [{"id", "pricing": {"prompt": "0.0000001", ...}}]}``),
  read from a file or fetched from ``<base_url>/models``.

Public through :mod:`orchestrator.llm`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import requests

from orchestrator.llm.models_file import ModelsFile, price_pair, read_models_file, usd_per_token

log = logging.getLogger("orchestrator.llm.client")


class PricingTable:
    """Immutable map ``model id -> (prompt_usd_per_token, completion_usd_per_token)``."""

    def __init__(self, prices: Mapping[str, tuple[float, float]] | None = None) -> None:
        checked: dict[str, tuple[float, float]] = {}
        for model, pair in (prices or {}).items():
            if not isinstance(model, str) or not model:
                raise ValueError(f"pricing: model id must be a non-empty string, got {model!r}")
            if len(pair) != 2 or any(usd_per_token(p) is None for p in pair):
                raise ValueError(
                    f"pricing[{model!r}]: expected (prompt, completion) non-negative finite "
                    f"USD per token, got {pair!r}"
                )
            checked[model] = (float(pair[0]), float(pair[1]))
        self._prices = checked

    def __len__(self) -> int:
        return len(self._prices)

    def __contains__(self, model: object) -> bool:
        return model in self._prices

    def __repr__(self) -> str:
        return f"PricingTable({len(self._prices)} models)"

    def get(self, model: str) -> tuple[float, float] | None:
        """The (prompt, completion) price pair for ``model``, or None if unknown."""
        return self._prices.get(model)

    def cost(
        self, model: str, prompt_tokens: int | None, completion_tokens: int | None
    ) -> float | None:
        """USD for one call, or None when the model's price or either token count is unknown."""
        pair = self._prices.get(model)
        if pair is None or prompt_tokens is None or completion_tokens is None:
            return None
        return prompt_tokens * pair[0] + completion_tokens * pair[1]

    def merged(self, fallback: PricingTable) -> PricingTable:
        """A new table with this table's prices, plus ``fallback``'s for models missing here."""
        combined = dict(fallback._prices)
        combined.update(self._prices)
        return PricingTable(combined)

    @classmethod
    def from_models_json(cls, path: str | Path | None = None) -> PricingTable:
        """Prices from a ``models.json`` (default: the repository's own), read by
        :func:`orchestrator.llm.models_file.read_models_file` (its errors are ValueErrors
        naming the field). Models without a ``pricing`` object are left out (their cost stays
        unknown)."""
        return cls.of(read_models_file(path))

    @classmethod
    def of(cls, models: ModelsFile) -> PricingTable:
        """The prices a read models file lists."""
        return cls({entry.id: entry.pricing for entry in models.models if entry.pricing})

    @classmethod
    def from_catalog(cls, catalog: Any) -> PricingTable:
        """Prices from an OpenRouter-style catalog dict; unusable entries are skipped.

        A catalog is outside data, so entries without a usable price (variable-price routers,
        missing fields) are dropped with a debug log rather than failing the whole table.
        """
        entries = catalog.get("data") if isinstance(catalog, dict) else None
        if not isinstance(entries, list):
            raise ValueError("catalog: field 'data' must be a list of models")
        prices: dict[str, tuple[float, float]] = {}
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                continue
            pair = price_pair(entry.get("pricing"))
            if pair is None:
                log.debug("catalog: no usable price for %r", entry.get("id"))
                continue
            prices[entry["id"]] = pair
        return cls(prices)

    @classmethod
    def from_catalog_file(cls, path: str | Path) -> PricingTable:
        """Prices from a catalog JSON file; ValueError if it cannot be read or parsed."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read catalog at {str(path)!r}: {exc}") from exc
        return cls.from_catalog(data)

    @classmethod
    def fetch_catalog(
        cls,
        base_url: str,
        *,
        timeout_s: float = 10.0,
        session: requests.Session | None = None,
    ) -> PricingTable | None:
        """GET ``<base_url>/models`` and read its prices; None (and a warning) on any failure.

        The catalog is public, so no key is sent. Fetching is best effort by design: a local
        server without a catalog simply leaves costs to ``usage.cost`` or unknown.
        """
        url = base_url.rstrip("/") + "/models"
        getter = session if session is not None else requests
        try:
            response = getter.get(url, timeout=timeout_s)
            response.raise_for_status()
            return cls.from_catalog(response.json())
        except (requests.RequestException, ValueError) as exc:
            log.warning("could not load the model catalog from %s: %s", url, exc)
            return None
