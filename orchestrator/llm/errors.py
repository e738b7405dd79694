"""Exceptions raised by the chat client (public through :mod:`orchestrator.llm`).

Hierarchy::

    LLMError                      base: anything that stopped a model call from producing text
    ├── APIStatusError            the server answered with an error status (or a 200 carrying one)
    │   └── ContextOverflowError  400/413: the prompt plus max_tokens exceed the context window
    ├── MalformedResponseError    the server answered 200 but the body is unusable
    ├── ResponseTooLargeError     the answer's body passed the client's size cap (not retried)
    ├── LLMTimeoutError           no answer within the per-call timeout
    ├── LLMConnectionError        the connection failed or broke mid-answer
    ├── RetryExhaustedError       retryable failures used up every allowed attempt
    ├── UnexpectedClientError     a client raised something that is not an LLMError (a bug in
    │                             the client, wrapped so that one bad call cannot end a run)
    ├── CallTimeBudgetError       the run's wall-clock budget was spent: the call was not made
    ├── RunInterruptedError       the run was interrupted (Ctrl-C, SIGTERM): the call was not
    │                             made, or its reply was no longer waited for
    └── BackendUnusableError      the backend cannot serve any call: no point in trying more
        ├── MissingAPIKeyError    a hosted model and no key (raised before any request)
        ├── BackendUnreachableError  the host name does not resolve, or nothing listens
        └── BackendRejectedError  401 (key rejected), 402 (no credits), 404 (no such model or
                                  endpoint); also an :class:`APIStatusError`

:class:`BackendUnusableError` is the one to catch for "exit 1: the model backend could not be
used": its message is a single line that ends with the fix, ``kind`` names the cause
(``missing_key``, ``dns``, ``connection_refused``, ``unauthorized``, ``payment_required``,
``not_found``) and ``fix`` holds the fix alone.

Every instance carries ``attempts`` (HTTP attempts spent on the logical call) and ``call_id``
(its ledger record id) once :meth:`orchestrator.llm.client.ChatClient.chat` has raised it; both
stay at their defaults when the error is constructed elsewhere. Messages never contain the API
key: the client redacts it before building them.
"""

from __future__ import annotations

import re


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


_OVERFLOW_WORDS = re.compile(
    r"context (?:size|length|window)|n_ctx|too many tokens|maximum context|"
    r"context_length_exceeded|exceed_context",
    re.IGNORECASE,
)
"""How llama.cpp ("exceeds the available context size", "exceed_context_size_error"), vLLM
and OpenAI ("maximum context length is 4096 tokens") and others word a prompt that is too
long."""


class ContextOverflowError(APIStatusError):
    """The server refused the request because the prompt (plus ``max_tokens``) does not fit
    its context window: a matter of the request's size, never of the evidence it carries."""


def status_error(
    status: int, message: str, *, retry_after_s: float | None = None, embedded: bool = False
) -> APIStatusError:
    """The error for an error status: :class:`ContextOverflowError` for a 400 or 413 whose
    message says the context was exceeded, else a plain :class:`APIStatusError`."""
    kind = (
        ContextOverflowError
        if status in (400, 413) and _OVERFLOW_WORDS.search(message)
        else APIStatusError
    )
    return kind(status, message, retry_after_s=retry_after_s, embedded=embedded)


class MalformedResponseError(LLMError):
    """A 200 response without usable content: not JSON, no choices, empty text, or an error
    object without a numeric code."""


class ResponseTooLargeError(LLMError):
    """The answer's body passed the client's size cap (``max_response_bytes``); reading
    stopped there. Not retried: the same request would get the same oversized answer."""


class LLMTimeoutError(LLMError):
    """The server did not answer within the per-call timeout (retryable)."""

    @property
    def retryable(self) -> bool:
        return True


class LLMConnectionError(LLMError):
    """The connection could not be made or broke before a full answer arrived (retryable).

    ``kind`` is ``"dns"`` when the host name did not resolve, ``"connection_refused"`` when
    nothing accepted the connection, else None (a reset, a broken answer, a proxy failure).
    """

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind

    @property
    def retryable(self) -> bool:
        return True


class RetryExhaustedError(LLMError):
    """Every allowed attempt failed with a retryable error; ``last_error`` is the final one."""

    def __init__(self, message: str, last_error: LLMError) -> None:
        super().__init__(message)
        self.last_error = last_error


class UnexpectedClientError(LLMError):
    """A client's ``chat`` raised an exception that is not an :class:`LLMError` (``original``).

    The control loop wraps such an exception in this class and records the call as failed, so
    a buggy or exotic client costs one call, not the whole run.
    """

    def __init__(self, original: Exception) -> None:
        super().__init__(f"the client raised {type(original).__name__}: {original}")
        self.original = original


class CallTimeBudgetError(LLMError):
    """The run's wall-clock budget (``--budget-seconds``) was spent before this call started,
    so it was not made (nothing was sent, nothing is billed)."""


class RunInterruptedError(LLMError):
    """The run was asked to stop (Ctrl-C or SIGTERM): this call was not made, or was cut off
    while in flight; its cost is unknown when it was cut off."""


class BackendUnusableError(LLMError):
    """The model backend cannot serve calls at all (see the module docstring).

    ``kind`` names the cause, ``fix`` the remedy; the message is one line ending with it.
    Trying again, or with other prompts, cannot help, so callers should stop and exit 1.
    """

    def __init__(self, message: str, *, kind: str = "unusable", fix: str = "") -> None:
        super().__init__(_one_line(message, fix))
        self.kind = kind
        self.fix = fix

    def fresh(self) -> BackendUnusableError:
        """A new error with the same message, kind and fix (for repeating a verdict on
        another thread without sharing one exception object and its traceback)."""
        copy = BackendUnusableError.__new__(type(self))
        LLMError.__init__(copy, str(self))
        copy.__dict__.update(self.__dict__)
        copy.attempts, copy.call_id = 0, None
        return copy


class MissingAPIKeyError(BackendUnusableError):
    """A hosted backend that needs a key, and none was given; no request was made."""


class BackendUnreachableError(BackendUnusableError):
    """The backend's host name does not resolve (``kind="dns"``) or nothing accepts the
    connection (``kind="connection_refused"``)."""


class BackendRejectedError(APIStatusError, BackendUnusableError):
    """The server refuses to serve this client or model: 401, 402 or 404."""

    def __init__(
        self, status: int, message: str, *, kind: str, fix: str, embedded: bool = False
    ) -> None:
        APIStatusError.__init__(self, status, _one_line(message, fix), embedded=embedded)
        self.kind = kind
        self.fix = fix


def _one_line(message: str, fix: str) -> str:
    text = " ".join(message.split())
    if fix and not text.endswith(fix):
        text = f"{text.rstrip('.')}. Fix: {fix}"
    return text
