"""The settings of :class:`~.client.ChatClient`: their defaults and the checks on them.

A client with an invalid setting is never built: :func:`check_settings` raises ValueError
naming the setting, its value and the rule it breaks.
"""

from __future__ import annotations

import math
import os
from urllib.parse import urlsplit

from orchestrator.llm._request import require

DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
ENV_BASE_URL = "LOGIC_GRAPH_BASE_URL"
DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` of a request whose caller set none: no call may run to the end of a context."""
DEFAULT_MAX_RESPONSE_BYTES = 8_000_000
"""The largest answer body a call reads: a completion of ``max_tokens`` 4,096 is tens of kB,
so anything near this size is a broken or hostile server, and reading 60 MB of it would only
cost memory and time before the parse failed anyway."""


def base_url_of(base_url: str | None) -> str:
    """The client's base URL: ``base_url``, else ``LOGIC_GRAPH_BASE_URL``, else OpenRouter,
    without a trailing slash; ValueError unless it is an http(s) URL with a host."""
    url = (base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url {url!r} must be an http(s) URL with a host")
    return url


def check_settings(
    *,
    timeout_s: float,
    max_retries: int,
    default_max_tokens: int,
    max_concurrency: int | None,
    max_response_bytes: int,
    backoff_base_s: float,
    max_backoff_s: float,
    max_retry_after_s: float,
) -> None:
    """Raise ValueError for the first setting outside its range (the client's docstring)."""
    require(math.isfinite(timeout_s) and timeout_s > 0, "timeout_s", timeout_s, "> 0")
    require(
        isinstance(max_retries, int) and 0 <= max_retries <= 10,
        "max_retries",
        max_retries,
        "an integer in 0..10",
    )
    require(
        isinstance(default_max_tokens, int) and default_max_tokens >= 1,
        "default_max_tokens",
        default_max_tokens,
        "an integer >= 1",
    )
    require(
        max_concurrency is None
        or (isinstance(max_concurrency, int) and 1 <= max_concurrency <= 1024),
        "max_concurrency",
        max_concurrency,
        "None or an integer in 1..1024",
    )
    require(
        isinstance(max_response_bytes, int) and max_response_bytes >= 1024,
        "max_response_bytes",
        max_response_bytes,
        "an integer >= 1024",
    )
    for name, value in (
        ("backoff_base_s", backoff_base_s),
        ("max_backoff_s", max_backoff_s),
        ("max_retry_after_s", max_retry_after_s),
    ):
        require(math.isfinite(value) and value >= 0, name, value, ">= 0")
