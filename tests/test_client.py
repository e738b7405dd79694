"""The real ChatClient against a real local HTTP server (orchestrator.llm.testing's fake)."""

from __future__ import annotations

import email.utils
import json
import logging
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.llm import (
    DEFAULT_MAX_TOKENS,
    APIStatusError,
    BackendUnusableError,
    CallTimeBudgetError,
    ChatClient,
    ChatMessage,
    CostLedger,
    GuardedClient,
    LLMTimeoutError,
    PricingTable,
    RetryExhaustedError,
)
from orchestrator.llm._keys import is_openrouter_url
from orchestrator.llm._response import parse_retry_after
from orchestrator.llm._settings import DEFAULT_BASE_URL
from orchestrator.llm.errors import (
    BackendRejectedError,
    BackendUnreachableError,
    MalformedResponseError,
    MissingAPIKeyError,
)
from orchestrator.llm.testing import FakeOpenAIServer, FakeReply, completion_body

MESSAGES: list[ChatMessage] = [{"role": "user", "content": "What is on rack 7?"}]
FAKE_KEY = "sk-or-v1-TESTKEY-0123456789abcdef-DO-NOT-LEAK"


class Sleeps:
    """Injected sleep: records requested delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def make_client(server: FakeOpenAIServer, **kwargs: Any) -> tuple[ChatClient, Sleeps]:
    sleeps = Sleeps()
    options: dict[str, Any] = {
        "pricing": PricingTable(),
        "backoff_base_s": 0.5,
        "sleep": sleeps,
        "rng": random.Random(7),
        "timeout_s": 5.0,
    }
    options.update(kwargs)
    return ChatClient(server.base_url, **options), sleeps


def test_successful_call_returns_text_tokens_and_reported_cost() -> None:
    reply = completion_body("rack 7 holds db-2", prompt_tokens=12, completion_tokens=4, cost=2e-5)
    with FakeOpenAIServer([reply]) as server:
        client, sleeps = make_client(server)
        result = client.chat("some/model", MESSAGES, temperature=0.3, role="interrogate")
    assert result.text == "rack 7 holds db-2"
    assert (result.prompt_tokens, result.completion_tokens) == (12, 4)
    assert (result.cost_usd, result.cost_source) == (2e-5, "usage")
    assert (result.attempts, result.finish_reason, result.call_id) == (1, "stop", 0)
    assert sleeps.delays == []
    [sent] = server.chat_requests()
    assert sent["model"] == "some/model" and sent["messages"] == MESSAGES
    assert sent["temperature"] == 0.3
    [record] = client.ledger.records()
    assert record["role"] == "interrogate" and record["ok"] is True


def test_retry_after_header_in_seconds_is_honoured() -> None:
    replies = [FakeReply(status=429, headers={"Retry-After": "2"}), "done"]
    with FakeOpenAIServer(replies) as server:
        client, sleeps = make_client(server)
        result = client.chat("m", MESSAGES)
    assert result.text == "done"
    assert result.attempts == 2
    assert sleeps.delays == [2.0]


def test_retry_after_http_date_is_honoured() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 5, usegmt=True)
    replies = [FakeReply(status=503, headers={"Retry-After": date}), "done"]
    with FakeOpenAIServer(replies) as server:
        client, sleeps = make_client(server, wall_clock=lambda: now)
        client.chat("m", MESSAGES)
    assert sleeps.delays == [5.0]


def test_retry_after_is_capped() -> None:
    replies = [FakeReply(status=429, headers={"Retry-After": "3600"}), "done"]
    with FakeOpenAIServer(replies) as server:
        client, sleeps = make_client(server, max_retry_after_s=7.0)
        client.chat("m", MESSAGES)
    assert sleeps.delays == [7.0]


def test_parse_retry_after_accepts_seconds_and_dates_and_rejects_garbage() -> None:
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after(email.utils.formatdate(100.0, usegmt=True), now=90.0) == 10.0
    assert parse_retry_after(email.utils.formatdate(100.0, usegmt=True), now=500.0) == 0.0
    for bad in (None, "", "soon", "-3", "nan", "inf"):
        assert parse_retry_after(bad) is None


def test_server_errors_are_retried_with_exponential_backoff_and_jitter() -> None:
    replies = [FakeReply(status=500), FakeReply(status=502), FakeReply(status=408), "done"]
    with FakeOpenAIServer(replies) as server:
        client, sleeps = make_client(server, backoff_base_s=1.0)
        result = client.chat("m", MESSAGES)
    assert result.attempts == 4
    assert len(sleeps.delays) == 3
    for attempt, delay in enumerate(sleeps.delays, start=1):
        full = 2.0 ** (attempt - 1)
        assert full / 2 <= delay <= full


@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 422])
def test_client_errors_are_not_retried(status: int) -> None:
    with FakeOpenAIServer([FakeReply(status=status), "never reached"]) as server:
        client, sleeps = make_client(server)
        with pytest.raises(APIStatusError) as caught:
            client.chat("m", MESSAGES)
    assert caught.value.status == status
    assert caught.value.attempts == 1
    assert len(server.chat_requests()) == 1
    assert sleeps.delays == []


def test_persistent_server_errors_end_in_retry_exhausted_after_max_retries() -> None:
    with FakeOpenAIServer(lambda request, headers: FakeReply(status=503)) as server:
        client, sleeps = make_client(server, max_retries=3)
        with pytest.raises(RetryExhaustedError) as caught:
            client.chat("m", MESSAGES, role="verify")
    error = caught.value
    assert isinstance(error.last_error, APIStatusError) and error.last_error.status == 503
    assert error.attempts == 4
    assert len(server.chat_requests()) == 4
    assert len(sleeps.delays) == 3
    [record] = client.ledger.records()
    assert record["ok"] is False and record["attempts"] == 4 and record["role"] == "verify"
    assert record["call_id"] == error.call_id
    assert record["cost_source"] == "error_response"


def test_timeouts_are_retried_then_raise_retry_exhausted() -> None:
    with FakeOpenAIServer(lambda request, headers: FakeReply(delay_s=2.0)) as server:
        client, _ = make_client(server, timeout_s=0.2, max_retries=1)
        with pytest.raises(RetryExhaustedError) as caught:
            client.chat("m", MESSAGES)
    assert isinstance(caught.value.last_error, LLMTimeoutError)
    assert len(server.chat_requests()) == 2
    [record] = client.ledger.records()
    # The server may have generated (and billed) the answers we stopped waiting for.
    assert (record["cost_usd"], record["cost_source"]) == (None, "unknown")
    assert client.ledger.totals()["cost_complete"] is False


def test_a_timed_out_attempt_makes_the_cost_total_incomplete_even_after_success() -> None:
    replies = [FakeReply(delay_s=2.0), completion_body("late but fine", cost=0.001)]
    with FakeOpenAIServer(replies) as server:
        client, _ = make_client(server, timeout_s=0.2)
        result = client.chat("m", MESSAGES)
    assert (result.attempts, result.transport_failures, result.cost_usd) == (2, 1, 0.001)
    totals = client.ledger.totals()
    assert totals["cost_usd"] is None
    assert totals["cost_usd_known"] == 0.001
    assert totals["transport_failures"] == 1
    assert totals["cost_complete"] is False


def test_a_dropped_connection_is_retried() -> None:
    with FakeOpenAIServer([FakeReply(drop_connection=True), "recovered"]) as server:
        client, sleeps = make_client(server)
        assert client.chat("m", MESSAGES).text == "recovered"
    assert len(sleeps.delays) == 1


def test_a_port_where_nothing_listens_is_an_unusable_backend_after_the_retries() -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url
    sleeps = Sleeps()
    client = ChatClient(url, pricing=PricingTable(), sleep=sleeps, max_retries=1, timeout_s=2)
    with pytest.raises(BackendUnreachableError) as caught:
        client.chat("m", MESSAGES)
    assert caught.value.kind == "connection_refused" and caught.value.attempts == 2
    assert "connection refused" in str(caught.value) and "Fix: " in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_200_with_a_coded_error_body_is_a_retryable_status_error() -> None:
    upstream = {"error": {"code": 502, "message": "upstream provider failed"}}
    with FakeOpenAIServer([upstream, "second try works"]) as server:
        client, _ = make_client(server)
        result = client.chat("m", MESSAGES)
    assert (result.text, result.attempts) == ("second try works", 2)


def test_a_200_with_an_uncoded_error_body_is_malformed_and_not_retried() -> None:
    with FakeOpenAIServer([{"error": {"message": "model exploded"}}, "unused"]) as server:
        client, _ = make_client(server)
        with pytest.raises(MalformedResponseError, match="model exploded"):
            client.chat("m", MESSAGES)
    assert len(server.chat_requests()) == 1


def test_a_200_with_a_client_error_code_in_the_body_is_not_retried() -> None:
    with FakeOpenAIServer([{"error": {"code": 401, "message": "bad key"}}]) as server:
        client, _ = make_client(server)
        with pytest.raises(APIStatusError) as caught:
            client.chat("m", MESSAGES)
    assert caught.value.status == 401 and caught.value.embedded is True


@pytest.mark.parametrize(
    "body",
    [
        {"id": "x", "choices": []},
        {"id": "x"},
        completion_body(""),
        completion_body("   \n"),
        "<html>gateway says hi</html>",
        ["not", "an", "object"],
    ],
    ids=["empty-choices", "no-choices", "empty-text", "blank-text", "html", "json-list"],
)
def test_a_200_without_usable_content_is_malformed(body: Any) -> None:
    with FakeOpenAIServer([FakeReply(body=body)]) as server:
        client, _ = make_client(server)
        with pytest.raises(MalformedResponseError):
            client.chat("m", MESSAGES)


def test_a_non_json_error_page_is_still_a_retryable_status() -> None:
    replies = [FakeReply(status=502, body="<html>Bad Gateway</html>"), "ok now"]
    with FakeOpenAIServer(replies) as server:
        client, _ = make_client(server)
        assert client.chat("m", MESSAGES).attempts == 2


def test_cost_comes_from_usage_then_pricing_then_is_unknown() -> None:
    pricing = PricingTable({"priced": (1e-6, 2e-6)})
    replies = [
        completion_body("a", prompt_tokens=100, completion_tokens=10, cost=0.5),
        completion_body("b", prompt_tokens=100, completion_tokens=10),
        completion_body("c", prompt_tokens=100, completion_tokens=10),
        completion_body("d", prompt_tokens=None, completion_tokens=None),
    ]
    with FakeOpenAIServer(replies) as server:
        client, _ = make_client(server, pricing=pricing)
        reported = client.chat("priced", MESSAGES)
        priced = client.chat("priced", MESSAGES)
        unpriced = client.chat("unpriced", MESSAGES)
        no_tokens = client.chat("priced", MESSAGES)
    assert (reported.cost_usd, reported.cost_source) == (0.5, "usage")
    assert priced.cost_source == "pricing"
    assert priced.cost_usd == pytest.approx(100 * 1e-6 + 10 * 2e-6)
    assert (unpriced.cost_usd, unpriced.cost_source) == (None, "unknown")
    assert (no_tokens.cost_usd, no_tokens.cost_source) == (None, "unknown")
    totals = client.ledger.totals()
    assert totals["cost_usd"] is None
    assert totals["calls_cost_unknown"] == 2
    assert totals["cost_usd_known"] == pytest.approx(0.5 + 1.2e-4)
    assert totals["calls_tokens_unknown"] == 1


def test_local_models_priced_at_zero_in_models_json_cost_a_known_zero() -> None:
    with FakeOpenAIServer([completion_body("x")]) as server:
        client = ChatClient(server.base_url, sleep=Sleeps())
        result = client.chat("local", MESSAGES)
    assert (result.cost_usd, result.cost_source) == (0.0, "pricing")
    assert client.ledger.totals()["cost_usd"] == 0.0


def test_catalog_prices_are_fetched_once_when_enabled() -> None:
    catalog = {"data": [{"id": "cat/model", "pricing": {"prompt": "0.000001", "completion": "0"}}]}
    replies = [completion_body("a", prompt_tokens=1000), completion_body("b", prompt_tokens=10)]
    with FakeOpenAIServer(replies, catalog=catalog) as server:
        client, _ = make_client(server, fetch_catalog=True)
        first = client.chat("cat/model", MESSAGES)
        second = client.chat("cat/model", MESSAGES)
        catalog_gets = [r for r in server.requests if r.method == "GET"]
    assert first.cost_usd == pytest.approx(1e-3) and first.cost_source == "pricing"
    assert second.cost_usd == pytest.approx(1e-5)
    assert len(catalog_gets) == 1
    assert "authorization" not in catalog_gets[0].headers


def test_a_failing_catalog_fetch_leaves_cost_unknown(caplog: pytest.LogCaptureFixture) -> None:
    with FakeOpenAIServer([completion_body("a")], catalog={"unexpected": True}) as server:
        client, _ = make_client(server, fetch_catalog=True)
        result = client.chat("m", MESSAGES)
    assert (result.cost_usd, result.cost_source) == (None, "unknown")
    assert "could not load the model catalog" in caplog.text


def test_response_format_seed_and_extra_body_are_passed_through() -> None:
    schema = {"type": "json_schema", "json_schema": {"name": "g", "schema": {"type": "object"}}}
    with FakeOpenAIServer(["{}"]) as server:
        client, _ = make_client(server)
        client.chat(
            "m",
            MESSAGES,
            response_format=schema,
            seed=11,
            max_tokens=64,
            extra_body={"top_p": 0.9},
        )
    [sent] = server.chat_requests()
    assert sent["response_format"] == schema
    assert (sent["seed"], sent["max_tokens"], sent["top_p"]) == (11, 64, 0.9)
    assert "usage" not in sent  # the OpenRouter-only usage flag stays away from other servers


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"model": ""}, "model"),
        ({"messages": []}, "messages"),
        ({"messages": [{"content": "no role"}]}, "messages"),
        ({"temperature": 3.0}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"extra_body": {"model": "other"}}, "extra_body"),
        ({"role": ""}, "role"),
    ],
)
def test_invalid_arguments_are_rejected_before_anything_is_sent(
    kwargs: dict[str, Any], field: str
) -> None:
    with FakeOpenAIServer() as server:
        client, _ = make_client(server)
        call = {"model": "m", "messages": MESSAGES, **kwargs}
        with pytest.raises(ValueError, match=field):
            client.chat(**call)
    assert server.requests == []
    assert len(client.ledger) == 0


@pytest.mark.parametrize(
    "kwargs",
    [{"timeout_s": 0}, {"max_retries": -1}, {"max_retries": 11}, {"backoff_base_s": -1.0}],
)
def test_invalid_client_settings_are_rejected(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        ChatClient("http://127.0.0.1:1/v1", pricing=PricingTable(), **kwargs)


def test_base_url_comes_from_argument_then_environment_then_openrouter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LOGIC_GRAPH_BASE_URL", raising=False)
    assert ChatClient(pricing=PricingTable()).base_url == DEFAULT_BASE_URL
    monkeypatch.setenv("LOGIC_GRAPH_BASE_URL", "http://localhost:8080/v1/")
    assert ChatClient(pricing=PricingTable()).base_url == "http://localhost:8080/v1"
    assert ChatClient("http://h:1/v1", pricing=PricingTable()).base_url == "http://h:1/v1"
    with pytest.raises(ValueError, match="base_url"):
        ChatClient("ftp://example.org", pricing=PricingTable())


def test_the_environment_key_is_only_sent_to_openrouter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", FAKE_KEY)
    assert "api_key=set" in repr(ChatClient(DEFAULT_BASE_URL, pricing=PricingTable()))
    with FakeOpenAIServer(["hi"]) as server:
        client, _ = make_client(server)
        client.chat("m", MESSAGES)
    assert "api_key=none" in repr(client)
    assert "authorization" not in server.requests[0].headers


def test_the_api_key_never_appears_in_logs_exceptions_reprs_or_ledger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def echo_key(request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
        # A hostile or buggy server that reflects the credentials back in its answers.
        leaked = headers.get("authorization", "")
        if request["messages"][0]["content"] == "200-error":
            return FakeReply(body={"error": {"code": "E", "message": f"bad {leaked}"}})
        return FakeReply(status=500, body=f"boom, you sent {leaked}")

    caplog.set_level(logging.DEBUG)
    errors: list[BaseException] = []
    with FakeOpenAIServer(echo_key) as server:
        client, _ = make_client(server, api_key=FAKE_KEY, max_retries=2)
        for content in ("500", "200-error"):
            with pytest.raises(Exception) as caught:
                client.chat("m", [{"role": "user", "content": content}])
            errors.append(caught.value)
    assert server.requests[0].headers["authorization"] == f"Bearer {FAKE_KEY}"  # it was sent
    texts = [caplog.text, repr(client), json.dumps(client.ledger.records())]
    for error in errors:
        texts += [str(error), repr(error)]
        for linked in (error.__cause__, error.__context__):
            if linked is not None:
                texts += [str(linked), repr(linked)]
    assert "[REDACTED]" in str(errors[1])
    for text in texts:
        assert FAKE_KEY not in text


def test_concurrent_calls_are_served_in_parallel_and_ledgered_consistently() -> None:
    workers, calls_each = 6, 5
    barrier = threading.Barrier(workers, timeout=10)
    first_wave = threading.Semaphore(workers)

    def handler(request: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        # The first six requests only proceed once all six are in flight at the same time.
        if first_wave.acquire(blocking=False):
            barrier.wait()
        return completion_body("ok", prompt_tokens=3, completion_tokens=2, cost=0.25)

    with FakeOpenAIServer(handler) as server:
        client, _ = make_client(server)

        def work() -> None:
            for _ in range(calls_each):
                client.chat("m", MESSAGES, role="interrogate")

        threads = [threading.Thread(target=work) for _ in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert server.handler_errors == []
    assert server.max_in_flight >= workers
    records = client.ledger.records()
    assert [r["call_id"] for r in records] == list(range(workers * calls_each))
    totals = client.ledger.totals()
    assert totals["calls"] == totals["attempts"] == workers * calls_each
    assert totals["cost_usd"] == pytest.approx(0.25 * workers * calls_each)
    assert totals["prompt_tokens"] == 3 * workers * calls_each
    assert totals["by_role"]["interrogate"]["calls"] == workers * calls_each


def test_ledger_annotations_add_caller_fields_but_not_core_ones() -> None:
    with FakeOpenAIServer(["x"]) as server:
        client, _ = make_client(server)
        result = client.chat("m", MESSAGES, tags={"run_id": "r1"})
    assert result.call_id is not None
    client.ledger.annotate(result.call_id, parse_outcome="salvaged")
    [record] = client.ledger.records()
    assert (record["run_id"], record["parse_outcome"]) == ("r1", "salvaged")
    with pytest.raises(ValueError, match="reserved"):
        client.ledger.annotate(result.call_id, cost_usd=0.0)
    with pytest.raises(ValueError, match="reserved"):  # every key of the record, cache included
        client.ledger.annotate(result.call_id, cached_tokens=0)
    with pytest.raises(ValueError, match="call_id"):
        client.ledger.annotate(99, parse_outcome="strict")


def test_ledger_totals_count_retries_separately_from_calls() -> None:
    ledger = CostLedger()
    replies = [FakeReply(status=429), "a", FakeReply(status=500), FakeReply(status=500), "b"]
    with FakeOpenAIServer(replies) as server:
        client, _ = make_client(server, ledger=ledger)
        client.chat("m", MESSAGES)
        client.chat("m", MESSAGES)
    totals = ledger.totals()
    assert (totals["calls"], totals["attempts"], totals["retries"]) == (2, 5, 3)


def test_pricing_table_reads_models_json_and_rejects_bad_prices(tmp_path: Path) -> None:
    table = PricingTable.from_models_json()
    assert table.get("local") == (0.0, 0.0)
    bad = tmp_path / "models.json"
    entry = {"id": "x", "pricing": {"prompt": -1, "completion": 0}}
    bad.write_text(json.dumps({"models": [entry]}))
    with pytest.raises(ValueError, match="'x'"):
        PricingTable.from_models_json(bad)
    with pytest.raises(ValueError, match="does not exist"):
        PricingTable.from_models_json(tmp_path / "missing.json")


def test_pricing_table_reads_catalogs_and_skips_variable_prices(tmp_path: Path) -> None:
    catalog = {
        "data": [
            {"id": "a/b", "pricing": {"prompt": "0.0000002", "completion": "0.0000006"}},
            {"id": "openrouter/auto", "pricing": {"prompt": "-1", "completion": "-1"}},
            {"id": "no/pricing"},
            "junk",
        ]
    }
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(catalog))
    table = PricingTable.from_catalog_file(path)
    assert len(table) == 1
    assert table.cost("a/b", 10, 10) == pytest.approx(8e-6)
    assert table.cost("openrouter/auto", 10, 10) is None
    merged = PricingTable({"a/b": (0.0, 0.0)}).merged(table)
    assert merged.get("a/b") == (0.0, 0.0)


# -- key safety: look-alike hosts --------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "is_openrouter"),
    [
        ("https://openrouter.ai/api/v1", True),
        ("https://api.openrouter.ai/v1", True),
        ("https://OpenRouter.AI./api/v1", True),
        ("https://evil-openrouter.ai/api/v1", False),
        ("https://notopenrouter.ai/api/v1", False),
        ("https://openrouter.ai.evil.example/api/v1", False),
        ("https://evil.example/openrouter.ai/api/v1", False),
    ],
)
def test_only_openrouter_itself_or_a_true_subdomain_counts_as_openrouter(
    url: str, is_openrouter: bool
) -> None:
    assert is_openrouter_url(url) is is_openrouter


@pytest.fixture
def proxy_to(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """A fake server that receives every plain-http request whatever its host (as a proxy), so
    a test can see exactly which headers would have gone to a look-alike host."""
    with FakeOpenAIServer(["hi"] * 10) as server:
        root = server.base_url.removesuffix("/v1")
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", root)
        monkeypatch.setenv("http_proxy", root)
        yield server


@pytest.mark.parametrize(
    "url",
    ["http://evil-openrouter.ai/api/v1", "http://notopenrouter.ai/api/v1", "http://x.io/v1"],
)
def test_look_alike_hosts_never_receive_the_environment_key(
    url: str, proxy_to: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", FAKE_KEY)
    client = ChatClient(url, pricing=PricingTable(), max_retries=0)
    assert client.chat("m", MESSAGES).text == "hi"
    (request,) = proxy_to.requests
    assert request.path.startswith(url)  # it really was addressed to the look-alike host
    assert "authorization" not in request.headers
    assert FAKE_KEY not in json.dumps(request.headers) + request.body


def test_the_key_is_never_sent_to_openrouter_over_plain_http(
    proxy_to: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", FAKE_KEY)
    client = ChatClient("http://openrouter.ai/api/v1", pricing=PricingTable())
    assert "api_key=none" in repr(client)
    with pytest.raises(MissingAPIKeyError, match="only sent over HTTPS") as caught:
        client.chat("m", MESSAGES)
    assert "Fix: use https://openrouter.ai/api/v1" in str(caught.value)
    assert proxy_to.requests == []


# -- unusable backends -------------------------------------------------------------------------


def test_openrouter_without_a_key_fails_before_any_request_with_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    with FakeOpenAIServer() as server:  # would see any request, as the HTTPS proxy
        monkeypatch.setenv("HTTPS_PROXY", server.base_url.removesuffix("/v1"))
        client = ChatClient(DEFAULT_BASE_URL, pricing=PricingTable())
        with pytest.raises(MissingAPIKeyError) as caught:
            client.chat("meta-llama/llama-3.1-8b-instruct", MESSAGES)
        with pytest.raises(MissingAPIKeyError):
            client.preflight()
        assert server.requests == []
    message = str(caught.value)
    assert caught.value.kind == "missing_key" and "\n" not in message
    assert message.endswith(
        "Fix: export OPENROUTER_API_KEY=<your key>, or run offline with --model local-1.5b"
    )
    (record,) = client.ledger.records()
    assert (record["ok"], record["attempts"], record["cost_usd"]) == (False, 0, 0.0)


@pytest.mark.parametrize(
    ("status", "kind"), [(401, "unauthorized"), (402, "payment_required"), (404, "not_found")]
)
def test_a_rejecting_status_makes_the_backend_unusable_after_one_attempt(
    status: int, kind: str
) -> None:
    with FakeOpenAIServer(lambda req, headers: FakeReply(status=status)) as server:
        client, sleeps = make_client(server)
        with pytest.raises(BackendRejectedError) as caught:
            client.chat("m", MESSAGES)
    error = caught.value
    assert isinstance(error, BackendUnusableError) and isinstance(error, APIStatusError)
    assert (error.status, error.kind, error.attempts) == (status, kind, 1)
    assert f"HTTP {status}" in str(error) and "Fix: " in str(error) and "\n" not in str(error)
    assert sleeps.delays == []


def test_a_403_stays_an_ordinary_error_because_one_prompt_can_be_refused() -> None:
    with FakeOpenAIServer(lambda req, headers: FakeReply(status=403)) as server:
        client, _ = make_client(server)
        with pytest.raises(APIStatusError) as caught:
            client.chat("m", MESSAGES)
    assert not isinstance(caught.value, BackendUnusableError)


def test_a_host_name_that_does_not_resolve_is_an_unusable_backend() -> None:
    client = ChatClient(
        "http://no-such-host.logic-graph.invalid/v1",
        pricing=PricingTable(),
        sleep=Sleeps(),
        max_retries=1,
    )
    with pytest.raises(BackendUnreachableError) as preflight:
        client.preflight()
    with pytest.raises(BackendUnreachableError) as chat:
        client.chat("m", MESSAGES)
    assert preflight.value.kind == chat.value.kind == "dns"
    assert "does not resolve" in str(chat.value) and "Fix: check the host" in str(chat.value)


def test_preflight_finds_a_port_where_nothing_listens_without_a_chat_call() -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url
    with pytest.raises(BackendUnreachableError) as caught:
        ChatClient(url, pricing=PricingTable()).preflight()
    assert caught.value.kind == "connection_refused"


def test_preflight_accepts_any_http_answer_and_makes_no_chat_call() -> None:
    with FakeOpenAIServer(catalog={"data": []}) as server:
        ChatClient(server.base_url, pricing=PricingTable()).preflight()
        ChatClient(server.base_url + "/nowhere", pricing=PricingTable()).preflight()  # a 404
        assert [r.method for r in server.requests] == ["GET", "GET"]
        assert server.chat_requests() == []


# -- bounds: max_tokens and timeouts against the slow fake server --------------------------------

LONG_ANSWER = " ".join(f"w{i}" for i in range(1000))


def test_a_request_without_max_tokens_carries_the_clients_default() -> None:
    with FakeOpenAIServer(["a", "b"]) as server:
        ChatClient(server.base_url, pricing=PricingTable()).chat("m", MESSAGES)
        ChatClient(server.base_url, pricing=PricingTable(), default_max_tokens=77).chat(
            "m", MESSAGES
        )
        sent = [r["max_tokens"] for r in server.chat_requests()]
    assert sent == [DEFAULT_MAX_TOKENS, 77]


def test_max_tokens_bounds_what_a_slow_model_generates_and_how_long_it_takes() -> None:
    # 1,000 tokens at 0.05 s each would take 50 s; 8 tokens take 0.4 s.
    with FakeOpenAIServer([LONG_ANSWER], seconds_per_token=0.05) as server:
        client, _ = make_client(server, timeout_s=30.0)
        result = client.chat("m", MESSAGES, max_tokens=8)
    assert result.text.split() == LONG_ANSWER.split()[:8]
    assert (result.finish_reason, result.completion_tokens) == ("length", 8)
    assert 0.4 <= result.latency_s < 20


def test_the_per_attempt_timeout_ends_a_call_the_slow_model_would_not_finish() -> None:
    with FakeOpenAIServer([LONG_ANSWER], seconds_per_token=0.05) as server:
        client = ChatClient(server.base_url, pricing=PricingTable(), timeout_s=0.5, max_retries=0)
        with pytest.raises(RetryExhaustedError) as caught:
            client.chat("m", MESSAGES, max_tokens=1000)
    assert isinstance(caught.value.last_error, LLMTimeoutError)
    (record,) = client.ledger.records()
    assert 0.5 <= record["latency_s"] < 20 and record["cost_usd"] is None


def test_a_calls_own_time_limit_covers_its_retries_and_back_off() -> None:
    slow = [LONG_ANSWER] * 10
    with FakeOpenAIServer(slow, seconds_per_token=0.05) as server:
        client = ChatClient(server.base_url, pricing=PricingTable(), timeout_s=30.0, max_retries=5)
        with pytest.raises(RetryExhaustedError, match="the call's time limit") as caught:
            client.chat("m", MESSAGES, max_tokens=1000, timeout_s=1.0)
        assert len(server.chat_requests()) < 5
    assert isinstance(caught.value.last_error, LLMTimeoutError)
    assert client.ledger.records()[0]["latency_s"] < 20


# -- GuardedClient -----------------------------------------------------------------------------


def test_after_the_first_unusable_error_no_further_request_reaches_the_backend() -> None:
    with FakeOpenAIServer(lambda req, headers: FakeReply(status=401)) as server:
        client, _ = make_client(server)
        guard = GuardedClient(client)
        for _ in range(3):
            with pytest.raises(BackendRejectedError):
                guard.chat("m", MESSAGES)
        assert len(server.chat_requests()) == 1
    assert guard.unusable is not None and guard.unusable.kind == "unauthorized"
    assert [r["attempts"] for r in client.ledger.records()] == [1, 0, 0]


def test_no_call_starts_after_the_wall_clock_budget_and_it_is_recorded() -> None:
    now = [100.0]
    with FakeOpenAIServer(["one", "two"]) as server:
        client, _ = make_client(server)
        guard = GuardedClient(client, budget_s=5.0, clock=lambda: now[0])
        assert guard.chat("m", MESSAGES).text == "one"
        now[0] += 5.0
        with pytest.raises(CallTimeBudgetError, match="budget of 5 s is spent"):
            guard.chat("m", MESSAGES)
        assert len(server.chat_requests()) == 1
    assert (guard.succeeded, guard.refused_for_time, guard.deadline_reached) == (1, 1, True)
    refused = client.ledger.records()[1]
    assert (refused["ok"], refused["attempts"], refused["cost_usd"]) == (False, 0, 0.0)


def test_a_call_in_flight_gets_only_the_time_left_in_the_budget() -> None:
    with FakeOpenAIServer([LONG_ANSWER], seconds_per_token=0.05) as server:
        client = ChatClient(server.base_url, pricing=PricingTable(), timeout_s=60.0)
        guard = GuardedClient(client, budget_s=1.0)
        with pytest.raises(RetryExhaustedError) as caught:
            guard.chat("m", MESSAGES, max_tokens=1000)
    assert isinstance(caught.value.last_error, LLMTimeoutError)
    assert client.ledger.records()[0]["latency_s"] < 20


# -- a backend that drips bytes ---------------------------------------------------------------


@pytest.mark.parametrize("drip_headers", [False, True], ids=["body", "headers"])
def test_a_server_that_drips_bytes_cannot_hold_a_call_past_its_deadline(
    drip_headers: bool,
) -> None:
    # One byte every 0.2 s: every socket read succeeds long before any per-read timeout, and
    # the whole answer would take well over a minute.
    drip = FakeReply(body=completion_body(LONG_ANSWER), drip_s=0.2, drip_headers=drip_headers)
    with FakeOpenAIServer([drip]) as server:
        client = ChatClient(server.base_url, pricing=PricingTable(), timeout_s=1.0, max_retries=0)
        started = time.monotonic()
        with pytest.raises(RetryExhaustedError) as caught:
            client.chat("m", MESSAGES)
        elapsed = time.monotonic() - started
    assert isinstance(caught.value.last_error, LLMTimeoutError)
    assert "whole body" in str(caught.value)
    assert elapsed < 20  # the deadline is 1 s; generous for a loaded machine


def test_a_dripping_server_is_cut_at_the_calls_own_time_limit_across_retries() -> None:
    drip = FakeReply(body=completion_body(LONG_ANSWER), drip_s=0.2)
    with FakeOpenAIServer(lambda req, headers: drip) as server:
        client = ChatClient(
            server.base_url,
            pricing=PricingTable(),
            timeout_s=60.0,
            max_retries=3,
            backoff_base_s=0.01,
        )
        started = time.monotonic()
        with pytest.raises(RetryExhaustedError, match="the call's time limit"):
            client.chat("m", MESSAGES, timeout_s=1.5)
        assert time.monotonic() - started < 20


def test_the_call_after_one_cut_at_its_deadline_is_answered_normally() -> None:
    drip = FakeReply(body=completion_body("late"), drip_s=0.5)
    with FakeOpenAIServer([drip, "on time"]) as server:
        client = ChatClient(server.base_url, pricing=PricingTable(), timeout_s=1.0, max_retries=0)
        with pytest.raises(RetryExhaustedError):
            client.chat("m", MESSAGES)
        assert client.chat("m", MESSAGES).text == "on time"


@pytest.mark.parametrize("limit_s", [0.5, 2.5])
def test_wherever_the_deadline_cuts_a_dripped_answer_the_call_is_a_timeout(limit_s: float) -> None:
    # At 0.1 s a byte the cut falls inside the status line or among the headers; a status line
    # that did arrive must not pass for a short, complete (empty) answer.
    drip = FakeReply(body=completion_body("late"), drip_s=0.1, drip_headers=True)
    with FakeOpenAIServer([drip]) as server:
        client = ChatClient(
            server.base_url, pricing=PricingTable(), timeout_s=limit_s, max_retries=0
        )
        with pytest.raises(RetryExhaustedError) as caught:
            client.chat("m", MESSAGES)
    assert isinstance(caught.value.last_error, LLMTimeoutError)
