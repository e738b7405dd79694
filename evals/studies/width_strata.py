"""G4 two ways: arm 6's answers by argument width and by the design's Menger path width.

    python -m evals.studies.width_strata FOLDER [FOLDER ...]

Each FOLDER is an ``evals.run`` or ``evals.replay`` folder holding arm 6's rows and reports
(``raw/arm6.jsonl``, ``arm6/<item>/report.json``); a committed bank holds no reports, so replay
it first. G4 asks whether answers with two or more independent supports are right more often
than answers with one. The project counts *arguments* (``width``: claim sets that share no
claim, :mod:`graph_server.arguments`); the design counted node-disjoint *paths* from the
givens (``path_width``, Menger), which a claim resting jointly on two sentences already
reaches. For each folder, and pooled over all, the script prints right / answered at width 1
and at width >= 2 under each count, and the difference in accuracy with a 95% percentile
bootstrap interval (each stratum resampled on its own, 10,000 resamples, seed 0). No model is
started.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.results import latest_rows, raw_path, read_rows
from evals.score import CORRECT, WRONG, row_outcome
from evals.stats import BOOTSTRAP_RESAMPLES, LEVEL

ARM6 = 6
WIDTHS = ("width", "path_width")
"""The two counts: arguments that share no claim, and the design's node-disjoint paths."""


def answered_widths(folder: Path) -> list[dict[str, Any]]:
    """One record per item arm 6 answered: ``right`` and both widths of the chosen answer,
    read from its report (items whose report is missing are left out)."""
    found = []
    for item_id, row in sorted(latest_rows(read_rows(raw_path(folder, ARM6))).items()):
        outcome = row_outcome(row)
        report = folder / f"arm{ARM6}" / item_id / "report.json"
        if outcome not in (CORRECT, WRONG) or not report.is_file():
            continue
        chosen = json.loads(report.read_text(encoding="utf-8"))["chosen"]
        found.append({"right": outcome == CORRECT, **{w: chosen.get(w) or 0 for w in WIDTHS}})
    return found


def width_gap(answers: Sequence[Mapping[str, Any]], width: str) -> dict[str, Any]:
    """Right / answered at ``width`` 1 and >= 2, and accuracy at >= 2 minus at 1 with its
    interval (None where a stratum is empty)."""
    narrow = [a["right"] for a in answers if a[width] == 1]
    wide = [a["right"] for a in answers if a[width] >= 2]
    found: dict[str, Any] = {
        "narrow": (sum(narrow), len(narrow)),
        "wide": (sum(wide), len(wide)),
        "gap": None,
        "interval": None,
    }
    if not narrow or not wide:
        return found
    found["gap"] = sum(wide) / len(wide) - sum(narrow) / len(narrow)
    rng = random.Random(0)
    gaps = sorted(
        sum(rng.choices(wide, k=len(wide))) / len(wide)
        - sum(rng.choices(narrow, k=len(narrow))) / len(narrow)
        for _ in range(BOOTSTRAP_RESAMPLES)
    )
    tail = (1 - LEVEL) / 2
    found["interval"] = (gaps[int(tail * len(gaps))], gaps[int((1 - tail) * len(gaps)) - 1])
    return found


def render(name: str, answers: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per width count for ``answers``."""
    lines = []
    for width in WIDTHS:
        gap = width_gap(answers, width)
        (r1, n1), (r2, n2) = gap["narrow"], gap["wide"]
        shown = "not measurable (a stratum is empty)"
        if gap["gap"] is not None:
            low, high = gap["interval"]
            shown = f"{100 * gap['gap']:+.0f} pp [{100 * low:+.0f}, {100 * high:+.0f}]"
        lines.append(f"{name}  {width:<10}  width 1: {r1}/{n1}  width >= 2: {r2}/{n2}  G4: {shown}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.studies.width_strata", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("folders", type=Path, nargs="+", help="evals.run or evals.replay folders")
    args = parser.parse_args(argv)
    pooled: list[dict[str, Any]] = []
    for folder in args.folders:
        answers = answered_widths(folder)
        pooled += answers
        print("\n".join(render(folder.name, answers)))
    if len(args.folders) > 1:
        print("\n".join(render("pooled", pooled)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
