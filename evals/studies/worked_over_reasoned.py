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
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from evals.bank import bank_records
from evals.datasets.loaders import item_to_task, load_dataset
from evals.goal import baseline_comparison
from evals.reporting import comparison_lines
from evals.results import latest_rows, raw_path, read_rows
from evals.score import scored_row
from orchestrator.api import RunConfig, run_task
from orchestrator.llm import ChatMessage
from orchestrator.llm.testing import ScriptedClient, ScriptedKwargs
from orchestrator.reply import REASONED_SYSTEM

REASONED_ARM = 7


def recorded_replies(
    bank: Path, arm: int = REASONED_ARM, subject: str | None = None
) -> dict[str, str]:
    """Item id -> the text of the first reply of ``arm`` the bank holds for it (for arm 6,
    of its run ``subject``, such as ``"r1"``)."""
    replies: dict[str, str] = {}
    for record in bank_records(bank):
        tags = record.get("tags") or {}
        if tags.get("eval_arm") != arm or not isinstance(record.get("text"), str):
            continue
        if subject is None or tags.get("subject") == subject:
            replies.setdefault(str(tags.get("eval_item")), record["text"])
    return replies


ONE_CALL = RunConfig(
    n=1, k=1, budget_calls=1, temperature=0.0, seed=1, interrogation_shape="reasoned"
)
"""The reasoned shape with one greedy call: the replies are the recorded greedy ones."""
REWORDED = replace(
    ONE_CALL, n=2, budget_calls=2, greedy_first=True, adaptive=True, diversity="reword"
)
"""Run 2, greedy and asked in the worked shape's words, only when run 1 is not grounded."""


def checked_row(item: Mapping[str, Any], reply: str, worked: str | None = None) -> dict[str, Any]:
    """The result row of the reasoned-shape loop run on ``item`` with ``reply`` as the model's
    answer to the reasoned prompt, and with ``worked`` (when given) as its answer to the worked
    shape's prompt in a reworded second run: the fields :func:`evals.score.row_outcome` reads,
    and the calls made."""

    def script(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        asked_reasoned = messages[0]["content"] == REASONED_SYSTEM
        return reply if asked_reasoned or worked is None else worked

    config = ONE_CALL if worked is None else REWORDED
    report = run_task(
        item_to_task(item), client=ScriptedClient(script), model="bank", config=config
    )
    row = scored_row(item, report["answer"], report["refused"])
    return {**row, "n_calls": len(report["calls"])}


def compare(
    bank: Path,
    dataset: str,
    limit: int | None = None,
    skip: int = 0,
    reword_bank: Path | None = None,
) -> dict[str, Any]:
    """The replies as recorded (arm 7's rows) against the same replies through the checks,
    paired on the items the bank holds among the data set's first ``limit`` less its first
    ``skip``. With ``reword_bank``, a second run answers from its greedy worked-shape replies
    (arm 6's run r1 there) when the first is not grounded."""
    replies = recorded_replies(bank)
    worked = recorded_replies(reword_bank, 6, "r1") if reword_bank is not None else {}
    chosen = load_dataset(dataset, limit=limit)[skip:]
    items = {item["id"]: item for item in chosen if item["id"] in replies}
    if reword_bank is not None:
        items = {item_id: item for item_id, item in items.items() if item_id in worked}
    checked = {
        item_id: {6: checked_row(item, replies[item_id], worked.get(item_id))}
        for item_id, item in items.items()
    }
    recorded = latest_rows(read_rows(raw_path(bank, REASONED_ARM)))
    found = baseline_comparison(checked, {k: v for k, v in recorded.items() if k in items})
    found["calls_per_item"] = sum(row[6]["n_calls"] for row in checked.values()) / max(
        len(checked), 1
    )
    return found


def render(found: Mapping[str, Any]) -> str:
    """The comparison as a few plain lines."""
    head = f"items: {found['items']}, calls per item through the checks: "
    head += f"{found['calls_per_item']:.2f}"
    return "\n".join([head, *comparison_lines("through the checks", "as recorded", found)])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.studies.worked_over_reasoned", description=__doc__
    )
    parser.add_argument("bank", type=Path, help="a bank of greedy reasoned answers (arm 7)")
    parser.add_argument("--dataset", default="math", help="the data set the bank answered")
    parser.add_argument("--limit", type=int, help="only the data set's first N items")
    parser.add_argument("--skip", type=int, default=0, help="leave out its first N items")
    parser.add_argument(
        "--reword",
        type=Path,
        metavar="BANK",
        help="a bank whose arm-6 run r1 holds greedy worked-shape replies: a second, reworded "
        "run answers from them when the first is not grounded",
    )
    args = parser.parse_args(argv)
    print(render(compare(args.bank, args.dataset, args.limit, args.skip, args.reword)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
