"""Statistics between arms of one run, and item-by-item flips between two runs.

`arm_statistics` feeds the *Statistics* section of every summary: for arm 6 against arms 1,
2 and 7 (those present), paired bootstrap intervals for the difference in accuracy and in net
score, an exact McNemar test, each arm's risk-coverage area, and arm 6 against arm 7 at matched
coverage (`evals.reporting` renders it). `compare` compares two runs of the same items (e.g.
two replays of one bank): which items went from right to wrong, to abstained and back, with
arm 6's reasons; ``logic-graph eval compare`` prints them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.results import run_arms
from evals.score import ABSTAINED, CORRECT, WRONG, row_outcome
from evals.stats import aurc, compare_arms, matched_coverage

# Arm 6 is compared with: one plain call, naive revisit, self-consistency.
COMPARED_WITH = (1, 2, 7)

Rows = Mapping[str, Mapping[str, Any]]


def arm_statistics(arms: Mapping[int, Rows], *, seed: int = 0) -> dict[str, Any]:
    """The statistics of one run's arms (item id -> row per arm); see the module docstring."""
    pairs = {
        f"6-{other}": compare_arms(arms[6], arms[other], row_outcome, seed=seed)
        for other in COMPARED_WITH
        if 6 in arms and other in arms
    }
    areas = {str(arm): aurc(list(rows.values()), row_outcome) for arm, rows in sorted(arms.items())}
    matched = None
    if 6 in arms and 7 in arms:
        common = sorted(arms[6].keys() & arms[7].keys())
        matched = {
            "items": len(common),
            **matched_coverage(
                [arms[6][i] for i in common], [arms[7][i] for i in common], row_outcome
            ),
        }
    return {"pairs": pairs, "aurc": areas, "matched_coverage_6_7": matched}


def _state(row: Mapping[str, Any] | None) -> str:
    """A row's state for a comparison: right (an abstention on an unanswerable item too),
    wrong, another outcome, or missing."""
    if row is None:
        return "missing"
    result = row_outcome(row)
    if result == ABSTAINED and row.get("answerable") is False:
        return "right (abstained)"
    return {CORRECT: "right", WRONG: "wrong"}.get(result, result)


def _why(row: Mapping[str, Any] | None) -> str:
    """What a row says about its answer: the answer, arm 6's reasons and width."""
    if row is None:
        return ""
    raw_extra = row.get("extra")
    extra: Mapping[str, Any] = raw_extra if isinstance(raw_extra, Mapping) else {}
    parts = [
        f"{key} {extra[key]}"
        for key in ("refusal_reason", "stop_reason", "outcome")
        if extra.get(key)
    ]
    if row.get("answer") is not None:
        parts.insert(0, f"answer {row['answer']!r}")
    if row.get("width") is not None:
        parts.append(f"width {row['width']}")
    return ", ".join(str(p) for p in parts)


@dataclass(frozen=True)
class Flip:
    """An item whose state (right, wrong, abstained, missing) differs between two runs, with
    each side's reasons (arm 6's answer, refusal and stop reasons, width)."""

    id: str
    before: str
    after: str
    why_before: str
    why_after: str


@dataclass(frozen=True)
class ArmFlips:
    """One arm's flips between two runs: the items either run has, and those that flipped
    (sorted by item id)."""

    items: int
    flipped: tuple[Flip, ...]


def flips(arms_a: Mapping[int, Rows], arms_b: Mapping[int, Rows]) -> dict[int, ArmFlips]:
    """Per arm present in both runs: the items whose state (right / wrong / abstained / ...)
    differs between run A and run B, sorted by item id, with each side's reason."""
    result: dict[int, ArmFlips] = {}
    for arm in sorted(arms_a.keys() & arms_b.keys()):
        items = sorted(arms_a[arm].keys() | arms_b[arm].keys())
        changed = []
        for item in items:
            before, after = arms_a[arm].get(item), arms_b[arm].get(item)
            if _state(before) != _state(after):
                changed.append(Flip(item, _state(before), _state(after), _why(before), _why(after)))
        result[arm] = ArmFlips(len(items), tuple(changed))
    return result


def compare(run_a: Path, run_b: Path) -> dict[int, ArmFlips]:
    """The items that flipped between two runs of the same items (e.g. two replays of one
    bank), per arm both runs have.

    Parameters
    ----------
    run_a, run_b : Path
        Two evaluation or replay folders (their ``raw/arm<N>.jsonl``).

    Returns
    -------
    dict[int, ArmFlips]
        Arm -> the items either run has and those whose state differs.
    """
    return flips(run_arms(run_a), run_arms(run_b))
