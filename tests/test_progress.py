"""Run-time estimates, measured seconds per call and the progress line of `evals.run`."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.progress import (
    Tally,
    calls_per_item,
    duration,
    estimate_line,
    measured_timing,
    record_timing,
)


def test_calls_per_item_counts_fixed_arms_and_arm_6_and_7_at_their_budget() -> None:
    assert calls_per_item([1, 2, 3, 4, 5], budget_calls=12) == 9
    assert calls_per_item([1, 6, 7], budget_calls=5) == 11


def test_a_recorded_timing_is_read_back_and_used_in_the_estimate(tmp_path: Path) -> None:
    path = tmp_path / "timings.json"
    assert measured_timing("local", path) is None
    entry = record_timing("local", [40.0, 44.0, 0.0], path)
    assert entry is not None and entry["seconds_per_call"] == 42.0 and entry["calls"] == 2
    timing = measured_timing("local", path)
    assert timing == entry
    line = estimate_line(30, [1, 6], budget_calls=5, timing=timing)
    assert line.startswith("estimate: 30 items x up to 6 calls = up to 180 calls")
    assert "42.0 s per call" in line and "over 2 calls" in line and "2.1 h" in line


def test_without_a_timing_the_estimate_says_so_instead_of_guessing() -> None:
    line = estimate_line(2, [1], budget_calls=5, timing=None)
    assert "not measured yet" in line


def test_a_corrupt_timings_file_is_ignored_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "timings.json"
    path.write_text("{not json")
    assert measured_timing("local", path) is None
    assert record_timing("local", [], path) is None  # nothing measured, nothing written
    assert record_timing("local", [3.0], path) is not None
    assert measured_timing("local", path)["seconds_per_call"] == 3.0  # type: ignore[index]


@pytest.mark.parametrize(("seconds", "text"), [(45, "45 s"), (600, "10 min"), (3 * 3600, "3.0 h")])
def test_durations_read_naturally(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_the_progress_line_gives_an_eta_at_the_pace_so_far() -> None:
    tally = Tally({1: {}})
    tally.add(1, {"id": "a", "correct": True})
    line = tally.line(1, 4, "a", 0.0, elapsed_s=120.0)
    assert line.startswith("[1/4] a | a1 1/1 (100%)")
    assert line.endswith("2 min, ETA 6 min")
