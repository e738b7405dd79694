"""``python -m graph_server.demo`` explains the fixture's checks in words; --json keeps the raw."""

from __future__ import annotations

import json

import pytest

from graph_server.demo import main, run_demo


def test_the_demo_explains_each_check_in_words_with_its_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main([])
    text = capsys.readouterr().out
    for check in ("check_structure", "support_width", "critical_links", "surviving_claims"):
        assert check in text
    assert "2 independent lines of support, A -> C -> E -> Z; D -> Z" in text
    assert "the width drops from 2 to 1" in text
    assert not text.lstrip().startswith("{")


def test_the_demo_prints_every_raw_answer_with_json(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--json"])
    raw = {name: step.model_dump(mode="json", by_alias=True) for name, step in run_demo().items()}
    assert json.loads(capsys.readouterr().out) == raw
