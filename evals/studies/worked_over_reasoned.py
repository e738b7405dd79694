"""The worked shape's checks over replies to the reasoned prompt (docs/results/worked-shape.md,
claim A).

    python -m evals.studies.worked_over_reasoned BANK [--dataset math] [--limit N] [--skip N]

BANK holds one greedy reasoned answer per item (``evals.run --arms 7 --budget-calls 1 --temp
0``). Each item's recorded reply is handed to the loop in the worked shape with one call (a
scripted client returns it), so the system draws the argument graph from the working the model
wrote for the reasoned prompt and refuses what the checks do not carry. The script prints right
/ wrong / other for the replies as recorded and as the checks leave them, with the paired
differences of :func:`evals.goal.baseline_comparison` (95% percentile bootstrap over items). No
model is started: the replies are the bank's.

What it is not: a product setting. The worked shape sends its own prompt; nothing sends the
reasoned prompt and reads the reply as a working. This measures whether that setting is worth
building.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.datasets.loaders import item_to_task, load_dataset
from evals.goal import baseline_comparison
from evals.results import latest_rows, raw_path, read_rows
from evals.score import is_answerable, score
from orchestrator.api import RunConfig, run_task
from orchestrator.llm.testing import ScriptedClient

REASONED_ARM = 7


def recorded_replies(bank: Path) -> dict[str, str]:
    """Item id -> the text of the first arm-7 reply the bank holds for it."""
    replies: dict[str, str] = {}
    with (bank / "bank.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            tags = record.get("tags") or {}
            if tags.get("eval_arm") == REASONED_ARM and isinstance(record.get("text"), str):
                replies.setdefault(str(tags.get("eval_item")), record["text"])
    return replies


def checked_row(item: Mapping[str, Any], reply: str) -> dict[str, Any]:
    """The result row of the worked-shape loop run on ``item`` with ``reply`` as the model's
    one answer: the fields :func:`evals.score.row_outcome` reads."""
    client = ScriptedClient(lambda model, messages, kwargs: reply)
    config = RunConfig(
        n=1, k=1, budget_calls=1, temperature=0.0, seed=1, interrogation_shape="worked"
    )
    report = run_task(item_to_task(item), client=client, model="bank", config=config)
    answer = report["answer"]
    return {
        "answer": answer,
        "refused": report["refused"],
        "correct": bool(score(item, answer)["correct"]) if answer is not None else False,
        "answerable": is_answerable(item),
    }


def compare(bank: Path, dataset: str, limit: int | None = None, skip: int = 0) -> dict[str, Any]:
    """The replies as recorded (arm 7's rows) against the same replies through the checks,
    paired on the items the bank holds among the data set's first ``limit`` less its first
    ``skip``."""
    replies = recorded_replies(bank)
    chosen = load_dataset(dataset, limit=limit)[skip:]
    items = {item["id"]: item for item in chosen if item["id"] in replies}
    checked = {item_id: {6: checked_row(item, replies[item_id])} for item_id, item in items.items()}
    recorded = latest_rows(read_rows(raw_path(bank, REASONED_ARM)))
    return baseline_comparison(checked, {k: v for k, v in recorded.items() if k in items})


def render(found: Mapping[str, Any]) -> str:
    """The comparison as a few plain lines."""

    def counts(side: Mapping[str, int]) -> str:
        return f"{side['right']} right / {side['wrong']} wrong / {side['other']} other"

    def gap(part: Mapping[str, float | None], scale: float = 1.0) -> str:
        if part["value"] is None or part["low"] is None or part["high"] is None:
            return "undefined"
        return (
            f"{part['value'] * scale:+.2f} "
            f"[{part['low'] * scale:+.2f}, {part['high'] * scale:+.2f}]"
        )

    return "\n".join(
        [
            f"items: {found['items']}",
            f"replies as recorded:   {counts(found['baseline'])}",
            f"through the checks:    {counts(found['arm6'])}",
            f"right per wrong, checked minus recorded: {gap(found['ratio'])}",
            f"right answers per 100 items, checked minus recorded: {gap(found['right'], 100)}",
            f"wrong answers per 100 items, checked minus recorded: {gap(found['wrong'], 100)}",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.studies.worked_over_reasoned", description=__doc__
    )
    parser.add_argument("bank", type=Path, help="a bank of greedy reasoned answers (arm 7)")
    parser.add_argument("--dataset", default="math", help="the data set the bank answered")
    parser.add_argument("--limit", type=int, help="only the data set's first N items")
    parser.add_argument("--skip", type=int, default=0, help="leave out its first N items")
    args = parser.parse_args(argv)
    print(render(compare(args.bank, args.dataset, args.limit, args.skip)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
