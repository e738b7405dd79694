"""Prompt templates render completely, carry the §4.2 contracts and stay compact."""

from __future__ import annotations

import json
import re

import pytest
from scenario_reports import EXPECTED

from corpus.evidence import build_evidence
from orchestrator.llm import ChatMessage
from orchestrator.reply.prompts import (
    PROMPT_VERSIONS,
    commit_messages,
    interrogation_messages,
    query_rewrite_messages,
    repair_messages,
    verification_messages,
)

DOCS = build_evidence(
    [
        "Rack 7 hosts the db-2 primary.\nIt was patched on Monday.",
        "The patch window for rack 7 was cancelled.",
    ]
)
QUESTION = "Was the db-2 primary patched?"
PLACEHOLDER = re.compile(r"\$\w|\$\{|\{k\}|\{max_nodes\}")


def all_text(messages: list[ChatMessage]) -> str:
    return "\n".join(m["content"] for m in messages)


def test_every_template_has_a_version_and_every_committed_report_names_them_all() -> None:
    # The scenario reports pin the versions (each report names the wording it was produced
    # by), so a version changes only together with a reviewed rewrite of those reports.
    for name, version in PROMPT_VERSIONS.items():
        assert re.fullmatch(rf"{name}/v\d+", version), name
    for report in sorted(EXPECTED.glob("*.json")):
        assert json.loads(report.read_text())["prompt_versions"] == PROMPT_VERSIONS, report.name


def test_the_query_rewrite_shows_the_question_alone_and_asks_for_a_queries_list() -> None:
    messages = query_rewrite_messages("  Where was the\nfounder born? ")
    assert messages[-1]["content"] == "Question: Where was the founder born?"
    assert '{"queries": [QUERY, QUERY]}' in messages[0]["content"]
    assert not PLACEHOLDER.search(all_text(messages))


def test_interrogation_renders_numbered_spans_question_and_k() -> None:
    messages = interrogation_messages(DOCS, QUESTION, k=3)
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = messages[0]["content"], messages[1]["content"]
    assert "[D1.1] Rack 7 hosts the db-2 primary.\n[D1.2] It was patched on Monday." in user
    assert "[D2.1] The patch window for rack 7 was cancelled." in user
    assert f"Question: {QUESTION}" in user
    assert "3 separate lines" in system
    assert not PLACEHOLDER.search(all_text(messages))


def test_interrogation_states_the_graph_contract() -> None:
    system = interrogation_messages(DOCS, QUESTION)[0]["content"]
    for term in (
        '"given"',
        '"inference"',
        '"assumption"',
        '"conclusion"',
        '"because"',
        '"against"',
        "Exactly one node",
        "outside knowledge",
        "Never make up",
        "at most 8 nodes",
    ):
        assert term in system
    shape = system[system.index('{"nodes"') :]
    keys = ('"nodes"', '"id"', '"claim"', '"type"', '"source"', '"because"', '"against"')
    for key in (*keys, '"confidence"', '"conclusion_node"', '"answer"'):
        assert key in shape
    assert '"edges"' not in shape  # reasons sit on the node they bear on
    assert '"answer"' in shape and "never copy it into a node" in system
    assert '"claim": "' not in shape  # a literal example claim gets copied by small models


def test_interrogation_with_k_one_asks_for_a_single_line() -> None:
    system = interrogation_messages(DOCS, QUESTION, k=1, max_nodes=5)[0]["content"]
    assert "at least one line of reasoning" in system
    assert "at most 5 nodes" in system


def test_verification_renders_claim_and_documents_without_any_graph() -> None:
    messages = verification_messages(DOCS, 'The "db-2" primary\nwas patched.')
    text = all_text(messages)
    assert 'Claim: "The \\"db-2\\" primary was patched."' in text
    assert "[D2.1]" in text
    for verdict in ("supported", "refuted", "not_determinable"):
        assert f'"{verdict}"' in messages[0]["content"]
    assert "conclusion_node" not in text
    assert not PLACEHOLDER.search(text)
    assert '{"verdict": VERDICT, "reason": SENTENCE}' in messages[0]["content"]


def test_repair_appends_the_bad_reply_and_the_error_without_mutating_input() -> None:
    original = interrogation_messages(DOCS, QUESTION)
    before = [dict(m) for m in original]
    repaired = repair_messages(original, "x" * 10_000, "Expecting ',' delimiter: line 1")
    assert original == before
    assert repaired[:2] == original
    assert repaired[2] == {"role": "assistant", "content": "x" * 4000}
    assert repaired[3]["role"] == "user"
    assert "Expecting ',' delimiter: line 1" in repaired[3]["content"]
    assert "JSON" in repaired[3]["content"]
    assert not PLACEHOLDER.search(repaired[3]["content"])


def test_no_documents_render_as_an_explicit_marker() -> None:
    assert "(no documents)" in interrogation_messages(build_evidence([]), QUESTION)[1]["content"]


def test_think_first_asks_for_reasoning_then_the_graph_in_the_same_conversation() -> None:
    first = interrogation_messages(DOCS, QUESTION, think_first=True)
    assert "plain text" in first[1]["content"] and "JSON object only" not in first[1]["content"]
    second = commit_messages(first, "D1.2 says it was patched.")
    assert second[:2] == first
    assert second[2] == {"role": "assistant", "content": "D1.2 says it was patched."}
    assert "JSON object only" in second[3]["content"]


def test_prompts_stay_small_enough_for_a_two_thousand_token_context() -> None:
    # Roughly 4 characters per token: the fixed part must leave most of 2k tokens to documents
    # and the answer.
    one = build_evidence(["d"])
    assert len(interrogation_messages(one, "q")[0]["content"]) < 2400
    assert len(verification_messages(one, "c")[0]["content"]) < 700


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: interrogation_messages(["one doc"], QUESTION), "evidence"),  # type: ignore[arg-type]
        (lambda: verification_messages(["one doc"], "c"), "evidence"),  # type: ignore[arg-type]
        (lambda: commit_messages([], "r"), "messages"),
        (lambda: commit_messages([{"role": "user", "content": "q"}], " "), "reasoning"),
        (lambda: interrogation_messages(DOCS, "  "), "question"),
        (lambda: interrogation_messages(DOCS, QUESTION, k=0), "k"),
        (lambda: interrogation_messages(DOCS, QUESTION, max_nodes=1), "max_nodes"),
        (lambda: verification_messages(DOCS, ""), "claim"),
        (lambda: repair_messages([], "x", "err"), "messages"),
        (lambda: repair_messages([{"role": "user", "content": "q"}], "x", ""), "error"),
    ],
)
def test_invalid_inputs_are_rejected_with_the_field_named(call: object, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        call()  # type: ignore[operator]
