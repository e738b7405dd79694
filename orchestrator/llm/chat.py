"""The one chat seam: a request type, the client base class, and middleware.

Every client (the HTTP :class:`~orchestrator.llm.client.ChatClient`, the in-process
:class:`~orchestrator.llm.testing.ScriptedClient`, the reply bank's replay client) and every wrapper
(the run's guard, the evaluation's cost cap, call recorders, the bank's recorder) is a
:class:`ChatSeam`. Callers use :meth:`ChatSeam.chat` with keyword arguments; the seam packs them
into one :class:`ChatRequest` and hands it to :meth:`ChatSeam.send`, the only method a client
implements. A wrapper is a :class:`ChatMiddleware`: it sees the whole request, may change it
(``dataclasses.replace``) and passes it on to ``inner.send``. So the chat signature is written
here once, and no wrapper needs to know which concrete client it wraps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from orchestrator.llm._ledger import ChatResult, CostLedger
from orchestrator.llm.json_object import JsonObject


class ChatMessage(TypedDict):
    """One turn of a chat in the OpenAI format: who speaks (``system``, ``user`` or
    ``assistant``) and what is said."""

    role: str
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """One logical chat call.

    ``model`` and ``messages`` (OpenAI chat format) are what is asked; ``temperature``,
    ``max_tokens`` (None: the client's default), ``response_format``, ``seed`` and
    ``extra_body`` shape the reply. ``role`` names the call in the ledger (``interrogation``,
    ``verification``, ...), ``tags`` add ledger fields. ``timeout_s`` bounds the whole logical
    call, retries included (None: only the client's own limits); a client that cannot honour it
    ignores it.
    """

    model: str
    messages: list[ChatMessage]
    temperature: float = 0.0
    max_tokens: int | None = None
    response_format: JsonObject | None = None
    seed: int | None = None
    role: str = "call"
    extra_body: JsonObject | None = None
    tags: JsonObject = field(default_factory=dict)
    timeout_s: float | None = None


class ChatSeam:
    """Base class of every chat client and wrapper; subclasses implement :meth:`send`.

    ``ledger`` receives one record per logical call (set by the subclass).
    """

    ledger: CostLedger

    def chat(
        self,
        model: str,
        messages: list[ChatMessage],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        response_format: JsonObject | None = None,
        seed: int | None = None,
        role: str = "call",
        extra_body: JsonObject | None = None,
        tags: JsonObject | None = None,
        timeout_s: float | None = None,
    ) -> ChatResult:
        """Make one logical call: the keyword form of :meth:`send` (see :class:`ChatRequest`).

        Returns the :class:`ChatResult`; raises what :meth:`send` raises (an
        :class:`~orchestrator.llm.errors.LLMError` for a failed call, ValueError for a request
        that cannot be sent).
        """
        return self.send(
            ChatRequest(
                model=model,
                messages=messages,
                temperature=temperature,
                max_tokens=max_tokens,
                response_format=response_format,
                seed=seed,
                role=role,
                extra_body=extra_body,
                tags=dict(tags or {}),
                timeout_s=timeout_s,
            )
        )

    def send(self, request: ChatRequest) -> ChatResult:
        """Answer ``request``; every client and wrapper implements this."""
        raise NotImplementedError


class ChatMiddleware(ChatSeam):
    """A wrapper around ``inner``: shares its ledger and, unless overridden, forwards."""

    def __init__(self, inner: ChatSeam) -> None:
        self.inner = inner
        self.ledger = inner.ledger

    def send(self, request: ChatRequest) -> ChatResult:
        return self.inner.send(request)
