"""Every table of evals.reporting prints what the table-maker it replaced printed.

The expected files in ``tests/fixtures/reporting/`` were written by the five table-makers
before they became one module (main at e823b6f: evals.summary, evals.compare, evals.goal,
benchmarks/answer_table.py and benchmarks/replay_study.py) on the folders of
``tests/reporting_fixture.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from reporting_fixture import write_runs

from evals import goal
from evals.compare import compare
from evals.reporting import (
    render_flips,
    render_goal_table,
    render_summary,
    study_cells,
)
from evals.results import run_arms
from evals.studies.answer_table import answer_table
from evals.summary import combined_table, summarize

EXPECTED = Path(__file__).parent / "fixtures" / "reporting"


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    return write_runs(tmp_path)


def expected(name: str) -> str:
    return (EXPECTED / name).read_text(encoding="utf-8")


def test_summary_md_is_the_one_the_summary_wrote(runs: tuple[Path, Path]) -> None:
    assert render_summary(summarize(runs[0]), "(plot note)") == expected("summary.md")


def test_the_table_across_runs_is_the_one_the_summary_wrote(runs: tuple[Path, Path]) -> None:
    assert combined_table(list(runs)) == expected("combined.md")


def test_the_flips_table_is_the_one_the_comparison_wrote(runs: tuple[Path, Path]) -> None:
    assert render_flips(compare(*runs), "a", "b") == expected("flips.md")


def test_the_goal_table_is_the_one_the_goal_command_wrote(runs: tuple[Path, Path]) -> None:
    a, b = runs
    parts = {"a": goal.pool([a]), "b": goal.pool([b])}
    table = goal.goal_table(goal.pool([a, b]), resamples=200, parts=parts)
    assert render_goal_table(table) == expected("goal.md")


def test_the_answer_table_is_the_one_the_benchmark_script_printed(
    runs: tuple[Path, Path],
) -> None:
    assert answer_table([("a", runs[0]), ("b", runs[1])]) + "\n" == expected("answer.md")


def test_a_replay_study_row_has_the_tallies_the_study_printed(runs: tuple[Path, Path]) -> None:
    cells = study_cells(run_arms(runs[1]), unavailable=3)
    assert cells == "4 | " + expected("study_row.md").rstrip("\n") + " | 3"
