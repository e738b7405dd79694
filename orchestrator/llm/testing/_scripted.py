"""A scripted in-process client: the model's answers come from the test, not the network."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypedDict

from orchestrator.llm._ledger import ChatResult, CostLedger
from orchestrator.llm.chat import ChatMessage, ChatRequest, ChatSeam
from orchestrator.llm.errors import LLMError
from orchestrator.llm.json_object import JsonObject


class ScriptExhaustedError(AssertionError):
    """A :class:`ScriptedClient` with a list script received more calls than it had answers.

    An AssertionError on purpose: it is a bug in the test, not a model failure, and code that
    survives failed model calls by catching :class:`LLMError` lets it through. (The control
    loop records any exception from a client as a failed call, so there it shows up in the
    report's ``calls`` instead.)
    """


class ScriptedKwargs(TypedDict):
    """The settings of one call as a script sees them (everything but model and messages)."""

    temperature: float
    max_tokens: int | None
    response_format: JsonObject | None
    seed: int | None
    role: str
    extra_body: JsonObject | None
    tags: JsonObject | None


class ScriptedCall(TypedDict):
    """One call a :class:`ScriptedClient` received."""

    model: str
    messages: list[ChatMessage]
    kwargs: ScriptedKwargs


Script = Callable[[str, list[ChatMessage], ScriptedKwargs], "str | BaseException"]


class ScriptedClient(ChatSeam):
    """In-process client (a :class:`~.chat.ChatSeam`); nothing goes over the network.

    ``script`` is either a callable ``(model, messages, kwargs) -> str | Exception`` (kwargs
    holds temperature, max_tokens, response_format, seed, role, extra_body, tags) or a list of
    texts/exceptions answered in call order (thread-safe; :class:`ScriptExhaustedError` when it
    runs out). A callable that keys on the messages is the deterministic choice for concurrent
    callers, since call order across threads is not. An :class:`LLMError` answer is recorded in
    the ledger as a failed call and raised; any other exception is raised unrecorded.

    Token counts are rough estimates (characters / 4, at least 1): enough for budget plumbing,
    not for cost studies. ``cost_per_call`` (USD) makes
    every successful call cost that much (``cost_source="usage"``); None leaves cost unknown.
    ``latency_s`` sleeps inside each call, to exercise concurrency. ``.calls`` records every
    call as ``{"model", "messages", "kwargs"}``.
    """

    def __init__(
        self,
        script: Script | Sequence[str | BaseException],
        *,
        ledger: CostLedger | None = None,
        cost_per_call: float | None = None,
        latency_s: float = 0.0,
    ) -> None:
        self._script = script
        self.ledger = ledger if ledger is not None else CostLedger()
        self.cost_per_call = cost_per_call
        self.latency_s = latency_s
        self._lock = threading.Lock()
        self._calls: list[ScriptedCall] = []

    @property
    def calls(self) -> list[ScriptedCall]:
        """A copy of every call received so far, in arrival order."""
        with self._lock:
            return list(self._calls)

    def send(self, request: ChatRequest) -> ChatResult:
        """Answer from the script, record the call in ``.ledger`` and return a ChatResult."""
        model, messages, role, tags = request.model, request.messages, request.role, request.tags
        kwargs: ScriptedKwargs = {
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "response_format": request.response_format,
            "seed": request.seed,
            "role": role,
            "extra_body": request.extra_body,
            "tags": tags or None,
        }
        with self._lock:
            position = len(self._calls)
            self._calls.append({"model": model, "messages": messages, "kwargs": kwargs})
        start = time.monotonic()
        if self.latency_s > 0:
            time.sleep(self.latency_s)
        answer: str | BaseException
        try:
            answer = self._answer(position, model, messages, kwargs)
        except LLMError as exc:  # a script may raise its failure instead of returning it
            answer = exc
        latency = time.monotonic() - start
        fields = dict(tags)
        if isinstance(answer, LLMError):
            answer.attempts = answer.attempts or 1
            answer.call_id = self.ledger.record_failure(
                role, model, answer, latency_s=latency, **fields
            )
            raise answer
        if isinstance(answer, BaseException):
            raise answer
        prompt_chars = sum(len(str(m.get("content", ""))) for m in messages)
        result = ChatResult(
            text=answer,
            model=model,
            prompt_tokens=max(1, prompt_chars // 4),
            completion_tokens=max(1, len(answer) // 4),
            cost_usd=self.cost_per_call,
            cost_source="usage" if self.cost_per_call is not None else "unknown",
            latency_s=latency,
            attempts=1,
            finish_reason="stop",
        )
        call_id = self.ledger.record(role, result, **fields)
        return replace(result, call_id=call_id)

    def _answer(
        self, position: int, model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs
    ) -> str | BaseException:
        if callable(self._script):
            return self._script(model, messages, kwargs)
        if position >= len(self._script):
            raise ScriptExhaustedError(
                f"ScriptedClient has {len(self._script)} scripted answers; call {position + 1} "
                f"(role={kwargs['role']!r}) has none"
            )
        return self._script[position]
