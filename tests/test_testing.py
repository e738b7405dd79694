"""The shared test doubles behave as documented (other suites rely on them)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import requests

from orchestrator.llm import ChatMessage, LLMError, LLMTimeoutError
from orchestrator.llm.testing import (
    FakeOpenAIServer,
    FakeReply,
    ScriptedClient,
    ScriptedKwargs,
    ScriptExhaustedError,
    completion_body,
)

MESSAGES: list[ChatMessage] = [{"role": "user", "content": "hello"}]


def post(server: FakeOpenAIServer, body: Any) -> requests.Response:
    return requests.post(server.base_url + "/chat/completions", json=body, timeout=5)


def test_a_reply_sequence_is_served_in_order_and_then_runs_out() -> None:
    with FakeOpenAIServer(["first", FakeReply(status=418, body="teapot")]) as server:
        first = post(server, {"model": "m"})
        second = post(server, {"model": "m"})
        third = post(server, {"model": "m"})
    assert first.json()["choices"][0]["message"]["content"] == "first"
    assert (second.status_code, second.text) == (418, "teapot")
    assert third.status_code == 500 and "exhausted" in third.text
    assert [r.json for r in server.requests] == [{"model": "m"}] * 3


def test_reply_headers_and_default_error_bodies_are_sent() -> None:
    reply = FakeReply(status=429, headers={"Retry-After": "3"})
    with FakeOpenAIServer([reply]) as server:
        response = post(server, {"model": "m"})
    assert response.headers["Retry-After"] == "3"
    assert response.json()["error"]["code"] == 429


def test_a_raising_handler_becomes_a_500_and_is_kept() -> None:
    def broken(request: dict[str, Any], headers: dict[str, str]) -> str:
        raise KeyError("oops")

    with FakeOpenAIServer(broken) as server:
        response = post(server, {"model": "m"})
    assert response.status_code == 500
    assert isinstance(server.handler_errors[0], KeyError)


def test_catalog_unknown_routes_and_non_json_requests_are_answered() -> None:
    catalog = {"data": [{"id": "x"}]}
    with FakeOpenAIServer(catalog=catalog) as server:
        models = requests.get(server.base_url + "/models", timeout=5)
        missing = requests.get(server.base_url + "/nothing", timeout=5)
        garbage = requests.post(server.base_url + "/chat/completions", data=b"{nope", timeout=5)
    assert models.json() == catalog
    assert missing.status_code == 404
    assert garbage.status_code == 400
    assert server.requests[2].body == "{nope" and server.requests[2].json is None


def test_the_handler_sees_the_request_json_and_lower_cased_headers() -> None:
    seen: list[tuple[dict[str, Any], dict[str, str]]] = []

    def handler(request: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        seen.append((request, headers))
        return completion_body("ok")

    with FakeOpenAIServer(handler) as server:
        requests.post(
            server.base_url + "/chat/completions",
            json={"model": "m"},
            headers={"X-Custom": "1"},
            timeout=5,
        )
    assert seen[0][0] == {"model": "m"}
    assert seen[0][1]["x-custom"] == "1"


def test_slow_replies_are_served_concurrently() -> None:
    barrier = threading.Barrier(4, timeout=10)

    def handler(request: dict[str, Any], headers: dict[str, str]) -> str:
        barrier.wait()  # only returns once four requests are being handled at once
        return "done"

    with FakeOpenAIServer(handler) as server:
        threads = [threading.Thread(target=post, args=(server, {"m": i})) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert server.handler_errors == []
    assert server.max_in_flight == 4


def test_a_sequence_with_unsupported_items_is_rejected() -> None:
    with pytest.raises(TypeError, match=r"handler\[1\]"):
        FakeOpenAIServer(["ok", 42])


def test_completion_body_leaves_out_unknown_usage_fields() -> None:
    assert "usage" not in completion_body("x", prompt_tokens=None, completion_tokens=None)
    assert completion_body("x", cost=0.1)["usage"] == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost": 0.1,
    }


def test_scripted_client_answers_a_list_in_order_and_ledgers_each_call() -> None:
    client = ScriptedClient(["one", LLMTimeoutError("slow"), "three"], cost_per_call=0.01)
    assert client.chat("m", MESSAGES, role="interrogate", tags={"run_id": "r0"}).text == "one"
    with pytest.raises(LLMTimeoutError) as caught:
        client.chat("m", MESSAGES, role="interrogate")
    assert caught.value.attempts == 1 and caught.value.call_id == 1
    third = client.chat("m", MESSAGES, seed=3)
    assert (third.text, third.cost_usd, third.cost_source, third.call_id) == (
        "three",
        0.01,
        "usage",
        2,
    )
    records = client.ledger.records()
    assert [r["ok"] for r in records] == [True, False, True]
    assert records[0]["run_id"] == "r0"
    assert client.calls[2]["kwargs"]["seed"] == 3
    with pytest.raises(ScriptExhaustedError):
        client.chat("m", MESSAGES)


def test_scripted_client_passes_model_messages_and_options_to_a_callable_script() -> None:
    def script(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        if kwargs["role"] == "fail":
            raise LLMError("scripted failure")
        return f"{model}:{messages[-1]['content']}:{kwargs['temperature']}"

    client = ScriptedClient(script)
    result = client.chat("mm", MESSAGES, temperature=0.8)
    assert result.text == "mm:hello:0.8"
    assert (result.cost_usd, result.cost_source) == (None, "unknown")
    with pytest.raises(LLMError, match="scripted failure"):
        client.chat("mm", MESSAGES, role="fail")
    assert client.ledger.totals()["failed_calls"] == 1
