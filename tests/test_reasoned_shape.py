"""The reasoned shape: the baselines' own reasoned prompt, one text for the harness and the
loop, its reply read as a working (orchestrator.reply.reasoned, checks.derivation)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from evals import prompts as harness_prompts
from evals.arms import ArmSettings, prompt_version, self_consistency
from evals.bank import request_key
from evals.datasets.loaders import load_dataset
from orchestrator.api import RunConfig, run_task
from orchestrator.llm import ChatMessage, ChatRequest
from orchestrator.llm.testing import ScriptedClient, ScriptedKwargs
from orchestrator.records import TaskError
from orchestrator.reply import REASONED_SYSTEM

STATEMENT = (
    "Harper has to write a 248-page assignment. She has already written 1/4 of it. "
    "How many pages does she have left to write?"
)
REASONING = """Harper has written a quarter of 248 pages, so 248 / 4 = 62 pages.
That leaves 248 - 62 = 186 pages to write.
ANSWER: 186"""
RECORDED_KEY = "60506a2b4afa9380c5c76450b7a868af59fcd1c0f2bbeaccf877c3c1d9f4615a"
GREEDY = RunConfig(n=1, k=1, budget_calls=1, temperature=0.0, interrogation_shape="reasoned")


def run_reasoned(
    task: dict[str, object], reply: str, config: RunConfig = GREEDY
) -> tuple[dict[str, object], ScriptedClient]:
    client = ScriptedClient(lambda model, messages, kwargs: reply)
    return dict(run_task(task, client=client, model="m", config=config)), client


def test_a_word_problem_is_sent_the_baselines_reasoned_prompt_word_for_word() -> None:
    item = {"question": STATEMENT, "documents": []}
    _, client = run_reasoned({"question": STATEMENT, "documents": [STATEMENT]}, REASONING)
    assert client.calls[0]["messages"] == harness_prompts.reasoned_messages(item)
    assert client.calls[0]["messages"][1]["content"] == f"Question: {STATEMENT}"
    assert client.calls[0]["kwargs"]["response_format"] is None


def test_documents_are_shown_whole_and_numbered_as_the_baseline_shows_them() -> None:
    documents = ["Ann built the mill in 1790. It burned in 1850.", "Bray lies on the Kerrow."]
    question = "How many years did the mill stand?"
    _, client = run_reasoned({"question": question, "documents": documents}, "ANSWER: 60")
    item = {"question": question, "documents": documents}
    assert client.calls[0]["messages"] == harness_prompts.reasoned_messages(item)


def test_the_loop_answers_from_reasoning_whose_calculations_hold() -> None:
    report, _ = run_reasoned({"question": STATEMENT, "documents": [STATEMENT]}, REASONING)
    assert report["answer"] == "186"
    claims = {node["claim"] for node in report["graph"]["nodes"]}  # type: ignore[index]
    assert "That leaves 248 - 62 = 186 pages to write." in claims


def test_reasoning_that_starts_from_a_number_the_question_lacks_is_refused() -> None:
    reply = "She wrote 248 / 5 = 49.6 pages, so 248 - 49.6 = 198.4 are left.\nANSWER: 198.4"
    report, _ = run_reasoned({"question": STATEMENT, "documents": [STATEMENT]}, reply)
    assert report["answer"] is None
    assert report["refusal_reason"] == "no_grounded_conclusion"


def test_think_first_is_refused_with_the_reasoned_shape() -> None:
    with pytest.raises(TaskError, match="interrogation_shape='reasoned'"):
        RunConfig(interrogation_shape="reasoned", think_first=True)


def test_the_harness_reasoned_prompt_still_finds_the_replies_recorded_with_it() -> None:
    """The text moved to orchestrator.reply.reasoned: the first request recorded in
    evals/banks/math-local-1.5b-reasoned-greedy before the move (item math-0085, greedy, 512
    tokens, seed 1) must key the same, or no bank of the reasoned prompt would replay."""
    item = next(i for i in load_dataset("math", limit=81) if i["id"] == "math-0085")
    request = ChatRequest(
        model="local-1.5b",
        messages=harness_prompts.reasoned_messages(item),
        temperature=0.0,
        seed=1,
        max_tokens=512,
    )
    assert request_key(request) == RECORDED_KEY


REWORDED = replace(
    GREEDY, n=2, budget_calls=2, greedy_first=True, adaptive=True, diversity="reword"
)


def test_a_reworded_second_run_is_greedy_and_asked_in_the_worked_shapes_words() -> None:
    def reply(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        if messages[0]["content"] == REASONED_SYSTEM:
            return "She has 248 - 17 = 231 left.\nANSWER: 231"  # 17 comes from nowhere
        return "248 / 4 = 62\n248 - 62 = 186\nANSWER: 186"

    task = {"question": STATEMENT, "documents": [STATEMENT]}
    client = ScriptedClient(reply)
    report = run_task(task, client=client, model="m", config=REWORDED)
    assert report["answer"] == "186"
    systems = [call["messages"][0]["content"] for call in client.calls]
    assert systems[0] == REASONED_SYSTEM and "ANSWER:" in systems[1]
    assert "[D1.1]" in client.calls[1]["messages"][1]["content"]
    assert [call["kwargs"]["temperature"] for call in client.calls] == [0.0, 0.0]


def test_a_grounded_first_run_needs_no_reworded_second() -> None:
    task: dict[str, object] = {"question": STATEMENT, "documents": [STATEMENT]}
    report, client = run_reasoned(task, REASONING, REWORDED)
    assert report["answer"] == "186" and len(client.calls) == 1


@pytest.mark.parametrize(
    "changes",
    [{"interrogation_shape": "chain"}, {"n": 3, "budget_calls": 3}],
    ids=["not a working shape", "more runs than wordings"],
)
def test_rewording_is_refused_outside_the_two_working_shapes(changes: dict[str, Any]) -> None:
    with pytest.raises(TaskError, match="diversity='reword' needs"):
        replace(REWORDED, **changes)


def test_arm_7_with_the_same_diversity_asks_the_same_two_wordings_greedy() -> None:
    item = {"id": "m-1", "question": STATEMENT, "documents": [], "answer": "186"}
    client = ScriptedClient(lambda model, messages, kwargs: "ANSWER: 186")
    settings = ArmSettings(samples=2, sample_diversity="reword", seed=1)
    result = self_consistency(item, "m", client, settings=settings)
    assert result.answer == "186"
    first, second = (call["messages"] for call in client.calls)
    assert first == harness_prompts.reasoned_messages(item)
    assert "Work it out, then end with the ANSWER line." in second[1]["content"]
    assert [call["kwargs"]["temperature"] for call in client.calls] == [0.0, 0.0]


def test_the_prompt_tag_of_a_reworded_arm_6_names_both_working_templates() -> None:
    tag = prompt_version(6, "reasoned", "reword")
    assert "interrogation_reasoned/v1" in tag and "interrogation_worked/v1" in tag
    assert "interrogation_worked/v1" not in prompt_version(6, "reasoned")
