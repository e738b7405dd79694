"""What an OpenAI-compatible server says its context window is.

The loop packs evidence to the window (:mod:`orchestrator.loop.context_window`); the window
itself comes from the run settings, the built-in model's facts, or, failing both, from the
server: :func:`probe_context_tokens` asks llama.cpp's ``/props`` and ``/slots`` and vLLM's
``/models`` in turn, each within a short deadline, and treats every odd answer as silence.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from orchestrator.llm._transport import get_json

log = logging.getLogger(__name__)

MIN_CONTEXT_TOKENS = 256
"""The smallest context window a run accepts (settings or probe)."""
MAX_CONTEXT_TOKENS = 10_000_000
"""The largest: a bigger figure is a misconfiguration, not a window."""
PROBE_TIMEOUT_S = 5.0
PROBE_MAX_BYTES = 1_000_000


def probe_context_tokens(
    base_url: str, model: str, *, deadline: float | None = None
) -> tuple[int, str] | None:
    """``(tokens, where)``: the per-request context window an OpenAI-compatible server at
    ``base_url`` reports, or None when it reports none. Asked in turn: llama.cpp's
    ``GET <root>/props`` (``default_generation_settings.n_ctx``, per slot), llama.cpp's
    ``GET <root>/slots`` (``n_ctx`` of the first slot), vLLM's ``GET <base_url>/models``
    (``max_model_len`` of ``model``). Best effort: every failure, slow answer (each whole
    answer within :data:`PROBE_TIMEOUT_S`, all of them before ``deadline``, a
    ``time.monotonic()`` time) or odd body means "not said here"."""
    root = base_url.rstrip("/")
    root = root[: -len("/v1")] if root.endswith("/v1") else root
    props = _get_json(root + "/props", deadline)
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    found = _tokens(settings.get("n_ctx") if isinstance(settings, dict) else None)
    if found is not None:
        return found, f"{root}/props default_generation_settings.n_ctx"
    slots = _get_json(root + "/slots", deadline)
    first = slots[0] if isinstance(slots, list) and slots else None
    found = _tokens(first.get("n_ctx") if isinstance(first, dict) else None)
    if found is not None:
        return found, f"{root}/slots n_ctx"
    catalog = _get_json(base_url.rstrip("/") + "/models", deadline)
    entries = catalog.get("data") if isinstance(catalog, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("id") == model:
            found = _tokens(entry.get("max_model_len"))
            if found is not None:
                return found, f"{base_url.rstrip('/')}/models max_model_len"
    return None


def _get_json(url: str, deadline: float | None) -> Any:
    """The JSON body of a 200 answer to ``GET url`` (at most :data:`PROBE_MAX_BYTES`, the
    whole answer within :data:`PROBE_TIMEOUT_S` and before ``deadline``), or None."""
    limit = PROBE_TIMEOUT_S
    if deadline is not None:
        limit = min(limit, deadline - time.monotonic())
    body, why = get_json(url, limit_s=limit, max_bytes=PROBE_MAX_BYTES)
    if why is not None:
        log.info("%s: %s; context window not read there", url, why)
    return body


def _tokens(value: Any) -> int | None:
    """A plausible window size, or None (a missing, boolean or absurd value)."""
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and MIN_CONTEXT_TOKENS <= value <= MAX_CONTEXT_TOKENS
    ):
        return value
    return None
