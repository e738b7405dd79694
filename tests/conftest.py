"""Fixtures several test modules share."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run: a suite that passes once passes on CI's
# fresh clone too. Set HYPOTHESIS_PROFILE=explore to search new examples locally.
settings.register_profile("fixed", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))

FAKE_MODEL_PRICES = {"prompt": 1e-6, "completion": 2e-6}
"""USD per token of ``fake-model``."""


@pytest.fixture
def models_file(tmp_path: Path) -> Path:
    """A models.json whose only model, and default, is ``fake-model`` on an OpenRouter-style
    backend at :data:`FAKE_MODEL_PRICES` (what the evaluation CLI tests run against)."""
    path = tmp_path / "models.json"
    path.write_text(
        json.dumps(
            {
                "default_model": "fake-model",
                "models": [
                    {"id": "fake-model", "backend": "openrouter", "pricing": FAKE_MODEL_PRICES}
                ],
            }
        )
    )
    return path
