"""The six evaluation arms, answer parsing and per-arm metering, driven by scripted clients."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corpus.evidence import build_evidence
from evals import prompts
from evals.arms import (
    ARMS,
    ArmSettings,
    arrow_thinking,
    compressed_chain,
    cot_reinjection,
    naive_revisit,
    orchestrator,
    prompt_version,
    single_pass,
)
from evals.datasets import load_dataset
from evals.metering import (
    CallRecorder,
    CappedClient,
    CostCap,
    CostCapReached,
    usage_of,
    worst_case_prompt_tokens,
)
from evals.score import score
from orchestrator.api import RunConfig
from orchestrator.llm import APIStatusError, ChatMessage
from orchestrator.llm.testing import ScriptedClient, ScriptedKwargs
from orchestrator.reply import parse_answer

SETTINGS = ArmSettings(max_tokens=64)
MATH = load_dataset("math", limit=2)
MULTIHOP = load_dataset("multihop", limit=2)


def by_role(answers: dict[str, str]) -> Any:
    """A script answering each call by its role (``eval:<step>``); unknown roles fail loudly."""

    def script(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        return answers[kwargs["role"].removeprefix("eval:")]

    return script


# --- parsing -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "refused", "form"),
    [
        ("Some thinking.\nANSWER: 18", "18", False, "line"),
        ("ANSWER: 3\nwait, no\nANSWER: 4", "4", False, "line"),
        ("**Answer:** Quelheim.", "Quelheim", False, "line"),
        ("Final answer: `Volen River`", "Volen River", False, "line"),
        ("answer = 42", "42", False, "line"),
        ("So the answer is Ferrow River.", "Ferrow River", False, "phrase"),
        ("We get \\boxed{2430} in total", "2430", False, "phrase"),
        ("ANSWER: unknown", None, True, "line"),
        ("ANSWER: Cannot be determined.", None, True, "line"),
        ("So the answer is 3. Check: \\boxed{4}", "4", False, "phrase"),
        ("Quelheim.", "Quelheim", False, "bare"),
        ("unknown", None, True, "bare"),
        ("I like turtles\nand more turtles", None, False, "missing"),
        ("x" * 201, None, False, "missing"),
        ("ANSWER:\n", None, False, "missing"),
        ("", None, False, "missing"),
        (None, None, False, "missing"),
    ],
)
def test_parse_answer_finds_the_final_answer_or_reports_it_missing(
    text: str | None, value: str | None, refused: bool, form: str
) -> None:
    parsed = parse_answer(text)
    assert (parsed.value, parsed.refused, parsed.format) == (value, refused, form)


# --- baseline arms -------------------------------------------------------------------------


def test_single_pass_makes_one_direct_call_and_its_answer_scores() -> None:
    client = ScriptedClient(["ANSWER: 18"], cost_per_call=0.001)
    result = single_pass(MATH[0], "m", client, settings=SETTINGS)
    assert result.answer == "18" and not result.refused
    assert score(MATH[0], result.answer)["correct"]
    assert [c["role"] for c in result.calls] == ["eval:direct"]
    assert client.calls[0]["kwargs"]["max_tokens"] == 64
    assert "Do not explain" in client.calls[0]["messages"][0]["content"]


def test_naive_revisit_asks_to_revisit_in_the_same_conversation() -> None:
    client = ScriptedClient(
        by_role({"reasoned": "6*10-28-14=18\nANSWER: 18", "revisit": "ANSWER: 19"})
    )
    result = naive_revisit(MATH[0], "m", client, settings=SETTINGS)
    first, second = (c["messages"] for c in client.calls)
    assert second[: len(first)] == first
    assert second[len(first)] == {"role": "assistant", "content": "6*10-28-14=18\nANSWER: 18"}
    assert "Revisit your reasoning" in second[-1]["content"]
    assert (result.answer, result.extra["first_answer"]) == ("19", "18")


def test_cot_reinjection_feeds_the_trace_verbatim_into_a_new_conversation() -> None:
    trace = "Faldcrest Bridge <- Rookcombe Foundry <- Vidar Tarvard, born in Quelheim.\nANSWER: X"
    client = ScriptedClient(by_role({"reasoned": trace, "reinject": "ANSWER: Quelheim"}))
    result = cot_reinjection(MULTIHOP[0], "m", client, settings=SETTINGS)
    second = client.calls[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user"]
    assert trace in second[1]["content"]
    assert "Rookcombe Foundry built the Faldcrest Bridge." in second[1]["content"]
    assert result.answer == "Quelheim" and score(MULTIHOP[0], result.answer)["correct"]


def test_arrow_thinking_is_one_call_under_the_arrow_system_prompt() -> None:
    client = ScriptedClient(["60 - 28 -> 32 - 14 -> 18\nANSWER: 18"])
    result = arrow_thinking(MATH[0], "m", client, settings=SETTINGS)
    assert len(client.calls) == 1 and " -> " in client.calls[0]["messages"][0]["content"]
    assert result.answer == "18" and result.trace[0]["step"] == "arrow"


def test_compressed_chain_is_checked_in_a_fresh_context_without_the_original_reply() -> None:
    reply = "Long rambling reasoning about bridges and foundries.\nANSWER: Karnmere"
    chain = "Faldcrest Bridge -> built by Rookcombe Foundry -> founded by Vidar Tarvard"
    client = ScriptedClient(
        by_role({"reasoned": reply, "compress": chain, "chain_check": "ANSWER: Quelheim"})
    )
    result = compressed_chain(MULTIHOP[0], "m", client, settings=SETTINGS)
    compress, check = client.calls[1]["messages"], client.calls[2]["messages"]
    assert compress[-2] == {"role": "assistant", "content": reply}
    assert [m["role"] for m in check] == ["system", "user"]
    assert chain in check[1]["content"] and "rambling" not in check[1]["content"]
    assert result.answer == "Quelheim" and result.extra["chain"] == chain
    assert result.extra["first_answer"] == "Karnmere"


@pytest.mark.parametrize("arm", [1, 2, 3, 4, 5])
def test_a_malformed_reply_gives_no_answer_and_scores_wrong(arm: int) -> None:
    client = ScriptedClient(lambda model, messages, kwargs: "<<<\x00 garbage\n }}}")
    result = ARMS[arm][1](MATH[0], "m", client, settings=SETTINGS)
    assert result.answer is None and not result.refused
    assert result.extra["answer_format"] == "missing"
    assert score(MATH[0], result.answer)["correct"] is False


def test_unknown_is_a_refusal_not_an_answer() -> None:
    client = ScriptedClient(["The documents do not say.\nANSWER: unknown"])
    result = single_pass(MULTIHOP[1], "m", client, settings=SETTINGS)
    assert result.refused and result.answer is None


def test_arms_on_one_client_share_its_ledger_and_each_sees_only_its_own_calls() -> None:
    client = ScriptedClient(lambda model, messages, kwargs: "ANSWER: 18", cost_per_call=0.002)
    one = single_pass(MATH[0], "m", client, settings=SETTINGS)
    five = compressed_chain(MATH[1], "m", client, settings=SETTINGS)
    assert len(one.calls) == 1 and len(five.calls) == 3
    assert {(c["eval_arm"], c["eval_item"]) for c in five.calls} == {(5, MATH[1]["id"])}
    ledger_ids = sorted(c["call_id"] for c in one.calls + five.calls)
    assert ledger_ids == [r["call_id"] for r in client.ledger.records()]
    assert usage_of(one.calls)["cost_usd"] + usage_of(five.calls)["cost_usd"] == pytest.approx(
        client.ledger.totals()["cost_usd"]
    )


def test_a_failed_model_call_propagates_and_stays_in_the_recorders_records() -> None:
    client = ScriptedClient([APIStatusError(400, "bad request")])
    recorder = CallRecorder(client, {"eval_arm": 1, "eval_item": "x"})
    with pytest.raises(APIStatusError):
        recorder.chat("m", [{"role": "user", "content": "hi"}])
    assert [r["ok"] for r in recorder.records()] == [False]
    with pytest.raises(APIStatusError):
        single_pass(MATH[0], "m", ScriptedClient([APIStatusError(500, "down")]), settings=SETTINGS)


def test_prompt_versions_name_every_template_an_arm_uses() -> None:
    assert prompt_version(2) == "reasoned@1+revisit@1"
    assert prompt_version(6).startswith("interrogation/") and "extract" not in prompt_version(6)
    assert all(prompt_version(arm) for arm in ARMS)


# --- cost cap ------------------------------------------------------------------------------


def test_worst_case_prompt_tokens_count_every_utf8_byte_plus_a_per_message_overhead() -> None:
    # A byte-level tokenizer never emits more tokens than bytes; "é" is two bytes.
    messages: list[ChatMessage] = [
        {"role": "system", "content": "é"},
        {"role": "user", "content": "abc"},
    ]
    assert worst_case_prompt_tokens(messages) == (2 + 16) + (3 + 16)


def test_the_cost_cap_refuses_a_call_before_it_is_sent() -> None:
    # Unknown actual costs are charged at their worst case, so after the first call of arm 2
    # the cap (1.5 first calls) cannot hold the second, larger one.
    scripted = ScriptedClient(lambda model, messages, kwargs: "ANSWER: 18", cost_per_call=None)
    prices = (1e-6, 2e-6)
    first_call = CostCap(None, prices, default_max_tokens=64).worst_case(
        prompts.reasoned_messages(MATH[0]), SETTINGS.max_tokens
    )
    assert first_call is not None
    cap = CostCap(first_call * 1.5, prices, default_max_tokens=64)
    capped = CappedClient(scripted, cap)
    with pytest.raises(CostCapReached):
        naive_revisit(MATH[0], "m", capped, settings=SETTINGS)
    assert len(scripted.calls) == 1
    assert cap.stopped is not None and "cost cap reached" in cap.stopped
    with pytest.raises(CostCapReached):  # once stopped, nothing else goes out
        single_pass(MATH[1], "m", capped, settings=SETTINGS)
    assert len(scripted.calls) == 1


def test_an_unknown_actual_cost_is_charged_at_its_worst_case() -> None:
    cap = CostCap(1.0, (1e-6, 1e-6), default_max_tokens=10)
    capped = CappedClient(ScriptedClient(["ANSWER: 1"], cost_per_call=None), cap)
    capped.chat("m", [{"role": "user", "content": "abcd"}])
    assert cap.spent_usd == pytest.approx((4 + 16) * 1e-6 + 10 * 1e-6)


def test_a_call_without_max_tokens_gets_the_caps_default() -> None:
    scripted = ScriptedClient(["ANSWER: 1"])
    CappedClient(scripted, CostCap(None, None, default_max_tokens=33)).chat(
        "m", [{"role": "user", "content": "q"}]
    )
    assert scripted.calls[0]["kwargs"]["max_tokens"] == 33


@pytest.mark.parametrize(
    ("limit", "prices", "tokens"),
    [(1.0, None, 10), (-1.0, (0.0, 0.0), 10), (float("nan"), (0.0, 0.0), 10), (1.0, (0, 0), 0)],
)
def test_cost_cap_rejects_settings_it_cannot_enforce(
    limit: float, prices: tuple[float, float] | None, tokens: int
) -> None:
    with pytest.raises(ValueError):
        CostCap(limit, prices, default_max_tokens=tokens)


def test_usage_reports_unknown_cost_as_none_with_the_known_part_kept() -> None:
    records: list[dict[str, Any]] = [
        {"ok": True, "prompt_tokens": 5, "completion_tokens": 2, "cost_usd": 0.5},
        {"ok": True, "prompt_tokens": 5, "completion_tokens": 2, "cost_usd": None},
    ]
    usage = usage_of(records)
    assert usage["cost_usd"] is None and usage["cost_usd_known"] == 0.5
    assert usage["tokens"] == 14


# --- arm 6 ---------------------------------------------------------------------------------

FALDCREST = MULTIHOP[0]  # Faldcrest Bridge -> Rookcombe Foundry -> Vidar Tarvard -> Quelheim


def graph_reply(town: str) -> str:
    """An interrogation reply: three givens, each supporting a conclusion naming `town`."""
    givens = [
        "Rookcombe Foundry built the Faldcrest Bridge.",
        "Rookcombe Foundry was founded by Vidar Tarvard.",
        f"Vidar Tarvard was born in {town}.",
    ]
    # Each given cites the sentence it copies (the true birthplace sentence for a wrong town,
    # which the citation check then rejects).
    spans = {span.text: span.id for span in build_evidence(FALDCREST["documents"]).spans}
    sources = [spans[claim.replace(town, "Quelheim")] for claim in givens]
    nodes = [
        {"id": f"g{i}", "type": "given", "source": source, "claim": claim, "confidence": 0.9}
        for i, (claim, source) in enumerate(zip(givens, sources, strict=True), start=1)
    ]
    nodes.append(
        {
            "id": "c",
            "type": "conclusion",
            "source": "none",
            "claim": f"The founder of the builder of the Faldcrest Bridge was born in {town}.",
            "confidence": 0.8,
        }
    )
    edges = [
        {"from": f"g{i}", "to": "c", "relation": "supports", "confidence": 0.9} for i in (1, 2, 3)
    ]
    return json.dumps({"nodes": nodes, "edges": edges, "conclusion_node": "c", "answer": town})


def orchestrated(graphs: dict[str, str]) -> ScriptedClient:
    """Interrogation run r<i> gets graphs[r<i>] (default: Quelheim); verifications agree."""

    def script(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        subject = (kwargs["tags"] or {}).get("subject", "")
        if '"verdict"' in messages[0]["content"]:
            return '{"verdict": "supported", "reason": "stated in [D4]"}'
        return graphs.get(subject, graph_reply("Quelheim"))

    return ScriptedClient(script, cost_per_call=0.001)


def test_orchestrator_arm_answers_with_the_graphs_short_answer_and_records_its_width() -> None:
    client = orchestrated({})
    settings = ArmSettings(run_config=RunConfig(n=2, k=1, budget_calls=6, seed=1))
    result = orchestrator(FALDCREST, "m", client, settings=settings)
    assert not result.refused and result.answer == "Quelheim"
    assert score(FALDCREST, result.answer)["correct"]
    report = result.trace[0]["report"]
    assert isinstance(result.extra["width"], int) and result.extra["width"] >= 1
    assert result.extra["width"] == report["chosen"]["width"]
    assert "Quelheim" in result.extra["conclusion"]
    assert result.extra["answer_format"] == "graph"
    # No call after the orchestrator's own: nothing rewrites the answer.
    assert {c["kwargs"]["role"] for c in client.calls} <= {"interrogation", "verification"}
    assert {c["eval_arm"] for c in result.calls} == {6}
    assert len(result.calls) == len(client.ledger.records())


def test_orchestrator_arm_refusal_is_a_refusal() -> None:
    unsupported = json.loads(graph_reply("Quelheim"))
    unsupported["edges"] = []  # a conclusion no evidence reaches is not grounded
    client = orchestrated({"r1": json.dumps(unsupported), "r2": json.dumps(unsupported)})
    settings = ArmSettings(run_config=RunConfig(n=2, k=1, budget_calls=4, seed=1))
    result = orchestrator(FALDCREST, "m", client, settings=settings)
    assert result.refused and result.answer is None and result.extra["width"] is None
    assert result.extra["refusal_reason"] == "no_grounded_conclusion"


def test_orchestrator_arm_refuses_a_wrong_town_its_givens_cannot_cite() -> None:
    client = orchestrated({"r1": graph_reply("Braskmere"), "r2": graph_reply("Braskmere")})
    settings = ArmSettings(run_config=RunConfig(n=2, k=1, budget_calls=4, seed=1))
    result = orchestrator(FALDCREST, "m", client, settings=settings)
    report = result.trace[0]["report"]
    assert result.refused and result.answer is None
    assert {c["reason"] for c in report["rejected_citations"]} == {"name_mismatch"}


def test_orchestrator_arm_survives_malformed_graphs_by_refusing() -> None:
    client = orchestrated({"r1": "not json at all", "r2": "{{{{"})
    settings = ArmSettings(run_config=RunConfig(n=2, k=1, budget_calls=4, seed=1))
    result = orchestrator(FALDCREST, "m", client, settings=settings)
    assert result.refused and result.answer is None
    assert score(FALDCREST, result.answer)["correct"] is False


def test_orchestrator_arm_keeps_to_its_call_budget() -> None:
    client = orchestrated({})
    settings = ArmSettings(run_config=RunConfig(n=3, k=3, budget_calls=3, seed=1))
    result = orchestrator(FALDCREST, "m", client, settings=settings)
    assert len(result.calls) <= 3


def test_orchestrator_arm_writes_its_report_under_the_artifacts_dir(tmp_path: Path) -> None:
    settings = ArmSettings(
        run_config=RunConfig(n=1, k=1, budget_calls=2, seed=1), artifacts_dir=tmp_path
    )
    orchestrator(FALDCREST, "m", orchestrated({}), settings=settings)
    assert (tmp_path / "arm6" / FALDCREST["id"] / "report.json").is_file()
