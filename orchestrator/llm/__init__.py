"""Talking to a model: the chat seam, the HTTP client and its guard, pricing, built-in models.

Everything that sends a request to a model or serves one lives here, and nothing here knows
about graphs, questions or reports:

- :mod:`.chat`: the one chat seam (request type, client base class, middleware);
- :mod:`.client` with :mod:`._transport`, :mod:`._request`, :mod:`._response`, :mod:`._guard`,
  :mod:`._ledger`: the OpenAI-compatible client, its retries, watchdog and cost ledger;
- :mod:`.errors`: the typed exception tree;
- :mod:`._pricing`: per-token prices from models.json;
- :mod:`.backend`: a model name turned into a ready client; :mod:`.probe`: the server's window;
- :mod:`.local`, :mod:`.local_models`, :mod:`.serve_front`: the built-in llama.cpp models and
  ``logic-graph serve``;
- :mod:`.testing`: scripted clients and a fake server for tests.
"""

from orchestrator.llm._pricing import DEFAULT_MODELS_PATH
from orchestrator.llm.backend import open_backend
from orchestrator.llm.chat import ChatMiddleware, ChatRequest, ChatSeam
from orchestrator.llm.client import (
    DEFAULT_MAX_TOKENS,
    ChatClient,
    ChatResult,
    CostLedger,
    GuardedClient,
    PricingTable,
    RunStop,
    SupportsChat,
)
from orchestrator.llm.errors import (
    APIStatusError,
    BackendUnusableError,
    CallTimeBudgetError,
    ContextOverflowError,
    LLMError,
    LLMTimeoutError,
    ResponseTooLargeError,
    RetryExhaustedError,
    RunInterruptedError,
    UnexpectedClientError,
)
from orchestrator.llm.local import LocalModelError, serve_main
from orchestrator.llm.local_models import default_cache_dir, is_local_model
from orchestrator.llm.probe import MAX_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODELS_PATH",
    "MAX_CONTEXT_TOKENS",
    "MIN_CONTEXT_TOKENS",
    "APIStatusError",
    "BackendUnusableError",
    "CallTimeBudgetError",
    "ChatClient",
    "ChatMiddleware",
    "ChatRequest",
    "ChatResult",
    "ChatSeam",
    "ContextOverflowError",
    "CostLedger",
    "GuardedClient",
    "LLMError",
    "LLMTimeoutError",
    "LocalModelError",
    "PricingTable",
    "ResponseTooLargeError",
    "RetryExhaustedError",
    "RunInterruptedError",
    "RunStop",
    "SupportsChat",
    "UnexpectedClientError",
    "default_cache_dir",
    "is_local_model",
    "open_backend",
    "serve_main",
]
