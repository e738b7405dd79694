"""summary.html beside summary.md: per-arm bars with intervals, risk-coverage, width, items."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from test_evals_run import ARM6_FLAGS, run_cli, serve

from evals.results import run_arms
from evals.summary import summarize
from evals.summary_html import render_summary_html, wilson


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.hrefs += [value or "" for name, value in attrs if name == "href"]


@pytest.fixture
def run_dir(tmp_path: Path, models_file: Path) -> Path:
    out = tmp_path / "run"
    with serve() as server:
        code = run_cli(
            server, models_file, out, "--dataset", "multihop", "--limit", "3", *ARM6_FLAGS
        )
    assert code == 0
    return out


def test_an_eval_run_writes_summary_html_with_every_arm_and_item_linked_to_its_report(
    run_dir: Path,
) -> None:
    page = (run_dir / "summary.html").read_text(encoding="utf-8")
    for arm in range(1, 8):
        assert f">arm {arm} " in page
    parser = Links()
    parser.feed(page)
    reports = [href for href in parser.hrefs if href.endswith("report.html")]
    assert reports == [f"arm6/multihop-000{i}/report.html" for i in range(3)]
    assert all((run_dir / href).is_file() for href in reports)
    assert "script" not in parser.tags and "img" not in parser.tags
    assert "Risk against coverage" in page and "Arm 6 accuracy by support width" in page
    assert page == render_summary_html(summarize(run_dir), run_arms(run_dir), run_dir)


def test_question_text_is_escaped(run_dir: Path) -> None:
    arms = run_arms(run_dir)
    first = next(iter(arms[1]))
    arms[1][first]["question"] = "<script>alert(1)</script>"
    page = render_summary_html(summarize(run_dir), arms, run_dir)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_wilson_interval_is_the_textbook_one() -> None:
    low, high = wilson(8, 10) or (0.0, 0.0)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert wilson(0, 0) is None
    expected: Any = (pytest.approx(0.5655, abs=1e-4), 1.0)  # approx compares as a float
    assert wilson(5, 5) == expected
