"""Talking to a model: the chat seam, the HTTP client and its guard, pricing, built-in models.

Everything that sends a request to a model or serves one lives here, and nothing here knows
about graphs, questions or reports:

- :mod:`.chat`: the one chat seam (request type, client base class, middleware);
- :mod:`.client`: the OpenAI-compatible client and its retries, over :mod:`._settings` (its
  settings, checked), :mod:`._keys` (which key goes where), :mod:`._transport` (HTTP with a
  watchdog), :mod:`._places` (the concurrency cap), :mod:`._request`, :mod:`._response`,
  :mod:`._unusable` (failures no retry mends), :mod:`._probes` (the models route: preflight,
  server software), :mod:`._guard` (a run's limits) and :mod:`._ledger` (the cost ledger);
- :mod:`.errors`: the typed exception tree;
- :mod:`.models_file`: models.json, read once into typed records;
- :mod:`._pricing`: per-token prices (from models.json or a catalog);
- :mod:`.tokens`: the one token estimate (and the hard bound a cost cap needs);
- :mod:`.backend`: a model name turned into a ready client; :mod:`.probe`: the server's window;
- the built-in llama.cpp models: :mod:`.local_models` (what they are), :mod:`._local_file`
  (their GGUF file, assembled and verified), :mod:`._local_threads` (the cores they get),
  :mod:`.local` (the server and ``logic-graph serve``), :mod:`.serve_front` (its public port);
- :mod:`.testing`: scripted clients and a fake server for tests.
"""

from orchestrator.llm._guard import GuardedClient, RunStop
from orchestrator.llm._ledger import CallFacts, ChatResult, CostLedger, LedgerTotals
from orchestrator.llm._pricing import PricingTable
from orchestrator.llm._settings import DEFAULT_MAX_TOKENS
from orchestrator.llm.backend import Backend, open_backend
from orchestrator.llm.chat import ChatMessage, ChatMiddleware, ChatRequest, ChatSeam
from orchestrator.llm.client import ChatClient, SupportsChat
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
from orchestrator.llm.json_object import JsonObject
from orchestrator.llm.local import LocalModelError, serve_main
from orchestrator.llm.local_models import default_cache_dir, is_local_model
from orchestrator.llm.models_file import (
    DEFAULT_MODELS_PATH,
    ModelEntry,
    ModelsFile,
    ModelsFileError,
    SamplingSettings,
    read_models_file,
    sampling_settings,
)
from orchestrator.llm.probe import MAX_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS
from orchestrator.llm.tokens import (
    CHARS_PER_TOKEN,
    MESSAGE_OVERHEAD_TOKENS,
    estimate_tokens,
    prompt_tokens,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODELS_PATH",
    "MAX_CONTEXT_TOKENS",
    "MESSAGE_OVERHEAD_TOKENS",
    "MIN_CONTEXT_TOKENS",
    "APIStatusError",
    "Backend",
    "BackendUnusableError",
    "CallFacts",
    "CallTimeBudgetError",
    "ChatClient",
    "ChatMessage",
    "ChatMiddleware",
    "ChatRequest",
    "ChatResult",
    "ChatSeam",
    "ContextOverflowError",
    "CostLedger",
    "GuardedClient",
    "JsonObject",
    "LLMError",
    "LLMTimeoutError",
    "LedgerTotals",
    "LocalModelError",
    "ModelEntry",
    "ModelsFile",
    "ModelsFileError",
    "PricingTable",
    "ResponseTooLargeError",
    "RetryExhaustedError",
    "RunInterruptedError",
    "RunStop",
    "SamplingSettings",
    "SupportsChat",
    "UnexpectedClientError",
    "default_cache_dir",
    "estimate_tokens",
    "is_local_model",
    "open_backend",
    "prompt_tokens",
    "read_models_file",
    "sampling_settings",
    "serve_main",
]
