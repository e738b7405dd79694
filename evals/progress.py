"""How long an evaluation run will take, and how far it has got.

* `calls_per_item` - the most calls one item can cost with the selected arms (arms 1-5 make a
  fixed number; arm 6 at most its call budget; arm 7 as many as arm 6 made).
* Seconds per call of a built-in local model are *measured*: every finished run records its
  mean call latency in ``timings.json`` next to the model cache, and the next run's estimate
  uses it, saying when and over how many calls it was measured. For a server, or a local model
  never timed on this machine, the estimate gives calls only and the progress line's ETA (from
  the pace of the items so far) takes over after the first item.
* `Tally` - correct / scored counts per arm and the progress line with elapsed time and ETA.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals.results import ArmRows, ResultRow
from orchestrator.llm import default_cache_dir

# Calls one item costs in each baseline arm (arm 5: reason, compress, check).
FIXED_CALLS = {1: 1, 2: 2, 3: 2, 4: 1, 5: 3}
TIMINGS_FILE = "timings.json"


def calls_per_item(arms: Iterable[int], budget_calls: int) -> int:
    """The most calls one item can cost: fixed arms, plus arm 6's budget and arm 7's match."""
    return sum(FIXED_CALLS.get(arm, budget_calls) for arm in arms)


def timings_path() -> Path:
    """``timings.json`` beside the model cache (``$LOGIC_GRAPH_CACHE`` moves both)."""
    return default_cache_dir().parent / TIMINGS_FILE


def _read_timings(path: Path) -> dict[str, Any]:
    """The timings file as a dict; {} when it is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def measured_timing(model: str, path: Path | None = None) -> dict[str, Any] | None:
    """``{"seconds_per_call", "calls", "measured_at"}`` recorded for `model`, or None."""
    entry = _read_timings(path or timings_path()).get(model)
    if not isinstance(entry, dict) or not isinstance(entry.get("seconds_per_call"), int | float):
        return None
    return entry


def record_timing(
    model: str, latencies: Iterable[float], path: Path | None = None
) -> dict[str, Any] | None:
    """Store the mean of `latencies` (seconds of successful calls) as `model`'s seconds per call.

    The file is replaced atomically; a cache that cannot be written is skipped silently (the
    estimate is a convenience, never a reason to fail a run). Returns the entry written.
    """
    values = [float(v) for v in latencies if v > 0]
    if not values:
        return None
    path = path or timings_path()
    entry = {
        "seconds_per_call": round(sum(values) / len(values), 2),
        "calls": len(values),
        "measured_at": datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    try:
        data = {**_read_timings(path), model: entry}
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".timings-")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, sort_keys=True)
        os.replace(temporary, path)
    except OSError:
        return None
    return entry


def duration(seconds: float) -> str:
    """``"45 s"``, ``"12 min"``, ``"3.4 h"``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def estimate_line(
    items: int, arms: Iterable[int], budget_calls: int, timing: Mapping[str, Any] | None
) -> str:
    """The line printed before a run: calls at most, and time at most when a timing exists."""
    per_item = calls_per_item(arms, budget_calls)
    calls = items * per_item
    line = f"estimate: {items} items x up to {per_item} calls = up to {calls} calls"
    if timing is None:
        return line + "; seconds per call not measured yet (ETA after the first item)"
    seconds = float(timing["seconds_per_call"])
    return (
        f"{line}; at {seconds:.1f} s per call (measured {timing.get('measured_at', '?')} over "
        f"{timing.get('calls', '?')} calls) up to {duration(calls * seconds)}"
    )


class Tally:
    """Correct and scored counts per arm, for the progress line."""

    def __init__(self, done: dict[int, ArmRows]) -> None:
        self.done = done

    def add(self, arm: int, row: ResultRow) -> None:
        """Record `row`, replacing an earlier line for the same item (a retried failure)."""
        self.done[arm][row["id"]] = row

    def line(self, position: int, total: int, item_id: str, spent: float, elapsed_s: float) -> str:
        """``[3/30] item | a1 2/3 (67%) | ... | spent $0 | 5 min, ETA 45 min``."""
        parts = []
        for arm, rows in sorted(self.done.items()):
            correct, n = sum(bool(r.get("correct")) for r in rows.values()), len(rows)
            parts.append(f"a{arm} {correct}/{n} ({100 * correct / n:.0f}%)" if n else f"a{arm} -")
        eta = elapsed_s / position * (total - position) if position else 0.0
        return (
            f"[{position}/{total}] {item_id} | "
            + " | ".join(parts)
            + f" | spent ${spent:.4f} | {duration(elapsed_s)}, ETA {duration(eta)}"
        )
