"""The headline says how well an answer is supported, --require-k refuses a weak one, answers
lose their Markdown, and a task without documents is refused without a model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from canned_runs import GOOD_EDGES, GOOD_NODES, RACK7_TASK, Script, model_graph, six_runs

from orchestrator.api import RunConfig, run_task
from orchestrator.cli.run import main
from orchestrator.llm.testing import ScriptedClient
from orchestrator.records.report import RunReport
from orchestrator.report.build import plain_answer
from orchestrator.report.markdown import render_markdown


def report_for(config: RunConfig, script: Script | None = None) -> RunReport:
    client = ScriptedClient(script or Script(six_runs()), cost_per_call=0.0)
    return run_task(RACK7_TASK, client=client, model="scripted", config=config)


def test_an_answer_below_k_carries_the_weak_support_caveat_in_its_headline() -> None:
    report = report_for(RunConfig(k=3))  # the canned runs give width 1 or 2
    width = report["chosen"]["width"]
    assert report["chosen"]["meets_k"] is False and 0 < width < 3
    lines = "line" if width == 1 else "lines"
    caveat = f"weak support: {width} independent {lines} of evidence, below k=3"
    assert report["headline"] == f"Answer ({caveat}): yes"
    assert render_markdown(report).startswith(f"# Answer ({caveat}): yes\n")


def test_an_answer_that_meets_k_is_headlined_plainly() -> None:
    report = report_for(RunConfig(k=1))
    assert report["chosen"]["meets_k"] is True and report["headline"] == "Answer: yes"


def test_require_k_refuses_an_answer_below_k_and_says_why() -> None:
    report = report_for(RunConfig(k=3, require_k=True))
    assert report["refused"] is True and report["refusal_reason"] == "below_k"
    assert report["headline"] == "Refused: below_k"
    assert "independent line(s) of evidence, below the required k=3" in report["statement"]


def test_require_k_keeps_an_answer_that_meets_k() -> None:
    report = report_for(RunConfig(k=1, require_k=True))
    assert report["refused"] is False and report["answer"] == "yes"


def test_markdown_in_a_models_answer_is_left_out_of_headline_answer_and_statement() -> None:
    marked = model_graph(GOOD_NODES, GOOD_EDGES, "Z", answer="**Yes**\n=====")
    report = report_for(RunConfig(k=1), Script({f"r{i}": marked for i in range(1, 7)}))
    assert report["headline"] == "Answer: Yes"
    assert report["answer"] == "Yes" and report["statement"].startswith("Answer: Yes. ")


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        ("Git 2.29 Release Notes ==================", "Git 2.29 Release Notes"),
        ("Git 2.29 Release Notes\n======================", "Git 2.29 Release Notes"),
        ("## Braskthorpe", "Braskthorpe"),
        ("**1,200 GB**", "1,200 GB"),
        ("`x9`", "x9"),
        ("snake_case", "snake_case"),
        ("-5", "-5"),
        ("---", "---"),
    ],
)
def test_plain_answer_drops_markdown_but_keeps_the_words(raw: str, plain: str) -> None:
    assert plain_answer(raw) == plain


def test_a_task_without_documents_reports_no_evidence_and_no_failed_runs() -> None:
    client = ScriptedClient(Script({}))
    report = run_task({"question": "q?", "documents": []}, client=client, model="m")
    assert client.calls == [] and report["refusal_reason"] == "no_evidence"
    assert report["stop_reason"] == "no_evidence"
    assert "usable graph" not in report["stop_detail"]
    assert "no model call was made" in report["statement"]


def test_the_cli_refuses_a_task_without_documents_before_starting_a_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A hosted model without a key would fail with exit 1; the task must be refused first.
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    task = tmp_path / "empty.json"
    task.write_text(json.dumps({"question": "Which server?", "documents": []}))
    code = main(["--task", str(task), "--model", "some/hosted-model", "--out", str(tmp_path)])
    assert code == 2
    assert "has no documents, so there is nothing to answer from" in capsys.readouterr().err
