"""Per-model counts of parse outcomes (:data:`OUTCOMES`), with rates."""

from __future__ import annotations

import threading
from typing import Any

OUTCOMES: tuple[str, ...] = ("strict", "repaired", "salvaged", "dropped")


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
