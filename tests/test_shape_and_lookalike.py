"""End to end on scripted runs: the look-alike example's failed link, and the chain shape."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from canned_runs import RACK7_TASK, Script, always, chain_reply

from orchestrator.api import (
    RunConfig,
    model_defaults,
    model_greedy_first,
    model_hops,
    model_sampling,
    model_shape,
    run_task,
)
from orchestrator.cli import ask
from orchestrator.cli.run import _settings, build_parser
from orchestrator.llm import models_file as models_file_module
from orchestrator.llm.testing import ScriptedClient
from orchestrator.records.report import RunReport
from orchestrator.records.task import Task, TaskError, load_task
from orchestrator.reply.schemas import chain_response_format
from orchestrator.report.markdown import render_markdown

ROOT = Path(__file__).resolve().parents[1]
LOOKALIKE: dict[str, Any] = json.loads((ROOT / "examples" / "lookalike.json").read_text())


def graph_reply(given: str, source: str, inference: str, answer: str) -> str:
    nodes = [
        {"id": "n1", "type": "given", "source": source, "claim": given, "confidence": 0.9},
        {"id": "n2", "type": "inference", "source": "none", "claim": inference, "because": ["n1"]},
        {
            "id": "n3",
            "type": "conclusion",
            "source": "none",
            "claim": f"Embstone Foundry was founded in {answer}.",
            "because": ["n2"],
        },
    ]
    return json.dumps({"nodes": nodes, "conclusion_node": "n3", "answer": answer})


def run(task: dict[str, Any], runs: dict[str, str], config: RunConfig) -> RunReport:
    client = ScriptedClient(Script(runs, votes=always("not_determinable")))
    return run_task(task, client=client, model="scripted", config=config)


def lookalike(given: str, source: str, inference: str, answer: str) -> RunReport:
    """The look-alike example's report when both of its two runs reply with this graph."""
    reply = graph_reply(given, source, inference, answer)
    return run(LOOKALIKE, {"r1": reply, "r2": reply}, RunConfig(n=2, k=1, budget_calls=2))


def test_the_lookalike_example_reports_the_failed_link_and_refuses_the_borrowed_year() -> None:
    report = lookalike(
        "Embstone Ironworks was founded by Mara Vance in 1921",
        "D1.1",
        "Embstone Foundry was founded in 1921",
        "1921",
    )
    candidate = report["candidates"][0]
    assert candidate["answer"] == "1921" and candidate["width"] == 0
    assert candidate["failed_links"][0]["src"] == "D1.1"
    assert candidate["failed_links"][0]["reason"] == "look_alike"
    assert report["refused"] and report["refusal_reason"] == "no_grounded_conclusion"
    assert "D1.1 -> r1:n2: look_alike" in render_markdown(report)


def test_the_lookalike_example_answers_from_the_right_entity() -> None:
    report = lookalike(
        "Embstone Foundry was founded by Oren Vane in 1934",
        "D2.1",
        "Embstone Foundry dates from 1934",
        "1934",
    )
    assert report["answer"] == "1934" and report["candidates"][0]["failed_links"] == []


def test_a_chain_shaped_run_is_built_into_a_graph_that_grounds_its_answer() -> None:
    chain = chain_reply(
        [
            ("D2.1", "server x9 runs Linux"),
            ("D3.1", "server x9 can run the cron scheduler"),
            ("D3.2", ""),
        ],
        "yes",
    )
    config = RunConfig(n=2, k=1, budget_calls=2, interrogation_shape="chain")
    report = run(RACK7_TASK, {"r1": chain, "r2": chain}, config)
    assert report["answer"] == "yes" and report["chosen"]["width"] == 1
    assert {g["span"] for g in report["givens"]} == {"D2.1", "D3.1", "D3.2"}
    assert not report["rejected_citations"]
    assert report["conclusion"] is not None
    assert "x9" in report["conclusion"]  # the shown sentence is about the question's subject
    assert report["prompt_versions"]["interrogation_chain"] == "interrogation_chain/v1"


def test_the_chain_schema_lists_only_the_task_sentences() -> None:
    schema = chain_response_format(["D1.1", "D1.2"])["json_schema"]["schema"]
    step = schema["properties"]["steps"]["items"]
    assert step["properties"]["sentence"]["enum"] == ["D1.1", "D1.2"]
    assert list(schema["properties"]) == ["steps", "answer"]


def test_the_shape_comes_from_models_json_and_the_cli_overrides_it(tmp_path: Path) -> None:
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"models": [{"id": "tiny", "interrogation_shape": "chain"}]}))
    assert model_shape("tiny", models) == "chain"
    assert model_shape("other", models) == "graph"
    with pytest.raises(TaskError, match="does not exist"):
        model_shape("tiny", tmp_path / "missing.json")
    args = build_parser().parse_args(["--task", "t.json", "--shape", "chain"])
    assert args.shape == "chain"
    with pytest.raises(ValueError, match="interrogation_shape"):
        RunConfig(interrogation_shape="tree")


def test_the_greedy_anchor_comes_from_models_json_and_the_cli_overrides_it(
    tmp_path: Path,
) -> None:
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"models": [{"id": "big", "greedy_first": True}]}))
    assert model_greedy_first("big", models) is True
    assert model_greedy_first("other", models) is False
    parser = build_parser()
    assert parser.parse_args(["--task", "t.json"]).greedy_first is None  # the model decides
    assert parser.parse_args(["--task", "t.json", "--no-greedy-first"]).greedy_first is False
    assert parser.parse_args(["--task", "t.json", "--greedy-first"]).greedy_first is True


def test_hop_by_hop_comes_from_models_json_and_the_cli_flag_overrides_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"models": [{"id": "hopper", "hops": "on_failure"}]}))
    monkeypatch.setattr(models_file_module, "DEFAULT_MODELS_PATH", models)
    rack7 = str(ROOT / "examples" / "rack7.json")
    task = load_task(Path(rack7))
    parser = build_parser()
    _, config = _settings(parser.parse_args(["--task", rack7, "--model", "hopper"]), task, None)
    assert config.hops == "on_failure"
    flags = ["--task", rack7, "--model", "hopper", "--hops", "off"]
    _, config = _settings(parser.parse_args(flags), task, None)
    assert config.hops == "off"
    assert ask.build_parser().parse_args(["q", "--doc", "d.txt"]).hops is None  # same flags
    assert model_hops("unlisted", models) == "off"


def test_a_question_asked_hop_by_hop_first_gets_the_models_hop_budget_unless_one_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "models.json"
    entry = {"id": "hopper", "hops": "auto", "budget_calls": 3, "hop_budget_calls": 6}
    models.write_text(json.dumps({"models": [entry]}))
    monkeypatch.setattr(models_file_module, "DEFAULT_MODELS_PATH", models)
    hop_question = Task(
        question="In which town was the founder of the company that built the Kest Bridge born?",
        documents=("The Kest Bridge was built by Orm Works.",),
    )
    rack7 = str(ROOT / "examples" / "rack7.json")
    parser = build_parser()

    def budget(task: Task, *flags: str) -> tuple[int, str]:
        args = parser.parse_args(["--task", rack7, "--model", "hopper", *flags])
        config = _settings(args, task, None)[1]
        return config.budget_calls, config.hops

    assert budget(hop_question) == (6, "auto")  # asked hop by hop first: its hop budget
    assert budget(load_task(Path(rack7))) == (3, "auto")  # no hops to read: the chain's 3
    assert budget(hop_question, "--budget-calls", "4") == (4, "auto")  # a given budget wins
    assert budget(hop_question, "--hops", "off") == (3, "off")  # no hops: no hop budget
    assert budget(hop_question, "--hops", "auto_only") == (6, "auto_only")  # the hops alone too
    defaults = model_defaults("hopper", hop_question, models_path=models)
    assert defaults.sampling == {"budget_calls": 6} and defaults.hops == "auto"


@pytest.mark.parametrize(
    ("field", "value", "allowed", "read"),
    [
        ("hops", "sometimes", "off, on_failure, first, only, always, auto, auto_only", model_hops),
        ("interrogation_shape", "tree", "graph, chain, worked, reasoned", model_shape),
    ],
    ids=["hops", "interrogation_shape"],
)
def test_a_setting_value_run_config_does_not_know_is_refused_naming_the_field_and_the_values(
    tmp_path: Path, field: str, value: str, allowed: str, read: Callable[[str, Path], str]
) -> None:
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"models": [{"id": "odd", field: value}]}))
    refusal = rf"models\[0\]\.{field} of 'odd' must be one of {allowed}, got '{value}'"
    with pytest.raises(TaskError, match=refusal):
        read("odd", models)


PRICES = {
    "id": "prices",
    "question": "Which one is the most expensive: the oranges, the apples, the plums?",
    "documents": ["The oranges are the most expensive. The apples are the cheapest."],
}


def test_an_inference_that_restates_its_sentence_is_that_sentence() -> None:
    # The 1.5B copies each sentence as its inference. Folded into the sentence, the first
    # step's reason joins the premises of the answer instead of linking two sentences, so
    # the sentence that states the answer is on its argument.
    steps = [
        ("D1.1", "The oranges are the most expensive"),
        ("D1.2", "The apples are the cheapest"),
    ]
    reply = chain_reply(steps, "oranges")
    config = RunConfig(n=2, k=1, budget_calls=2, interrogation_shape="chain")
    report = run(PRICES, {"r1": reply, "r2": reply}, config)
    assert report["answer"] == "oranges"
    assert [claim["id"] for claim in report["chosen"]["arguments"][0]] == ["D1.1"]
    assert all(edge["src"] != "D1.1" or edge["dst"] != "D1.2" for edge in report["graph"]["edges"])


RIVERS = {
    "id": "rivers",
    "question": "Which river is longer, the Urra River or the Yssra River?",
    "documents": [
        "The Liskhaven Bridge spans the Yssra River. The Urra River flows past Tollbury.",
    ],
}


@pytest.mark.parametrize(
    ("steps", "answered"),
    [
        ([("D1.1", "")], False),
        ([("D1.1", "The Yssra River is longer than the Urra River")], True),
    ],
    ids=["naming one option is no argument", "an inference comparing both is one"],
)
def test_an_argument_for_a_comparison_must_name_both_options(
    steps: list[tuple[str, str]], answered: bool
) -> None:
    reply = chain_reply(steps, "the Yssra River")
    config = RunConfig(n=2, k=1, budget_calls=2, interrogation_shape="chain")
    report = run(RIVERS, {"r1": reply, "r2": reply}, config)
    assert (report["answer"] is not None) is answered
    candidate = report["candidates"][0]
    assert candidate["answer_key"] == "yssra"  # "river" is what was asked for
    if not answered:  # the report says which argument was set aside, and why
        held = candidate["set_aside"]
        assert [([c["id"] for c in a["claims"]], a["reason"]) for a in held] == [
            (["D1.1"], "one_sided")
        ]
        assert "- the Yssra River: D1.1: one_sided" in render_markdown(report)


def test_a_model_entry_sets_its_sampling_and_only_the_fields_it_names(tmp_path: Path) -> None:
    models = tmp_path / "models.json"
    entries = [{"id": "small", "n": 1, "temperature": 0.0, "budget_calls": 3, "k": 9}]
    models.write_text(json.dumps({"models": entries}))
    assert model_sampling("small", models) == {"n": 1, "temperature": 0.0, "budget_calls": 3}
    assert model_sampling("other", models) == {}


def test_a_models_file_setting_of_the_wrong_type_is_refused_naming_the_field(
    tmp_path: Path,
) -> None:
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"models": [{"id": "odd", "greedy_first": "yes"}]}))
    with pytest.raises(TaskError, match=r"models\[0\]\.greedy_first of 'odd' must be true"):
        model_greedy_first("odd", models)


def test_the_cli_runs_the_1_5b_as_one_greedy_chain_unless_told_otherwise() -> None:
    rack7 = str(ROOT / "examples" / "rack7.json")
    parser = build_parser()
    task = load_task(Path(rack7))
    _, config = _settings(parser.parse_args(["--task", rack7, "--model", "local-1.5b"]), task, None)
    assert (config.n, config.temperature, config.budget_calls) == (1, 0.0, 3)
    assert config.interrogation_shape == "chain"
    flags = ["--task", rack7, "--model", "local-1.5b", "--n", "4", "--temp", "0.5"]
    _, config = _settings(parser.parse_args(flags), task, None)
    assert (config.n, config.temperature, config.budget_calls) == (4, 0.5, 3)
    _, config = _settings(parser.parse_args(["--task", rack7, "--model", "local"]), task, None)
    defaults = RunConfig()
    assert (config.n, config.temperature, config.budget_calls) == (
        defaults.n,
        defaults.temperature,
        defaults.budget_calls,
    )
