"""Exceptions raised by the chat client (re-exported by :mod:`orchestrator.client`).

Hierarchy::

    LLMError                      base: anything that stopped a model call from producing text
    ├── APIStatusError            the server answered with an error status (or a 200 carrying one)
    ├── MalformedResponseError    the server answered 200 but the body is unusable
    ├── LLMTimeoutError           no answer within the per-call timeout
    ├── LLMConnectionError        the connection failed or broke mid-answer
    └── RetryExhaustedError       retryable failures used up every allowed attempt

Every instance carries ``attempts`` (HTTP attempts spent on the logical call) and ``call_id``
(its ledger record id) once :meth:`orchestrator.client.ChatClient.chat` has raised it; both
stay at their defaults when the error is constructed elsewhere. Messages never contain the API
key: the client redacts it before building them.
"""

from __future__ import annotations


class LLMError(Exception):
    """Base class for every failure of a model call."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.attempts: int = 0
        self.call_id: int | None = None

    @property
    def retryable(self) -> bool:
        """Whether trying the same request again could succeed."""
        return False


class APIStatusError(LLMError):
    """An HTTP error status, or a 200 whose body embeds an error with a numeric code.

    ``status`` is the HTTP status (or the embedded code), ``retry_after_s`` the parsed
    Retry-After delay if the server sent one, ``embedded`` is True for a 200 carrying an error.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        retry_after_s: float | None = None,
        embedded: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s
        self.embedded = embedded

    @property
    def retryable(self) -> bool:
        # 408 (request timeout), 429 (rate limit) and 5xx are transient by definition;
        # every other 4xx (400 bad request, 401 key, 402 credits, 403, 404, 422) will
        # fail the same way again and would only burn budget.
        return self.status in (408, 429) or 500 <= self.status <= 599


class MalformedResponseError(LLMError):
    """A 200 response without usable content: not JSON, no choices, empty text, or an error
    object without a numeric code."""


class LLMTimeoutError(LLMError):
    """The server did not answer within the per-call timeout (retryable)."""

    @property
    def retryable(self) -> bool:
        return True


class LLMConnectionError(LLMError):
    """The connection could not be made or broke before a full answer arrived (retryable)."""

    @property
    def retryable(self) -> bool:
        return True


class RetryExhaustedError(LLMError):
    """Every allowed attempt failed with a retryable error; ``last_error`` is the final one."""

    def __init__(self, message: str, last_error: LLMError) -> None:
        super().__init__(message)
        self.last_error = last_error
