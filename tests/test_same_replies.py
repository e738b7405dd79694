"""The baselines that read arm 6's own replies (evals.studies.same_replies)."""

from __future__ import annotations

import json
from pathlib import Path

from evals.studies import same_replies as study

ITEMS = [
    {
        "id": f"m-{n}",
        "kind": "math",
        "dataset": "math",
        "question": question,
        "answer": answer,
        "documents": [],
        "paragraph_ids": [],
        "supporting_ids": [],
        "answer_aliases": [],
        "meta": {},
    }
    for n, (question, answer) in enumerate(
        [("Ana buys 4 pens at $3 each. What does she pay?", "12"), ("10 - 4 is?", "6")], 1
    )
]
# m-1: arm 6's first run answered (one run); m-2: its first run failed the checks and a second,
# reworded run answered differently, so the vote over the two replies is a tie.
RUNS = {"m-1": ["4 * 3 = 12\nANSWER: 12"], "m-2": ["ANSWER: 7", "10 - 4 = 6\nANSWER: 6"]}
ARM6 = [("m-1", "12", True), ("m-2", "6", True)]
ARM1 = [("m-1", "12", True), ("m-2", "7", False)]


def write_folder(root: Path) -> Path:
    (root / "raw").mkdir(parents=True)
    records = [
        {
            "key": f"{item_id}-{index}",
            "role": "interrogation",
            "text": text,
            "tags": {"eval_arm": 6, "eval_item": item_id, "subject": f"r{index}"},
        }
        for item_id, texts in RUNS.items()
        for index, text in enumerate(texts, 1)
    ]
    # A verification call of arm 6 is no run's reply and must be left out.
    records.append(
        {
            "key": "v",
            "role": "verification",
            "text": "ANSWER: 7",
            "tags": {"eval_arm": 6, "eval_item": "m-1", "subject": "r1"},
        }
    )
    (root / "bank.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    for arm, rows in ((6, ARM6), (1, ARM1)):
        lines = [
            json.dumps({"id": i, "arm": arm, "answer": a, "correct": c, "refused": False})
            for i, a, c in rows
        ]
        (root / "raw" / f"arm{arm}.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_the_greedy_baseline_reads_run_one_and_the_vote_reads_every_run(tmp_path: Path) -> None:
    dataset = tmp_path / "items.jsonl"
    dataset.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    found = study.compare(write_folder(tmp_path / "rec"), str(dataset))
    assert study.run_replies(tmp_path / "rec") == RUNS
    assert found["runs_per_item"] == 1.5
    assert found["greedy"]["baseline"] == {"right": 1, "wrong": 1, "other": 0}
    assert found["vote"]["baseline"] == {"right": 1, "wrong": 0, "other": 1}
    assert found["arm 1"]["baseline"] == {"right": 1, "wrong": 1, "other": 0}
    assert found["vote"]["arm6"] == {"right": 2, "wrong": 0, "other": 0}
    text = study.render(found)
    assert "interrogation runs per item (arm 6): 1.50" in text
    assert "vote (2 items paired)" in text
