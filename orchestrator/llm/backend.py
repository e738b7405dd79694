"""Turn a model name into a ready chat client: the one entry point every CLI uses.

``open_backend("local")`` (also ``local-1.5b``, ``local-tiny``) starts the built-in llama.cpp
server from :mod:`orchestrator.llm.local` and points an ordinary :class:`ChatClient` at it, so the
control loop, screen and evals have no local special case. Any other name gets a ChatClient
for an OpenAI-compatible endpoint, chosen in this order: the ``base_url`` argument, the
model's ``base_url`` in models.json, ``$LOGIC_GRAPH_BASE_URL``, OpenRouter.

Bounds: a hosted call gets 120 s per HTTP attempt and up to 3 retries (429, 5xx, timeouts);
a local call gets one attempt of at most 600 s (``LOCAL_TIMEOUT_S``): retrying a local call
that timed out only queues the same slow work again on the same cores, and at most as many
calls at once as the server has slots, so a call's time is its own generation, not a queue.
Each of the three can be set per model in models.json (``timeout_s``, ``max_retries``,
``concurrency``) and per run (``open_backend``'s arguments, the CLI's ``--request-timeout``,
``--retries`` and ``--concurrency``), the run's setting winning. Every request carries
``max_tokens`` (:data:`orchestrator.llm.client.DEFAULT_MAX_TOKENS` when the caller sets none).

Context window (``Backend.context_tokens``, what evidence is packed into): a built-in
model's slot size (``LocalModelServer.ctx_per_slot``); else the model's ``context_tokens``
in models.json; else what a server other than OpenRouter reports
(:func:`orchestrator.llm.probe.probe_context_tokens`: llama.cpp's ``/props`` or ``/slots``,
vLLM's ``max_model_len``); else unknown (None). The CLI's ``--context-tokens`` overrides it.

Structured output (a JSON schema in ``response_format``) is on by default for the built-in
models and for servers that say they enforce it: llama.cpp (``owned_by: "llamacpp"`` in
``/v1/models``, which is also what ``logic-graph serve`` runs) and vLLM (``"vllm"``). Other
servers (Ollama, hosted APIs) get it only when models.json sets ``structured_output`` or the
run asks for it, because a server that ignores the schema costs nothing but one that rejects
it fails every call.

Names: with no server named (no base URL anywhere), a name without a ``/`` that is neither a
built-in model nor in models.json cannot be an OpenRouter model (their ids are
``provider/model``), so it is refused as unknown, with the closest known names, before any
key is asked for.

Unusable backends: for a hosted model, :func:`open_backend` runs
:meth:`ChatClient.preflight` before yielding, so a missing OpenRouter key, a host name that
does not resolve, or a port where nothing listens raises
:class:`orchestrator.llm.errors.BackendUnusableError` before any chat call (``preflight=False``
skips the check). A rejected key, no credits or an unknown model (401/402/404) surface as the
same error type at the first call.

Costs: local calls are priced at 0 USD per token (so the ledger shows 0.0 with
``cost_source="pricing"``: true, since nothing is billed); hosted calls use the prices in
models.json or, when absent, stay unknown (None).
"""

from __future__ import annotations

import difflib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from orchestrator.llm._ledger import CostLedger
from orchestrator.llm._pricing import PricingTable
from orchestrator.llm._settings import ENV_BASE_URL
from orchestrator.llm.client import ChatClient
from orchestrator.llm.local import LocalModelServer
from orchestrator.llm.local_models import LOCAL_MODELS, is_local_model
from orchestrator.llm.models_file import ModelEntry, ModelsFile, read_models_file
from orchestrator.llm.probe import probe_context_tokens

LOCAL_TIMEOUT_S = 600.0
"""Read timeout of a call to the built-in server: a 2-core CPU can take minutes for a long
graph when the machine is busy. There is one attempt (``LOCAL_MAX_RETRIES``): a retry would
only queue the same work again, which is how one call once took 1,175 s."""
LOCAL_MAX_RETRIES = 0
HOSTED_TIMEOUT_S = 120.0
HOSTED_MAX_RETRIES = 3
PROBE_LIMIT_S = 10.0
"""The longest one probe of a server before the first call (is it there, what it runs) may
take, whole answer included."""


@dataclass(frozen=True)
class Backend:
    """What a caller needs to make calls: the client, the model name to send, and whether to
    ask for structured output by default (local models need the bounded schema to produce
    JSON at all). ``server`` is the running built-in server for local models, else None;
    ``software`` what the server says it runs (``llama.cpp``, ``vllm``) when it says.
    ``context_tokens`` is the context window of one request when known, ``context_source``
    where that figure comes from (see :func:`open_backend`)."""

    client: ChatClient
    model: str
    is_local: bool
    response_format_default: bool
    server: LocalModelServer | None = None
    software: str | None = None
    context_tokens: int | None = None
    context_source: str | None = None


# What /v1/models' ``owned_by`` says, for servers known to enforce a response_format schema.
_SCHEMA_SERVERS = {"llamacpp": "llama.cpp", "vllm": "vllm"}


def _unknown_model_error(model: str, listed: list[str]) -> ValueError:
    """The error for a name that would go to OpenRouter but cannot be an OpenRouter id."""
    # A built-in model is usually listed in models.json too: each name is offered once.
    known = list(dict.fromkeys(sorted(LOCAL_MODELS) + listed))
    close = difflib.get_close_matches(model, known, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(repr(name) for name in close)}? " if close else ""
    return ValueError(
        f"unknown model {model!r}: it is not a built-in model ({', '.join(sorted(LOCAL_MODELS))})"
        f" nor listed in models.json, and hosted (OpenRouter) ids have the form provider/model. "
        f"{hint}For your own server, also give --base-url."
    )


@contextmanager
def open_backend(
    model: str,
    *,
    base_url: str | None = None,
    ledger: CostLedger | None = None,
    models_path: Path | None = None,
    preflight: bool = True,
    timeout_s: float | None = None,
    max_retries: int | None = None,
    concurrency: int | None = None,
    deadline: float | None = None,
) -> Iterator[Backend]:
    """Yield a :class:`Backend` for ``model``; stop any server it started on exit.

    ``ledger`` (default: a fresh one) receives every call; ``models_path`` (default: the
    repository's models.json, if present) supplies prices, per-model base URLs and bounds.
    ``timeout_s`` (whole answer per HTTP attempt), ``max_retries`` and ``concurrency`` (calls
    in flight at once) override the model's and the defaults (see the module docstring). With
    ``preflight`` (the default) a hosted backend is checked first
    (:meth:`ChatClient.preflight`) and :class:`BackendUnusableError` is raised, before any
    chat call, when it has no key or cannot be reached; a server that is not OpenRouter is
    also asked what it runs (for the structured-output default). ``deadline`` (a
    ``time.monotonic()`` time, the end of the caller's wall-clock budget) bounds every such
    probe: each gets at most :data:`PROBE_LIMIT_S` and none runs past it, so a server that
    drips its answers cannot hold a run before its first call.
    A built-in model's name with a ``base_url`` means a server that serves that name (such as
    ``logic-graph serve --model local``), not the in-process model.
    Raises ValueError for a bad or unknown model name, a bad setting, or a
    models.json entry marked ``"backend": "local"`` that is not a built-in model; raises
    :class:`orchestrator.llm.local.LocalModelError` when a built-in model cannot be started (its
    message says how to fix it), :class:`BackendUnusableError` as above.
    """
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"model must be a non-empty string, got {model!r}")
    if is_local_model(model) and base_url is None:
        yield from _local_backend(model, ledger, timeout_s, max_retries, concurrency)
        return
    models = read_models_file(models_path)
    entry = _hosted_entry(model, models, base_url)
    client = ChatClient(
        base_url or entry.base_url,
        timeout_s=timeout_s or entry.timeout_s or HOSTED_TIMEOUT_S,
        max_retries=next(
            v for v in (max_retries, entry.max_retries, HOSTED_MAX_RETRIES) if v is not None
        ),
        max_concurrency=concurrency or entry.concurrency,
        pricing=PricingTable.of(models),
        ledger=ledger,
    )
    structured = entry.structured_output
    window = entry.context_tokens
    with client:
        software = None
        found = (window, "models.json context_tokens") if window is not None else None
        if preflight:
            software, found = _checked_server(client, model, found, deadline)
        default = structured if structured is not None else software is not None
        tokens, source = found if found is not None else (None, None)
        yield Backend(client, model, False, default, None, software, tokens, source)


def _hosted_entry(model: str, models: ModelsFile, base_url: str | None) -> ModelEntry:
    """``model``'s models.json entry (a bare one when it is not listed). Raises ValueError
    when the entry says ``"backend": "local"`` for a name that is no built-in model, or when
    an unlisted name with no server to send it to cannot be an OpenRouter id."""
    entry = models.entry(model) or ModelEntry(model)
    if entry.backend == "local" and not is_local_model(model):
        known = ", ".join(sorted(LOCAL_MODELS))
        raise ValueError(
            f"models.json marks {model!r} as a local model, but the built-in local models are "
            f"{known}"
        )
    listed = models.entry(model) is not None
    if not listed and "/" not in model and not (base_url or os.environ.get(ENV_BASE_URL)):
        raise _unknown_model_error(model, models.ids())
    return entry


def _local_backend(
    model: str,
    ledger: CostLedger | None,
    timeout_s: float | None,
    max_retries: int | None,
    concurrency: int | None,
) -> Iterator[Backend]:
    """The :class:`Backend` of a built-in model: its llama.cpp server runs until this ends."""
    with LocalModelServer(model) as server:
        client = ChatClient(
            server.base_url,
            api_key=None,
            timeout_s=timeout_s or LOCAL_TIMEOUT_S,
            max_retries=LOCAL_MAX_RETRIES if max_retries is None else max_retries,
            max_concurrency=concurrency or server.slots,
            pricing=PricingTable({model: (0.0, 0.0)}),
            ledger=ledger,
        )
        with client:
            yield Backend(
                client,
                model,
                True,
                True,
                server,
                "llama.cpp",
                server.ctx_per_slot,
                "built-in model (ctx_per_slot)",
            )


def _checked_server(
    client: ChatClient, model: str, found: tuple[int, str] | None, deadline: float | None
) -> tuple[str | None, tuple[int, str] | None]:
    """Preflight ``client`` (raises :class:`BackendUnusableError`); for a server that is not
    OpenRouter, also what software it runs (structured output) and, unless ``found``, its
    context window: returns ``(software, found)``. No probe runs past ``deadline``; one that
    has no time left is skipped (the run's first call then meets the spent budget)."""

    def left() -> float:
        if deadline is None:
            return PROBE_LIMIT_S
        return min(PROBE_LIMIT_S, deadline - time.monotonic())

    if left() <= 0:
        return None, found
    client.preflight(timeout_s=left())
    software = None
    if not client.is_openrouter and left() > 0:
        owners = client.model_owners(timeout_s=left())
        software = next((_SCHEMA_SERVERS[o] for o in owners if o in _SCHEMA_SERVERS), None)
        found = found or probe_context_tokens(client.base_url, model, deadline=deadline)
    return software, found
