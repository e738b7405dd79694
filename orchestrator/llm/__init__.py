"""Talking to a model: the chat seam, the HTTP client and its guard, pricing, built-in models.

Everything that sends a request to a model or serves one lives here, and nothing here knows
about graphs, questions or reports:

- :mod:`.chat`: the one chat seam (request type, client base class, middleware);
- :mod:`.client`: the OpenAI-compatible client and its retries, over :mod:`._settings` (its
  settings, checked), :mod:`._keys` (which key goes where), :mod:`._transport` (HTTP with a
  watchdog), :mod:`._places` (the concurrency cap), :mod:`._request`, :mod:`._response`,
  :mod:`._unusable` (failures no retry mends), :mod:`._probes` (the models route: preflight, server software),
  :mod:`._guard` (a run's limits) and :mod:`._ledger` (the cost ledger);
- :mod:`.errors`: the typed exception tree;
- :mod:`._pricing`: per-token prices from models.json;
- :mod:`.backend`: a model name turned into a ready client; :mod:`.probe`: the server's window;
- the built-in llama.cpp models: :mod:`.local_models` (what they are), :mod:`._local_file`
  (their GGUF file, assembled and verified), :mod:`._local_threads` (the cores they get),
  :mod:`.local` (the server and ``logic-graph serve``), :mod:`.serve_front` (its public port);
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
