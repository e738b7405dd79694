"""The command line, end to end against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from canned_runs import CONTRADICTING, GOOD, RACK7_TASK, claim_of, refute_wrong_claims

from corpus.evidence import build_evidence
from orchestrator.api import default_model
from orchestrator.cli.run import main
from orchestrator.llm.testing import FakeOpenAIServer, FakeReply, completion_body
from orchestrator.records.task import TaskError
from orchestrator.reply import prompts

VERIFY_SYSTEM = prompts.verification_messages(build_evidence(["x"]), "y")[0]["content"]


class Model:
    """Fake server behaviour: the first interrogation is rate-limited once (Retry-After: 0),
    one interrogation misreads the documents, the rest argue the rack-7 case; verifiers
    refute the misreading 2 to 1."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.interrogations = 0
        self.claims: dict[str, int] = {}

    def __call__(self, request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
        messages = request["messages"]
        if messages[0]["content"] == VERIFY_SYSTEM:
            claim = claim_of(messages)
            with self.lock:
                nth = self.claims.get(claim, 0)
                self.claims[claim] = nth + 1
            return self.reply(refute_wrong_claims(claim, nth))
        with self.lock:
            self.interrogations += 1
            count = self.interrogations
        if count == 1:
            return FakeReply(status=429, headers={"Retry-After": "0"})
        return self.reply(CONTRADICTING if count == 2 else GOOD)

    @staticmethod
    def reply(text: str) -> FakeReply:
        return FakeReply(
            body=completion_body(text, prompt_tokens=100, completion_tokens=50, cost=1e-4)
        )


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(Model()) as fake:
        yield fake


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    path = tmp_path / "rack7.json"
    path.write_text(json.dumps(RACK7_TASK))
    return path


def served(task_file: Path, base_url: str, model: str = "fake-model") -> list[str]:
    """The flags that run ``task_file`` on ``model`` at ``base_url``."""
    return ["--task", str(task_file), "--model", model, "--base-url", base_url]


def test_cli_answers_the_rack7_task_and_writes_both_reports(
    server: FakeOpenAIServer, task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main(
        [
            *served(task_file, server.base_url),
            "--out",
            str(out),
            "--seed",
            "3",
            "--budget-calls",
            "20",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out.strip() == str(out / "report.json")
    assert "fan_out: call 1 of at most 20 done" in captured.err and "spend $" in captured.err
    report = json.loads((out / "report.json").read_text())
    assert report["answer"] == "yes"
    assert report["conclusion"] == "server x9 can be used for the nightly cron job"
    assert any("cannot be used" in k["claim"] for k in report["killed"])
    totals = report["totals"]
    assert totals["calls"] <= 20 and len(server.chat_requests()) == totals["http_attempts"]
    assert totals["retries"] == 1  # the 429 was retried inside one logical call
    assert totals["cost_usd"] == pytest.approx(1e-4 * totals["calls"])
    assert report["context"]["base_url"] == server.base_url
    assert "```mermaid" in (out / "report.md").read_text()
    assert (out / "trace.jsonl").read_text().count('"event": "call"') == totals["calls"]
    seeds = [r["seed"] for r in server.chat_requests()]
    assert all(isinstance(s, int) for s in seeds)


def test_json_flag_prints_the_report(
    server: FakeOpenAIServer, task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = served(task_file, server.base_url)
    code = main([*argv, "--out", str(tmp_path / "o"), "--json", "--quiet", "--n", "3"])
    captured = capsys.readouterr()
    assert code == 0 and captured.err == ""
    report = json.loads(captured.out)
    assert report["config"]["n"] == 3 and not report["refused"]


def test_structured_output_flag_reaches_the_server(
    server: FakeOpenAIServer, task_file: Path, tmp_path: Path
) -> None:
    argv = served(task_file, server.base_url)
    assert main([*argv, "--out", str(tmp_path / "o"), "--quiet", "--structured-output"]) == 0
    assert all("response_format" in r for r in server.chat_requests())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot be read"),
        ("{not json", "not valid JSON"),
        ('{"documents": ["d"]}', "'question'"),
        ('{"question": "q", "documents": "d"}', "'documents'"),
        ('{"question": "q", "documents": ["d"], "extra": 1}', "unknown field"),
        ("[1, 2]", "JSON object"),
    ],
)
def test_bad_task_file_exits_2_with_a_clear_error_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "task.json"
    if content is not None:
        path.write_text(content)
    code = main(["--task", str(path), "--model", "fake-model", "--out", str(tmp_path / "o")])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.startswith("error: ") and message in captured.err
    assert "Traceback" not in captured.err and captured.out == ""
    assert not (tmp_path / "o").exists()


def test_bad_settings_exit_2(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--task", str(task_file), "--model", "m", "--n", "0"]) == 2
    assert "n=0 is invalid" in capsys.readouterr().err
    assert main(["--task", str(task_file), "--model", "m", "--out", str(task_file)]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_default_model_comes_from_models_json(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"default_model": "some/model", "models": []}))
    assert default_model(path) == "some/model"
    path.write_text(json.dumps({"models": []}))
    with pytest.raises(TaskError, match="default_model"):
        default_model(path)


def test_python_dash_m_runs_end_to_end_with_the_default_output_folder(
    server: FakeOpenAIServer, task_file: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENROUTER_API_KEY"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "orchestrator.run",
            *served(task_file, server.base_url),
            *("--n", "2", "--budget-calls", "5"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report_path = tmp_path / result.stdout.strip()
    assert report_path.parent.parent == tmp_path / "runs"
    assert report_path.parent.name.endswith("-rack7")
    report = json.loads(report_path.read_text())
    assert report["totals"]["calls"] <= 5
    assert (report_path.parent / "report.md").is_file()


# -- an unusable backend: exit 1, one line, the fix -------------------------------------------


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and "Traceback" not in err
    return lines[0]


def test_a_hosted_model_without_a_key_exits_1_before_any_request(
    task_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    monkeypatch.delenv("LOGIC_GRAPH_BASE_URL", raising=False)
    with FakeOpenAIServer() as watcher:  # as the HTTPS proxy it would see any request
        monkeypatch.setenv("HTTPS_PROXY", watcher.base_url.removesuffix("/v1"))
        code = main(["--task", str(task_file), "--model", "foo/bar", "--out", str(tmp_path / "o")])
        assert watcher.requests == []
    assert code == 1
    line = _one_error_line(capsys.readouterr().err)
    assert "OPENROUTER_API_KEY is not set" in line
    assert line.endswith(
        "Fix: export OPENROUTER_API_KEY=<your key>, or run offline with --model local-1.5b"
    )
    assert not (tmp_path / "o" / "report.json").exists()


@pytest.mark.parametrize(("status", "words"), [(401, "HTTP 401"), (402, "HTTP 402")])
def test_a_rejected_key_or_no_credits_exits_1_with_one_line_and_few_requests(
    status: int, words: str, task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer(lambda req, headers: FakeReply(status=status)) as fake:
        argv = served(task_file, fake.base_url, "m")
        code = main([*argv, "--out", str(tmp_path / "o"), "--quiet"])
        sent = len(fake.chat_requests())
    assert code == 1
    line = _one_error_line(capsys.readouterr().err)
    assert words in line and "Fix: " in line
    assert 1 <= sent <= 6  # the fan-out's calls at most; no retries, no verification round
    assert not (tmp_path / "o" / "report.json").exists()


def test_connection_refused_exits_1_with_one_line_and_no_chat_call(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer() as gone:
        url = gone.base_url
    code = main(["--task", str(task_file), "--model", "m", "--base-url", url, "--quiet"])
    assert code == 1
    line = _one_error_line(capsys.readouterr().err)
    assert "connection refused" in line and "Fix: start the model server" in line


def test_a_host_name_that_does_not_resolve_exits_1_with_one_line(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "http://no-such-host.logic-graph.invalid/v1"
    code = main(["--task", str(task_file), "--model", "m", "--base-url", url, "--quiet"])
    assert code == 1
    line = _one_error_line(capsys.readouterr().err)
    assert "does not resolve" in line and "Fix: check the host" in line


# -- bounds ------------------------------------------------------------------------------------


def test_budget_seconds_bounds_a_run_against_a_slow_model_and_the_report_says_so(
    task_file: Path, tmp_path: Path
) -> None:
    slow_answer = GOOD + " " + "pad " * 400  # about 400 tokens: 20 s at 0.05 s per token
    with FakeOpenAIServer(lambda req, headers: slow_answer, seconds_per_token=0.05) as fake:
        argv = served(task_file, fake.base_url, "m")
        out = tmp_path / "o"
        code = main([*argv, "--out", str(out), "--quiet", "--budget-seconds", "1"])
    assert code == 1  # no call returned a reply: the backend's failure, not the evidence's
    report = json.loads((out / "report.json").read_text())
    assert report["timing"]["wall_s"] < 15
    assert report["refused"] and report["refusal_reason"] == "backend_failed"
    limits = report["limits"]
    assert limits["budget_seconds"] == 1.0 and limits["deadline_reached"] is True
    assert limits["http"]["timeout_s_per_attempt"] == 120.0
    assert "wall-clock budget 1 s" in (out / "report.md").read_text()
    assert {r["max_tokens"] for r in fake.chat_requests()} == {2048}


def test_a_negative_budget_seconds_is_bad_input(
    task_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--task", str(task_file), "--model", "m", "--budget-seconds", "-1"]) == 2
    assert "--budget-seconds" in capsys.readouterr().err


def test_a_server_that_drips_bytes_cannot_keep_a_run_past_its_budget_seconds(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One byte every 0.5 s: each read succeeds, so only a deadline on the whole answer stops
    # it. The per-attempt limit stays at its 120 s default; the run's budget is 3 s.
    drip = FakeReply(body=completion_body(GOOD), drip_s=0.5, drip_headers=True)
    with FakeOpenAIServer(lambda req, headers: drip) as fake:
        argv = served(task_file, fake.base_url, "m")
        out = tmp_path / "o"
        started = time.monotonic()
        code = main([*argv, "--out", str(out), "--quiet", "--budget-seconds", "3"])
        elapsed = time.monotonic() - started
    assert code == 1
    assert elapsed < 60  # 3 s budget; generous for a loaded machine
    report = json.loads((out / "report.json").read_text())
    assert report["limits"]["deadline_reached"] is True
    assert report["refusal_reason"] == "backend_failed"
    assert "evidence does not support" not in (out / "report.md").read_text()
    line = _one_error_line(capsys.readouterr().err)
    assert "no model call returned a reply" in line and "--budget-seconds" in line


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (FakeReply(status=500), "HTTP 500"),
        (FakeReply(drop_connection=True), "connection"),
    ],
    ids=["server-errors", "resets"],
)
def test_a_run_whose_every_call_fails_at_the_backend_exits_1_with_the_backends_reason(
    reply: FakeReply,
    words: str,
    task_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeOpenAIServer(lambda req, headers: reply) as fake:
        argv = served(task_file, fake.base_url, "m")
        code = main([*argv, "--out", str(tmp_path / "o"), "--quiet", "--retries", "0"])
    assert code == 1
    line = _one_error_line(capsys.readouterr().err)
    assert words in line and "Fix: " in line
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["refusal_reason"] == "backend_failed"
    assert report["headline"].startswith("Failed: backend_failed")
    assert "evidence was never judged" in report["statement"]


def test_replies_that_arrive_but_are_unusable_still_refuse_as_all_runs_failed(
    task_file: Path, tmp_path: Path
) -> None:
    with FakeOpenAIServer(lambda req, headers: "this is not a graph") as fake:
        argv = served(task_file, fake.base_url, "m")
        code = main([*argv, "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 3  # refused: the replies came, the evidence was judged unusable
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["refusal_reason"] == "all_runs_failed"


def test_request_timeout_retries_and_concurrency_flags_reach_the_client(
    task_file: Path, tmp_path: Path
) -> None:
    slow = FakeReply(body=completion_body(GOOD), delay_s=0.3)
    with FakeOpenAIServer(lambda req, headers: slow) as fake:
        argv = served(task_file, fake.base_url, "m")
        flags = ["--request-timeout", "45", "--retries", "1", "--concurrency", "2"]
        code = main([*argv, *flags, "--out", str(tmp_path / "o"), "--quiet", "--n", "4"])
        peak = fake.max_in_flight
    assert code == 0
    limits = json.loads((tmp_path / "o" / "report.json").read_text())["limits"]
    assert limits["http"]["timeout_s_per_attempt"] == 45.0
    assert limits["http"]["max_retries"] == 1
    assert limits["max_concurrency"] == 2 and peak <= 2


@pytest.mark.parametrize(
    "flag", [["--request-timeout", "0"], ["--retries", "11"], ["--concurrency", "0"]]
)
def test_out_of_range_backend_flags_are_bad_input_naming_the_flag(
    flag: list[str], task_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--task", str(task_file), "--model", "m", *flag]) == 2
    assert flag[0] in capsys.readouterr().err


def test_a_misspelt_built_in_model_is_unknown_with_suggestions_not_a_missing_key(
    task_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    monkeypatch.delenv("LOGIC_GRAPH_BASE_URL", raising=False)
    assert main(["--task", str(task_file), "--model", "locl", "--quiet"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "unknown model 'locl'" in line and "did you mean 'local'" in line
    assert "OPENROUTER_API_KEY" not in line


def test_live_progress_counts_calls_against_the_budget_cap_and_reports_running_calls(
    task_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("orchestrator.report.progress.TICK_S", 0.2)
    slow = FakeReply(body=completion_body(GOOD, completion_tokens=321), delay_s=1.0)
    with FakeOpenAIServer(lambda req, headers: slow) as fake:
        argv = served(task_file, fake.base_url, "m")
        code = main([*argv, "--out", str(tmp_path / "o"), "--n", "2", "--budget-calls", "20"])
    assert code == 0
    err = capsys.readouterr().err
    assert "in flight: interrogation r" in err
    # The token figure is the run's total so far: when both slow calls return together, the
    # first progress line may already count the second call's 321 tokens too.
    assert re.search(r"fan_out: call 1 of at most 20 done, (321|642) tokens;", err)
    assert "1/20" not in err
