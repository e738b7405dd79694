"""Arm 6 against the baselines that read its own replies (docs/results/reasoned-shape.md).

    python -m evals.studies.same_replies FOLDER [--dataset math]

FOLDER is a recording of arms 1 and 6 with ``--shape reasoned`` (``evals.run``). In that shape
arm 6's runs send the baselines' own prompts, so two baselines need no calls of their own:

* **one greedy reasoned answer**: the answer line of arm 6's first run, which is greedy and
  asked with prompt ``reasoned``: the reply one greedy call of arm 7 gets;
* **self-consistency at the same calls, with the same diversity**: a plurality vote
  (:func:`evals.arms.vote_on_replies`, arm 7's own decision) over the replies of the runs arm
  6 made for the item, as many as it made, the very texts its checks read.

What differs between them and arm 6 is only how the replies are judged: by the graph checks,
by the answer line, or by a vote. The script prints each side's right / wrong / other and the
paired differences of :func:`evals.goal.baseline_comparison` (95% percentile bootstrap over
items), with arm 1 of the same recording as a third baseline. No model is started.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.arms import vote_on_replies
from evals.bank import bank_records
from evals.datasets.loaders import load_dataset
from evals.goal import baseline_comparison
from evals.reporting import comparison_lines
from evals.results import latest_rows, raw_path, read_rows
from evals.score import scored_row

ARM6 = 6


def run_replies(folder: Path) -> dict[str, list[str]]:
    """Item id -> the texts of arm 6's interrogation replies, in run order (r1, r2 ...)."""
    by_run: dict[str, dict[int, str]] = {}
    for record in bank_records(folder):
        tags = record.get("tags") or {}
        subject = str(tags.get("subject", ""))
        if (
            tags.get("eval_arm") != ARM6
            or record.get("role") != "interrogation"
            or not subject.startswith("r")
            or not subject[1:].isdigit()
        ):
            continue
        runs = by_run.setdefault(str(tags.get("eval_item")), {})
        runs.setdefault(int(subject[1:]), record["text"])
    return {item: [runs[i] for i in sorted(runs)] for item, runs in by_run.items()}


def baselines(
    items: Mapping[str, Mapping[str, Any]], replies: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{"greedy": rows, "vote": rows}``: item id -> the row of the greedy reasoned answer
    (run 1's reply alone) and of the vote over every run's reply, for the items with replies."""
    greedy, vote = {}, {}
    for item_id, texts in replies.items():
        if item_id not in items or not texts:
            continue
        item = items[item_id]
        greedy[item_id] = scored_row(item, *vote_on_replies(texts[:1], item["question"])[:2])
        vote[item_id] = scored_row(item, *vote_on_replies(texts, item["question"])[:2])
    return {"greedy": greedy, "vote": vote}


def compare(folder: Path, dataset: str) -> dict[str, Any]:
    """Arm 6 as recorded against arm 1 and the two baselines above, paired on the items."""
    items = {item["id"]: item for item in load_dataset(dataset)}
    arm6 = {k: {ARM6: row} for k, row in latest_rows(read_rows(raw_path(folder, ARM6))).items()}
    replies = run_replies(folder)
    found: dict[str, Any] = {
        name: baseline_comparison(arm6, rows) for name, rows in baselines(items, replies).items()
    }
    found["arm 1"] = baseline_comparison(arm6, latest_rows(read_rows(raw_path(folder, 1))))
    calls = [len(replies.get(item_id, ())) for item_id in arm6]
    found["runs_per_item"] = sum(calls) / max(len(calls), 1)
    return found


def render(found: Mapping[str, Any]) -> str:
    """The comparisons as plain lines."""
    lines = [f"interrogation runs per item (arm 6): {found['runs_per_item']:.2f}"]
    for name in ("greedy", "vote", "arm 1"):
        lines += [f"\n{name} ({found[name]['items']} items paired)"]
        lines += comparison_lines("arm 6", name, found[name])
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.studies.same_replies", description=__doc__
    )
    parser.add_argument("folder", type=Path, help="a recording of arms 1 and 6, shape reasoned")
    parser.add_argument("--dataset", default="math", help="the data set it answered")
    args = parser.parse_args(argv)
    print(render(compare(args.folder, args.dataset)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
