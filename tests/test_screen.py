"""screen.py end to end against a fake OpenAI-compatible server on 127.0.0.1, plus the summary
and default-model rule of evals.grounding."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tiny_model import tiny_model_missing

import screen
from evals.grounding import (
    ABSTAIN_REPLY,
    Item,
    ModelSummary,
    choose_default,
    item_sha,
    load_items,
    screen_messages,
    summarise,
)
from evals.grounding_models import (
    ModelSpec,
    load_models_config,
    resolve_models,
    worst_case_call_cost,
)
from orchestrator.llm import prompt_tokens
from orchestrator.llm.testing import FakeOpenAIServer, FakeReply, completion_body

ITEMS = load_items(screen.DEFAULT_ITEMS)
BY_QUESTION = {it.question: it for it in ITEMS}
GROUNDED, MEMORIZING, ABSTAINER = "persona/grounded", "persona/memorizing", "persona/abstainer"
PERSONAS = (GROUNDED, MEMORIZING, ABSTAINER)


def _item_of(request: dict[str, Any]) -> Item:
    user = request["messages"][-1]["content"]
    return BY_QUESTION[user.split("\nQuestion: ", 1)[1]]


def persona_answer(model: str, item: Item) -> str:
    """Three scripted models: one reads the document, one recites a world-knowledge table
    (and guesses where it has no entry), one always declines."""
    if model == GROUNDED:
        return item.examples["grounded"][0] if item.expected == "answer" else ABSTAIN_REPLY
    if model == MEMORIZING:
        return (item.examples.get("memorized") or item.examples["other"])[0]
    return "I cannot answer that from the document."


def persona_handler(request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
    text = persona_answer(request["model"], _item_of(request))
    return FakeReply(body=completion_body(text, prompt_tokens=200, completion_tokens=6))


def write_models(
    path: Path, base_url: str, models: tuple[str, ...] = PERSONAS, price: float = 1e-7
) -> Path:
    config = {
        "default_model": "local",
        "default_rule": "highest grounded% below the leak threshold; cheapest on ties",
        "max_leak_rate": 0.2,
        "note": "kept verbatim by --set-default",
        "models": [
            {"id": "local", "backend": "local", "pricing": {"prompt": 0.0, "completion": 0.0}},
            *(
                {
                    "id": m,
                    "backend": "openrouter",
                    "base_url": base_url,
                    "pricing": {"prompt": price, "completion": 2 * price},
                }
                for m in models
            ),
        ],
    }
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


@contextmanager
def persona_server(tmp_path: Path, **models: Any) -> Iterator[tuple[FakeOpenAIServer, Path]]:
    """The personas served, and a models.json pointing at them (``models``: as
    :func:`write_models` takes them)."""
    with FakeOpenAIServer(persona_handler) as server:
        yield server, write_models(tmp_path / "models.json", server.base_url, **models)


def run_cli(tmp_path: Path, models_file: Path, *extra: str, models: str | None = None) -> int:
    argv = [
        "--models",
        models or ",".join(PERSONAS),
        "--models-file",
        str(models_file),
        "--out",
        str(tmp_path / "out"),
        *extra,
    ]
    return screen.main(argv)


def result_rows(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "out" / "results.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ---- end to end -----------------------------------------------------------------------------


def test_three_personas_are_scored_as_what_they_are_and_the_grounded_one_becomes_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with persona_server(tmp_path) as (server, models_file):
        before = json.loads(models_file.read_text(encoding="utf-8"))
        code = run_cli(tmp_path, models_file, "--set-default")
        requests = server.chat_requests()
    assert code == 0
    assert len(requests) == 3 * len(ITEMS)
    assert {(r["temperature"], r["max_tokens"]) for r in requests} == {(0.0, 128)}

    rows = result_rows(tmp_path)
    assert len(rows) == 3 * len(ITEMS)
    assert {(r["model"], r["item_id"]) for r in rows} == {
        (m, it.id) for m in PERSONAS for it in ITEMS
    }
    for row in rows:
        assert row["error"] is None and isinstance(row["answer"], str)
        assert row["category"] in ("counterfactual", "fictional", "unanswerable", "numeric")
        assert (row["prompt_tokens"], row["completion_tokens"]) == (200, 6)
        assert row["cost_usd"] == pytest.approx(200 * 1e-7 + 6 * 2e-7)
        assert row["latency_s"] >= 0

    summaries = {m: summarise(m, ITEMS, rows) for m in PERSONAS}
    n_unanswerable = sum(it.expected == "abstain" for it in ITEMS)
    n_with_memory = sum(it.memorized is not None for it in ITEMS)
    grounded, memorizing, abstainer = (summaries[m] for m in PERSONAS)
    assert grounded.counts == {
        "grounded": len(ITEMS) - n_unanswerable,
        "memorized": 0,
        "abstain": n_unanswerable,
        "other": 0,
    }
    assert (grounded.leak_rate, grounded.correct_abstention_rate) == (0.0, 1.0)
    assert memorizing.counts["memorized"] == n_with_memory
    assert memorizing.counts["other"] == len(ITEMS) - n_with_memory
    assert (memorizing.leak_rate, memorizing.correct_abstention_rate) == (1.0, 0.0)
    assert abstainer.counts["abstain"] == len(ITEMS)
    assert (abstainer.leak_rate, abstainer.correct_abstention_rate) == (0.0, 1.0)
    assert grounded.cost_usd == pytest.approx(len(ITEMS) * (200 * 1e-7 + 6 * 2e-7))

    out = capsys.readouterr().out
    assert "| persona/grounded | 50/50 | 74.0% | 0.0% | 26.0% | 0.0% | 0.00 (0/13)" in out
    assert "| persona/memorizing | 50/50 | 0.0% | 62.0% | 0.0% | 38.0% | 1.00 (13/13)" in out
    assert "| persona/abstainer | 50/50 | 0.0% | 0.0% | 100.0% | 0.0%" in out
    assert "n/a (none grounded)" in out
    summary_md = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "| persona/grounded | 50/50 | 74.0%" in summary_md
    assert "## By category" in summary_md

    after = json.loads(models_file.read_text(encoding="utf-8"))
    assert after["default_model"] == GROUNDED
    evidence = after.pop("default_evidence")
    assert [c["model"] for c in evidence["candidates"] if c["eligible"]] == [GROUNDED, ABSTAINER]
    assert {k: v for k, v in after.items() if k != "default_model"} == {
        k: v for k, v in before.items() if k != "default_model"
    }


def test_a_rerun_only_calls_the_pairs_not_yet_answered(tmp_path: Path) -> None:
    with persona_server(tmp_path) as (server, models_file):
        assert run_cli(tmp_path, models_file, "--limit", "4", models=GROUNDED) == 0
        assert len(server.chat_requests()) == 4
        assert run_cli(tmp_path, models_file, "--limit", "6", models=GROUNDED) == 0
        assert len(server.chat_requests()) == 6
        assert run_cli(tmp_path, models_file, "--limit", "6", models=GROUNDED) == 0
        assert len(server.chat_requests()) == 6
        asked = [_item_of(r).id for r in server.chat_requests()]
    assert asked == [it.id for it in ITEMS[:6]]
    assert len(result_rows(tmp_path)) == 6


def test_failed_calls_are_recorded_then_retried_by_the_next_run(tmp_path: Path) -> None:
    broken = {ITEMS[1].id}

    def flaky(request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
        if _item_of(request).id in broken:
            return FakeReply(status=400, body={"error": {"message": "bad request"}})
        return persona_handler(request, headers)

    with FakeOpenAIServer(flaky) as server:
        models_file = write_models(tmp_path / "models.json", server.base_url)
        assert run_cli(tmp_path, models_file, "--limit", "3", models=GROUNDED) == 1
        rows = result_rows(tmp_path)
        failed = [r for r in rows if r["error"] is not None]
        assert [r["item_id"] for r in failed] == [ITEMS[1].id]
        assert failed[0]["answer"] is None and "400" in failed[0]["error"]
        assert failed[0]["cost_usd"] == 0.0  # a rejected request is not billed
        assert summarise(GROUNDED, ITEMS[:3], rows).graded == 2

        broken.clear()
        assert run_cli(tmp_path, models_file, "--limit", "3", models=GROUNDED) == 0
        assert [_item_of(r).id for r in server.chat_requests()[-1:]] == [ITEMS[1].id]
    assert summarise(GROUNDED, ITEMS[:3], result_rows(tmp_path)).graded == 3


def test_a_model_that_keeps_failing_is_abandoned_after_three_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def dead(request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
        if request["model"] == MEMORIZING:
            return FakeReply(status=404, body={"error": {"message": "no such model"}})
        return persona_handler(request, headers)

    with FakeOpenAIServer(dead) as server:
        models_file = write_models(tmp_path / "models.json", server.base_url)
        code = run_cli(tmp_path, models_file, "--limit", "8", models=f"{MEMORIZING},{GROUNDED}")
        per_model = [r["model"] for r in server.chat_requests()]
    assert code == 1
    assert per_model.count(MEMORIZING) == 3
    assert per_model.count(GROUNDED) == 8
    assert "giving up after 3 failed calls in a row" in capsys.readouterr().err


def test_a_malformed_items_line_names_its_line_and_nothing_is_run_or_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = screen.DEFAULT_ITEMS.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:-5]  # truncate line 3 mid-object
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(lines) + "\n", encoding="utf-8")
    original = items.read_bytes()
    with persona_server(tmp_path) as (server, models_file):
        code = run_cli(tmp_path, models_file, "--items", str(items))
        assert server.chat_requests() == []
    assert code == 2
    err = capsys.readouterr().err
    assert "line 3: not valid JSON" in err and "nothing was run" in err
    assert items.read_bytes() == original
    assert not (tmp_path / "out").exists()


def test_an_unknown_model_without_a_base_url_is_an_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models_file = write_models(tmp_path / "models.json", "http://127.0.0.1:9/v1")
    assert run_cli(tmp_path, models_file, models=f"{GROUNDED},no/such-model") == 2
    err = capsys.readouterr().err
    assert "unknown model 'no/such-model'" in err and "--base-url" in err
    assert not (tmp_path / "out").exists()


def test_an_output_path_that_is_a_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "out").write_text("not a directory", encoding="utf-8")
    models_file = write_models(tmp_path / "models.json", "http://127.0.0.1:9/v1")
    assert run_cli(tmp_path, models_file, models=GROUNDED) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_a_worst_case_above_the_cap_is_refused_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with persona_server(tmp_path, price=1e-4) as (server, models_file):
        code = run_cli(tmp_path, models_file, "--max-cost", "0.50")
        assert server.chat_requests() == []
    assert code == 2
    captured = capsys.readouterr()
    assert "Worst-case cost before any call" in captured.out
    assert "refusing to start: worst-case cost" in captured.err
    assert not (tmp_path / "out").exists()


def test_the_estimate_is_priced_from_estimated_prompt_tokens_and_max_tokens() -> None:
    spec = ModelSpec("m", None, False, 1e-6, 3e-6, listed=True)
    item = ITEMS[0]
    chars = sum(len(m["content"]) for m in screen_messages(item))
    prompt = prompt_tokens(screen_messages(item))
    assert prompt >= chars / 3 + 16
    assert worst_case_call_cost(spec, item, 100) == pytest.approx(prompt * 1e-6 + 3e-4)
    unpriced = ModelSpec("m", "http://x", False, None, None, listed=False)
    assert worst_case_call_cost(unpriced, item, 100) is None


def test_a_run_stops_when_reported_costs_use_up_the_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def expensive(request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
        text = persona_answer(request["model"], _item_of(request))
        return FakeReply(body=completion_body(text, cost=0.4))

    with FakeOpenAIServer(expensive) as server:
        models_file = write_models(tmp_path / "models.json", server.base_url, price=1e-9)
        assert run_cli(tmp_path, models_file, "--limit", "6", models=GROUNDED) == 1
        assert len(server.chat_requests()) == 3  # 0.4 + 0.4 + 0.4 crosses the 1.00 default cap
    assert "budget is used up" in capsys.readouterr().err


def test_an_unpriced_model_is_refused_unless_explicitly_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with persona_server(tmp_path, models=()) as (server, models_file):
        args = ("--base-url", server.base_url, "--limit", "2")
        assert run_cli(tmp_path, models_file, *args, models=GROUNDED) == 2
        assert "no price known for persona/grounded" in capsys.readouterr().err
        assert server.chat_requests() == []
        assert run_cli(tmp_path, models_file, *args, "--allow-unknown-cost", models=GROUNDED) == 0
        assert len(server.chat_requests()) == 2
    rows = result_rows(tmp_path)
    assert [r["cost_usd"] for r in rows] == [None, None]
    assert "unknown (>= $0.000000; 2 calls unpriced)" in capsys.readouterr().out


def test_a_dry_run_prints_the_estimate_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with persona_server(tmp_path) as (server, models_file):
        before = models_file.read_bytes()
        assert run_cli(tmp_path, models_file, "--dry-run", "--set-default") == 0
        assert server.chat_requests() == []
    out = capsys.readouterr().out
    assert "persona/grounded" in out and "50 calls" in out and "dry run" in out
    assert not (tmp_path / "out").exists()
    assert models_file.read_bytes() == before


def test_set_default_with_no_eligible_model_leaves_models_json_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with persona_server(tmp_path) as (_, models_file):
        before = models_file.read_bytes()
        assert run_cli(tmp_path, models_file, "--set-default", models=MEMORIZING) == 1
    captured = capsys.readouterr()
    assert "leak rate 1.00 is not below 0.20" in captured.out
    assert "no eligible model" in captured.err
    assert models_file.read_bytes() == before


def test_a_torn_last_results_line_is_skipped_and_never_merged_into(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    torn = '{"model": "persona/grounded", "item_id": "cf-01", "ans'
    (out / "results.jsonl").write_text(torn, encoding="utf-8")
    with persona_server(tmp_path) as (_, models_file):
        assert run_cli(tmp_path, models_file, "--limit", "2", models=GROUNDED) == 0
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines[0] == torn
    assert [json.loads(line)["item_id"] for line in lines[1:]] == ["cf-01", "fi-01"]
    assert "line 1 ignored: not valid JSON" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [["--models", "x", "--limit", "0"], ["--models", "x", "--max-cost", "-1"]],
)
def test_invalid_numeric_arguments_are_rejected_by_the_parser(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        screen.main(argv)
    assert info.value.code == 2


def test_the_shipped_models_file_is_valid_and_its_default_is_listed() -> None:
    config = load_models_config(screen.DEFAULT_MODELS_FILE)
    ids = config.ids()
    assert len(ids) == len(set(ids))
    assert config.default_model in ids
    assert {"local", "local-1.5b", "local-tiny"} <= set(ids)
    for spec in resolve_models(ids, config, None, screen.DEFAULT_MODELS_FILE):
        assert spec.price_per_token is not None, spec.id
        assert spec.is_local or spec.base_url, spec.id


# ---- summary and default rule ---------------------------------------------------------------


def _row(item: Item, answer: str | None, **extra: Any) -> dict[str, Any]:
    row = {
        "model": "m",
        "item_id": item.id,
        "item_sha": item_sha(item),
        "answer": answer,
        "error": None if answer is not None else "APIStatusError: boom",
        "cost_usd": 0.01,
    }
    row.update(extra)
    return row


def test_summary_regrades_the_latest_answer_and_ignores_answers_to_an_older_prompt() -> None:
    item = ITEMS[0]  # cf-01: Perth (document) vs Canberra (memory)
    rows = [
        _row(item, "Canberra"),
        _row(item, "Perth", item_sha="stale"),
        _row(item, None),
        _row(item, "Perth"),
    ]
    s = summarise("m", [item], rows)
    assert s.counts["grounded"] == 1 and s.graded == 1
    assert s.cost_usd == pytest.approx(0.04)
    assert summarise("m", [item], rows[:3]).counts["memorized"] == 1


def test_summary_cost_is_unknown_when_any_call_cost_is_unknown() -> None:
    item = ITEMS[0]
    s = summarise("m", [item], [_row(item, None, cost_usd=None), _row(item, "Perth")])
    assert s.cost_usd is None and s.cost_usd_known == pytest.approx(0.01)
    assert s.cost_per_grounded is None and s.calls_cost_unknown == 1


def _summary(model: str, grounded: int, leaks: int, price: float | None, **kw: Any) -> ModelSummary:
    defaults: dict[str, Any] = {
        "items": 10,
        "graded": 10,
        "failed": 0,
        "unanswerable": 4,
        "correct_abstentions": 4 - leaks,
        "cost_usd": 0.0,
        "cost_usd_known": 0.0,
        "calls_cost_unknown": 0,
    }
    defaults.update(kw)
    counts = {"grounded": grounded, "memorized": leaks, "abstain": 4 - leaks, "other": 0}
    return ModelSummary(model=model, counts=counts, leaks=leaks, price_per_token=price, **defaults)


def test_default_rule_picks_the_highest_grounded_share_below_the_leak_threshold() -> None:
    winner, excluded = choose_default(
        [_summary("a", 5, 0, 1.0), _summary("b", 6, 1, 1.0), _summary("c", 4, 0, 0.1)], 0.2
    )
    assert (winner, excluded) == ("a", {"b": "leak rate 0.25 is not below 0.20"})


def test_default_rule_breaks_ties_by_price_with_unknown_price_last_then_by_id() -> None:
    tied = [_summary("z", 5, 0, None), _summary("y", 5, 0, 2.0), _summary("x", 5, 0, 2.0)]
    assert choose_default(tied, 0.2)[0] == "x"
    assert choose_default([tied[0], _summary("w", 5, 0, 9.0)], 0.2)[0] == "w"


def test_default_rule_excludes_incomplete_runs_and_a_leak_rate_at_the_threshold() -> None:
    incomplete = _summary("a", 6, 0, 0.0, graded=9, failed=1)
    at_threshold = _summary("b", 6, 1, 0.0)
    no_unanswerable = _summary("c", 6, 0, 0.0, unanswerable=0)
    winner, excluded = choose_default([incomplete, at_threshold, no_unanswerable], 0.25)
    assert winner is None
    assert set(excluded) == {"a", "b", "c"}
    assert "graded 9 of 10" in excluded["a"]
    assert "unknown" in excluded["c"]


@pytest.mark.local_model
@pytest.mark.skipif(tiny_model_missing() is not None, reason=str(tiny_model_missing()))
def test_the_built_in_tiny_model_is_screened_through_the_same_path_at_zero_cost(
    tmp_path: Path,
) -> None:
    argv = ["--models", "local-tiny", "--limit", "4", "--max-tokens", "32"]
    code = screen.main([*argv, "--out", str(tmp_path / "out")])
    rows = result_rows(tmp_path)
    assert [r["item_id"] for r in rows] == [it.id for it in ITEMS[:4]]
    assert all(r["cost_usd"] == 0.0 for r in rows)
    assert code == (0 if all(r["error"] is None for r in rows) else 1)
