"""One table of what each arm answered, across evals runs: accuracy, abstention, why arm 6 refused.

    python benchmarks/answer_table.py before=/tmp/runs/before-multihop after=runs/after-multihop

Each argument is ``LABEL=RUN_DIR`` (an ``evals.run`` results folder). Per label and arm it
prints `evals.summary.abstention_metrics`: correct answers, answered items and coverage,
accuracy on answered items, abstentions, on unanswerable items the abstentions (right) and
answers (wrong), and the net score. For arm 6 it adds the refusal reasons and,
from each item's report (``arm6/<item>/report.json``), the interrogation runs by parse outcome
and the rejected citations by reason. Numbers come from the raw files only; nothing is called.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from evals.summary import abstention_metrics


def rows(run: Path, arm: int) -> list[dict[str, Any]]:
    path = run / "raw" / f"arm{arm}.jsonl"
    if not path.is_file():
        return []
    latest: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        latest[row["id"]] = row  # a resumed run appends; the last line of an item counts
    return list(latest.values())


def arm6_details(run: Path, items: list[dict[str, Any]]) -> tuple[Counter, Counter, Counter]:
    """(refusal reasons, run parse outcomes, rejected citations by reason)."""
    refusals = Counter(r["extra"].get("refusal_reason") for r in items if r["refused"])
    outcomes: Counter = Counter()
    rejected: Counter = Counter()
    for row in items:
        report_path = run / "arm6" / row["id"] / "report.json"
        if not report_path.is_file():
            continue
        report = json.loads(report_path.read_text())
        outcomes.update(r["outcome"] for r in report["runs"])
        rejected.update(c["reason"] for c in report.get("rejected_citations", []))
        rejected["(accepted givens)"] += sum(1 for c in report.get("citations", []) if c["ok"])
    return refusals, outcomes, rejected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="LABEL=RUN_DIR")
    args = parser.parse_args()
    print(
        "| run | arm | items | correct answers | answered (coverage) | acc. on answered "
        "| abstained | unanswerable: abstained / answered | net score |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
    notes: list[str] = []
    for spec in args.runs:
        label, _, folder = spec.partition("=")
        run = Path(folder)
        for arm in range(1, 8):
            items = rows(run, arm)
            if not items:
                continue
            m = abstention_metrics(items)
            print(
                f"| {label} | {arm} | {m['items']} | {m['correct_answers']} "
                f"| {m['answered']} ({_pct(m['coverage'])}) | {_pct(m['accuracy_answered'])} "
                f"| {m['abstained']} | {m['correct_abstentions']} / {m['wrong_on_unanswerable']} "
                f"| {m['net_score']:+d} |"
            )
            if arm == 6:
                refusals, outcomes, rejected = arm6_details(run, items)
                notes.append(
                    f"- {label}, arm 6: refusals {dict(refusals)}; interrogation runs "
                    f"{dict(outcomes)}; givens {dict(rejected)}"
                )
    print()
    print("\n".join(notes))
    return 0


def _pct(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.0%}"


if __name__ == "__main__":
    raise SystemExit(main())
