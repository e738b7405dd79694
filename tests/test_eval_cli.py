"""``logic-graph eval``: one command line over the evaluation library, found by entry point."""

from __future__ import annotations

import tomllib
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from reporting_fixture import write_runs

from evals import command, goal
from orchestrator.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent
EVAL = EntryPoint(name="eval", value="evals.command:COMMAND", group=cli.COMMAND_GROUP)


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry point as an install of pyproject.toml declares it."""
    monkeypatch.setattr(cli, "entry_points", lambda group: [EVAL] if group == EVAL.group else [])


def test_pyproject_declares_the_eval_group_and_it_loads_the_command() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["entry-points"][cli.COMMAND_GROUP]
    assert declared == {"eval": EVAL.value}
    assert EVAL.load() is command.COMMAND


def test_logic_graph_eval_runs_a_subcommand(
    installed: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = write_runs(tmp_path)
    assert cli.main(["eval", "compare", str(a), str(b)]) == 0
    assert "## Arm 6: 2 of 4 items flipped" in capsys.readouterr().out


def test_logic_graph_lists_the_eval_group_in_its_help(
    installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "eval" in capsys.readouterr().out


def test_an_unusable_folder_exits_2_under_the_subcommand_name(
    installed: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["eval", "compare", str(tmp_path), str(tmp_path)]) == 2
    assert "logic-graph eval compare: not a run directory" in capsys.readouterr().err


def test_the_old_module_command_is_the_same_subcommand_under_its_old_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = write_runs(tmp_path)
    assert goal.main([str(a), str(b)]) == 0
    old = capsys.readouterr().out
    assert command.main(["goal", str(a), str(b)]) == 0
    assert capsys.readouterr().out == old and "| goal | estimate (%)" in old
