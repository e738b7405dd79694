"""The goal table of the verdict issue: arm 6 against arms 1 and 7, pooled over data sets.

Command line (``python -m evals.goal`` is the same)::

    logic-graph eval goal RUN_DIR[@N] [RUN_DIR[@N] ...] [--json] [--skip N]
        [--baseline FOLDER[,FOLDER...][:ARM] ...]

Each ``RUN_DIR`` is an `evals.run` or `evals.replay` folder (its ``raw/arm<N>.jsonl``); items
of all folders are pooled (ids are unique across sets). ``@N`` leaves out that folder's first
N items, ``--skip N`` every folder's; with several folders, a first table gives each folder's
arm counts. Every figure comes with a 95%
percentile-bootstrap interval over items (10,000 resamples, seed 0), and each goal reads
*met* when the point estimate meets it, *shown* when the whole interval does, *not met*
otherwise; cells that lack the items to measure say so. The goals:

1. ``coverage``: arm 6 answers at least half of the answerable items;
2. ``selective``: arm 6's accuracy on its answers is at least 10 points above arm 7's at the
   same coverage (both arms' most confident answers, at the larger coverage both reach);
3. ``right``: arm 6 gets at least as many right answers as arm 1 (paired, per item);
4. ``abstain``: arm 6 abstains on at least 80% of the unanswerable items;
5. ``width``: accuracy of arm 6's answers at width >= 2 is above that at width 1.

Beside the goals, the table answers the project's own question at the same calls: does arm 6
give more right answers per wrong one than arm 1 and than arm 7, and how many fewer wrong
answers per item (:data:`COMPARISONS`, each a paired difference with its interval).
``--baseline`` adds the same comparisons against an arm of another folder, paired by item
(:func:`baseline_comparison`).

Pure functions over result rows; :func:`pooled_table` reads the folders, and
`evals.reporting.goal_table` renders a table as Markdown.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.cli import run_alias
from evals.reporting import render_goal_table
from evals.results import raw_path
from evals.score import ABSTAINED, CORRECT, WRONG, row_outcome
from evals.stats import BOOTSTRAP_RESAMPLES, LEVEL, matched_coverage

Row = Mapping[str, Any]
Items = Mapping[str, Mapping[int, Row]]
"""item id -> arm -> result row."""
Statistic = Callable[[Sequence[Mapping[int, Row]]], float | None]
COMPARED_ARMS = (1, 6, 7)
"""The arms a goal table pairs: a plain call, logic-graph and self-consistency."""


def pool(
    run_dirs: Sequence[Path], arms: Sequence[int] = COMPARED_ARMS, *, skip: int | Sequence[int] = 0
) -> dict[str, dict[int, Row]]:
    """Item id -> arm -> row, over every folder's ``raw/arm<N>.jsonl``; only items that every
    arm of ``arms`` has (the comparisons are paired). Later folders win on a repeated id.
    ``skip`` leaves out each folder's first items in the order its files list them (a
    held-out part: the items recorded after the rules were written from the first ones):
    one count for every folder, or one per folder."""
    skips = [skip] * len(run_dirs) if isinstance(skip, int) else list(skip)
    if len(skips) != len(run_dirs):
        raise ValueError(f"skip: {len(skips)} counts for {len(run_dirs)} folders")
    read = [_read_folder(d, arms, n) for d, n in zip(run_dirs, skips, strict=True)]
    return _paired(read, arms)


def _read_folder(run_dir: Path, arms: Sequence[int], skip: int) -> dict[str, dict[int, Row]]:
    """One folder's rows, item id -> arm -> row, without its first ``skip`` items."""
    found: dict[str, dict[int, Row]] = {}
    for arm in arms:
        path = raw_path(run_dir, arm)
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                found.setdefault(str(row["id"]), {})[arm] = row
    return {item_id: found[item_id] for item_id in list(found)[skip:]}


def _paired(
    folders: Sequence[Mapping[str, Mapping[int, Row]]], arms: Sequence[int]
) -> dict[str, dict[int, Row]]:
    """Folders' rows merged in order (a later folder's arm wins), keeping, sorted by id, only
    the items every arm of ``arms`` has."""
    items: dict[str, dict[int, Row]] = {}
    for found in folders:
        for item_id, rows in found.items():
            items.setdefault(item_id, {}).update(rows)
    return {i: rows for i, rows in sorted(items.items()) if all(a in rows for a in arms)}


def folder_labels(folders: Sequence[Path]) -> list[str]:
    """A short label per folder: the fewest trailing path parts that tell the distinct
    folders apart (``banks/a`` and ``replays/a``, not ``a`` twice). O(folders x depth^2),
    ``depth`` the most parts of a path."""
    distinct = set(folders)
    deepest = max((len(d.parts) for d in distinct), default=1)
    for depth in range(1, deepest):
        label = {d: str(Path(*d.parts[-depth:])) if d.parts else "." for d in distinct}
        if len(set(label.values())) == len(label):
            return [label[d] for d in folders]
    return [str(d) for d in folders]  # whole paths: distinct folders, distinct labels


def interval(
    items: Sequence[Mapping[int, Row]],
    statistic: Statistic,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> dict[str, float | None]:
    """``{"value", "low", "high"}``: the statistic on ``items`` and its percentile-bootstrap
    interval (items drawn with replacement, every arm of an item kept together). Resamples
    where the statistic is undefined (None) are left out; all None when it is undefined on
    the items themselves. O(resamples * cost of the statistic)."""
    value = statistic(items)
    if value is None:
        return {"value": None, "low": None, "high": None}
    rng = random.Random(seed)
    draws = sorted(
        v
        for v in (
            statistic([items[rng.randrange(len(items))] for _ in items]) for _ in range(resamples)
        )
        if v is not None
    )
    tail = (1 - LEVEL) / 2
    low = draws[min(len(draws) - 1, int(tail * len(draws)))]
    high = draws[min(len(draws) - 1, int((1 - tail) * len(draws)))]
    return {"value": value, "low": low, "high": high}


def _all_have(items: Sequence[Mapping[int, Row]], arm: int) -> bool:
    """Whether there are items and every one has a row of ``arm`` (the arm was run)."""
    return bool(items) and all(arm in item for item in items)


def _answerable(items: Sequence[Mapping[int, Row]]) -> list[Mapping[int, Row]]:
    return [i for i in items if i[6].get("answerable") is not False]


def coverage(items: Sequence[Mapping[int, Row]]) -> float | None:
    """Share of answerable items that arm 6 answered (right or wrong)."""
    answerable = _answerable(items)
    if not answerable:
        return None
    return sum(row_outcome(i[6]) in (CORRECT, WRONG) for i in answerable) / len(answerable)


def selective_gap(items: Sequence[Mapping[int, Row]]) -> float | None:
    """Arm 6's selective accuracy minus arm 7's, at the larger coverage both reach; None when
    arm 7 was not run."""
    if not _all_have(items, 7):
        return None
    matched = matched_coverage([i[6] for i in items], [i[7] for i in items], row_outcome)
    a, b = matched["accuracy_a"], matched["accuracy_b"]
    return None if a is None or b is None else a - b


def outcome_gap(outcome: str, other: int) -> Statistic:
    """The statistic: answers with ``outcome`` (``correct``, ``wrong``) per item, arm 6 minus
    arm ``other`` (x items = the difference in such answers); None without items or when
    ``other`` was not run."""

    def gap(items: Sequence[Mapping[int, Row]]) -> float | None:
        if not items or not _all_have(items, other):
            return None
        return sum(
            (row_outcome(i[6]) == outcome) - (row_outcome(i[other]) == outcome) for i in items
        ) / len(items)

    return gap


right_gap = outcome_gap(CORRECT, 1)
"""Right answers per item, arm 6 minus arm 1."""


def abstention(items: Sequence[Mapping[int, Row]]) -> float | None:
    """Share of unanswerable items on which arm 6 abstained."""
    unanswerable = [i for i in items if i[6].get("answerable") is False]
    if not unanswerable:
        return None
    return sum(row_outcome(i[6]) == ABSTAINED for i in unanswerable) / len(unanswerable)


def width_gap(items: Sequence[Mapping[int, Row]]) -> float | None:
    """Accuracy of arm 6's answers at width >= 2 minus at width 1; None without both."""
    by_width: dict[bool, list[bool]] = {False: [], True: []}
    for item in items:
        row, result = item[6], row_outcome(item[6])
        width = row.get("width")
        if result in (CORRECT, WRONG) and isinstance(width, int) and width >= 1:
            by_width[width >= 2].append(result == CORRECT)
    if not by_width[False] or not by_width[True]:
        return None
    wide, narrow = by_width[True], by_width[False]
    return sum(wide) / len(wide) - sum(narrow) / len(narrow)


def ratio_gap(other: int) -> Statistic:
    """The statistic: arm 6's right answers per wrong one minus arm ``other``'s, over the
    same items; None when either arm has no wrong answer (the ratio is then unbounded) or
    ``other`` was not run."""

    def gap(items: Sequence[Mapping[int, Row]]) -> float | None:
        if not _all_have(items, other):
            return None
        ratios = []
        for arm in (6, other):
            counts = arm_counts(items, arm)
            if not counts["wrong"]:
                return None
            ratios.append(counts["right"] / counts["wrong"])
        return ratios[0] - ratios[1]

    return gap


def wrong_gap(other: int) -> Statistic:
    """The statistic: wrong answers per item, arm 6 minus arm ``other`` (negative: arm 6 is
    wrong less often); None when ``other`` was not run."""
    return outcome_gap(WRONG, other)


COMPARISONS: dict[str, tuple[str, Statistic, bool]] = {
    "ratio_1": ("arm 6 - arm 1 right answers per wrong one", ratio_gap(1), False),
    "ratio_7": ("arm 6 - arm 7 right answers per wrong one", ratio_gap(7), False),
    "wrong_1": ("arm 6 - arm 1 wrong answers per item (%)", wrong_gap(1), True),
    "wrong_7": ("arm 6 - arm 7 wrong answers per item (%)", wrong_gap(7), True),
}
"""name -> (what it compares, the statistic, whether it reads as a percentage)."""


GOALS: dict[str, tuple[str, Statistic, float]] = {
    "coverage": ("arm 6 answers >= 50% of answerable items", coverage, 0.5),
    "selective": ("arm 6 - arm 7 accuracy at matched coverage >= +10 pp", selective_gap, 0.1),
    "right": ("arm 6 - arm 1 right answers per item >= 0", right_gap, 0.0),
    "abstain": ("arm 6 abstains on >= 80% of unanswerable items", abstention, 0.8),
    "width": ("accuracy at width >= 2 minus width 1 > 0", width_gap, 1e-9),
}
"""name -> (what it asks, the statistic, the threshold the statistic must reach)."""


def verdict(estimate: Mapping[str, float | None], threshold: float) -> str:
    """``shown`` (the whole interval meets the threshold), ``met`` (the estimate does),
    ``not met``, or ``not measured`` (undefined on these items)."""
    value, low = estimate["value"], estimate["low"]
    if value is None:
        return "not measured"
    if low is not None and low >= threshold:
        return "shown"
    return "met" if value >= threshold else "not met"


def arm_counts(items: Sequence[Mapping[int, Row]], arm: int) -> dict[str, int]:
    """Right, wrong and other (abstained, no answer, error) outcomes of one arm."""
    outcomes = [row_outcome(i[arm]) for i in items]
    right, wrong = outcomes.count(CORRECT), outcomes.count(WRONG)
    return {"right": right, "wrong": wrong, "other": len(outcomes) - right - wrong}


def part_counts(items: Items) -> dict[str, Any]:
    """One part of a pooled table (a folder): its item count and each arm's counts."""
    rows = list(items.values())
    arms = {arm: arm_counts(rows, arm) for arm in COMPARED_ARMS if all(arm in i for i in rows)}
    return {"items": len(rows), "arms": arms}


def goal_table(
    items: Items,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    parts: Mapping[str, Items] | None = None,
) -> dict[str, Any]:
    """Every goal's estimate, interval and verdict, and each arm's counts, for ``items``;
    with ``parts`` (label -> the items of one folder), also each part's arm counts, so a
    pooled test shows where its answers came from."""
    pooled = list(items.values())
    goals = {}
    for name, (asks, statistic, threshold) in GOALS.items():
        estimate = interval(pooled, statistic, resamples=resamples)
        goals[name] = {"asks": asks, **estimate, "verdict": verdict(estimate, threshold)}
    comparisons = {
        name: {"asks": asks, "percent": percent, **interval(pooled, stat, resamples=resamples)}
        for name, (asks, stat, percent) in COMPARISONS.items()
    }
    table: dict[str, Any] = {
        **part_counts(items),
        "answerable": len(_answerable(pooled)),
        "goals": goals,
        "comparisons": comparisons,
    }
    if parts:
        table["parts"] = {label: part_counts(part) for label, part in parts.items()}
    return table


BASELINE = 0
"""The arm number a baseline's rows take inside a comparison (no recorded arm is 0)."""


def baseline_comparison(
    items: Items, baseline: Mapping[str, Row], *, resamples: int = BOOTSTRAP_RESAMPLES
) -> dict[str, Any]:
    """Arm 6 of ``items`` against another recording's rows (``baseline``: item id -> row, for
    example one greedy reasoned answer per item, or arm 6 replayed with fewer calls), paired
    on the items both hold: each side's counts, and the paired differences in right answers
    per wrong one, right answers per item and wrong answers per item, with their intervals."""
    paired = [
        {6: rows[6], BASELINE: baseline[item_id]}
        for item_id, rows in sorted(items.items())
        if item_id in baseline and 6 in rows
    ]
    return {
        "items": len(paired),
        "arm6": arm_counts(paired, 6),
        "baseline": arm_counts(paired, BASELINE),
        "ratio": interval(paired, ratio_gap(BASELINE), resamples=resamples),
        "right": interval(paired, outcome_gap(CORRECT, BASELINE), resamples=resamples),
        "wrong": interval(paired, outcome_gap(WRONG, BASELINE), resamples=resamples),
    }


def baseline_spec(spec: str) -> tuple[list[Path], int]:
    """``FOLDER[,FOLDER...][:ARM]`` -> (the folders, ARM), arm 7 when none is named."""
    folders, colon, arm = spec.rpartition(":")
    if not (colon and arm.isdigit()):
        folders, arm = spec, "7"
    return [Path(folder) for folder in folders.split(",") if folder], int(arm)


def baseline_rows(spec: str) -> tuple[str, dict[str, Row]]:
    """``FOLDER[,FOLDER...][:ARM]`` -> (a label, item id -> that arm's row, the folders'
    items pooled)."""
    folders, arm = baseline_spec(spec)
    rows = {
        item_id: arms[arm]
        for folder in folders
        for item_id, arms in _read_folder(folder, (arm,), 0).items()
    }
    return f"{'+'.join(folder.name for folder in folders)} arm {arm}", rows


def folder_and_skip(spec: str, default: int) -> tuple[Path, int]:
    """``FOLDER@N`` -> (FOLDER, N); a plain folder keeps ``default`` (``--skip``)."""
    folder, at, count = spec.rpartition("@")
    if at and count.isdigit():
        return Path(folder), int(count)
    return Path(spec), default


def recorded_arms(folders: Sequence[Path]) -> tuple[int, ...]:
    """The compared arms some folder recorded (has a result file for). An arm no folder
    recorded (a recording of arms 1 and 6 only) is left out of the pairing, so its goals read
    "not measured" instead of the whole table pairing no item; an item that lacks an arm its
    folders did record is still left out."""
    return tuple(
        arm for arm in COMPARED_ARMS if any(raw_path(folder, arm).is_file() for folder in folders)
    )


def pooled_table(
    folders: Sequence[tuple[Path, int]], baselines: Sequence[str] = ()
) -> dict[str, Any]:
    """The goal table of several folders' items pooled, each folder without its first N
    items (``(folder, N)``), with one part per folder labelled by `folder_labels` (and
    ``@N``), and one :func:`baseline_comparison` per ``FOLDER[:ARM]`` of ``baselines``. Each
    folder is read once."""
    read = [_read_folder(d, COMPARED_ARMS, n) for d, n in folders]
    labels = folder_labels([d for d, _ in folders])
    arms = recorded_arms([d for d, _ in folders])
    parts = {
        f"{label}@{n}" if n else label: _paired([rows], arms)
        for label, (_, n), rows in zip(labels, folders, read, strict=True)
    }
    items = _paired(read, arms)
    table = goal_table(items, parts=parts)
    if baselines:
        table["baselines"] = {
            label: baseline_comparison(items, rows) for label, rows in map(baseline_rows, baselines)
        }
    return table


def add_flags(parser: argparse.ArgumentParser) -> None:
    """``eval goal``'s flags."""
    parser.add_argument(
        "runs",
        nargs="+",
        help="evaluation or replay folders; FOLDER@N leaves out that folder's first N items",
    )
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="FOLDER[,FOLDER...][:ARM]",
        help="also compare arm 6 with those folders' arm (default 7) on the items both hold, "
        "e.g. one greedy reasoned answer recorded apart, or arm 6 replayed with fewer calls",
    )
    parser.add_argument(
        "--skip", type=int, default=0, help="leave out each folder's first N items (held out)"
    )


def cli(args: argparse.Namespace, prog: str) -> int:
    """``eval goal``: the goal table of the folders' items pooled."""
    folders = [folder_and_skip(spec, max(args.skip, 0)) for spec in args.runs]
    named = [d for d, _ in folders] + [d for b in args.baseline for d in baseline_spec(b)[0]]
    missing = [str(d) for d in named if not (d / "raw").is_dir()]
    if missing:
        print(f"error: no raw/ results in {', '.join(missing)}", file=sys.stderr)
        return 2
    table = pooled_table(folders, args.baseline)
    print(json.dumps(table, indent=2, sort_keys=True) if args.json else render_goal_table(table))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evals.goal``: the same as ``logic-graph eval goal``."""
    return run_alias("evals.goal", add_flags, cli, argv)


if __name__ == "__main__":
    raise SystemExit(main())
