"""Issue 37: `logic-graph ask`, progress lines that say what is happening, and the small errors.

The runs go to the fake OpenAI-compatible server on 127.0.0.1 (files, standard input, a
corpus); progress is checked on :class:`LiveProgress` itself where wall-clock time would
otherwise make the test slow.
"""

from __future__ import annotations

import argparse
import io
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from canned_runs import GOOD, RACK7_TASK
from corpus_fixtures import RACK_SENTENCE, hall_graph, span_of, write_corpus

import corpus
from orchestrator.cli import ask, run
from orchestrator.cli.main import build_parser as logic_graph_parser
from orchestrator.cli.main import main as logic_graph
from orchestrator.llm import ChatClient, GuardedClient
from orchestrator.llm.backend import open_backend
from orchestrator.llm.testing import FakeOpenAIServer, FakeReply, ScriptedClient, completion_body
from orchestrator.records.task import RunConfig, TaskError, validate_task
from orchestrator.report.progress import LiveProgress

QUESTION = RACK7_TASK["question"]


@pytest.fixture
def docs(tmp_path: Path) -> list[str]:
    paths = []
    for number, text in enumerate(RACK7_TASK["documents"], 1):
        path = tmp_path / f"doc{number}.txt"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return paths


def asked(base_url: str, *flags: str) -> list[str]:
    return ["ask", QUESTION, *flags, "--model", "m", "--base-url", base_url, "--quiet"]


# -- ask ----------------------------------------------------------------------------------------


def test_ask_with_document_files_prints_the_answer_its_support_and_the_report_path(
    docs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    with FakeOpenAIServer(lambda req, headers: GOOD) as fake:
        code = logic_graph(asked(fake.base_url, "--doc", *docs, "--out", str(out), "--n", "2"))
    printed = capsys.readouterr().out.splitlines()
    assert code == 0
    assert printed[0] == "Answer: yes"
    width = json.loads((out / "report.json").read_text())["chosen"]["width"]
    assert printed[1].startswith(f"Support: {width} independent line(s) of evidence")
    assert printed[2].startswith("  1. [D")
    assert printed[-1] == f"Report: {out / 'report.json'}"
    report = json.loads((out / "report.json").read_text())
    assert report["question"] == QUESTION and report["context"]["task_file"] is None


def test_ask_reads_a_document_from_standard_input_given_as_dash(
    docs: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(Path(docs[1]).read_text()))
    out = tmp_path / "o"
    with FakeOpenAIServer(lambda req, headers: GOOD) as fake:
        argv = asked(fake.base_url, "--doc", docs[0], "-", docs[2], "--out", str(out), "--n", "1")
        code = logic_graph(argv)
        prompt = fake.chat_requests()[0]["messages"][-1]["content"]
    assert code == 0
    assert RACK7_TASK["documents"][1].split(".")[0] in prompt


def test_ask_json_prints_report_json_to_stdout(
    docs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    with FakeOpenAIServer(lambda req, headers: GOOD) as fake:
        code = logic_graph(asked(fake.base_url, "--doc", *docs, "--out", str(out), "--json"))
    assert code == 0
    assert json.loads(capsys.readouterr().out) == json.loads((out / "report.json").read_text())


def test_ask_refused_prints_the_reason_in_one_sentence_and_exits_3(
    docs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer(lambda req, headers: "not a graph") as fake:
        code = logic_graph(asked(fake.base_url, "--doc", *docs, "--out", str(tmp_path / "o")))
    printed = capsys.readouterr().out.splitlines()
    assert code == 3
    assert printed[0].startswith("Refused (all_runs_failed): ") and printed[0].endswith(".")
    assert printed[0].count(". ") == 0  # one sentence
    assert printed[-1].startswith("Report: ")


def test_ask_over_a_corpus_retrieves_its_evidence_and_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = tmp_path / "index.sqlite"
    assert corpus.ingest(write_corpus(tmp_path / "docs"), index, dense=False).ok

    def model(request: dict[str, Any], headers: dict[str, str]) -> str:
        span = span_of(request["messages"], RACK_SENTENCE)
        return hall_graph(span) if span is not None else "rack 7 hall"

    out = tmp_path / "o"
    with FakeOpenAIServer(model) as fake:
        argv = ["ask", "Which hall is rack 7 in?", "--corpus", str(index), "--model", "m",
                "--base-url", fake.base_url, "--quiet", "--out", str(out), "--n", "2"]  # fmt: skip
        code = logic_graph(argv)
    report = json.loads((out / "report.json").read_text())
    assert report["retrieval"]["rounds"]
    assert code == (3 if report["refused"] else 0)
    assert capsys.readouterr().out.splitlines()[0] == f"Answer: {report['answer']}"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["ask", "q?", "--doc", "/no/such/file.txt", "--model", "m"], "/no/such/file.txt"),
        (["ask", "q?", "--doc", "-", "-", "--model", "m"], "more than once"),
    ],
)
def test_ask_with_a_document_it_cannot_read_is_bad_input_naming_it(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert logic_graph(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err and "Traceback" not in err


def test_ask_takes_documents_or_a_corpus_but_not_both(docs: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        logic_graph(["ask", "q?", "--doc", docs[0], "--corpus", "i.sqlite"])
    assert exited.value.code == 2


def test_ask_without_documents_refuses_a_question_that_is_no_word_problem(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert logic_graph(["ask", "Who built the rack?"]) == 2
    err = capsys.readouterr().err
    assert "give --doc FILE or --corpus INDEX" in err and "no number in digits" in err


def ask_word_problem(problem: str, working: str, out: Path) -> int:
    """``logic-graph ask PROBLEM`` (no --doc) in the reasoned shape, the fake server replying
    ``working`` to every call; the exit code."""
    with FakeOpenAIServer(lambda req, headers: completion_body(working)) as fake:
        argv = ["ask", problem, "--model", "m", "--base-url", fake.base_url, "--quiet"]
        return logic_graph([*argv, "--shape", "reasoned", "--out", str(out)])


def test_ask_without_documents_answers_a_word_problem_from_its_own_statement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    problem = "Mia has 3 boxes of 4 pens. How many pens does she have?"
    working = "Mia has 3 boxes of 4 pens, so 3 * 4 = 12 pens.\nANSWER: 12"
    code = ask_word_problem(problem, working, tmp_path / "o")
    printed = capsys.readouterr().out.splitlines()
    assert (code, printed[0]) == (0, "Answer: 12")
    # the argument rests on the statement's own sentence, read as the one document
    assert printed[2].startswith("  1. [D1.1] Mia has 3 boxes of 4 pens.; [r1:s1] ")


def test_a_working_written_in_latex_is_shown_as_plain_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    problem = "Mia shares 12 pens among 3 friends. How many pens does each friend get?"
    working = "\\( p = \\frac{12 \\text{ pens}}{3} = 4 \\text{ pens} \\)\nANSWER: 4"
    out = tmp_path / "o"
    code = ask_word_problem(problem, working, out)
    printed = capsys.readouterr().out.splitlines()
    shown = "[r1:s1] p = (12 pens) / 3 = 4 pens"
    assert code == 0 and printed[2].endswith(shown)
    assert "p = (12 pens) / 3 = 4 pens (`r1:s1`)" in (out / "report.md").read_text("utf-8")
    report = json.loads((out / "report.json").read_text("utf-8"))  # the claim as written
    assert (
        report["chosen"]["arguments"][0][-1]["claim"]
        == r"p = \frac{12 \text{ pens}}{3} = 4 \text{ pens}"
    )


def test_ask_takes_every_flag_of_orchestrator_run_from_the_same_definitions() -> None:
    def flags(parser: argparse.ArgumentParser) -> dict[str, tuple[Any, str | None]]:
        return {
            option: (action.default, action.help)
            for action in parser._actions
            for option in action.option_strings
        }

    run_flags = flags(run.build_parser())
    del run_flags["--task"]
    ask_flags = flags(ask.build_parser())
    assert {name: ask_flags.get(name) for name in run_flags} == run_flags


def test_logic_graph_help_names_every_command_not_only_the_index_ones() -> None:
    text = logic_graph_parser().format_help()
    for command in ("ask", "serve", "ingest", "search", "info"):
        assert command in text
    assert "answer" in text.lower()


# -- progress lines ----------------------------------------------------------------------------


def call_event(done: int, cost: float = 0.0, unknown: int = 0) -> dict[str, Any]:
    return {
        "step": "fan_out",
        "calls_done": done,
        "budget_calls": 20,
        "cost_usd_known": cost,
        "calls_cost_unknown": unknown,
    }


def lines_of(progress_events: list[dict[str, Any]], *, corpus: bool = False) -> list[str]:
    stream = io.StringIO()
    progress = LiveProgress(stream)
    guard = GuardedClient(ScriptedClient(["x"]))
    with progress.watch(guard, RunConfig(n=2, max_retrieval_rounds=2), corpus=corpus):
        for event in progress_events:
            progress(event)
    return stream.getvalue().splitlines()


def test_a_progress_line_counts_calls_against_the_call_cap_not_as_tokens() -> None:
    (line,) = lines_of([call_event(3)])
    assert "fan_out: call 3 of at most 20 done" in line
    assert "cap" not in line


def test_a_progress_line_names_a_hop_lookup_and_a_repair_but_not_an_interrogation() -> None:
    roles = ("interrogation", "lookup", "plan", "repair")
    lines = lines_of([{**call_event(done), "role": role} for done, role in enumerate(roles, 1)])
    labels = [line.split("] ", 1)[1].split(":", 1)[0] for line in lines]
    assert labels == ["fan_out", "fan_out lookup", "fan_out plan", "fan_out repair"]


def test_a_free_model_shows_no_spend_and_unknown_costs_are_never_shown_as_zero() -> None:
    free, paid, unknown = lines_of([call_event(1), call_event(2, 1.2e-4), call_event(3, 0, 1)])
    assert "spend" not in free and "$" not in free
    assert paid.endswith("spend $0.000120")
    assert unknown.endswith("spend 1 call(s) of unknown cost")


def test_a_corpus_run_announces_the_rewrite_and_each_round_and_its_eta_counts_the_rounds() -> None:
    plain = lines_of([call_event(1)])
    rounds = lines_of(
        [
            {"announce": "rewriting the question into search queries", "round": 1},
            {"announce": "retrieval round 1 of at most 2: 3 new chunk(s)", "round": 1},
            call_event(1),
            {"announce": "retrieval round 2 of at most 2: 1 new chunk(s)", "round": 2},
            call_event(3),
        ],
        corpus=True,
    )
    assert rounds[0] == "[logic-graph] rewriting the question into search queries"
    assert rounds[1].startswith("[logic-graph] retrieval round 1 of at most 2")
    assert "left if 1 more retrieval round run" in rounds[2]
    assert rounds[3].startswith("[logic-graph] retrieval round 2 of at most 2")
    assert "more retrieval round" not in rounds[4] and "more retrieval round" not in plain[0]


def test_calls_waiting_for_a_free_slot_are_shown_as_queued_with_their_own_age() -> None:
    slow = FakeReply(body=completion_body("ok"), delay_s=1.5)
    with FakeOpenAIServer(lambda req, headers: slow) as fake:
        guard = GuardedClient(ChatClient(fake.base_url, api_key=None, max_concurrency=1))
        threads = [
            threading.Thread(
                target=guard.chat,
                args=("m", [{"role": "user", "content": "x"}]),
                kwargs={"role": "interrogation", "tags": {"subject": f"r{i}"}},
            )
            for i in (1, 2)
        ]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 30
        while len(guard.running()) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        running = guard.running()
        for thread in threads:
            thread.join(timeout=30)
    assert sorted(queued for _, _, queued in running) == [False, True]


# -- small errors ------------------------------------------------------------------------------


def test_an_unknown_model_suggests_each_close_name_once(tmp_path: Path) -> None:
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"models": [{"id": "local-1.5b"}, {"id": "local"}]}))
    with pytest.raises(ValueError) as error, open_backend("local-1.5", models_path=models):
        pass
    hint = str(error.value).split("did you mean ")[1].split("?")[0]
    names = hint.split(" or ")
    assert len(names) == len(set(names)) and "'local-1.5b'" in names


def test_a_task_without_documents_names_both_documents_and_corpus() -> None:
    with pytest.raises(TaskError) as error:
        validate_task({"question": "Which hall?"})
    message = str(error.value)
    assert "'documents'" in message and "'corpus'" in message and "NoneType" not in message
