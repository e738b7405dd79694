"""The goal table (evals.goal): each statistic against hand-computed values on tiny inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evals.goal import (
    abstention,
    baseline_spec,
    coverage,
    folder_labels,
    goal_table,
    interval,
    main,
    pool,
    pooled_table,
    ratio_gap,
    right_gap,
    selective_gap,
    verdict,
    width_gap,
    wrong_gap,
)
from evals.reporting import render_goal_table as render


def row(item: str, arm: int, outcome: str, **extra: Any) -> dict[str, Any]:
    return {"id": item, "arm": arm, "outcome": outcome, "answerable": True, **extra}


def item(a1: str, a6: str, a7: str, **arm6: Any) -> dict[int, dict[str, Any]]:
    answerable = arm6.pop("answerable", True)
    return {
        1: row("i", 1, a1, answerable=answerable),
        6: row("i", 6, a6, answerable=answerable, **arm6),
        7: row("i", 7, a7, answerable=answerable),
    }


def test_coverage_is_the_share_of_answerable_items_arm_6_answered() -> None:
    items = [
        item("correct", "correct", "wrong"),
        item("correct", "wrong", "wrong"),
        item("wrong", "abstained", "wrong"),
        item("wrong", "abstained", "wrong"),
        item("wrong", "correct", "wrong", answerable=False),  # not counted
    ]
    assert coverage(items) == 0.5


def test_right_gap_counts_right_answers_per_item_and_abstention_on_unanswerable() -> None:
    items = [
        item("correct", "correct", "wrong"),
        item("wrong", "correct", "wrong"),
        item("correct", "abstained", "wrong"),
        item("wrong", "abstained", "wrong", answerable=False),
        item("wrong", "wrong", "wrong", answerable=False),
    ]
    assert right_gap(items) == (2 - 2) / 5
    assert abstention(items) == 0.5
    assert abstention(items[:3]) is None  # no unanswerable item: not measured


def test_width_gap_compares_answers_at_width_two_or_more_with_width_one() -> None:
    items = [
        item("wrong", "correct", "wrong", width=2),
        item("wrong", "correct", "wrong", width=3),
        item("wrong", "correct", "wrong", width=1),
        item("wrong", "wrong", "wrong", width=1),
        item("wrong", "abstained", "wrong", width=None),
    ]
    assert width_gap(items) == 1.0 - 0.5
    assert width_gap(items[2:]) is None  # no answer at width >= 2


def test_selective_gap_compares_both_arms_at_the_coverage_both_reach() -> None:
    # Arm 6 answers 2 of 4 (ranked by width), arm 7 answers all 4 (ranked by confidence):
    # at coverage 1/2 arm 6 is 1/2 right and arm 7's two most confident are both right.
    def with_conf(outcome: str, conf: float) -> dict[str, Any]:
        return row("i", 7, outcome, confidence=conf)

    items = [
        {
            1: row("a", 1, "wrong"),
            6: row("a", 6, "correct", extra={"rank": [2, 3]}),
            7: with_conf("correct", 0.9),
        },
        {
            1: row("b", 1, "wrong"),
            6: row("b", 6, "wrong", extra={"rank": [1, 2]}),
            7: with_conf("correct", 0.8),
        },
        {1: row("c", 1, "wrong"), 6: row("c", 6, "abstained"), 7: with_conf("wrong", 0.5)},
        {1: row("d", 1, "wrong"), 6: row("d", 6, "abstained"), 7: with_conf("wrong", 0.4)},
    ]
    assert selective_gap(items) == 0.5 - 1.0


def test_the_interval_of_identical_items_is_the_point_and_undefined_stays_undefined() -> None:
    items = [item("correct", "correct", "wrong")] * 5
    assert interval(items, coverage, resamples=50) == {"value": 1.0, "low": 1.0, "high": 1.0}
    assert interval(items, abstention, resamples=50) == {"value": None, "low": None, "high": None}


@pytest.mark.parametrize(
    ("estimate", "expected"),
    [
        ({"value": 0.6, "low": 0.55, "high": 0.7}, "shown"),
        ({"value": 0.6, "low": 0.3, "high": 0.8}, "met"),
        ({"value": 0.4, "low": 0.2, "high": 0.6}, "not met"),
        ({"value": None, "low": None, "high": None}, "not measured"),
    ],
)
def test_a_goal_is_shown_only_when_its_whole_interval_meets_it(
    estimate: dict[str, float | None], expected: str
) -> None:
    assert verdict(estimate, 0.5) == expected


def test_the_command_pools_folders_and_keeps_only_items_every_arm_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for folder, ids in (("multihop", ["m1", "m2"]), ("vitaminc", ["v1"])):
        raw = tmp_path / folder / "raw"
        raw.mkdir(parents=True)
        for arm in (1, 6, 7):
            kept = ids if arm != 7 else ids[:1]  # m2 has no arm 7 row: left out
            lines = [json.dumps(row(i, arm, "correct", width=1)) for i in kept]
            (raw / f"arm{arm}.jsonl").write_text("\n".join(lines) + "\n")
    items = pool([tmp_path / "multihop", tmp_path / "vitaminc"])
    assert sorted(items) == ["m1", "v1"]
    table = goal_table(items, resamples=20)
    assert table["arms"][6] == {"right": 2, "wrong": 0, "other": 0}
    assert table["goals"]["coverage"]["verdict"] == "shown"
    assert main([str(tmp_path / "multihop"), str(tmp_path / "vitaminc")]) == 0
    assert "2 items (2 answerable)" in capsys.readouterr().out
    assert main([str(tmp_path / "nowhere")]) == 2
    # Held out: each folder's first item left out, in the order its files list them.
    assert sorted(pool([tmp_path / "multihop", tmp_path / "vitaminc"], skip=1)) == []
    assert list(pool([tmp_path / "multihop"], arms=(1, 6), skip=1)) == ["m2"]
    assert main([str(tmp_path / "multihop"), "--skip", "1"]) == 0
    assert "0 items" in capsys.readouterr().out
    # Or one count per folder: the test items of one folder beside all of another's.
    assert sorted(pool([tmp_path / "multihop", tmp_path / "vitaminc"], skip=[1, 0])) == ["v1"]
    assert main([f"{tmp_path / 'multihop'}@1", str(tmp_path / "vitaminc")]) == 0
    out = capsys.readouterr().out
    assert "1 items (1 answerable)" in out
    # Each folder's own counts come first, under the label it was given.
    assert "| multihop@1 | 0 | 0 / 0 / 0 | 0 / 0 / 0 | 0 / 0 / 0 |" in out
    assert "| vitaminc | 1 | 1 / 0 / 0 | 1 / 0 / 0 | 1 / 0 / 0 |" in out
    with pytest.raises(ValueError, match="skip: 1 counts for 2 folders"):
        pool([tmp_path / "multihop", tmp_path / "vitaminc"], skip=[1])


def test_a_replay_without_arm_7_leaves_the_matched_coverage_goal_unmeasured() -> None:
    items = [{1: row("a", 1, "wrong"), 6: row("a", 6, "correct")}]
    assert selective_gap(items) is None
    table = goal_table({"a": items[0]}, resamples=10)
    assert sorted(table["arms"]) == [1, 6]
    assert table["goals"]["selective"]["verdict"] == "not measured"


def test_right_per_wrong_and_wrong_per_item_are_compared_on_the_same_items() -> None:
    items = [
        item("correct", "correct", "wrong"),
        item("correct", "correct", "correct"),
        item("wrong", "abstained", "wrong"),
        item("wrong", "wrong", "correct"),
        item("wrong", "correct", "wrong"),
    ]
    # arm 6: 3 right, 1 wrong; arm 1: 2 right, 3 wrong; arm 7: 2 right, 3 wrong.
    assert ratio_gap(1)(items) == pytest.approx(3 / 1 - 2 / 3)
    assert ratio_gap(7)(items) == pytest.approx(3 / 1 - 2 / 3)
    assert wrong_gap(1)(items) == pytest.approx((1 - 3) / 5)
    assert ratio_gap(1)(items[:2]) is None  # no wrong answer: the ratio is unbounded
    without_7 = [{arm: rows for arm, rows in i.items() if arm != 7} for i in items]
    assert ratio_gap(7)(without_7) is None and wrong_gap(7)(without_7) is None


def test_a_pooled_table_gives_each_folders_counts_and_a_single_folder_none() -> None:
    first = {"a": item("correct", "wrong", "abstained"), "b": item("wrong", "correct", "wrong")}
    second = {"c": item("correct", "abstained", "correct")}
    table = goal_table({**first, **second}, resamples=10, parts={"x@1": first, "y": second})
    assert table["parts"]["x@1"] == {
        "items": 2,
        "arms": {
            1: {"right": 1, "wrong": 1, "other": 0},
            6: {"right": 1, "wrong": 1, "other": 0},
            7: {"right": 0, "wrong": 1, "other": 1},
        },
    }
    text = render(table)
    assert text.startswith("| folder | items | arm 1 right / wrong / other |")
    assert "| y | 1 | 1 / 0 / 0 | 0 / 0 / 1 | 1 / 0 / 0 |" in text
    alone = render(goal_table(first, resamples=10, parts={"x": first}))
    assert alone.startswith("2 items (2 answerable)")


def test_the_rendered_table_ends_with_the_paired_comparisons() -> None:
    items = {f"i{n}": item("wrong", "correct" if n % 2 else "wrong", "wrong") for n in range(6)}
    text = render(goal_table(items, resamples=50))
    assert "| arm 6 - arm 1 right answers per wrong one | +1.00 |" in text  # 3/3 against 0/6
    assert "| arm 6 - arm 1 wrong answers per item (%) | -50 |" in text


def test_folder_labels_are_as_short_as_tells_the_folders_apart() -> None:
    assert folder_labels([Path("banks/a"), Path("banks/b")]) == ["a", "b"]
    assert folder_labels([Path("banks/a"), Path("replays/a")]) == ["banks/a", "replays/a"]
    assert folder_labels([Path("x/banks/a"), Path("a")]) == ["banks/a", "a"]
    assert folder_labels([Path("/r/a"), Path("r/a")]) == ["/r/a", "r/a"]
    assert folder_labels([Path("a"), Path("a")]) == ["a", "a"]


def test_the_command_reads_same_named_folders_under_labels_that_differ(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for parent, item_id in (("banks", "b1"), ("replays", "r1")):
        raw = tmp_path / parent / "multihop" / "raw"
        raw.mkdir(parents=True)
        for arm in (1, 6, 7):
            (raw / f"arm{arm}.jsonl").write_text(json.dumps(row(item_id, arm, "correct")) + "\n")
    assert main([str(tmp_path / "banks/multihop"), str(tmp_path / "replays/multihop")]) == 0
    out = capsys.readouterr().out
    assert "| banks/multihop | 1 | 1 / 0 / 0 |" in out
    assert "| replays/multihop | 1 | 1 / 0 / 0 |" in out
    assert "2 items (2 answerable)" in out


def test_a_baseline_from_another_folder_is_compared_with_arm_6_on_the_items_both_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, greedy = tmp_path / "run", tmp_path / "greedy"
    outcomes = {"a": ("correct", "wrong"), "b": ("correct", "correct"), "c": ("wrong", "wrong")}
    for arm in (1, 6, 7):
        lines = [json.dumps(row(i, arm, six)) for i, (six, _) in outcomes.items()]
        (run / "raw").mkdir(parents=True, exist_ok=True)
        (run / "raw" / f"arm{arm}.jsonl").write_text("\n".join(lines) + "\n")
    # The baseline holds items a and b only (arm 7, one reasoned answer each), and an item
    # the run lacks.
    kept = [json.dumps(row(i, 7, other)) for i, (_, other) in outcomes.items() if i != "c"]
    (greedy / "raw").mkdir(parents=True)
    (greedy / "raw" / "arm7.jsonl").write_text("\n".join([*kept, json.dumps(row("z", 7, "wrong"))]))
    table = pooled_table([(run, 0)], [str(greedy)])
    compared = table["baselines"]["greedy arm 7"]
    assert compared["items"] == 2
    assert compared["arm6"] == {"right": 2, "wrong": 0, "other": 0}
    assert compared["baseline"] == {"right": 1, "wrong": 1, "other": 0}
    assert compared["right"]["value"] == 0.5 and compared["wrong"]["value"] == -0.5
    assert compared["ratio"]["value"] is None  # arm 6 has no wrong answer: unbounded
    assert baseline_spec(f"{run},{greedy}:6") == ([run, greedy], 6)
    assert main([str(run), "--baseline", str(greedy)]) == 0
    assert "| greedy arm 7 | 2 | 2 / 0 | 1 / 1 | - | 50 [" in capsys.readouterr().out
    assert main([str(run), "--baseline", str(tmp_path / "nowhere")]) == 2


def test_a_recording_without_arm_7_still_pairs_its_items_and_leaves_arm_7_unmeasured(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    (run / "raw").mkdir(parents=True)
    outcomes = {1: ("wrong", "wrong"), 6: ("correct", "abstained")}
    for arm, (first, second) in outcomes.items():
        lines = [json.dumps(row("a", arm, first)), json.dumps(row("b", arm, second))]
        (run / "raw" / f"arm{arm}.jsonl").write_text("\n".join(lines) + "\n")
    table = pooled_table([(run, 0)], [f"{run}:1"])
    assert table["items"] == 2 and sorted(table["arms"]) == [1, 6]
    assert table["arms"][6] == {"right": 1, "wrong": 0, "other": 1}
    assert table["goals"]["selective"]["verdict"] == "not measured"
    assert table["baselines"]["run arm 1"]["items"] == 2
