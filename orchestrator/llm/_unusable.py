"""Failures that mean no call to a backend can succeed, restated with the fix.

A host name that does not resolve, a port where nothing listens, and the statuses 401
(the key is wrong), 402 (no credits) and 404 (no such model or endpoint) become a
:class:`BackendUnusableError` subclass whose one-line message ends with what to do.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from orchestrator.llm._keys import ENV_API_KEY
from orchestrator.llm.errors import (
    APIStatusError,
    BackendRejectedError,
    BackendUnreachableError,
    BackendUnusableError,
    LLMConnectionError,
    LLMError,
)

# Statuses after which no request to this backend can succeed: the key is wrong (401), the
# account has no credits (402), or the model or endpoint does not exist (404). 403 is not
# here: OpenRouter answers 403 when one prompt is flagged by moderation.
_UNUSABLE_STATUS = {401: "unauthorized", 402: "payment_required", 404: "not_found"}


def unusable(
    error: LLMError, base_url: str, model: str | None, *, openrouter: bool
) -> BackendUnusableError | None:
    """``error`` of a call to ``model`` at ``base_url`` restated as a
    :class:`BackendUnusableError` when it means no call to that backend can succeed, else None."""
    if isinstance(error, LLMConnectionError):
        return _unreachable(error, base_url)
    if isinstance(error, APIStatusError) and error.status in _UNUSABLE_STATUS:
        kind = _UNUSABLE_STATUS[error.status]
        if kind == "unauthorized":
            fix = (
                f"check {ENV_API_KEY} (openrouter.ai/settings/keys)"
                if openrouter
                else "check the API key this server expects"
            )
        elif kind == "payment_required":
            fix = "add credits to the account, or run offline with --model local-1.5b"
        else:
            fix = f"check the model name ({model!r}) and the base URL {base_url}"
        return BackendRejectedError(
            error.status, str(error), kind=kind, fix=fix, embedded=error.embedded
        )
    return None


def _unreachable(error: LLMConnectionError, base_url: str) -> BackendUnreachableError | None:
    """A connection failure that no retry mends (no such host, nothing listening), else None."""
    if error.kind == "dns":
        return BackendUnreachableError(
            f"the host name of {base_url} does not resolve",
            kind="dns",
            fix="check the host in --base-url (or LOGIC_GRAPH_BASE_URL, or models.json)",
        )
    if error.kind == "connection_refused":
        host = urlsplit(base_url).netloc
        return BackendUnreachableError(
            f"nothing accepts connections at {host} ({base_url}): connection refused",
            kind="connection_refused",
            fix="start the model server there, or point --base-url at one that runs",
        )
    return None
