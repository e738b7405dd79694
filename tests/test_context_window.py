"""Evidence fits the model's context window: corpus rounds pack chunks best first and report
what they left out, inline documents that cannot fit are refused before any call, the window
is read from the server, and a server's "prompt too long" is a backend error."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from canned_runs import model_graph
from corpus_fixtures import write_corpus

import corpus
from orchestrator.api import run_task
from orchestrator.cli.run import main
from orchestrator.llm import ChatClient, ChatMessage
from orchestrator.llm.backend import open_backend
from orchestrator.llm.errors import APIStatusError, ContextOverflowError, status_error
from orchestrator.llm.probe import probe_context_tokens
from orchestrator.llm.testing import FakeOpenAIServer, FakeReply, ScriptedClient, ScriptedKwargs
from orchestrator.llm.tokens import prompt_tokens
from orchestrator.loop.context_window import (
    MIN_REPLY_TOKENS,
    base_tokens,
    document_tokens,
)
from orchestrator.records.reasons import RefusalReason
from orchestrator.records.task import RunConfig, TaskError
from orchestrator.report.markdown import render_markdown

QUESTION = "Which release added the git switch command?"
ANSWER_SENTENCE = "Git 2.23 added the git switch command."
FILLER = (
    "This release note lists many changes to git commands, options and internals, and "
    "each of them is described at some length here so that the chunk is long. "
)
LLAMA_OVERFLOW = {
    "error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
    }
}


def release_notes() -> dict[str, str]:
    """Ten release notes of about 900 characters each; one holds the answer."""
    files = {}
    for minor in range(20, 30):
        first = ANSWER_SENTENCE if minor == 23 else f"Git 2.{minor} changed the git commands."
        files[f"notes/git-2.{minor}.md"] = f"# Git 2.{minor}\n\n{first} " + FILLER * 4
    return files


@pytest.fixture(scope="module")
def notes_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("notes")
    path = root / "notes.sqlite"
    assert corpus.ingest(write_corpus(root / "docs", release_notes()), path, dense=False).ok
    return path


def answer_from(messages: list[ChatMessage]) -> str:
    """A graph citing the answer sentence where the prompt shows it, else 'unanswerable'."""
    for line in messages[-1]["content"].splitlines():
        match = re.match(r"\[(D\d+\.\d+)\] (.*)$", line)
        if match and match.group(2) == ANSWER_SENTENCE:
            return model_graph(
                [
                    {
                        "id": "n1",
                        "type": "given",
                        "source": match.group(1),
                        "claim": ANSWER_SENTENCE,
                    },
                    {"id": "n2", "type": "conclusion", "source": "none", "claim": "Git 2.23."},
                ],
                [{"from": "n1", "to": "n2", "relation": "supports", "confidence": 0.9}],
                "n2",
                answer="Git 2.23",
            )
    return model_graph(
        [{"id": "n1", "type": "conclusion", "source": "none", "claim": "Not stated."}],
        [],
        "n1",
        answer="unanswerable",
    )


def settings(**overrides: Any) -> RunConfig:
    return RunConfig(**{"n": 2, "k": 1, "budget_calls": 8, "seed": 1, **overrides})


def test_corpus_evidence_is_packed_best_first_into_the_window_and_left_out_chunks_are_reported(
    notes_index: Path, tmp_path: Path
) -> None:
    def reply(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        if kwargs["role"] == "query_rewrite":
            return '{"queries": ["git switch command"]}'
        return answer_from(messages)

    client = ScriptedClient(reply)
    probe = settings(retrieval_k=8)
    chunk = document_tokens(ANSWER_SENTENCE + " " + FILLER * 4)
    # room for about two chunks of evidence beside the rules, the question and the reply
    window = base_tokens(QUESTION, probe) + MIN_REPLY_TOKENS + 2 * chunk + 20
    task = {"question": QUESTION, "corpus": str(notes_index)}
    report = run_task(
        task, client=client, model="m", config=settings(context_tokens=window), out_dir=tmp_path
    )

    assert report["answer"] == "Git 2.23"
    [round_1] = report["retrieval"]["rounds"]
    hits = [hit["chunk_id"] for hit in round_1["hits"]]
    left_out = [entry["chunk_id"] for entry in round_1["left_out"]]
    assert len(hits) == 8 and 0 < len(left_out) < 8
    # best first: the chunks shown are the best-ranked ones, the rest are left out with a reason
    assert report["retrieval"]["chunks_shown"] == hits[: 8 - len(left_out)]
    assert left_out == hits[8 - len(left_out) :]
    assert all("tokens" in entry["reason"] for entry in round_1["left_out"])
    assert round_1["context"]["context_tokens"] == window
    for call in client.calls:
        if call["kwargs"]["role"] == "interrogation":
            max_tokens = call["kwargs"]["max_tokens"]
            assert max_tokens is not None
            assert prompt_tokens(call["messages"]) + max_tokens <= window
    markdown = render_markdown(report)
    assert f"context window of {window} tokens" in markdown and f"`{left_out[0]}`" in markdown


def test_a_context_overflow_from_the_server_is_reported_as_a_backend_error(
    notes_index: Path,
) -> None:
    def handler(body: dict[str, Any], headers: dict[str, str]) -> FakeReply | str:
        if body["max_tokens"] == 256:  # the query rewrite: short, it fits
            return '{"queries": ["git switch command"]}'
        return FakeReply(status=400, body=LLAMA_OVERFLOW)

    task = {"question": QUESTION, "corpus": str(notes_index)}
    with FakeOpenAIServer(handler) as server, ChatClient(server.base_url, max_retries=0) as client:
        report = run_task(task, client=client, model="m", config=settings())

    assert report["refusal_reason"] == RefusalReason.BACKEND_FAILED
    failure = report["limits"]["backend_failure"]
    assert "exceeds the available context size" in failure["reason"]
    assert "--context-tokens" in failure["fix"]
    assert "evidence does not support" not in report["statement"]
    assert report["retrieval"]["rounds"][0]["context_overflow"].startswith("ContextOverflowError")


@pytest.mark.parametrize(
    "message",
    [
        "the request exceeds the available context size, try increasing it",
        "This model's maximum context length is 4096 tokens. However, you requested 5166 tokens",
        "context_length_exceeded",
        "requested tokens (5166) exceed context window of 4096",
    ],
)
def test_a_400_that_says_the_context_was_exceeded_is_a_context_overflow(message: str) -> None:
    assert isinstance(status_error(400, f"HTTP 400: {message}"), ContextOverflowError)


def test_a_400_about_something_else_stays_a_plain_status_error() -> None:
    error = status_error(400, "HTTP 400: response_format is not supported")
    assert type(error) is APIStatusError and error.status == 400


def test_the_context_window_is_read_from_a_llama_cpp_props_route() -> None:
    props = {"default_generation_settings": {"n_ctx": 2048}, "total_slots": 2}
    with FakeOpenAIServer(routes={"/props": props}) as server:
        found = probe_context_tokens(server.base_url, "m")
        with open_backend("my-model", base_url=server.base_url) as backend:
            assert (backend.context_tokens, backend.context_source) == found
    root = server.base_url.removesuffix("/v1")
    assert found == (2048, f"{root}/props default_generation_settings.n_ctx")


def test_the_context_window_is_read_from_a_vllm_model_list() -> None:
    catalog = {"data": [{"id": "other", "max_model_len": 1024}, {"id": "m", "max_model_len": 8192}]}
    with FakeOpenAIServer(catalog=catalog) as server:
        assert probe_context_tokens(server.base_url, "m") == (
            8192,
            f"{server.base_url}/models max_model_len",
        )


def test_a_server_that_does_not_say_its_window_leaves_it_unknown() -> None:
    with FakeOpenAIServer(
        routes={"/props": {"default_generation_settings": {"n_ctx": "big"}}}
    ) as s:
        assert probe_context_tokens(s.base_url, "m") is None


def test_inline_documents_that_cannot_fit_the_window_are_refused_before_any_call() -> None:
    client = ScriptedClient([])
    task = {"question": QUESTION, "documents": [ANSWER_SENTENCE + " " + FILLER * 40]}
    with pytest.raises(TaskError, match=r"task field 'documents' needs about \d+ tokens"):
        run_task(task, client=client, model="m", config=settings(context_tokens=2048))
    assert client.calls == []


def test_inline_documents_that_fit_get_a_reply_cap_that_keeps_the_request_inside_the_window() -> (
    None
):
    client = ScriptedClient(lambda model, messages, kwargs: answer_from(messages))
    task = {"question": QUESTION, "documents": [ANSWER_SENTENCE]}
    report = run_task(task, client=client, model="m", config=settings(context_tokens=2400))

    assert report["answer"] == "Git 2.23"
    assert report["config"]["max_tokens_interrogation"] < 2048  # capped to what fits
    for call in client.calls:
        max_tokens = call["kwargs"]["max_tokens"]
        assert max_tokens is not None
        assert prompt_tokens(call["messages"]) + max_tokens <= 2400


def test_a_window_too_small_for_the_instructions_is_refused_before_any_call(
    notes_index: Path,
) -> None:
    client = ScriptedClient([])
    task = {"question": QUESTION, "corpus": str(notes_index)}
    with pytest.raises(TaskError, match=r"context_tokens=600 is too small"):
        run_task(task, client=client, model="m", config=settings(context_tokens=600))
    assert client.calls == []


def test_the_context_tokens_flag_rejects_a_window_out_of_range(
    notes_index: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    task = tmp_path / "task.json"
    task.write_text(f'{{"question": "{QUESTION}", "corpus": "{notes_index}"}}')
    assert main(["--task", str(task), "--model", "m", "--context-tokens", "10"]) == 2
    assert "context_tokens=10 is invalid" in capsys.readouterr().err
