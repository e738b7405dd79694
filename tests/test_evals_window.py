"""The evaluation harness fits arm 6's documents into the model's context window as
``orchestrator.run`` does, records the window in run.json, and a replay uses the recorded one
(a bank recorded before the window was applied replays without it, as it was recorded)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_evals_run import items_flags, raw, reply_text, run_cli

from evals import replay
from evals.invocation import arm_settings
from evals.options import ReplayOptions
from orchestrator.llm import prompt_tokens
from orchestrator.llm.testing import FakeOpenAIServer, FakeReply, completion_body

# The first multihop items take about 1,400 tokens of interrogation prompt: with the default
# 2,048-token reply they overflow this window, with the reply capped to what is left they fit.
WINDOW = 3000
OVERFLOW = {
    "error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
    }
}
ARM6 = [*items_flags("multihop", 2, "6"), "--n", "1", "--k", "1", "--budget-calls", "3"]


def llama_server(window: int | None) -> FakeOpenAIServer:
    """A server that says its window on ``/props`` (None: says nothing) and, like llama.cpp,
    rejects a request whose prompt plus ``max_tokens`` is longer (by the harness's own,
    pessimistic, estimate)."""

    def handler(request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
        size = prompt_tokens(request["messages"]) + request["max_tokens"]
        if window is not None and size > window:
            return FakeReply(status=400, body=OVERFLOW)
        return FakeReply(body=completion_body(reply_text(request), model=request["model"]))

    routes = {"/props": {"default_generation_settings": {"n_ctx": window}}} if window else {}
    return FakeOpenAIServer(handler, routes=routes)


def interrogation_max_tokens(server: FakeOpenAIServer) -> set[int]:
    requests = server.chat_requests()
    return {r["max_tokens"] for r in requests if "argument graph" in r["messages"][0]["content"]}


def settings_of(run: Path) -> dict[str, Any]:
    return dict(json.loads((run / "run.json").read_text())["config"]["settings"])


def record(tmp_path: Path, models_file: Path, *flags: str) -> Path:
    bank = tmp_path / "bank"
    with llama_server(WINDOW) as server:
        assert run_cli(server, models_file, bank, *ARM6, *flags) == 0
    return bank


def test_an_item_whose_documents_overflow_the_servers_window_is_fitted_not_failed(
    tmp_path: Path, models_file: Path
) -> None:
    out = tmp_path / "run"
    with llama_server(WINDOW) as server:
        assert run_cli(server, models_file, out, *ARM6) == 0
        capped = interrogation_max_tokens(server)
    rows = raw(out, 6)
    assert [r["error"] for r in rows] == [None, None] and all(r["correct"] for r in rows)
    assert capped and max(capped) < 2048
    assert settings_of(out)["context_tokens"] == WINDOW


def test_an_item_whose_documents_cannot_fit_is_refused_before_any_call_and_the_run_goes_on(
    tmp_path: Path, models_file: Path
) -> None:
    out = tmp_path / "run"
    # An explicit window wins over the server's.
    with llama_server(WINDOW) as server:
        assert run_cli(server, models_file, out, *ARM6, "--context-tokens", "2048") == 1
        assert server.chat_requests() == []
    rows = raw(out, 6)
    assert len(rows) == 2
    assert all(r["error"].startswith("TaskError: task field 'documents' needs") for r in rows)
    assert settings_of(out)["context_tokens"] == 2048


def test_a_run_recorded_without_a_window_is_resumed_without_one(
    tmp_path: Path, models_file: Path
) -> None:
    out = tmp_path / "run"
    flags = ["--n", "1", "--k", "1", "--budget-calls", "3"]
    # The same server, now with a window known from the models file.
    models = json.loads(models_file.read_text())
    models["models"][0]["context_tokens"] = WINDOW
    sized = tmp_path / "sized-models.json"
    sized.write_text(json.dumps(models))
    with llama_server(None) as server:
        assert run_cli(server, models_file, out, *items_flags("multihop", 1, "6"), *flags) == 0
        assert run_cli(server, sized, out, *items_flags("multihop", 2, "6"), *flags) == 0
        assert interrogation_max_tokens(server) == {2048}
        assert run_cli(server, sized, tmp_path / "new", *items_flags("multihop", 1, "6")) == 0
    assert "context_tokens" not in settings_of(out)
    assert len(raw(out, 6)) == 2
    assert settings_of(tmp_path / "new")["context_tokens"] == WINDOW


def test_a_replay_fits_the_documents_to_the_window_the_bank_recorded(
    tmp_path: Path, models_file: Path
) -> None:
    bank = record(tmp_path, models_file)
    out = tmp_path / "replay"
    assert replay.main([str(bank), "--out", str(out), "--offline"]) == 0
    assert json.loads((out / replay.REPLAY_FILE).read_text())["calls"]["unavailable"] == 0
    assert [r["answer"] for r in raw(out, 6)] == [r["answer"] for r in raw(bank, 6)]
    assert settings_of(out)["context_tokens"] == WINDOW

    # The same bank read as a run.json without the window: the capped requests are not found.
    meta = json.loads((bank / "run.json").read_text())
    del meta["config"]["settings"]["context_tokens"]
    (bank / "run.json").write_text(json.dumps(meta))
    unfitted = tmp_path / "unfitted"
    replay.main([str(bank), "--out", str(unfitted), "--offline"])
    assert json.loads((unfitted / replay.REPLAY_FILE).read_text())["calls"]["unavailable"] > 0


def test_a_bank_whose_run_json_has_no_window_replays_with_none() -> None:
    bank = Path(__file__).resolve().parents[1] / "evals" / "banks" / "multihop-local-1.5b"
    config = replay.bank_config(bank)
    assert "context_tokens" not in config["settings"]
    run = replay.replay_run_options(config, ReplayOptions(banks=(bank,), out=Path("unused")))
    assert run.context_tokens is None
    settings = arm_settings(run, Path("unused"), structured_default=True)
    assert settings.run_config is not None and settings.run_config.context_tokens is None
