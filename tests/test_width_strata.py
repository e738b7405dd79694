"""The G4 study: arm 6's answers split by argument width and by Menger path width."""

from __future__ import annotations

import json
from pathlib import Path

from evals.studies import width_strata


def _folder(tmp_path: Path, items: dict[str, tuple[str, int, int]]) -> Path:
    """A replay folder whose arm 6 gave ``outcome`` with ``(width, path_width)`` per item."""
    (tmp_path / "raw").mkdir()
    lines = []
    for item_id, (outcome, width, path_width) in items.items():
        lines.append(json.dumps({"id": item_id, "arm": 6, "outcome": outcome, "width": width}))
        report = tmp_path / "arm6" / item_id / "report.json"
        report.parent.mkdir(parents=True)
        chosen = {"width": width, "path_width": path_width}
        report.write_text(json.dumps({"chosen": chosen}), encoding="utf-8")
    (tmp_path / "raw" / "arm6.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def test_only_answered_items_are_counted_with_both_widths_of_their_chosen_answer(
    tmp_path: Path,
) -> None:
    folder = _folder(
        tmp_path,
        {"a": ("correct", 1, 2), "b": ("wrong", 1, 1), "c": ("abstained", 0, 0)},
    )
    answers = width_strata.answered_widths(folder)
    assert answers == [
        {"right": True, "width": 1, "path_width": 2},
        {"right": False, "width": 1, "path_width": 1},
    ]


def test_the_gap_is_wide_minus_narrow_accuracy_and_unmeasured_without_both_strata() -> None:
    answers = [
        {"right": True, "width": 1, "path_width": 2},
        {"right": True, "width": 1, "path_width": 2},
        {"right": False, "width": 1, "path_width": 1},
        {"right": True, "width": 1, "path_width": 1},
    ]
    by_path = width_strata.width_gap(answers, "path_width")
    assert by_path["narrow"] == (1, 2) and by_path["wide"] == (2, 2)
    assert by_path["gap"] == 0.5
    low, high = by_path["interval"]
    assert low <= 0.5 <= high
    by_argument = width_strata.width_gap(answers, "width")
    assert by_argument["gap"] is None and by_argument["wide"] == (0, 0)
    assert "not measurable" in width_strata.render("set", answers)[0]
