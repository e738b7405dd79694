"""The 15 scenario reports come out byte for byte as committed (the refactor safety net).

Each scripted run's masked report.json and report.md equal
``tests/fixtures/scenario_reports/<name>.json`` and ``.md``, and the requests it sent hash as
``requests.txt`` there says (``tests/scenario_reports.py`` runs them; its ``--write`` rewrites
the files when a change is meant to change a report).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scenario_reports import EXPECTED, NAMES, expected_requests, run_named


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for every scenario, so the corpus scenarios share their index."""
    return tmp_path_factory.mktemp("reports")


def test_there_are_fifteen_scenarios_each_with_its_expected_files() -> None:
    assert len(NAMES) == 15
    assert set(expected_requests()) == set(NAMES)
    for name in NAMES:
        assert (EXPECTED / f"{name}.json").is_file() and (EXPECTED / f"{name}.md").is_file()


@pytest.mark.parametrize("name", NAMES)
def test_the_scenario_report_is_byte_for_byte_the_committed_one(name: str, out: Path) -> None:
    masked = run_named(name, out)
    assert masked.json == (EXPECTED / f"{name}.json").read_text()
    assert masked.markdown == (EXPECTED / f"{name}.md").read_text()
    assert masked.requests == expected_requests()[name]
