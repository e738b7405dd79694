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
the attempt's socket down when its deadline passes (:mod:`orchestrator.llm._transport`).

Unusable backends: a host name that does not resolve or a port where nothing listens (after the
retries), and 401, 402 and 404 answers, raise a :class:`BackendUnusableError` subclass whose
one-line message ends with the fix. :meth:`ChatClient.preflight` finds the first two kinds, and
a missing key, without a chat call.

Retries: at most ``max_retries`` more attempts after the first, on 408/429/5xx (also when a 200
body embeds such a code), timeouts and broken connections, waiting ``Retry-After`` (capped at
``max_retry_after_s``) or exponential back-off with jitter. 400/401/402/403/404/422 and other
4xx fail at once. Every logical call, successful or not, becomes one ledger record; cost rules
are in :mod:`orchestrator.llm._ledger`.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import NoReturn

import requests

from orchestrator.llm import _keys
from orchestrator.llm._keys import is_openrouter_url
from orchestrator.llm._ledger import ChatResult, CostLedger
from orchestrator.llm._places import Places
from orchestrator.llm._pricing import PricingTable
from orchestrator.llm._probes import ModelsRoute
from orchestrator.llm._request import build_payload
from orchestrator.llm._response import parse_retry_after, read_completion
from orchestrator.llm._settings import (
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_MAX_TOKENS,
    base_url_of,
    check_settings,
)
from orchestrator.llm._transport import WatchGroup, new_session, post
from orchestrator.llm._unusable import unusable
from orchestrator.llm.chat import ChatRequest, ChatSeam
from orchestrator.llm.errors import (
    BackendUnusableError,
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    MissingAPIKeyError,
    RetryExhaustedError,
)
from orchestrator.llm.json_object import JsonObject

__all__ = ["ChatClient", "SupportsChat"]

SupportsChat = ChatSeam
"""What the control loop, screen and evals take as a client: any :class:`ChatSeam`."""

log = logging.getLogger("orchestrator.llm.client")


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
    wait for a free place within their own call's time limit (``sleep``, default a wait that
    :meth:`abort` cuts short, is the back-off between attempts). ``max_response_bytes`` caps the
    body of one answer (:class:`ResponseTooLargeError` beyond it). :meth:`abort` ends every
    attempt in flight and refuses later ones (an interrupted run). ``sleep``, ``clock``
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
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        sleep: Callable[[float], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
    ) -> None:
        url = base_url_of(base_url)
        check_settings(
            timeout_s=timeout_s,
            max_retries=max_retries,
            default_max_tokens=default_max_tokens,
            max_concurrency=max_concurrency,
            max_response_bytes=max_response_bytes,
            backoff_base_s=backoff_base_s,
            max_backoff_s=max_backoff_s,
            max_retry_after_s=max_retry_after_s,
        )
        self.base_url = url
        self.is_openrouter = is_openrouter_url(url)
        # The environment key goes to OpenRouter only, and only over TLS.
        self.__key, self._env_key_refused = _keys.choose_key(api_key, url)
        self.default_max_tokens = default_max_tokens
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.max_concurrency = max_concurrency
        self._places = Places(max_concurrency, clock)
        self.max_response_bytes = max_response_bytes
        self._attempts = WatchGroup()
        self.pricing = pricing if pricing is not None else PricingTable.from_models_json()
        self.ledger = ledger if ledger is not None else CostLedger()
        self.backoff_base_s = backoff_base_s
        self.max_backoff_s = max_backoff_s
        self.max_retry_after_s = max_retry_after_s
        self._fetch_catalog = fetch_catalog
        self._catalog_tried = False
        # The default back-off wait ends early on abort(), so an interrupt is not held up.
        self._sleep = sleep if sleep is not None else self._attempts.pause
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

    def abort(self) -> None:
        """End every HTTP attempt in flight now and make later attempts fail at once, without
        retries (for an interrupted run: nothing is waited for after this)."""
        self._attempts.fire_all()

    @property
    def aborted(self) -> bool:
        """Whether :meth:`abort` was called."""
        return self._attempts.fired

    def attempt_started(self, thread_id: int) -> float | None:
        """When the call running on thread ``thread_id`` got its place among the
        ``max_concurrency`` requests (clock seconds), or None while it waits for one (or when
        no such call runs). Live progress shows a call's own age with it, not its queue time."""
        return self._places.taken_at(thread_id)

    def send(self, request: ChatRequest) -> ChatResult:
        """One logical chat call (with retries); records it in ``self.ledger`` under its role.

        ``response_format`` is passed through (e.g. :mod:`orchestrator.reply.schemas`);
        ``extra_body`` adds provider-specific fields; ``tags`` become extra ledger fields.
        ``max_tokens`` None sends ``default_max_tokens``. ``timeout_s`` limits the whole
        logical call (every attempt and back-off) on top of the per-attempt timeout.
        Returns a :class:`ChatResult` whose ``call_id`` is its ledger record. Raises ValueError
        for invalid arguments (nothing is sent), else an :class:`LLMError` subclass whose
        ``attempts`` and ``call_id`` are set: :class:`BackendUnusableError` when the backend
        cannot serve any call (no key, unreachable, 401/402/404).
        """
        payload = build_payload(
            request, default_max_tokens=self.default_max_tokens, openrouter=self.is_openrouter
        )
        role, model, fields = request.role, request.model, dict(request.tags)
        start = self._clock()
        deadline = None if request.timeout_s is None else start + request.timeout_s
        missing = self._missing_key()
        if missing is not None:
            missing.call_id = self.ledger.record_failure(
                role, model, missing, latency_s=0.0, **fields
            )
            raise missing
        result = self._with_retries(request, payload, start, deadline)
        result = replace(result, latency_s=self._clock() - start)
        call_id = self.ledger.record(role, result, **fields)
        return replace(result, call_id=call_id)

    def _with_retries(
        self, request: ChatRequest, payload: JsonObject, start: float, deadline: float | None
    ) -> ChatResult:
        """Attempts until one answers (its result counts the attempts and transport failures)
        or the call must give up (:meth:`_give_up` records and raises)."""
        model, role = request.model, request.role
        attempts = 0
        transport_failures = 0
        while True:
            attempts += 1
            try:
                result = self._attempt_in_turn(model, payload, deadline)
            except LLMError as exc:
                if isinstance(exc, LLMTimeoutError | LLMConnectionError):
                    transport_failures += 1
                delay = self._delay(attempts, getattr(exc, "retry_after_s", None))
                out_of_time = deadline is not None and self._clock() + delay >= deadline
                stop = not exc.retryable or attempts > self.max_retries or out_of_time
                if stop or self.aborted:
                    self._give_up(request, exc, attempts, transport_failures, start, out_of_time)
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
                continue
            return replace(result, attempts=attempts, transport_failures=transport_failures)

    def _give_up(
        self,
        request: ChatRequest,
        exc: LLMError,
        attempts: int,
        transport_failures: int,
        start: float,
        out_of_time: bool,
    ) -> NoReturn:
        """Record the call's last failure ``exc`` (restated as :class:`BackendUnusableError`
        or :class:`RetryExhaustedError` where that says more) and raise it."""
        model = request.model
        error: LLMError = self._unusable(exc, model) or exc
        if exc.retryable and error is exc:
            why = "the call's time limit" if out_of_time else "the allowed attempts"
            error = RetryExhaustedError(
                f"{model}: gave up after {attempts} attempt(s) ({why}); last error: {exc}", exc
            )
        error.attempts = attempts
        error.call_id = self.ledger.record_failure(
            request.role,
            model,
            error,
            latency_s=self._clock() - start,
            transport_failures=transport_failures,
            **request.tags,
        )
        if error is exc:
            raise exc
        raise error from exc

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
        self._models_route().check_reachable(timeout_s)

    def model_owners(self, *, timeout_s: float = 10.0) -> list[str]:
        """The ``owned_by`` values of ``GET <base_url>/models`` (llama.cpp says ``llamacpp``,
        vLLM ``vllm``), or [] when the server does not answer that usefully within
        ``timeout_s`` (the whole answer: a server that drips it is cut off). Reads at most
        1 MB, so a huge or endless catalog cannot hold the caller."""
        return self._models_route().model_owners(timeout_s)

    # -- internals ---------------------------------------------------------------------------

    def _missing_key(self) -> MissingAPIKeyError | None:
        """The error to raise when this client would call OpenRouter without a key."""
        if not self.is_openrouter or self.__key:
            return None
        return _keys.missing_key_error(self.base_url, env_key_refused=self._env_key_refused)

    def _unusable(self, error: LLMError, model: str | None) -> BackendUnusableError | None:
        """``error`` restated as a :class:`BackendUnusableError` when it means no call to this
        backend can succeed, else None."""
        return unusable(error, self.base_url, model, openrouter=self.is_openrouter)

    def _models_route(self) -> ModelsRoute:
        return ModelsRoute(self.base_url, self._session(), self._headers(), self._redact)

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = new_session()
            self._local.session = session
            with self._lock:
                self._sessions.append(session)
        return session

    def _headers(self) -> dict[str, str]:
        return _keys.request_headers(self.__key, openrouter=self.is_openrouter)

    def _redact(self, text: str) -> str:
        return _keys.redact(text, self.__key)

    def _attempt_in_turn(
        self, model: str, payload: JsonObject, deadline: float | None
    ) -> ChatResult:
        """One attempt, once a place under ``max_concurrency`` is free; the wait counts
        against the call's deadline, never against the attempt's own limit. Nothing is sent
        once the client is aborted."""
        if self.aborted:
            raise LLMTimeoutError(f"the client was stopped; no request sent to {self.base_url}")
        if not self._places.wait(deadline):
            raise LLMTimeoutError(
                f"no free place among {self.max_concurrency} concurrent requests to "
                f"{self.base_url} before the call's time limit"
            )
        with self._places.hold():
            if self.aborted:  # stopped while this call waited for its place
                raise LLMTimeoutError(f"the client was stopped; no request sent to {self.base_url}")
            return self._attempt(model, payload, self._limit(deadline))

    def _limit(self, deadline: float | None) -> float:
        if deadline is None:
            return self.timeout_s
        return min(self.timeout_s, max(deadline - self._clock(), 0.001))

    def _attempt(self, model: str, payload: JsonObject, limit_s: float) -> ChatResult:
        """One HTTP attempt, whole answer within ``limit_s``; returns a result (latency and
        attempts filled in later) or raises."""
        url = self.base_url + "/chat/completions"
        response = post(
            self._session(),
            url,
            payload,
            self._headers(),
            limit_s,
            self._redact,
            group=self._attempts,
            max_bytes=self.max_response_bytes,
        )
        retry_after = parse_retry_after(response.headers.get("Retry-After"), now=self._wall_clock())
        reply = read_completion(response, url, retry_after, self._redact)
        cost, source = self._cost(
            model,
            reply.served_model,
            reply.reported_cost,
            reply.prompt_tokens,
            reply.completion_tokens,
        )
        return ChatResult(
            text=reply.text,
            model=model,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            cached_tokens=reply.cached_tokens,
            cost_usd=cost,
            cost_source=source,
            latency_s=0.0,
            attempts=1,
            finish_reason=reply.finish_reason,
        )

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
