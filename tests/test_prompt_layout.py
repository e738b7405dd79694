"""Where the evidence sits in a prompt (issue 37): the ``evidence_first`` layout gives every call
of a task over the same evidence the same opening turn, so a server's prompt cache can serve it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from canned_runs import CONTRADICTING, RACK7_TASK, Script, six_runs

from corpus.evidence import build_evidence
from orchestrator.api import RunConfig, run_task
from orchestrator.cli.run import _settings, build_parser
from orchestrator.llm import ChatClient, ChatMessage
from orchestrator.llm.testing import FakeOpenAIServer, ScriptedClient, completion_body
from orchestrator.records.report import RunReport
from orchestrator.records.task import TaskError, load_task
from orchestrator.reply import prompts

ROOT = Path(__file__).resolve().parents[1]
EVIDENCE = build_evidence(["Rack 7 holds server x9. It runs Linux.", "x9 takes cron jobs."])


def _run(layout: str) -> tuple[RunReport, Sequence[Mapping[str, Any]]]:
    client = ScriptedClient(Script(six_runs(r2=CONTRADICTING, r4=CONTRADICTING)))
    config = RunConfig(n=6, budget_calls=20, prompt_layout=layout)
    report = run_task(RACK7_TASK, client=client, model="scripted", config=config)
    return report, client.calls


def test_every_call_over_the_same_evidence_opens_with_the_same_turn_in_evidence_first() -> None:
    report, calls = _run("evidence_first")
    roles = {call["kwargs"]["role"] for call in calls}
    assert {"interrogation", "verification"} <= roles
    openings = {call["messages"][0]["content"] for call in calls}
    assert len(openings) == 1
    (opening,) = openings
    assert all(f"[{span.id}]" in opening for span in build_evidence(RACK7_TASK["documents"]).spans)
    assert report["prompt_versions"]["layout"] == "evidence_first/v1"


def test_the_classic_layout_opens_each_role_with_its_own_instructions() -> None:
    report, calls = _run("classic")
    openings = {call["kwargs"]["role"]: call["messages"][0]["content"] for call in calls}
    assert openings["interrogation"] != openings["verification"]
    assert "Evidence:" not in openings["interrogation"]
    assert "layout" not in report["prompt_versions"]


def test_both_layouts_send_the_same_words_only_placed_differently() -> None:
    builders: list[Callable[[str], list[ChatMessage]]] = [
        lambda layout: prompts.chain_messages(EVIDENCE, "Does x9 run Linux?", layout=layout),
        lambda layout: prompts.interrogation_messages(
            EVIDENCE, "Does x9 run Linux?", layout=layout
        ),
        lambda layout: prompts.verification_messages(EVIDENCE, "x9 runs Linux", layout=layout),
        lambda layout: prompts.lookup_messages(EVIDENCE, "What does x9 run?", layout=layout),
    ]
    shared: set[str] = set()
    for build in builders:
        classic, first = build("classic"), build("evidence_first")
        words = [sorted(" ".join(m["content"] for m in msgs).split()) for msgs in (classic, first)]
        preamble = first[0]["content"].split("Evidence:")[0].split()
        assert sorted(words[0] + preamble) == words[1]
        assert first[1]["content"].startswith(classic[0]["content"])
        shared.add(first[0]["content"])
    assert len(shared) == 1


def test_an_unknown_layout_is_refused_naming_the_setting() -> None:
    with pytest.raises(TaskError, match="prompt_layout='last' is invalid"):
        RunConfig(prompt_layout="last")
    with pytest.raises(ValueError, match="layout='last' is invalid"):
        prompts.chain_messages(EVIDENCE, "Does x9 run Linux?", layout="last")
    with pytest.raises(ValueError, match="layout=None is invalid"):
        prompts.prompt_versions(None)  # type: ignore[arg-type]


def test_the_command_line_passes_the_layout_on() -> None:
    rack7 = str(ROOT / "examples" / "rack7.json")
    task, parser = load_task(Path(rack7)), build_parser()
    argv = ["--task", rack7, "--model", "m", "--prompt-layout", "evidence_first"]
    _, config = _settings(parser.parse_args(argv), task, None)
    assert config.prompt_layout == "evidence_first"
    _, config = _settings(parser.parse_args(["--task", rack7, "--model", "m"]), task, None)
    assert config.prompt_layout == "classic"


def test_prompt_tokens_a_server_read_from_its_cache_reach_the_result_and_the_ledger() -> None:
    replies = iter(
        [completion_body("a", prompt_tokens=900, cached_tokens=880), completion_body("b")]
    )
    with FakeOpenAIServer(lambda request, headers: next(replies)) as server:
        client = ChatClient(server.base_url, api_key="k", max_retries=0)
        first = client.chat("m", [{"role": "user", "content": "hi"}])
        second = client.chat("m", [{"role": "user", "content": "hi"}])
    assert (first.prompt_tokens, first.cached_tokens) == (900, 880)
    assert second.cached_tokens is None
    assert [r["cached_tokens"] for r in client.ledger.records()] == [880, None]
