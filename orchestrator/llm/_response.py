"""Reading a chat-completions answer: status, body, embedded errors, usage and Retry-After.

Used by :class:`~orchestrator.llm.client.ChatClient`; every text that may echo server input goes
through the caller's ``redact`` (the API key never reaches an exception message).
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from typing import Any

import requests

from orchestrator.llm.errors import LLMError, MalformedResponseError, status_error
from orchestrator.llm.json_object import JsonObject

_EXCERPT_CHARS = 300


@dataclass(frozen=True)
class Completion:
    """What a usable answer says: the text, why it stopped, the served model and its usage."""

    text: str
    finish_reason: str | None
    served_model: object
    reported_cost: object
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None = None
    """Prompt tokens the server read from its cache instead of computing them
    (``usage.prompt_tokens_details.cached_tokens``: llama.cpp, OpenAI, some OpenRouter
    providers); None when it does not say."""


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


def read_completion(
    response: requests.Response,
    url: str,
    retry_after: float | None,
    redact: Callable[[str], str],
) -> Completion:
    """The :class:`Completion` in ``response``, or raise.

    Raises the :func:`~orchestrator.llm.errors.status_error` of a non-2xx status or of an error
    embedded in a 200 body (``retry_after`` is the wait the server asked for), and
    :class:`MalformedResponseError` for a body that is not a JSON object or has no content.
    """
    if not 200 <= response.status_code < 300:
        raise status_error(
            response.status_code,
            redact(f"HTTP {response.status_code} from {url}: {_error_detail(response.text)}"),
            retry_after_s=retry_after,
        )
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise MalformedResponseError(
            redact(f"HTTP 200 from {url} is not a JSON object: {excerpt(response.text)}")
        )
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    embedded = body.get("error") or (choice.get("error") if isinstance(choice, dict) else None)
    if embedded:
        raise _embedded_error(url, embedded, retry_after, redact)
    message = choice.get("message") if isinstance(choice, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    finish_reason = finish if isinstance(finish, str) else None
    if not isinstance(content, str) or not content.strip():
        raise MalformedResponseError(
            redact(
                f"HTTP 200 from {url} has no message content (finish_reason="
                f"{finish_reason!r}): {excerpt(response.text)}"
            )
        )
    raw_usage = body.get("usage")
    usage: JsonObject = raw_usage if isinstance(raw_usage, dict) else {}
    details = usage.get("prompt_tokens_details")
    return Completion(
        text=content,
        finish_reason=finish_reason,
        served_model=body.get("model"),
        reported_cost=usage.get("cost"),
        prompt_tokens=count(usage.get("prompt_tokens")),
        completion_tokens=count(usage.get("completion_tokens")),
        cached_tokens=count(details.get("cached_tokens")) if isinstance(details, dict) else None,
    )


def _embedded_error(
    url: str, error: Any, retry_after: float | None, redact: Callable[[str], str]
) -> LLMError:
    code = error.get("code") if isinstance(error, dict) else None
    detail = error.get("message") if isinstance(error, dict) else error
    text = redact(f"HTTP 200 from {url} carries an error: {excerpt(str(detail))}")
    status = count(int(code) if isinstance(code, str) and code.isdigit() else code)
    if status is not None and 400 <= status <= 599:
        return status_error(status, text, retry_after_s=retry_after, embedded=True)
    return MalformedResponseError(text)


def count(value: object) -> int | None:
    """A token count (non-negative int) or None when absent or invalid."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def excerpt(text: str) -> str:
    """``text`` on one line, cut to 300 characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT_CHARS else flat[:_EXCERPT_CHARS] + "..."


def _error_detail(text: str) -> str:
    """The error message of an OpenAI-style error body, else an excerpt of the raw text."""
    try:
        body = json.loads(text)
    except ValueError:
        return excerpt(text)
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return excerpt(error["message"])
    return excerpt(text)
