"""Reply banks (`evals.bank`) and replay (`evals.replay`) against a fake server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_evals_run import items_flags, raw, run_cli, serve

from evals import replay
from evals.bank import BANK_FILE, Bank, BankMissError, ReplayClient, request_key
from evals.summary import main as summary_main
from orchestrator.llm import ChatMessage, CostLedger
from orchestrator.llm.chat import ChatRequest
from orchestrator.llm.testing import ScriptedClient
from orchestrator.loop import driver as loop
from orchestrator.records.reasons import RefusalReason

ARMS_1_6_7 = items_flags("multihop", 3, "1,6,7")


def record(tmp_path: Path, models_file: Path, *flags: str) -> Path:
    bank = tmp_path / "bank"
    with serve() as server:
        code = run_cli(server, models_file, bank, *ARMS_1_6_7, *flags)
    assert code == 0
    return bank


def bank_lines(bank: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (bank / BANK_FILE).read_text().splitlines()]


def outcomes(run: Path, arm: int) -> dict[str, tuple[Any, ...]]:
    return {
        r["id"]: (r["outcome"], r["answer"], r["correct"], r["width"], r["n_calls"])
        for r in raw(run, arm)
    }


def test_an_evaluation_run_banks_every_successful_reply_under_its_request_key(
    tmp_path: Path, models_file: Path
) -> None:
    bank = record(tmp_path, models_file, "--n", "3", "--k", "1", "--budget-calls", "5")
    lines = bank_lines(bank)
    calls = sum(r["n_calls"] - r["failed_calls"] for arm in (1, 6, 7) for r in raw(bank, arm))
    assert len(lines) == calls
    assert {line["role"] for line in lines} >= {"interrogation"}
    assert all(len(line["key"]) == 64 and line["text"] for line in lines)
    meta = json.loads((bank / "run.json").read_text())
    assert meta["invocations"][0]["structured_output"] is False
    assert "commit" in meta["invocations"][0]


def test_replaying_a_bank_offline_reproduces_every_recorded_outcome(
    tmp_path: Path, models_file: Path
) -> None:
    bank = record(tmp_path, models_file, "--n", "3", "--k", "1", "--budget-calls", "5")
    out = tmp_path / "replay"
    assert replay.main([str(bank), "--out", str(out), "--offline"]) == 0
    for arm in (1, 6, 7):
        assert outcomes(out, arm) == outcomes(bank, arm)
    counts = json.loads((out / replay.REPLAY_FILE).read_text())["calls"]
    assert counts["unavailable"] == 0 and counts["live"] == 0
    assert counts["replayed"] == len(bank_lines(bank))
    assert "calls answered from the bank" in (out / "summary.md").read_text()


def test_a_replay_with_fewer_interrogations_takes_the_first_ones_from_the_bank(
    tmp_path: Path, models_file: Path
) -> None:
    bank = record(tmp_path, models_file, "--n", "3", "--k", "1", "--budget-calls", "5")
    out = tmp_path / "replay"
    assert replay.main([str(bank), "--out", str(out), "--n", "2", "--budget-calls", "4"]) == 0
    counts = json.loads((out / replay.REPLAY_FILE).read_text())["calls"]
    assert counts["by_role"]["interrogation"] == {"replayed": 6, "live": 0, "unavailable": 0}
    assert [row["n_calls"] for row in raw(out, 6)] == [2, 2, 2]


def test_a_greedy_arm_6_is_replayed_beside_arm_7_samples_kept_at_their_own_temperature(
    tmp_path: Path, models_file: Path
) -> None:
    sampled = record(tmp_path, models_file, "--n", "2", "--k", "1", "--budget-calls", "4")
    greedy = tmp_path / "bank-t0"
    with serve() as server:
        flags = ["--n", "1", "--k", "1", "--budget-calls", "3", "--temp", "0"]
        code = run_cli(server, models_file, greedy, *items_flags("multihop", 3, "6"), *flags)
    assert code == 0
    banks = [str(sampled), str(greedy), "--n", "1", "--budget-calls", "3", "--temp", "0"]

    def unavailable(out: Path, *extra: str) -> int:
        replay.main([*banks, "--out", str(out), "--arms", "1,6,7", *extra])
        return int(json.loads((out / replay.REPLAY_FILE).read_text())["calls"]["unavailable"])

    # Without --sample-temp arm 7 would sample at 0 too, which the banks never recorded.
    assert unavailable(tmp_path / "same-temp") > 0
    assert unavailable(tmp_path / "own-temp", "--sample-temp", "0.8") == 0
    assert [row["n_calls"] for row in raw(tmp_path / "own-temp", 7)] == [
        row["n_calls"] for row in raw(tmp_path / "own-temp", 6)
    ]


def test_a_changed_decision_rule_is_reported_as_flipped_items(
    tmp_path: Path,
    models_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bank = record(tmp_path, models_file, "--n", "2", "--k", "1", "--budget-calls", "4")
    same, changed = tmp_path / "same", tmp_path / "changed"
    assert replay.main([str(bank), "--out", str(same)]) == 0

    def refuse_everything(*args: Any, **kwargs: Any) -> tuple[str, None]:
        return RefusalReason.NO_GROUNDED, None

    # The change under study: a decision rule that never answers.
    monkeypatch.setattr(loop, "decide", refuse_everything)
    assert replay.main([str(bank), "--out", str(changed)]) == 0
    capsys.readouterr()
    assert summary_main(["--compare", str(same), str(changed)]) == 0
    text = capsys.readouterr().out
    answered = sorted(r["id"] for r in raw(same, 6) if r["outcome"] in ("correct", "wrong"))
    assert answered, "the fake server's graphs should carry at least one answer"
    assert f"## Arm 6: {len(answered)} of 3 items flipped" in text
    for item in answered:
        assert (
            f"| {item} | right | abstained |" in text or f"| {item} | wrong | abstained |" in text
        )
    assert "refusal_reason no_grounded_conclusion" in text
    assert "## Arm 1: 0 of 3 items flipped" in text


def test_a_request_the_bank_lacks_is_made_live_and_banked_when_a_backend_is_given(
    tmp_path: Path, models_file: Path
) -> None:
    bank = record(tmp_path, models_file, "--n", "2", "--k", "1", "--budget-calls", "4")
    lines = (bank / BANK_FILE).read_text().splitlines()
    (bank / BANK_FILE).write_text("\n".join(lines[1:]) + "\n")  # forget the first reply
    out = tmp_path / "replay"
    with serve() as server:
        code = replay.main(
            [
                str(bank),
                "--out",
                str(out),
                "--backend",
                "fake-model",
                "--base-url",
                server.base_url,
                "--models-file",
                str(models_file),
            ]
        )
    assert code == 0
    counts = json.loads((out / replay.REPLAY_FILE).read_text())["calls"]
    assert counts["live"] == 1 and counts["unavailable"] == 0
    assert outcomes(out, 1) == outcomes(bank, 1)
    # The live reply was banked beside the replay: with it, the same replay is offline.
    assert len((out / BANK_FILE).read_text().splitlines()) == 1
    again = tmp_path / "again"
    assert replay.main([str(bank), str(out), "--out", str(again)]) == 0
    counts = json.loads((again / replay.REPLAY_FILE).read_text())["calls"]
    assert counts["live"] == 0 and counts["unavailable"] == 0
    assert outcomes(again, 1) == outcomes(bank, 1)


def test_replay_refuses_a_folder_that_is_not_a_bank_and_a_non_empty_out(
    tmp_path: Path, models_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert replay.main([str(tmp_path / "nothing"), "--out", str(tmp_path / "o")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    bank = record(tmp_path, models_file, "--n", "1", "--k", "1", "--budget-calls", "2")
    assert replay.main([str(bank), "--out", str(bank)]) == 2
    assert "is not empty" in capsys.readouterr().err


def key_of(messages: list[ChatMessage], seed: int | None = 1) -> str:
    return request_key(ChatRequest("m", messages, temperature=0.8, seed=seed, max_tokens=64))


def test_identical_requests_get_the_recorded_replies_in_order_then_the_last_again() -> None:
    messages: list[ChatMessage] = [{"role": "user", "content": "q"}]
    key = key_of(messages)
    bank = Bank([{"key": key, "text": "first"}, {"key": key, "text": "second"}])
    client = ReplayClient(bank)
    texts = [
        client.chat("m", messages, temperature=0.8, seed=1, max_tokens=64).text for _ in range(3)
    ]
    assert texts == ["first", "second", "second"]
    assert client.counts.replayed == 3
    assert all(r["ok"] and r["cost_usd"] == 0.0 for r in client.ledger.records())


def test_an_offline_miss_is_a_failed_call_in_the_ledger_and_the_seed_is_part_of_the_key() -> None:
    messages: list[ChatMessage] = [{"role": "user", "content": "q"}]
    assert key_of(messages, seed=1) != key_of(messages, seed=2)
    ledger = CostLedger()
    client = ReplayClient(Bank([{"key": key_of(messages), "text": "x"}]), ledger=ledger)
    with pytest.raises(BankMissError):
        client.chat("m", messages, temperature=0.8, seed=2, max_tokens=64, role="verification")
    assert client.counts.as_dict()["by_role"] == {
        "verification": {"replayed": 0, "live": 0, "unavailable": 1}
    }
    assert ledger.records()[0]["ok"] is False


def test_a_miss_goes_to_the_live_client_when_one_is_given() -> None:
    live = ScriptedClient(["from the model"])
    client = ReplayClient(Bank([]), live=live)
    assert client.chat("m", [{"role": "user", "content": "q"}]).text == "from the model"
    assert client.counts.live == 1 and len(live.calls) == 1


def test_a_bank_line_cut_short_by_a_killed_run_is_skipped(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    good = json.dumps({"key": "k", "text": "t"})
    (run / BANK_FILE).write_text(good + "\n" + '{"key": "k2", "te')
    assert len(Bank.load([run])) == 1


def test_arm_6_prompt_tag_names_only_the_templates_its_shape_sends() -> None:
    from evals.arms import prompt_version

    graph, chain = prompt_version(6, "graph"), prompt_version(6, "chain")
    assert "interrogation/v" in graph and "interrogation_chain/" not in graph
    assert "interrogation_chain/" in chain and "interrogation/v" not in chain
    assert prompt_version(6) == graph


def test_a_resumed_run_reuses_the_banked_replies_of_an_item_it_redoes(
    tmp_path: Path, models_file: Path
) -> None:
    bank = tmp_path / "bank"
    flags = [*ARMS_1_6_7, "--n", "2", "--k", "1", "--budget-calls", "4"]
    with serve() as server:
        assert run_cli(server, models_file, bank, *flags) == 0
        banked, sent_first = len(bank_lines(bank)), len(server.chat_requests())
        # Forget arm 6's result of the first item, as a run stopped in its middle would.
        rows = (bank / "raw" / "arm6.jsonl").read_text().splitlines()
        (bank / "raw" / "arm6.jsonl").write_text("\n".join(rows[1:]) + "\n")
        assert run_cli(server, models_file, bank, *flags) == 0
        sent_again = len(server.chat_requests()) - sent_first
    assert sent_again == 0  # every call of the redone item was answered from the bank
    assert len(bank_lines(bank)) == banked  # and nothing was banked twice
    assert {r["id"] for r in raw(bank, 6)} == {"multihop-0000", "multihop-0001", "multihop-0002"}
