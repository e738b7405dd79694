"""A small evaluation folder for the table tests: four items, arms 1, 6 and 7.

Item ``q3`` is unanswerable. Arm 6 answers two items (widths 1 and 2), refuses one and abstains
rightly on ``q3``; arm 1 answers everything; arm 7 ties once. Arm 6's item reports carry
interrogation outcomes and rejected givens for the answer table. A second folder, ``b``, holds
the same items with two of arm 6's outcomes changed, for the flips table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ITEMS = ("q0", "q1", "q2", "q3")


def row(item: str, arm: int, outcome: str, **extra: Any) -> dict[str, Any]:
    """A result row with the fields the tables read."""
    answerable = item != "q3"
    answered = outcome in ("correct", "wrong")
    return {
        "id": item,
        "arm": arm,
        "arm_name": {1: "single pass", 6: "full orchestrator", 7: "self-consistency"}[arm],
        "kind": "qa",
        "answer": f"answer {item}" if answered else None,
        "answerable": answerable,
        "correct": outcome == "correct" or (outcome == "abstained" and not answerable),
        "outcome": outcome,
        "f1": 1.0 if outcome == "correct" else 0.0,
        "refused": outcome == "abstained",
        "answer_format": "line",
        "error": None,
        "tokens": 100 * arm,
        "cost_usd": 0.0,
        "cost_usd_known": 0.0,
        "latency_s": 1.5,
        "n_calls": 3 if arm != 1 else 1,
        "extra": {},
        **extra,
    }


ARM6 = {
    "q0": row("q0", 6, "correct", width=2, confidence=2.0),
    "q1": row("q1", 6, "wrong", width=1, confidence=1.0),
    "q2": row("q2", 6, "abstained", width=None, extra={"refusal_reason": "no_grounded_conclusion"}),
    "q3": row("q3", 6, "abstained", width=None, extra={"refusal_reason": "runs_found_no_answer"}),
}
ARM1 = {
    i: row(i, 1, o) for i, o in zip(ITEMS, ("correct", "correct", "wrong", "wrong"), strict=True)
}
ARM7 = {
    "q0": row("q0", 7, "correct", confidence=1.0),
    "q1": row("q1", 7, "abstained", confidence=0.5, extra={"outcome": "tie"}),
    "q2": row("q2", 7, "correct", confidence=0.67),
    "q3": row("q3", 7, "wrong", confidence=0.67),
}
CHANGED = {
    "q1": row("q1", 6, "abstained", width=None, extra={"refusal_reason": "no_grounded_conclusion"}),
    "q2": row("q2", 6, "correct", width=1, confidence=1.0),
}


def write_run(folder: Path, arms: dict[int, dict[str, dict[str, Any]]]) -> Path:
    """An evaluation folder: run.json, raw/arm<N>.jsonl and arm 6's item reports."""
    (folder / "raw").mkdir(parents=True)
    config = {"dataset": "multihop", "model": "local", "settings": {"n": 3}, "prompts": {}}
    invocation = {"started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:01:00Z"}
    meta = {"config": config, "invocations": [{**invocation, "calls": 9, "spent_usd": 0.0}]}
    (folder / "run.json").write_text(json.dumps(meta))
    for arm, rows in arms.items():
        lines = [json.dumps(r) for r in rows.values()]
        (folder / "raw" / f"arm{arm}.jsonl").write_text("\n".join(lines) + "\n")
    for item in arms.get(6, {}):
        report = {
            "runs": [{"outcome": "strict"}, {"outcome": "salvaged" if item == "q1" else "strict"}],
            "rejected_citations": [{"reason": "not_in_document"}] if item == "q2" else [],
            "citations": [{"ok": True}, {"ok": item != "q0"}],
        }
        (folder / "arm6" / item).mkdir(parents=True)
        (folder / "arm6" / item / "report.json").write_text(json.dumps(report))
    return folder


def write_runs(root: Path) -> tuple[Path, Path]:
    """Folders ``a`` (the rows above) and ``b`` (arm 6 changed on q1 and q2)."""
    a = write_run(root / "a", {1: ARM1, 6: ARM6, 7: ARM7})
    b = write_run(root / "b", {1: ARM1, 6: {**ARM6, **CHANGED}, 7: ARM7})
    return a, b
