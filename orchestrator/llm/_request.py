"""Checking a chat request and building its JSON body, for :class:`~.client.ChatClient`.

Invalid arguments raise ValueError before anything is sent.
"""

from __future__ import annotations

import math

from orchestrator.llm.chat import ChatRequest
from orchestrator.llm.json_object import JsonObject

_RESERVED_BODY_KEYS = frozenset({"model", "messages"})


def require(ok: bool, field: str, value: object, rule: str) -> None:
    """Raise ValueError naming ``field``, ``value`` and the ``rule`` it breaks unless ``ok``."""
    if not ok:
        raise ValueError(f"{field}={value!r} is invalid: must be {rule}")


def build_payload(request: ChatRequest, *, default_max_tokens: int, openrouter: bool) -> JsonObject:
    """The chat-completions body of ``request``; raises ValueError for an invalid request.

    ``max_tokens`` None sends ``default_max_tokens``; an ``openrouter`` body asks for the
    billed cost in ``usage``. ``role`` and ``timeout_s`` are checked too (after the body).
    """
    _check_body(request)
    extra = dict(request.extra_body or {})
    clash = sorted(_RESERVED_BODY_KEYS.intersection(extra))
    require(not clash, "extra_body", clash, "must not override 'model' or 'messages'")
    payload: JsonObject = {
        "model": request.model,
        "messages": request.messages,
        "temperature": request.temperature,
    }
    max_tokens = request.max_tokens
    payload["max_tokens"] = max_tokens if max_tokens is not None else default_max_tokens
    if request.response_format is not None:
        payload["response_format"] = request.response_format
    if request.seed is not None:
        payload["seed"] = request.seed
    if openrouter:
        # OpenRouter reports the billed cost in usage.cost when asked to.
        payload["usage"] = {"include": True}
    payload.update(extra)
    role, timeout_s = request.role, request.timeout_s
    require(isinstance(role, str) and bool(role), "role", role, "a non-empty string")
    require(
        timeout_s is None or (math.isfinite(timeout_s) and timeout_s > 0),
        "timeout_s",
        timeout_s,
        "None or > 0",
    )
    return payload


def _check_body(request: ChatRequest) -> None:
    model, messages, temperature = request.model, request.messages, request.temperature
    max_tokens, seed, response_format = request.max_tokens, request.seed, request.response_format
    require(isinstance(model, str) and bool(model.strip()), "model", model, "non-empty")
    require(
        isinstance(messages, list)
        and bool(messages)
        and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages),
        "messages",
        type(messages).__name__,
        "a non-empty list of {'role', 'content'} dicts",
    )
    require(
        isinstance(temperature, int | float) and 0 <= temperature <= 2,
        "temperature",
        temperature,
        "a number in 0..2",
    )
    require(
        max_tokens is None or (isinstance(max_tokens, int) and max_tokens >= 1),
        "max_tokens",
        max_tokens,
        "None or an integer >= 1",
    )
    require(seed is None or isinstance(seed, int), "seed", seed, "None or an integer")
    require(
        response_format is None or isinstance(response_format, dict),
        "response_format",
        response_format,
        "None or a dict",
    )
