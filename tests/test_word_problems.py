"""A numeric word problem gets the settings models.json measured for word problems.

``word_problems`` in a models.json entry holds the shape and sampling a model was measured with
on word problems (docs/results/reasoned-shape.md); a task whose one document is its own
statement, and which writes a number in digits, gets them instead of the entry's own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evals import datasets
from evals.datasets.loaders import item_to_task
from orchestrator.api import model_defaults
from orchestrator.cli.run import _settings, build_parser
from orchestrator.llm import ModelsFileError, read_models_file
from orchestrator.llm import models_file as models_file_module
from orchestrator.llm.models_file import WordProblemSettings
from orchestrator.records.task import RunConfig, Task, TaskError, validate_task

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = "Mia has 3 boxes of 4 pens. How many pens does she have?"
WORD_PROBLEM = Task(PROBLEM, (PROBLEM,))
OVER_A_DOCUMENT = Task("How many pens does Mia have?", ("Mia has 3 boxes of 4 pens.",))
MEASURED: dict[str, Any] = {
    "interrogation_shape": "reasoned",
    "diversity": "reword",
    "n": 2,
    "budget_calls": 2,
    "adaptive": True,
    "greedy_first": True,
}
ENTRY: dict[str, Any] = {
    "id": "solver",
    "interrogation_shape": "chain",
    "hops": "auto",
    "n": 1,
    "temperature": 0.0,
    "budget_calls": 3,
    "word_problems": MEASURED,
}


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"models": [ENTRY]}), encoding="utf-8")
    monkeypatch.setattr(models_file_module, "DEFAULT_MODELS_PATH", path)
    return path


def config_for(task: Task, *flags: str, model: str = "solver") -> RunConfig:
    args = build_parser().parse_args(["--task", "unused.json", "--model", model, *flags])
    return _settings(args, task, None)[1]


def test_a_word_problem_is_a_task_whose_one_document_is_its_statement_with_a_number() -> None:
    assert WORD_PROBLEM.is_numeric_word_problem
    assert not OVER_A_DOCUMENT.is_numeric_word_problem
    no_number = "Who built the rack?"
    assert not Task(no_number, (no_number,)).is_numeric_word_problem
    assert validate_task({"question": PROBLEM, "documents": [PROBLEM]}).is_numeric_word_problem


@pytest.mark.parametrize("name", sorted(datasets.BUILTIN))
def test_of_the_shipped_sets_only_the_math_items_are_numeric_word_problems(name: str) -> None:
    items = datasets.load_items(datasets.BUILTIN[name])
    routed = [validate_task(item_to_task(item)).is_numeric_word_problem for item in items]
    assert all(routed) if name == "math" else not any(routed)


def test_the_entry_reads_its_word_problem_settings_typed(models: Path) -> None:
    entry = read_models_file(models).entry("solver")
    assert entry is not None and entry.word_problems == WordProblemSettings(**MEASURED)
    assert entry.sampling() == {"n": 1, "temperature": 0.0, "budget_calls": 3}
    assert entry.sampling(word_problem=True) == {"n": 2, "temperature": 0.0, "budget_calls": 2}


def test_a_word_problem_gets_the_measured_settings_and_no_hops(models: Path) -> None:
    defaults = model_defaults("solver", WORD_PROBLEM)
    assert defaults.word_problem and defaults.hops == "off"
    assert (defaults.shape, defaults.diversity, defaults.adaptive, defaults.greedy_first) == (
        "reasoned",
        "reword",
        True,
        True,
    )
    config = config_for(WORD_PROBLEM)
    assert (config.interrogation_shape, config.diversity, config.n, config.budget_calls) == (
        "reasoned",
        "reword",
        2,
        2,
    )
    assert config.adaptive and config.greedy_first and config.temperature == 0.0


def test_any_other_question_keeps_the_entrys_own_settings(models: Path) -> None:
    defaults = model_defaults("solver", OVER_A_DOCUMENT)
    assert not defaults.word_problem
    assert (defaults.shape, defaults.diversity, defaults.adaptive, defaults.hops) == (
        "chain",
        "sample",
        False,
        "auto",
    )
    config = config_for(OVER_A_DOCUMENT)
    assert (config.interrogation_shape, config.n, config.budget_calls) == ("chain", 1, 3)


def test_a_shape_given_on_the_command_line_turns_the_word_problem_settings_off(
    models: Path,
) -> None:
    defaults = model_defaults("solver", WORD_PROBLEM, shape="chain")
    assert not defaults.word_problem and defaults.shape == "chain"
    config = config_for(WORD_PROBLEM, "--shape", "chain")
    assert (config.interrogation_shape, config.diversity, config.n, config.adaptive) == (
        "chain",
        "sample",
        1,
        False,
    )


def test_other_flags_given_win_over_the_word_problem_settings(models: Path) -> None:
    config = config_for(WORD_PROBLEM, "--budget-calls", "1", "--no-adaptive")
    assert (config.budget_calls, config.adaptive, config.diversity) == (1, False, "reword")
    config = config_for(WORD_PROBLEM, "--diversity", "sample", "--n", "3")
    assert (config.diversity, config.n, config.interrogation_shape) == ("sample", 3, "reasoned")
    with pytest.raises(TaskError, match="diversity='reword' needs"):
        config_for(WORD_PROBLEM, "--n", "3")  # two wordings cannot make three runs


@pytest.mark.parametrize(
    ("word_problems", "refusal"),
    [
        ([], r"models\[0\]\.word_problems of 'solver' must be an object, got \[\]"),
        ({"hops": "first"}, r"word_problems of 'solver' sets hops; it may set only"),
        ({"n": "2"}, r"models\[0\]\.word_problems\.n of 'solver' must be an integer, got '2'"),
        ({"adaptive": 1}, r"word_problems\.adaptive of 'solver' must be true or false, got 1"),
        (
            {"diversity": "vary"},
            r"word_problems\.diversity of 'solver' must be one of sample, shuffle, reword",
        ),
    ],
    ids=["not-an-object", "unknown-setting", "wrong-type", "not-a-bool", "unknown-value"],
)
def test_a_bad_word_problems_object_is_refused_naming_the_field(
    tmp_path: Path, word_problems: object, refusal: str
) -> None:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"models": [{**ENTRY, "word_problems": word_problems}]}))
    with pytest.raises((ModelsFileError, TaskError), match=refusal):
        model_defaults("solver", WORD_PROBLEM, models_path=path)


def documented_word_problems() -> dict[str, Any]:
    """The ``word_problems`` object docs/orchestrator.md shows (its one JSON block)."""
    text = (ROOT / "docs" / "orchestrator.md").read_text(encoding="utf-8")
    section = text.split("### Settings for word problems", 1)[1]
    block = section.split("```json", 1)[1].split("```", 1)[0]
    shown: dict[str, Any] = json.loads("{" + block.strip() + "}")
    return dict(shown["word_problems"])


KEPT = ("shape", "diversity", "n", "budget_calls", "adaptive", "greedy_first", "temp", "k")


def assert_runs_the_recorded_setting(config: RunConfig, bank: str) -> None:
    run_json = ROOT / "evals" / "banks" / bank / "run.json"
    recorded = json.loads(run_json.read_text(encoding="utf-8"))["config"]["settings"]
    ran = {
        "shape": config.interrogation_shape,
        "diversity": config.diversity,
        "n": config.n,
        "budget_calls": config.budget_calls,
        "adaptive": config.adaptive,
        "greedy_first": config.greedy_first,
        "temp": config.temperature,
        "k": config.k,
    }
    assert ran == {key: recorded[key] for key in KEPT}
    assert config.hops == recorded.get("hops", "off")  # the test asked no hops


def test_the_documented_object_runs_the_setting_the_word_problem_test_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user who copies the object from the docs gets the measured setting, no other."""
    path = tmp_path / "models.json"
    entry = {**ENTRY, "word_problems": documented_word_problems()}
    path.write_text(json.dumps({"models": [entry]}), encoding="utf-8")
    monkeypatch.setattr(models_file_module, "DEFAULT_MODELS_PATH", path)
    assert_runs_the_recorded_setting(
        config_for(WORD_PROBLEM), "math-local-1.5b-reasoned-reword-421"
    )


def test_the_built_in_1_5b_asks_a_word_problem_in_the_setting_its_test_chose() -> None:
    """The pre-registered choice on math 521-640 (docs/results/reasoned-shape.md) put the
    reasoned shape in the 1.5B's entry; its word problems run exactly what was recorded."""
    config = config_for(WORD_PROBLEM, model="local-1.5b")
    assert_runs_the_recorded_setting(config, "math-local-1.5b-reasoned-reword-521")
    over_a_document = config_for(OVER_A_DOCUMENT, model="local-1.5b")
    assert (over_a_document.interrogation_shape, over_a_document.hops) == ("chain", "auto_only")
