"""One table of what each arm answered, across evals runs: accuracy, abstention, why arm 6 refused.

    python -m evals.studies.answer_table before=/tmp/runs/before-multihop after=runs/after-multihop

Each argument is ``LABEL=RUN_DIR`` (an evaluation results folder). Per label and arm it
prints `evals.metrics.abstention_metrics`: correct answers, answered items and coverage,
accuracy on answered items, abstentions, on unanswerable items the abstentions (right) and
answers (wrong), and the net score. For arm 6 it adds the refusal reasons and,
from each item's report (``arm6/<item>/report.json``), the interrogation runs by parse outcome
and the rejected citations by reason. Numbers come from the raw files only; nothing is called.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from evals.reporting import Arm6Details, answer_row, arm6_note, render_answer_table
from evals.results import ResultRow, latest_rows, raw_path, read_rows


def arm6_details(run: Path, rows: Sequence[ResultRow]) -> Arm6Details:
    """Arm 6's refusal reasons, and from its item reports the runs by parse outcome and the
    givens by why they were rejected."""
    refusals = Counter(r.get("extra", {}).get("refusal_reason") for r in rows if r.get("refused"))
    outcomes: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    for row in rows:
        report_path = run / "arm6" / row["id"] / "report.json"
        if not report_path.is_file():
            continue
        report = json.loads(report_path.read_text())
        outcomes.update(r["outcome"] for r in report["runs"])
        rejected.update(c["reason"] for c in report.get("rejected_citations", []))
        rejected["(accepted givens)"] += sum(1 for c in report.get("citations", []) if c["ok"])
    return Arm6Details(refusals, outcomes, rejected)


def answer_table(runs: Sequence[tuple[str, Path]]) -> str:
    """The table over every (label, folder) and arm 1-7 that has rows, with arm 6's notes."""
    lines: list[str] = []
    notes: list[str] = []
    for label, run in runs:
        for arm in range(1, 8):
            rows = list(latest_rows(read_rows(raw_path(run, arm))).values())
            if not rows:
                continue
            lines.append(answer_row(label, arm, rows))
            if arm == 6:
                notes.append(arm6_note(label, arm6_details(run, rows)))
    return render_answer_table(lines, notes)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table of the ``LABEL=RUN_DIR`` arguments."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="LABEL=RUN_DIR")
    args = parser.parse_args(argv)
    runs = [(label, Path(folder)) for label, _, folder in (s.partition("=") for s in args.runs)]
    print(answer_table(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
