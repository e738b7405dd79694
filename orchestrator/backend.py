"""Turn a model name into a ready chat client: the one entry point every CLI uses.

``open_backend("local")`` (also ``local-1.5b``, ``local-tiny``) starts the built-in llama.cpp
server from :mod:`orchestrator.local` and points an ordinary :class:`ChatClient` at it, so the
control loop, screen and evals have no local special case. Any other name gets a ChatClient
for an OpenAI-compatible endpoint, chosen in this order: the ``base_url`` argument, the
model's ``base_url`` in models.json, ``$LOGIC_GRAPH_BASE_URL``, OpenRouter.

Bounds: a hosted call gets 120 s per HTTP attempt and up to 3 retries (429, 5xx, timeouts);
a local call gets one attempt of at most 600 s (``LOCAL_TIMEOUT_S``): retrying a local call
that timed out only queues the same slow work again on the same cores. Every request carries
``max_tokens`` (:data:`orchestrator.client.DEFAULT_MAX_TOKENS` when the caller sets none).

Unusable backends: for a hosted model, :func:`open_backend` runs
:meth:`ChatClient.preflight` before yielding, so a missing OpenRouter key, a host name that
does not resolve, or a port where nothing listens raises
:class:`orchestrator.errors.BackendUnusableError` before any chat call (``preflight=False``
skips the check). A rejected key, no credits or an unknown model (401/402/404) surface as the
same error type at the first call.

Costs: local calls are priced at 0 USD per token (so the ledger shows 0.0 with
``cost_source="pricing"``: true, since nothing is billed); hosted calls use the prices in
models.json or, when absent, stay unknown (None).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator._pricing import DEFAULT_MODELS_PATH
from orchestrator.client import ChatClient, CostLedger, PricingTable
from orchestrator.local import LOCAL_MODELS, LocalModelServer, is_local_model

LOCAL_TIMEOUT_S = 600.0
"""Read timeout of a call to the built-in server: a 2-core CPU can take minutes for a long
graph when the machine is busy. There is one attempt (``LOCAL_MAX_RETRIES``): a retry would
only queue the same work again, which is how one call once took 1,175 s."""
LOCAL_MAX_RETRIES = 0
HOSTED_TIMEOUT_S = 120.0
HOSTED_MAX_RETRIES = 3


@dataclass(frozen=True)
class Backend:
    """What a caller needs to make calls: the client, the model name to send, and whether to
    ask for structured output by default (local models need the bounded schema to produce
    JSON at all). ``server`` is the running built-in server for local models, else None."""

    client: ChatClient
    model: str
    is_local: bool
    response_format_default: bool
    server: LocalModelServer | None = None


def _models_entry(model: str, models_path: Path | None) -> dict[str, Any] | None:
    """The models.json entry for ``model``, or None when the model (or the default file) is
    absent. An explicit path that cannot be read, or a malformed file, raises ValueError."""
    path = models_path if models_path is not None else DEFAULT_MODELS_PATH
    if models_path is None and not path.is_file():
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the models file {path}: {exc}") from exc
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list):
        raise ValueError(f"{path}: field 'models' must be a list")
    for entry in models:
        if isinstance(entry, dict) and entry.get("id") == model:
            return entry
    return None


@contextmanager
def open_backend(
    model: str,
    *,
    base_url: str | None = None,
    ledger: CostLedger | None = None,
    models_path: Path | None = None,
    preflight: bool = True,
) -> Iterator[Backend]:
    """Yield a :class:`Backend` for ``model``; stop any server it started on exit.

    ``ledger`` (default: a fresh one) receives every call; ``models_path`` (default: the
    repository's models.json, if present) supplies prices and per-model base URLs. With
    ``preflight`` (the default) a hosted backend is checked first
    (:meth:`ChatClient.preflight`) and :class:`BackendUnusableError` is raised, before any
    chat call, when it has no key or cannot be reached.
    Raises ValueError for a bad model name, a base_url combined with a built-in model, or a
    models.json entry marked ``"backend": "local"`` that is not a built-in model; raises
    :class:`orchestrator.local.LocalModelError` when a built-in model cannot be started (its
    message says how to fix it), :class:`BackendUnusableError` as above.
    """
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"model must be a non-empty string, got {model!r}")
    if is_local_model(model):
        if base_url is not None:
            raise ValueError(
                f"model {model!r} is a built-in local model and takes no base_url (got "
                f"{base_url!r}); drop the base URL, or name the model your server serves"
            )
        with LocalModelServer(model) as server:
            client = ChatClient(
                server.base_url,
                api_key=None,
                timeout_s=LOCAL_TIMEOUT_S,
                max_retries=LOCAL_MAX_RETRIES,
                pricing=PricingTable({model: (0.0, 0.0)}),
                ledger=ledger,
            )
            with client:
                yield Backend(client, model, True, True, server)
        return
    entry = _models_entry(model, models_path)
    if entry is not None and entry.get("backend") == "local":
        known = ", ".join(sorted(LOCAL_MODELS))
        raise ValueError(
            f"models.json marks {model!r} as a local model, but the built-in local models are "
            f"{known}"
        )
    entry_url = entry.get("base_url") if entry is not None else None
    if entry_url is not None and not isinstance(entry_url, str):
        raise ValueError(f"models.json: base_url of {model!r} must be a string, got {entry_url!r}")
    client = ChatClient(
        base_url or entry_url,
        timeout_s=HOSTED_TIMEOUT_S,
        max_retries=HOSTED_MAX_RETRIES,
        pricing=PricingTable.from_models_json(models_path),
        ledger=ledger,
    )
    with client:
        if preflight:
            client.preflight()
        yield Backend(client, model, False, False)
