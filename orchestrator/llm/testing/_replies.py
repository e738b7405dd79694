"""What the fake server answers: reply records, completion bodies, and slow-mode generation."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from orchestrator.llm.json_object import JsonObject


def completion_body(
    text: str,
    *,
    prompt_tokens: int | None = 10,
    completion_tokens: int | None = 5,
    cost: float | None = None,
    model: str = "fake-model",
    finish_reason: str | None = "stop",
    cached_tokens: int | None = None,
) -> JsonObject:
    """A chat-completions response body whose first choice says ``text``.

    ``usage`` carries only the fields that are not None (and is left out when all are), so a
    test can model servers that report tokens, tokens plus cost, or nothing; ``cached_tokens``
    goes in ``usage.prompt_tokens_details``, as llama.cpp and OpenAI report a prompt-cache hit.
    """
    details = None if cached_tokens is None else {"cached_tokens": cached_tokens}
    usage = {
        key: value
        for key, value in (
            ("prompt_tokens", prompt_tokens),
            ("completion_tokens", completion_tokens),
            ("cost", cost),
            ("prompt_tokens_details", details),
        )
        if value is not None
    }
    body: JsonObject = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
            }
        ],
    }
    if usage:
        body["usage"] = usage
    return body


@dataclass(frozen=True)
class FakeReply:
    """How the fake server answers one request.

    ``body``: a dict/list (sent as JSON) or a str (sent as-is, e.g. to fake a non-JSON answer);
    None means a default: a completion saying "OK" for 2xx, else an OpenAI-style error object.
    ``headers`` are added to the response (e.g. ``{"Retry-After": "2"}``); ``delay_s`` waits
    before answering (interrupted when the server closes); ``drop_connection`` closes the socket
    without any answer, as a crashed proxy would.

    ``drip_s > 0`` sends the body one byte at a time, ``drip_s`` seconds apart (with
    ``drip_headers`` the status line and headers too), as a stalled or hostile backend does: each
    read gets a byte long before any per-read timeout, yet the answer takes ages. Dripping stops
    when the client hangs up or the server closes.
    """

    status: int = 200
    body: JsonObject | list[Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drop_connection: bool = False
    drip_s: float = 0.0
    drip_headers: bool = False


@dataclass(frozen=True)
class FakeRequest:
    """One request as the fake server received it; header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any
    body: str


def as_route_reply(answer: Any) -> FakeReply:
    """A GET route's answer: a FakeReply as given, anything else as its JSON body."""
    return answer if isinstance(answer, FakeReply) else FakeReply(body=answer)


def as_reply(answer: FakeReply | JsonObject | str) -> FakeReply:
    """A handler's answer as a reply: a dict is a 200 JSON body, a str a completion's text."""
    if isinstance(answer, FakeReply):
        return answer
    if isinstance(answer, str):
        return FakeReply(body=completion_body(answer))
    return FakeReply(body=answer)


def generated(reply: FakeReply, max_tokens: object, seconds_per_token: float) -> FakeReply:
    """``reply`` as a model generating at ``seconds_per_token`` would send it (slow mode)."""
    body = reply.body
    if not (200 <= reply.status < 300 and isinstance(body, dict)):
        return reply
    choices = body.get("choices")
    message = choices[0].get("message") if isinstance(choices, list) and choices else None
    text = message.get("content") if isinstance(message, dict) else None
    if not isinstance(text, str) or not isinstance(message, dict) or not isinstance(choices, list):
        return reply
    words = text.split()
    limit = max_tokens if isinstance(max_tokens, int) and max_tokens >= 1 else None
    cut = limit is not None and len(words) > limit
    sent = words[:limit] if cut else words
    choice = dict(choices[0])
    choice["message"] = {**message, "content": " ".join(sent)}
    if cut:
        choice["finish_reason"] = "length"
    usage = dict(body.get("usage") or {})
    usage["completion_tokens"] = len(sent)
    new_body = {**body, "choices": [choice, *choices[1:]], "usage": usage}
    return replace(reply, body=new_body, delay_s=reply.delay_s + seconds_per_token * len(sent))


def default_body(status: int) -> JsonObject:
    """The body of a reply that set none: "OK" for 2xx, else an OpenAI-style error object."""
    if 200 <= status < 300:
        return completion_body("OK")
    return {"error": {"message": f"fake error {status}", "code": status}}
