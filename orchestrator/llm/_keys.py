"""The API key of :class:`~.client.ChatClient`: which key a client sends, and to whom.

The key comes from the ``api_key`` argument or ``OPENROUTER_API_KEY``. The environment key is
only ever sent over HTTPS to ``openrouter.ai`` itself or a true subdomain, so pointing the
client at some other server cannot leak it. An OpenRouter client without a key gets a
:class:`MissingAPIKeyError` before sending anything, and text that echoes the key is redacted.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from orchestrator.llm.errors import MissingAPIKeyError

ENV_API_KEY = "OPENROUTER_API_KEY"
OPENROUTER_HOST = "openrouter.ai"


def is_openrouter_url(url: str) -> bool:
    """True when ``url``'s host is ``openrouter.ai`` or a true subdomain of it (dot boundary):
    ``api.openrouter.ai`` is, ``evil-openrouter.ai`` and ``openrouter.ai.evil.com`` are not."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    return host == OPENROUTER_HOST or host.endswith("." + OPENROUTER_HOST)


def choose_key(api_key: str | None, url: str) -> tuple[str | None, bool]:
    """The key a client of ``url`` sends, and whether the environment key was refused.

    An explicit ``api_key`` is kept. Without one, an OpenRouter URL takes ``OPENROUTER_API_KEY``
    over HTTPS only; over plain http the environment key is refused (second value True).
    """
    if api_key is not None or not is_openrouter_url(url):
        return api_key, False
    if urlsplit(url).scheme == "https":
        return os.environ.get(ENV_API_KEY) or None, False
    return None, bool(os.environ.get(ENV_API_KEY))


def missing_key_error(base_url: str, *, env_key_refused: bool) -> MissingAPIKeyError:
    """The error of an OpenRouter client at ``base_url`` that has no key to send."""
    if env_key_refused:
        return MissingAPIKeyError(
            f"{ENV_API_KEY} is only sent over HTTPS, and the base URL {base_url} is "
            "plain http; no request was made",
            kind="missing_key",
            fix=f"use https://{OPENROUTER_HOST}/api/v1",
        )
    return MissingAPIKeyError(
        f"{base_url} (OpenRouter) needs an API key and {ENV_API_KEY} is not set; no "
        "request was made",
        kind="missing_key",
        fix=f"export {ENV_API_KEY}=<your key>, or run offline with --model local-1.5b",
    )


def request_headers(key: str | None, *, openrouter: bool) -> dict[str, str]:
    """The headers of every request: JSON, the bearer ``key`` if any, OpenRouter's app title."""
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    if openrouter:
        headers["X-Title"] = "logic-graph"
    return headers


def redact(text: str, key: str | None) -> str:
    """``text`` with every occurrence of ``key`` replaced by ``[REDACTED]``."""
    return text.replace(key, "[REDACTED]") if key else text
