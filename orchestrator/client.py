"""OpenAI-compatible chat-completions client over ``requests``, with retries and cost accounting.

Works against OpenRouter (the default) or any compatible server (llama.cpp, vLLM, Ollama):
``ChatClient(base_url)`` or the ``LOGIC_GRAPH_BASE_URL`` environment variable.

Key handling: the key comes from the ``api_key`` argument or ``OPENROUTER_API_KEY``. The
environment key is only ever sent over HTTPS to ``openrouter.ai`` itself or a true subdomain
(``api.openrouter.ai``; not ``evil-openrouter.ai``, not ``openrouter.ai.example.com``, not
plain ``http://``), so pointing the client at some other server cannot leak it; pass
``api_key=`` explicitly to authenticate elsewhere. An OpenRouter client without a key raises
:class:`MissingAPIKeyError` before sending anything. The key is kept out of ``repr``, log
lines, exception messages and ledger records (server text that echoes it is redacted).

Bounds: every request carries ``max_tokens`` (the caller's, else ``default_max_tokens``); each
HTTP attempt has a wall-clock deadline (``timeout_s``) for the whole exchange (connect, headers
and body), and a logical call may be given an overall limit (``chat(..., timeout_s=...)``) that
covers its attempts and back-off together. A per-read socket timeout alone would not do: a
server that sends one byte every few seconds never lets a read time out, so a watchdog shuts
the attempt's socket down when its deadline passes (:class:`_Watchdog`).

Unusable backends: a host name that does not resolve or a port where nothing listens (after the
retries), and 401, 402 and 404 answers, raise a :class:`BackendUnusableError` subclass whose
one-line message ends with the fix. :meth:`ChatClient.preflight` finds the first two kinds, and
a missing key, without a chat call.

Retries: at most ``max_retries`` more attempts after the first, on 408/429/5xx (also when a 200
body embeds such a code), timeouts and broken connections, waiting ``Retry-After`` (capped at
``max_retry_after_s``) or exponential back-off with jitter. 400/401/402/403/404/422 and other
4xx fail at once. Every logical call, successful or not, becomes one ledger record; cost rules
are in :mod:`orchestrator._ledger`.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import logging
import math
import os
import random
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC
from typing import Any, NoReturn
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.poolmanager import PoolManager

from orchestrator._ledger import ChatResult, CostLedger
from orchestrator._pricing import PricingTable
from orchestrator.chat import ChatMiddleware, ChatRequest, ChatSeam
from orchestrator.errors import (
    APIStatusError,
    BackendRejectedError,
    BackendUnreachableError,
    BackendUnusableError,
    CallTimeBudgetError,
    ContextOverflowError,
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    MalformedResponseError,
    MissingAPIKeyError,
    RetryExhaustedError,
    UnexpectedClientError,
    status_error,
)

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_TOKENS",
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "APIStatusError",
    "BackendRejectedError",
    "BackendUnreachableError",
    "BackendUnusableError",
    "CallTimeBudgetError",
    "ChatClient",
    "ChatRequest",
    "ChatResult",
    "ChatSeam",
    "ContextOverflowError",
    "CostLedger",
    "GuardedClient",
    "LLMConnectionError",
    "LLMError",
    "LLMTimeoutError",
    "MalformedResponseError",
    "MissingAPIKeyError",
    "PricingTable",
    "RetryExhaustedError",
    "SupportsChat",
    "UnexpectedClientError",
    "is_openrouter_url",
    "parse_retry_after",
]

SupportsChat = ChatSeam
"""What the control loop, screen and evals take as a client: any :class:`ChatSeam`."""

log = logging.getLogger("orchestrator.client")

DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
ENV_BASE_URL = "LOGIC_GRAPH_BASE_URL"
ENV_API_KEY = "OPENROUTER_API_KEY"
DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` of a request whose caller set none: no call may run to the end of a context."""
_EXCERPT_CHARS = 300
_RESERVED_BODY_KEYS = frozenset({"model", "messages"})
_OPENROUTER_HOST = "openrouter.ai"
# Statuses after which no request to this backend can succeed: the key is wrong (401), the
# account has no credits (402), or the model or endpoint does not exist (404). 403 is not
# here: OpenRouter answers 403 when one prompt is flagged by moderation.
_UNUSABLE_STATUS = {401: "unauthorized", 402: "payment_required", 404: "not_found"}


def is_openrouter_url(url: str) -> bool:
    """True when ``url``'s host is ``openrouter.ai`` or a true subdomain of it (dot boundary):
    ``api.openrouter.ai`` is, ``evil-openrouter.ai`` and ``openrouter.ai.evil.com`` are not."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    return host == _OPENROUTER_HOST or host.endswith("." + _OPENROUTER_HOST)


_watching = threading.local()
"""The :class:`_Watchdog` of the HTTP attempt running on this thread, if any."""


class _Watchdog:
    """Shuts down the socket of one HTTP attempt when its deadline passes.

    Used as a context manager around the attempt; a connection that sends a request on this
    thread meanwhile enlists its socket (:class:`_EnlistingConnection`). The socket itself is
    kept, not the connection: http.client drops the connection's reference as soon as the
    headers say the server will close, while the body is still being read from it.
    ``shutdown`` (not ``close``) is what wakes a thread blocked in ``recv`` on the socket; the
    blocked read then fails, and ``fired`` tells the caller that the deadline, not the server,
    ended it.
    """

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def enlist(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            late = self.fired
        if late:
            _shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def __enter__(self) -> _Watchdog:
        _watching.dog = self
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        _watching.dog = None


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed: nothing left to stop
        sock.shutdown(socket.SHUT_RDWR)


class _EnlistingConnection(HTTPConnection):
    """An HTTP connection that puts its socket under the current thread's watchdog on every
    request (a pooled connection serves several attempts, so connecting is not enough). The
    request is sent first, so the socket exists; connecting and sending have their own
    socket timeouts."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        super().request(*args, **kwargs)
        dog: _Watchdog | None = getattr(_watching, "dog", None)
        if dog is not None and self.sock is not None:
            dog.enlist(self.sock)


class _EnlistingHTTPSConnection(_EnlistingConnection, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _EnlistingConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _EnlistingHTTPSConnection


_POOLS = {"http": _HTTPPool, "https": _HTTPSPool}


class _WatchedAdapter(HTTPAdapter):
    """requests' adapter whose pools (direct and through a proxy) use enlisting connections."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> PoolManager:
        manager: PoolManager = super().proxy_manager_for(proxy, **proxy_kwargs)
        manager.pool_classes_by_scheme = _POOLS
        return manager


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date), or None.

    ``now`` is the current Unix time (default ``time.time()``); dates in the past give 0.0.
    Unparseable, negative or non-finite values give None so the caller falls back to back-off.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
        if seconds < 0:  # a negative delay is not a valid header value
            return None
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = when.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


class ChatClient(ChatSeam):
    """Thread-safe chat-completions client; one instance can serve a whole thread pool.

    Inputs: ``base_url`` (default env ``LOGIC_GRAPH_BASE_URL``, else OpenRouter); ``api_key``
    (default env ``OPENROUTER_API_KEY``, sent to openrouter.ai only); ``timeout_s`` per HTTP
    attempt (wall clock for the whole answer); ``max_retries`` extra attempts (0..10);
    ``pricing`` (default: the repository's models.json); ``ledger`` (default: a fresh one,
    exposed as ``.ledger``);
    ``backoff_base_s`` / ``max_backoff_s`` for exponential back-off with jitter;
    ``max_retry_after_s`` caps a server's Retry-After; ``fetch_catalog`` fetches
    ``<base_url>/models`` once, lazily, when a model has no price (failure only logs).
    ``default_max_tokens`` bounds every request whose caller sets no ``max_tokens``.
    ``max_concurrency`` (None: no limit) caps the HTTP attempts in flight at once; the others
    wait for a free place within their own call's time limit. ``sleep``, ``clock``
    (monotonic), ``wall_clock`` (Unix time) and ``rng`` exist for tests.
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        pricing: PricingTable | None = None,
        ledger: CostLedger | None = None,
        backoff_base_s: float = 1.0,
        max_backoff_s: float = 30.0,
        max_retry_after_s: float = 60.0,
        fetch_catalog: bool = False,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        max_concurrency: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
    ) -> None:
        url = (base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url {url!r} must be an http(s) URL with a host")
        _require(math.isfinite(timeout_s) and timeout_s > 0, "timeout_s", timeout_s, "> 0")
        _require(
            isinstance(max_retries, int) and 0 <= max_retries <= 10,
            "max_retries",
            max_retries,
            "an integer in 0..10",
        )
        _require(
            isinstance(default_max_tokens, int) and default_max_tokens >= 1,
            "default_max_tokens",
            default_max_tokens,
            "an integer >= 1",
        )
        _require(
            max_concurrency is None
            or (isinstance(max_concurrency, int) and 1 <= max_concurrency <= 1024),
            "max_concurrency",
            max_concurrency,
            "None or an integer in 1..1024",
        )
        for name, value in (
            ("backoff_base_s", backoff_base_s),
            ("max_backoff_s", max_backoff_s),
            ("max_retry_after_s", max_retry_after_s),
        ):
            _require(math.isfinite(value) and value >= 0, name, value, ">= 0")
        self.base_url = url
        self.is_openrouter = is_openrouter_url(url)
        # The environment key goes to OpenRouter only, and only over TLS.
        self._env_key_refused = False
        if api_key is None and self.is_openrouter:
            if parts.scheme == "https":
                api_key = os.environ.get(ENV_API_KEY) or None
            else:
                self._env_key_refused = bool(os.environ.get(ENV_API_KEY))
        self.__key = api_key
        self.default_max_tokens = default_max_tokens
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.max_concurrency = max_concurrency
        self._slots = threading.BoundedSemaphore(max_concurrency) if max_concurrency else None
        self.pricing = pricing if pricing is not None else PricingTable.from_models_json()
        self.ledger = ledger if ledger is not None else CostLedger()
        self.backoff_base_s = backoff_base_s
        self.max_backoff_s = max_backoff_s
        self.max_retry_after_s = max_retry_after_s
        self._fetch_catalog = fetch_catalog
        self._catalog_tried = False
        self._sleep = sleep
        self._clock = clock
        self._wall_clock = wall_clock
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._local = threading.local()
        self._sessions: list[requests.Session] = []

    def __repr__(self) -> str:
        key = "set" if self.__key else "none"
        return (
            f"ChatClient(base_url={self.base_url!r}, api_key={key}, timeout_s={self.timeout_s}, "
            f"max_retries={self.max_retries})"
        )

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every pooled connection (the client stays usable; pools reopen on demand)."""
        with self._lock:
            for session in self._sessions:
                session.close()

    def send(self, request: ChatRequest) -> ChatResult:
        """One logical chat call (with retries); records it in ``self.ledger`` under its role.

        ``response_format`` is passed through (e.g. :mod:`orchestrator.schemas`);
        ``extra_body`` adds provider-specific fields; ``tags`` become extra ledger fields.
        ``max_tokens`` None sends ``default_max_tokens``. ``timeout_s`` limits the whole
        logical call (every attempt and back-off) on top of the per-attempt timeout.
        Returns a :class:`ChatResult` whose ``call_id`` is its ledger record. Raises ValueError
        for invalid arguments (nothing is sent), else an :class:`LLMError` subclass whose
        ``attempts`` and ``call_id`` are set: :class:`BackendUnusableError` when the backend
        cannot serve any call (no key, unreachable, 401/402/404).
        """
        model, messages, role, timeout_s = (
            request.model,
            request.messages,
            request.role,
            request.timeout_s,
        )
        temperature, max_tokens, seed = request.temperature, request.max_tokens, request.seed
        response_format, extra_body = request.response_format, request.extra_body
        payload = self._payload(
            model, messages, temperature, max_tokens, response_format, seed, extra_body
        )
        _require(isinstance(role, str) and bool(role), "role", role, "a non-empty string")
        _require(
            timeout_s is None or (math.isfinite(timeout_s) and timeout_s > 0),
            "timeout_s",
            timeout_s,
            "None or > 0",
        )
        fields = dict(request.tags)
        start = self._clock()
        deadline = None if timeout_s is None else start + timeout_s
        missing = self._missing_key()
        if missing is not None:
            missing.call_id = self.ledger.record_failure(
                role, model, missing, latency_s=0.0, **fields
            )
            raise missing
        attempts = 0
        transport_failures = 0
        while True:
            attempts += 1
            try:
                result = self._attempt_in_turn(model, payload, deadline)
                break
            except LLMError as exc:
                if isinstance(exc, LLMTimeoutError | LLMConnectionError):
                    transport_failures += 1
                delay = self._delay(attempts, getattr(exc, "retry_after_s", None))
                out_of_time = deadline is not None and self._clock() + delay >= deadline
                error: LLMError = self._unusable(exc, model) or exc
                if exc.retryable and (attempts > self.max_retries or out_of_time) and error is exc:
                    why = "the call's time limit" if out_of_time else "the allowed attempts"
                    error = RetryExhaustedError(
                        f"{model}: gave up after {attempts} attempt(s) ({why}); last error: {exc}",
                        exc,
                    )
                if not exc.retryable or attempts > self.max_retries or out_of_time:
                    error.attempts = attempts
                    error.call_id = self.ledger.record_failure(
                        role,
                        model,
                        error,
                        latency_s=self._clock() - start,
                        transport_failures=transport_failures,
                        **fields,
                    )
                    if error is exc:
                        raise
                    raise error from exc
                log.info(
                    "%s call to %s failed (attempt %d of %d): %s; retrying in %.2fs",
                    role,
                    model,
                    attempts,
                    self.max_retries + 1,
                    exc,
                    delay,
                )
                self._sleep(delay)
        result = replace(
            result,
            latency_s=self._clock() - start,
            attempts=attempts,
            transport_failures=transport_failures,
        )
        call_id = self.ledger.record(role, result, **fields)
        return replace(result, call_id=call_id)

    def preflight(self, *, timeout_s: float = 10.0) -> None:
        """Check, without a chat call, that this backend can be used at all.

        Raises :class:`MissingAPIKeyError` (OpenRouter and no key; nothing is sent), or
        :class:`BackendUnreachableError` when ``GET <base_url>/models`` cannot connect (the
        host name does not resolve, or nothing listens). Any HTTP answer, even an error status,
        proves the server is there; a slow answer is not held against it. Costs nothing: the
        models route is free, and its body is not read.
        """
        missing = self._missing_key()
        if missing is not None:
            raise missing
        url = self.base_url + "/models"
        failure: LLMConnectionError | None = None
        try:
            with _Watchdog(timeout_s):
                response = self._session().get(
                    url,
                    headers=self._headers(),
                    timeout=(min(timeout_s, 10.0), timeout_s),
                    stream=True,
                )
                response.close()
        except requests.Timeout:
            log.info("preflight: %s did not answer within %.0f s; going on", url, timeout_s)
        except requests.ConnectionError as exc:
            failure = LLMConnectionError(
                self._redact(f"connection to {url} failed: {exc}"), kind=_connection_kind(exc)
            )
        except requests.RequestException as exc:
            log.info("preflight: %s: %s; going on", url, self._redact(str(exc)))
        if failure is not None:
            unusable = self._unusable(failure, None)
            if unusable is not None:
                raise unusable

    def model_owners(self, *, timeout_s: float = 10.0) -> list[str]:
        """The ``owned_by`` values of ``GET <base_url>/models`` (llama.cpp says ``llamacpp``,
        vLLM ``vllm``), or [] when the server does not answer that usefully in time. Reads at
        most 1 MB, so a huge or endless catalog cannot hold the caller."""
        url = self.base_url + "/models"
        try:
            with (
                _Watchdog(timeout_s),
                self._session().get(
                    url,
                    headers=self._headers(),
                    timeout=(min(timeout_s, 10.0), timeout_s),
                    stream=True,
                ) as response,
            ):
                raw = response.raw.read(1_000_000, decode_content=True)
                ok = response.status_code == 200
            body = json.loads(raw) if ok else None
        except (requests.RequestException, OSError, ValueError) as exc:
            log.info("%s: %s; server software unknown", url, self._redact(str(exc)))
            return []
        data = body.get("data") if isinstance(body, dict) else None
        entries = data if isinstance(data, list) else []
        return [
            e["owned_by"]
            for e in entries
            if isinstance(e, dict) and isinstance(e.get("owned_by"), str)
        ]

    # -- internals ---------------------------------------------------------------------------

    def _missing_key(self) -> MissingAPIKeyError | None:
        """The error to raise when this client would call OpenRouter without a key."""
        if not self.is_openrouter or self.__key:
            return None
        if self._env_key_refused:
            return MissingAPIKeyError(
                f"{ENV_API_KEY} is only sent over HTTPS, and the base URL {self.base_url} is "
                "plain http; no request was made",
                kind="missing_key",
                fix=f"use https://{_OPENROUTER_HOST}/api/v1",
            )
        return MissingAPIKeyError(
            f"{self.base_url} (OpenRouter) needs an API key and {ENV_API_KEY} is not set; no "
            "request was made",
            kind="missing_key",
            fix=f"export {ENV_API_KEY}=<your key>, or run offline with --model local",
        )

    def _unusable(self, error: LLMError, model: str | None) -> BackendUnusableError | None:
        """``error`` restated as a :class:`BackendUnusableError` when it means no call to this
        backend can succeed, else None."""
        host = urlsplit(self.base_url).netloc
        if isinstance(error, LLMConnectionError) and error.kind == "dns":
            return BackendUnreachableError(
                f"the host name of {self.base_url} does not resolve",
                kind="dns",
                fix="check the host in --base-url (or LOGIC_GRAPH_BASE_URL, or models.json)",
            )
        if isinstance(error, LLMConnectionError) and error.kind == "connection_refused":
            return BackendUnreachableError(
                f"nothing accepts connections at {host} ({self.base_url}): connection refused",
                kind="connection_refused",
                fix="start the model server there, or point --base-url at one that runs",
            )
        if isinstance(error, APIStatusError) and error.status in _UNUSABLE_STATUS:
            kind = _UNUSABLE_STATUS[error.status]
            if kind == "unauthorized":
                fix = (
                    f"check {ENV_API_KEY} (openrouter.ai/settings/keys)"
                    if self.is_openrouter
                    else "check the API key this server expects"
                )
            elif kind == "payment_required":
                fix = "add credits to the account, or run offline with --model local"
            else:
                fix = f"check the model name ({model!r}) and the base URL {self.base_url}"
            return BackendRejectedError(
                error.status, str(error), kind=kind, fix=fix, embedded=error.embedded
            )
        return None

    def _payload(
        self,
        model: str,
        messages: list[dict[str, Any]],
        temperature: float,
        max_tokens: int | None,
        response_format: dict[str, Any] | None,
        seed: int | None,
        extra_body: dict[str, Any] | None,
    ) -> dict[str, Any]:
        _require(isinstance(model, str) and bool(model.strip()), "model", model, "non-empty")
        _require(
            isinstance(messages, list)
            and bool(messages)
            and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages),
            "messages",
            type(messages).__name__,
            "a non-empty list of {'role', 'content'} dicts",
        )
        _require(
            isinstance(temperature, int | float) and 0 <= temperature <= 2,
            "temperature",
            temperature,
            "a number in 0..2",
        )
        _require(
            max_tokens is None or (isinstance(max_tokens, int) and max_tokens >= 1),
            "max_tokens",
            max_tokens,
            "None or an integer >= 1",
        )
        _require(seed is None or isinstance(seed, int), "seed", seed, "None or an integer")
        _require(
            response_format is None or isinstance(response_format, dict),
            "response_format",
            response_format,
            "None or a dict",
        )
        extra = dict(extra_body or {})
        clash = sorted(_RESERVED_BODY_KEYS.intersection(extra))
        _require(not clash, "extra_body", clash, "must not override 'model' or 'messages'")
        payload: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature}
        payload["max_tokens"] = max_tokens if max_tokens is not None else self.default_max_tokens
        if response_format is not None:
            payload["response_format"] = response_format
        if seed is not None:
            payload["seed"] = seed
        if self.is_openrouter:
            # OpenRouter reports the billed cost in usage.cost when asked to.
            payload["usage"] = {"include": True}
        payload.update(extra)
        return payload

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            adapter = _WatchedAdapter()
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            self._local.session = session
            with self._lock:
                self._sessions.append(session)
        return session

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.__key:
            headers["Authorization"] = f"Bearer {self.__key}"
        if self.is_openrouter:
            headers["X-Title"] = "logic-graph"
        return headers

    def _redact(self, text: str) -> str:
        return text.replace(self.__key, "[REDACTED]") if self.__key else text

    def _attempt_in_turn(
        self, model: str, payload: dict[str, Any], deadline: float | None
    ) -> ChatResult:
        """One attempt, once a place under ``max_concurrency`` is free; the wait counts
        against the call's deadline, never against the attempt's own limit."""
        if self._slots is None:
            return self._attempt(model, payload, self._limit(deadline))
        wait = None if deadline is None else max(deadline - self._clock(), 0.0)
        if not self._slots.acquire(timeout=wait):
            raise LLMTimeoutError(
                f"no free place among {self.max_concurrency} concurrent requests to "
                f"{self.base_url} before the call's time limit"
            )
        try:
            return self._attempt(model, payload, self._limit(deadline))
        finally:
            self._slots.release()

    def _limit(self, deadline: float | None) -> float:
        if deadline is None:
            return self.timeout_s
        return min(self.timeout_s, max(deadline - self._clock(), 0.001))

    def _attempt(self, model: str, payload: dict[str, Any], limit_s: float) -> ChatResult:
        """One HTTP attempt, whole answer within ``limit_s``; returns a result (latency and
        attempts filled in later) or raises."""
        url = self.base_url + "/chat/completions"
        # requests exceptions hold the prepared request, Authorization header included, so
        # they are turned into our own errors and raised outside the except blocks: neither
        # __cause__ nor __context__ then keeps them (and the key) reachable.
        failure: LLMError | None = None
        response: requests.Response | None = None
        with _Watchdog(limit_s) as dog:
            try:
                response = self._session().post(
                    url,
                    json=payload,
                    headers=self._headers(),
                    timeout=(min(10.0, limit_s), limit_s),
                )
            except requests.Timeout:
                failure = LLMTimeoutError(f"no answer from {url} within {limit_s:.3g}s")
            except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
                failure = LLMConnectionError(
                    self._redact(f"connection to {url} failed: {exc}"), kind=_connection_kind(exc)
                )
            except requests.RequestException as exc:
                failure = LLMError(self._redact(f"request to {url} failed: {exc}"))
        # A shut-down socket can also look like a short but complete answer (the headers
        # dripped to the end of a status line): whatever came back, a fired watchdog means the
        # answer did not arrive in time.
        if dog.fired:
            failure = LLMTimeoutError(
                f"no complete answer from {url} within {limit_s:.3g}s (the deadline covers "
                "connecting, the headers and the whole body)"
            )
        if failure is not None or response is None:
            raise failure or LLMError(f"request to {url} produced no response")
        retry_after = parse_retry_after(response.headers.get("Retry-After"), now=self._wall_clock())
        if not 200 <= response.status_code < 300:
            raise status_error(
                response.status_code,
                self._redact(
                    f"HTTP {response.status_code} from {url}: {_error_detail(response.text)}"
                ),
                retry_after_s=retry_after,
            )
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise MalformedResponseError(
                self._redact(f"HTTP 200 from {url} is not a JSON object: {_excerpt(response.text)}")
            )
        choices = body.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        embedded = body.get("error") or (choice.get("error") if isinstance(choice, dict) else None)
        if embedded:
            raise self._embedded_error(url, embedded, retry_after)
        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        finish_reason = finish if isinstance(finish, str) else None
        if not isinstance(content, str) or not content.strip():
            raise MalformedResponseError(
                self._redact(
                    f"HTTP 200 from {url} has no message content (finish_reason="
                    f"{finish_reason!r}): {_excerpt(response.text)}"
                )
            )
        raw_usage = body.get("usage")
        usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
        prompt_tokens = _count(usage.get("prompt_tokens"))
        completion_tokens = _count(usage.get("completion_tokens"))
        cost, source = self._cost(
            model, body.get("model"), usage.get("cost"), prompt_tokens, completion_tokens
        )
        return ChatResult(
            text=content,
            model=model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=cost,
            cost_source=source,
            latency_s=0.0,
            attempts=1,
            finish_reason=finish_reason,
        )

    def _embedded_error(self, url: str, error: Any, retry_after: float | None) -> LLMError:
        code = error.get("code") if isinstance(error, dict) else None
        detail = error.get("message") if isinstance(error, dict) else error
        text = self._redact(f"HTTP 200 from {url} carries an error: {_excerpt(str(detail))}")
        status = _count(int(code) if isinstance(code, str) and code.isdigit() else code)
        if status is not None and 400 <= status <= 599:
            return status_error(status, text, retry_after_s=retry_after, embedded=True)
        return MalformedResponseError(text)

    def _cost(
        self,
        model: str,
        served_model: object,
        reported: object,
        prompt_tokens: int | None,
        completion_tokens: int | None,
    ) -> tuple[float | None, str]:
        if (
            isinstance(reported, int | float)
            and not isinstance(reported, bool)
            and math.isfinite(reported)
            and reported >= 0
        ):
            return float(reported), "usage"
        names = [model] + ([served_model] if isinstance(served_model, str) else [])
        if self._fetch_catalog and not any(n in self.pricing for n in names):
            self._load_catalog()
        for name in names:
            cost = self.pricing.cost(name, prompt_tokens, completion_tokens)
            if cost is not None:
                return cost, "pricing"
        return None, "unknown"

    def _load_catalog(self) -> None:
        with self._lock:
            if self._catalog_tried:
                return
            self._catalog_tried = True
            catalog = PricingTable.fetch_catalog(self.base_url, timeout_s=min(10.0, self.timeout_s))
            if catalog is not None:
                self.pricing = self.pricing.merged(catalog)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after_s)
        backoff = min(self.backoff_base_s * 2 ** (attempt - 1), self.max_backoff_s)
        # "Equal jitter": keep half the back-off, randomise the rest, so concurrent callers
        # that failed together do not retry in lock-step.
        return float(backoff * (0.5 + 0.5 * self._rng.random()))


def _connection_kind(exc: BaseException) -> str | None:
    """``"dns"`` or ``"connection_refused"`` when the chain under a requests error says so."""
    seen: set[int] = set()
    stack: list[object] = [exc]
    while stack:
        item = stack.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, socket.gaierror) or type(item).__name__ == "NameResolutionError":
            return "dns"
        if isinstance(item, ConnectionRefusedError):
            return "connection_refused"
        stack += [getattr(item, "reason", None), item.__cause__, item.__context__, *item.args]
    return None


def _require(ok: bool, field: str, value: object, rule: str) -> None:
    if not ok:
        raise ValueError(f"{field}={value!r} is invalid: must be {rule}")


def _count(value: object) -> int | None:
    """A token count (non-negative int) or None when absent or invalid."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT_CHARS else flat[:_EXCERPT_CHARS] + "..."


def _error_detail(text: str) -> str:
    """The error message of an OpenAI-style error body, else an excerpt of the raw text."""
    try:
        body = json.loads(text)
    except ValueError:
        return _excerpt(text)
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return _excerpt(error["message"])
    return _excerpt(text)


class GuardedClient(ChatMiddleware):
    """Wraps a client for one run: a wall-clock budget, and a stop on an unusable backend.

    * ``budget_s``: calls that would start after ``budget_s`` seconds (from construction) are
      not made; they raise :class:`CallTimeBudgetError`. A :class:`ChatClient` call that does
      start is given the time left as its overall limit, so no call outlives the budget by
      more than the connection set-up.
    * After the first :class:`BackendUnusableError`, every later call raises the same error
      at once, without contacting the backend: one missing key must not become 24 requests.

    Both kinds of refused call are recorded in the wrapped client's ledger as failed calls
    with no attempts and no cost. ``unusable`` holds the first such error, ``succeeded``
    counts calls that returned, ``refused_for_time`` the calls the budget stopped, and
    ``deadline_reached`` whether the budget ran out. ``last_error`` is the latest failure of
    any kind (so a run in which no call returned can say why), ``completion_tokens`` sums what
    the returned calls generated, and :meth:`running` lists the calls in flight (for live
    progress).
    """

    def __init__(
        self,
        inner: ChatSeam,
        *,
        budget_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        _require(
            budget_s is None or (math.isfinite(budget_s) and budget_s > 0),
            "budget_s",
            budget_s,
            "None or > 0",
        )
        super().__init__(inner)
        self.budget_s = budget_s
        self._clock = clock
        self._deadline = None if budget_s is None else clock() + budget_s
        self._lock = threading.Lock()
        self.unusable: BackendUnusableError | None = None
        self.last_error: LLMError | None = None
        self.succeeded = 0
        self.refused_for_time = 0
        self.started = 0
        self.completion_tokens = 0
        self._running: dict[int, tuple[str, float]] = {}

    def running(self) -> list[tuple[str, float]]:
        """``(label, seconds so far)`` of every call in flight, oldest first; the label is the
        call's role and subject (``interrogation r2``)."""
        now = self._clock()
        with self._lock:
            calls = sorted(self._running.values(), key=lambda item: item[1])
        return [(label, now - since) for label, since in calls]

    @property
    def deadline_reached(self) -> bool:
        """Whether the budget ran out: a call was refused for time, or the clock is past it
        (calls in flight were then cut at the deadline)."""
        past = self._deadline is not None and self._clock() >= self._deadline
        return self.refused_for_time > 0 or past

    def send(self, request: ChatRequest) -> ChatResult:
        """``inner.send`` with the guards described in the class docstring."""
        model, role, tags = request.model, request.role, request.tags
        with self._lock:
            known = self.unusable.fresh() if self.unusable is not None else None
        if known is not None:
            self._refuse(known, role, model, tags)
        left = None if self._deadline is None else self._deadline - self._clock()
        if left is not None and left <= 0:
            with self._lock:
                self.refused_for_time += 1
            self._refuse(
                CallTimeBudgetError(
                    f"the run's wall-clock budget of {self.budget_s:g} s is spent; call not made"
                ),
                role,
                model,
                tags,
            )
        subject = tags.get("subject")
        label = f"{role} {subject}" if subject else role
        with self._lock:
            self.started += 1
            key = self.started
            self._running[key] = (label, self._clock())
        try:
            # A call that starts gets the time left as its overall limit.
            limited = request if left is None else replace(request, timeout_s=left)
            result = self.inner.send(limited)
        except LLMError as exc:
            with self._lock:
                self.last_error = exc
                if isinstance(exc, BackendUnusableError) and self.unusable is None:
                    self.unusable = exc
            raise
        finally:
            with self._lock:
                del self._running[key]
        with self._lock:
            self.succeeded += 1
            self.completion_tokens += result.completion_tokens or 0
        return result

    def _refuse(self, error: LLMError, role: str, model: str, tags: dict[str, Any]) -> NoReturn:
        error.call_id = self.ledger.record_failure(role, model, error, latency_s=0.0, **tags)
        with self._lock:
            self.last_error = error
        raise error
