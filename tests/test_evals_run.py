"""`python -m evals.run` end to end against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from corpus.evidence import build_evidence
from evals import run as evals_run
from evals.datasets import BUILTIN, load_dataset
from evals.metrics import arm_metrics, g2_reading, width_strata
from evals.results import ResultRow
from evals.summary import main as summary_main
from orchestrator.llm.testing import FakeOpenAIServer, FakeReply, completion_body

ITEMS = load_dataset("multihop", limit=3) + load_dataset("math", limit=2)
ARM6_FLAGS = ["--n", "2", "--k", "1", "--budget-calls", "4"]


def gold_for(text: str) -> dict[str, Any]:
    """The item whose question appears in `text`."""
    matches = [item for item in ITEMS if item["question"] in text]
    assert len(matches) == 1, text[:200]
    return matches[0]


def graph_for(item: dict[str, Any]) -> str:
    """A valid interrogation reply: the item's evidence sentences support the gold answer."""
    sentences = [e["sentence"] for e in item["meta"]["evidence"]]
    span_of = {span.text: span.id for span in build_evidence(item["documents"]).spans}
    nodes = [
        {"id": f"g{i}", "type": "given", "source": span_of[s], "claim": s, "confidence": 0.9}
        for i, s in enumerate(sentences, start=1)
    ]
    nodes.append(
        {
            "id": "c",
            "type": "conclusion",
            "source": "none",
            "claim": f"The answer is {item['answer']}.",
            "confidence": 0.8,
        }
    )
    edges = [
        {"from": f"g{i}", "to": "c", "relation": "supports", "confidence": 0.9}
        for i in range(1, len(sentences) + 1)
    ]
    graph = {"nodes": nodes, "edges": edges, "conclusion_node": "c", "answer": item["answer"]}
    return json.dumps(graph)


def reply_text(request: dict[str, Any]) -> str:
    """What a well-behaved model says to each kind of request of the six arms."""
    messages = request["messages"]
    system, text = messages[0]["content"], "\n".join(m["content"] for m in messages)
    if '"verdict"' in system:
        return '{"verdict": "supported", "reason": "stated in [D1]"}'
    item = gold_for(text)
    if "argument graph" in system:
        return graph_for(item)
    if "compact arrow chain" in messages[-1]["content"]:
        answer: str = item["answer"]
        return "fact -> fact -> " + answer
    return f"Some reasoning.\nANSWER: {item['answer']}"


def serve(
    answer: Callable[[dict[str, Any]], str] = reply_text, cost: float | None = None
) -> FakeOpenAIServer:
    def handler(request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
        body = completion_body(answer(request), cost=cost, model=request["model"])
        return FakeReply(body=body)

    return FakeOpenAIServer(handler)


def items_flags(dataset: str, limit: int, arms: str) -> list[str]:
    """The flags that run the first ``limit`` items of ``dataset`` through ``arms``."""
    return ["--dataset", dataset, "--limit", str(limit), "--arms", arms]


def run_cli(server: FakeOpenAIServer, models_file: Path, out: Path, *extra: str) -> int:
    return evals_run.main(
        [
            "--model",
            "fake-model",
            "--base-url",
            server.base_url,
            "--models-file",
            str(models_file),
            "--out",
            str(out),
            "--max-tokens",
            "64",
            *extra,
        ]
    )


def calls_of_run(
    server: FakeOpenAIServer, models_file: Path, out: Path, *flags: str, code: int = 0
) -> int:
    """Run the CLI, check that it exits with ``code``, and return the chat requests it sent."""
    before = len(server.chat_requests())
    assert run_cli(server, models_file, out, *flags) == code
    return len(server.chat_requests()) - before


def raw(out: Path, arm: int) -> list[dict[str, Any]]:
    path = out / "raw" / f"arm{arm}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_seven_arm_run_writes_raw_lines_traces_and_a_summary(
    tmp_path: Path, models_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    with serve() as server:
        code = run_cli(
            server, models_file, out, "--dataset", "multihop", "--limit", "2", *ARM6_FLAGS
        )
    assert code == 0
    for arm in range(1, 8):
        rows = raw(out, arm)
        assert [r["id"] for r in rows] == ["multihop-0000", "multihop-0001"]
        assert all(r["correct"] and r["error"] is None for r in rows), rows
        assert all(r["cost_usd"] > 0 and r["tokens"] > 0 and r["n_calls"] >= 1 for r in rows)
        assert (out / "traces" / f"arm{arm}.jsonl").is_file()
    assert [r["n_calls"] for r in raw(out, 5)] == [3, 3]
    # Self-consistency spends exactly the calls the orchestrator spent on each item.
    assert [r["n_calls"] for r in raw(out, 7)] == [r["n_calls"] for r in raw(out, 6)]
    assert all(r["extra"]["calls_matched_to"]["source"].startswith("arm 6") for r in raw(out, 7))
    assert all(isinstance(r["width"], int) and r["width"] >= 1 for r in raw(out, 6))
    assert (out / "arm6" / "multihop-0000" / "report.json").is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["arms"]["1"]["accuracy"] == 1.0
    recorded = sum(r["cost_usd"] for arm in range(1, 8) for r in raw(out, arm))
    meta = json.loads((out / "run.json").read_text())
    assert meta["invocations"][0]["spent_usd"] == pytest.approx(recorded)
    markdown = (out / "summary.md").read_text()
    # One row in the cost table, one in the answers / abstentions table.
    assert markdown.count("| 6 full orchestrator |") == 2
    assert "net score" in markdown
    assert "cost per correct" in markdown and "support width" in markdown
    progress = capsys.readouterr().err
    assert "[2/2] multihop-0001 | a1 2/2 (100%) |" in progress and "| spent $" in progress
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "Plot skipped" in markdown
    else:
        assert (out / "accuracy_vs_cost.png").is_file()


def test_a_rerun_with_the_same_out_makes_no_calls_and_a_larger_limit_adds_items(
    tmp_path: Path, models_file: Path
) -> None:
    out = tmp_path / "run"
    with serve() as server:
        assert calls_of_run(server, models_file, out, *items_flags("multihop", 2, "1,2")) > 0
        assert calls_of_run(server, models_file, out, *items_flags("multihop", 2, "1,2")) == 0
        # The new item only: arm 1 makes one call, arm 2 two.
        assert calls_of_run(server, models_file, out, *items_flags("multihop", 3, "1,2")) == 3
    assert [r["id"] for r in raw(out, 2)] == ["multihop-0000", "multihop-0001", "multihop-0002"]
    assert len(json.loads((out / "run.json").read_text())["invocations"]) == 3


def test_skip_leaves_out_the_first_items_of_the_selection(
    tmp_path: Path, models_file: Path
) -> None:
    out = tmp_path / "run"
    with serve() as server:
        assert (
            calls_of_run(server, models_file, out, *items_flags("multihop", 3, "1"), "--skip", "2")
            == 1
        )
    assert [r["id"] for r in raw(out, 1)] == ["multihop-0002"]


def test_resuming_with_other_settings_is_refused_before_any_call(
    tmp_path: Path, models_file: Path
) -> None:
    out = tmp_path / "run"
    flags = items_flags("multihop", 1, "1")
    with serve() as server:
        calls_of_run(server, models_file, out, *flags)
        other = ["--temperature", "0.5"]
        assert calls_of_run(server, models_file, out, *flags, *other, code=2) == 0


def test_a_failed_call_is_recorded_as_an_error_and_retried_on_resume(
    tmp_path: Path, models_file: Path
) -> None:
    out = tmp_path / "run"
    failing = {"left": 1}
    lock = threading.Lock()

    def handler(request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
        with lock:
            if failing["left"]:
                failing["left"] -= 1
                return FakeReply(status=400, body={"error": {"message": "bad", "code": 400}})
        return FakeReply(body=completion_body(reply_text(request)))

    with FakeOpenAIServer(handler) as server:
        assert run_cli(server, models_file, out, *items_flags("multihop", 2, "1")) == 1
        rows = raw(out, 1)
        assert rows[0]["error"] and not rows[0]["correct"] and rows[1]["correct"]
        assert run_cli(server, models_file, out, *items_flags("multihop", 2, "1")) == 0
    rows = raw(out, 1)
    assert len(rows) == 3 and rows[-1]["id"] == "multihop-0000" and rows[-1]["correct"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["arms"]["1"]["correct"] == 2 and summary["arms"]["1"]["errors"] == 0


def test_the_cost_cap_stops_the_run_before_an_unaffordable_call(
    tmp_path: Path, models_file: Path
) -> None:
    out = tmp_path / "run"
    # Each call reports a cost of $0.001 and its worst case is $0.001 to $0.0013 (short math
    # prompts, 64 completion tokens), so a $0.0035 cap admits three calls and refuses the fourth
    # before it is sent.
    with serve(cost=0.001) as server:
        cap = ["--max-cost", "0.0035"]
        code = run_cli(server, models_file, out, *items_flags("math", 2, "1,2"), *cap)
        sent = len(server.chat_requests())
    assert code == 1
    rows = raw(out, 1) + raw(out, 2)
    assert sent == 3
    # Item 1 (arms 1 and 2: three calls) is recorded; item 2's arm 1 was refused, not recorded.
    assert [(r["arm"], r["id"]) for r in rows] == [(1, "math-0000"), (2, "math-0000")]
    meta = json.loads((out / "run.json").read_text())
    assert "cost cap reached" in meta["invocations"][0]["stopped"]
    assert meta["invocations"][0]["spent_usd"] <= 0.0035
    assert "stopped: cost cap reached" in (out / "summary.md").read_text()


def test_an_unpriced_model_is_refused_unless_unknown_cost_is_allowed(
    tmp_path: Path, models_file: Path
) -> None:
    out = tmp_path / "run"
    with serve() as server:
        args = [
            "--model",
            "mystery",
            "--base-url",
            server.base_url,
            "--models-file",
            str(models_file),
            "--dataset",
            "math",
            "--limit",
            "1",
            "--arms",
            "1",
        ]
        assert evals_run.main([*args, "--out", str(out)]) == 2
        assert server.chat_requests() == []
        assert evals_run.main([*args, "--out", str(out), "--allow-unknown-cost"]) == 0
    row = raw(out, 1)[0]
    assert row["cost_usd"] is None and row["correct"]
    assert "unknown" in (out / "summary.md").read_text()


def test_a_public_gsm8k_file_is_loaded_by_path(tmp_path: Path, models_file: Path) -> None:
    data = tmp_path / "gsm8k.jsonl"
    data.write_text(
        json.dumps({"question": ITEMS[3]["question"], "answer": "Work.\n#### 18"}) + "\n"
    )
    out = tmp_path / "run"
    with serve() as server:
        for fmt in ([], ["--format", "gsm8k"]):
            assert (
                run_cli(
                    server,
                    models_file,
                    out / str(len(fmt)),
                    "--dataset",
                    str(data),
                    "--arms",
                    "1",
                    *fmt,
                )
                == 0
            )
    assert raw(out / "0", 1)[0]["correct"] and raw(out / "2", 1)[0]["id"] == "gsm8k-00001"


@pytest.mark.parametrize(
    "args",
    [
        ["--arms", "8"],
        ["--arms", ","],
        ["--limit", "0"],
        ["--skip", "-1"],
        ["--limit", "2", "--skip", "2"],
        ["--max-cost", "-1"],
        ["--dataset", "no/such/file.jsonl"],
        ["--n", "0"],
        ["--temp", "3"],
    ],
)
def test_bad_arguments_are_refused_with_status_2(
    tmp_path: Path, models_file: Path, args: list[str]
) -> None:
    with serve() as server:
        base = ["--dataset", "math"] if "--dataset" not in args else []
        assert run_cli(server, models_file, tmp_path / "run", *base, *args) == 2
        assert server.chat_requests() == []


def test_an_out_path_that_is_a_file_or_a_foreign_run_json_is_refused(
    tmp_path: Path, models_file: Path
) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "run.json").write_text("[1, 2]")
    with serve() as server:
        for out in (not_a_dir, foreign):
            assert run_cli(server, models_file, out, "--dataset", "math", "--arms", "1") == 2
        assert evals_run.main(["--dataset", "math", "--resume", "no-such-run"]) == 2
        assert server.chat_requests() == []


# --- summary -------------------------------------------------------------------------------


def row(correct: bool, cost: float | None, **fields: Any) -> ResultRow:
    base: ResultRow = {
        "id": str(id(fields)),
        "kind": "qa",
        "answer": "x",
        "correct": correct,
        "f1": float(correct),
        "cost_usd": cost,
        "cost_usd_known": cost or 0.0,
        "tokens": 10,
        "latency_s": 1.0,
        "n_calls": 1,
        "refused": False,
        "error": None,
    }
    return cast(ResultRow, {**base, **fields})  # fields: more ResultRow fields


def test_cost_per_correct_is_honest_about_unknown_and_zero_costs() -> None:
    known = arm_metrics([row(True, 0.01), row(False, 0.01)])
    assert known["cost_per_correct_usd"] == pytest.approx(0.02)
    assert known["correct_per_usd"] == pytest.approx(50)
    unknown = arm_metrics([row(True, 0.01), row(True, None)])
    assert unknown["cost_usd"] is None and unknown["cost_per_correct_usd"] is None
    assert unknown["cost_usd_known"] == pytest.approx(0.01)
    free = arm_metrics([row(True, 0.0)])
    assert free["cost_usd"] == 0 and free["correct_per_usd"] is None
    assert arm_metrics([row(False, 0.01)])["cost_per_correct_usd"] is None


def test_width_strata_read_g4_from_answered_items_only() -> None:
    rows = [
        row(False, 0.0, width=1),
        row(True, 0.0, width=1),
        row(True, 0.0, width=2),
        row(True, 0.0, width=5),
        row(False, 0.0, width=2, refused=True),
        row(False, 0.0, width=None, refused=True),
    ]
    strata = width_strata(rows)
    assert strata["buckets"]["1"]["accuracy_answered"] == 0.5
    assert strata["buckets"]["2"] == {
        "items": 2,
        "answered": 1,
        "correct": 1,
        "accuracy_answered": 1.0,
    }
    assert strata["buckets"]["3+"]["items"] == 1 and strata["no_conclusion"] == 1
    assert strata["g4"]["verdict"] == "holds"
    assert width_strata([row(True, 0.0, width=1)])["g4"]["verdict"].startswith("not enough")


def test_g2_compares_arm_6_with_arms_2_and_3_on_common_items() -> None:
    arms = {
        2: {"a": row(False, 0.02), "b": row(True, 0.02)},
        3: {"a": row(True, 0.02), "b": row(False, 0.02), "c": row(True, 0.02)},
        6: {"a": row(True, 0.01), "b": row(True, 0.01)},
    }
    reading = g2_reading(arms)
    assert reading["verdict"] == "met"
    assert reading["versus"]["3"]["items"] == 2
    assert reading["versus"]["3"]["accuracy_delta_pp"] == pytest.approx(50.0)
    arms[6]["a"] = row(True, 0.05)
    assert g2_reading(arms)["verdict"] == "not met"
    assert g2_reading({1: {}})["verdict"].startswith("not applicable")


def test_the_summary_cli_rebuilds_and_combines_runs(
    tmp_path: Path, models_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    with serve() as server:
        assert run_cli(server, models_file, out, *items_flags("math", 1, "1")) == 0
    (out / "summary.md").unlink()
    assert summary_main([str(out)]) == 0 and (out / "summary.md").is_file()
    combined = tmp_path / "combined.md"
    assert summary_main([str(out), str(out), "--out", str(combined)]) == 0
    assert combined.read_text().count("fake-model / math / arm 1") == 2
    assert summary_main([str(tmp_path / "nothing")]) == 2


# --- every shipped data set, all seven arms --------------------------------------------------


def generic_reply(request: dict[str, Any]) -> str:
    """A model that knows the gold answer of any shipped item (and says "unknown" when there is
    none): arm 6 gets a graph whose one given quotes the item's first sentence."""
    messages = request["messages"]
    system, text = messages[0]["content"], "\n".join(m["content"] for m in messages)
    if '"verdict"' in system:
        return '{"verdict": "supported", "reason": "stated in [D1]"}'
    item = next(i for i in ALL_SHIPPED if i["question"] in text)
    answer = item["answer"] or "unknown"
    if "argument graph" not in system:
        return f"Some reasoning.\nANSWER: {answer}"
    documents = item["documents"] or [item["question"]]
    first = build_evidence(documents).spans[0]
    graph = {
        "nodes": [
            {"id": "g", "type": "given", "source": first.id, "claim": first.text},
            {"id": "c", "type": "conclusion", "source": "none", "claim": f"So: {answer}."},
        ],
        "edges": [{"from": "g", "to": "c", "relation": "supports"}],
        "conclusion_node": "c",
        "answer": item["answer"] or "unanswerable",
    }
    return json.dumps(graph)


SHIPPED = sorted(BUILTIN)
ALL_SHIPPED = [item for name in SHIPPED for item in load_dataset(name, limit=2)]


@pytest.mark.parametrize("dataset", SHIPPED)
def test_every_shipped_data_set_runs_through_all_seven_arms(
    dataset: str, tmp_path: Path, models_file: Path
) -> None:
    out = tmp_path / "run"
    with serve(generic_reply) as server:
        code = run_cli(server, models_file, out, "--dataset", dataset, "--limit", "2", *ARM6_FLAGS)
    assert code == 0
    for arm in range(1, 8):
        rows = raw(out, arm)
        assert len(rows) == 2 and all(r["error"] is None for r in rows), (arm, rows)
    assert [r["n_calls"] for r in raw(out, 7)] == [r["n_calls"] for r in raw(out, 6)]
    summary = json.loads((out / "summary.json").read_text())
    if all(r["answerable"] is False for r in raw(out, 1)):
        # The model says "unknown" to every unanswerable item: every arm abstains correctly.
        assert all(m["correct_abstentions"] == 2 for m in summary["arms"].values())
        assert all(m["net_score"] == 0 for m in summary["arms"].values())
    else:
        assert summary["arms"]["1"]["net_score"] == summary["arms"]["1"]["correct_answers"]


# --- estimates, progress and concurrent items ------------------------------------------------


def test_items_run_concurrently_with_jobs_give_the_same_results_as_one_at_a_time(
    tmp_path: Path, models_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arms = ["--dataset", "multihop", "--limit", "3", "--arms", "1,6,7", *ARM6_FLAGS]
    with serve() as server:
        assert run_cli(server, models_file, tmp_path / "one", *arms) == 0
        assert run_cli(server, models_file, tmp_path / "three", *arms, "--jobs", "3") == 0

    def outcomes(out: Path, arm: int) -> list[tuple[str, str, int]]:
        return sorted((r["id"], r["outcome"], r["n_calls"]) for r in raw(out, arm))

    for arm in (1, 6, 7):
        assert outcomes(tmp_path / "one", arm) == outcomes(tmp_path / "three", arm)
    err = capsys.readouterr().err
    assert "estimate: 3 items x up to 9 calls = up to 27 calls" in err
    assert "ETA" in err and "[3/3]" in err


def test_jobs_must_be_at_least_one(tmp_path: Path, models_file: Path) -> None:
    with serve() as server:
        code = run_cli(server, models_file, tmp_path / "r", "--dataset", "math", "--jobs", "0")
        assert code == 2 and server.chat_requests() == []


def test_a_backend_that_rejects_the_key_ends_the_run_with_exit_1_and_no_scores(
    tmp_path: Path, models_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def handler(request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
        return FakeReply(status=401)

    out = tmp_path / "run"
    with FakeOpenAIServer(handler) as server:
        code = run_cli(server, models_file, out, "--dataset", "math", "--arms", "1,6,7")
        requests = server.chat_requests()
    assert code == 1
    assert len(requests) == 1  # the first rejection stops everything
    assert raw(out, 1) == [] and raw(out, 6) == []  # nothing scored as a wrong answer
    error_lines = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(error_lines) == 1 and "401" in error_lines[0]


def test_an_unreachable_server_ends_the_run_with_exit_1_before_any_item(
    tmp_path: Path, models_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer(lambda request, headers: FakeReply()) as server:
        closed = server.base_url  # the port is closed once the server is gone
    where = ["--models-file", str(models_file), "--out", str(tmp_path / "run")]
    code = evals_run.main(
        ["--dataset", "math", "--arms", "1", "--model", "fake-model", "--base-url", closed, *where]
    )
    assert code == 1
    assert "error:" in capsys.readouterr().err
    assert raw(tmp_path / "run", 1) == []


def test_a_run_whose_items_keep_failing_stops_and_says_what_the_last_failure_was(
    tmp_path: Path, models_file: Path
) -> None:
    out = tmp_path / "run"

    def handler(request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
        return FakeReply(status=400, body={"error": {"message": "bad", "code": 400}})

    with FakeOpenAIServer(handler) as server:
        code = run_cli(server, models_file, out, *items_flags("math", 8, "1"))
    assert code == 1
    stopped = json.loads((out / "run.json").read_text())["invocations"][0]["stopped"]
    assert stopped.startswith("5 items failed in a row; the last: ")
    assert "400" in stopped and len(raw(out, 1)) == 5
