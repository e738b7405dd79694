"""The study that reads recorded reasoned replies as workings (worked_over_reasoned)."""

from __future__ import annotations

import json
from pathlib import Path

from evals.studies import worked_over_reasoned as study

ITEMS = [
    {
        "id": "m-1",
        "kind": "math",
        "dataset": "math",
        "question": "Ana buys 4 pens at $3 each. How much does she pay?",
        "answer": "12",
        "documents": [],
        "paragraph_ids": [],
        "supporting_ids": [],
        "answer_aliases": [],
        "meta": {},
    },
    {
        "id": "m-2",
        "kind": "math",
        "dataset": "math",
        "question": "Ben has 10 apples and eats 4. How many are left?",
        "answer": "6",
        "documents": [],
        "paragraph_ids": [],
        "supporting_ids": [],
        "answer_aliases": [],
        "meta": {},
    },
]
# A working whose one calculation starts from the question's numbers, and one that ends on an
# answer no step reached (the model's 7 comes from nowhere).
REPLIES = {"m-1": "She pays 4 * 3 = 12 dollars.\nANSWER: 12", "m-2": "He has 7 left.\nANSWER: 7"}
# Replies to the worked shape's prompt, for the reworded second run.
WORKED = {"m-1": "4 * 3 = 13\nANSWER: 13", "m-2": "10 - 4 = 6\nANSWER: 6"}


def write_bank(root: Path) -> Path:
    bank = root / "bank"
    (bank / "raw").mkdir(parents=True)
    records = [
        {"key": f"k-{item_id}", "text": text, "tags": {"eval_arm": 7, "eval_item": item_id}}
        for item_id, text in REPLIES.items()
    ]
    records += [
        {
            "key": f"w-{item_id}",
            "text": text,
            "tags": {"eval_arm": 6, "eval_item": item_id, "subject": "r1"},
        }
        for item_id, text in WORKED.items()
    ]
    (bank / "bank.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    rows = [
        {"id": "m-1", "arm": 7, "answer": "12", "correct": True, "refused": False},
        {"id": "m-2", "arm": 7, "answer": "7", "correct": False, "refused": False},
    ]
    (bank / "raw" / "arm7.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return bank


def test_a_working_the_checks_carry_stays_and_an_answer_from_nowhere_is_refused(
    tmp_path: Path,
) -> None:
    dataset = tmp_path / "items.jsonl"
    dataset.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    found = study.compare(write_bank(tmp_path), str(dataset))
    assert found["items"] == 2
    assert found["baseline"] == {"right": 1, "wrong": 1, "other": 0}
    assert found["arm6"] == {"right": 1, "wrong": 0, "other": 1}
    assert "through the checks: 1 right / 0 wrong / 1 other" in study.render(found)


def test_a_reworded_second_run_is_asked_only_where_the_first_is_not_grounded(
    tmp_path: Path,
) -> None:
    dataset = tmp_path / "items.jsonl"
    dataset.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    bank = write_bank(tmp_path)
    found = study.compare(bank, str(dataset), reword_bank=bank)
    # m-1 stands on its first run (its false worked reply is never asked for); m-2's second
    # run, in the worked shape's words, carries the right answer.
    assert found["arm6"] == {"right": 2, "wrong": 0, "other": 0}
    assert found["calls_per_item"] == 1.5
