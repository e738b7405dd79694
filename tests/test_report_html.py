"""report.html without a browser: what the page holds, its escaping, its bytes, its layout.

The browser-side behaviour (clicks, console, requests) is in test_report_html_browser.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from canned_runs import RACK7_TASK
from report_pages import rack7, refusal

from graph_server.html_view import Page, render_page
from graph_server.layout import layered
from graph_server.svg_graph import ARGUMENT_COLOURS, esc
from orchestrator.report.html import CITED_ONLY, evidence_from_task_file, render_report_html

HOSTILE = (
    '</script><script>alert(1)</script><img src=x onerror="alert(2)">'
    "\"' onclick='alert(3)' <!-- ]]> {{x}} &amp; \u2028 \ud800"
)


class Elements(HTMLParser):
    """Every start tag and its attributes, and the text of every script."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def parsed(text: str) -> Elements:
    elements = Elements()
    elements.feed(text)
    return elements


@pytest.fixture(scope="module")
def rack7_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rack7(tmp_path_factory.mktemp("rack7"))


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_run_writes_report_html_with_its_whole_documents_beside_report_json(
    rack7_json: Path,
) -> None:
    page = (rack7_json.parent / "report.html").read_text(encoding="utf-8")
    # D4.1 (the facilities note) is cited by no run: only the whole documents hold it.
    assert "rack 7 has no spare power capacity this quarter" in page
    assert CITED_ONLY not in page
    assert page.startswith("<!DOCTYPE html>")


def test_the_same_report_gives_the_same_bytes_and_the_page_names_no_address(
    rack7_json: Path,
) -> None:
    report = load(rack7_json)
    first = render_report_html(report)
    assert first == render_report_html(json.loads(json.dumps(report)))
    assert "<!-- " not in first and "http://" not in first.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )


def test_a_page_from_report_json_alone_shows_the_cited_sentences_and_says_so(
    rack7_json: Path,
) -> None:
    report = load(rack7_json)
    page = render_report_html(report)
    assert CITED_ONLY in page
    for given in report["givens"]:
        assert f'<b class="span">{given["span"]}</b> {given["text"]}' in page
    assert "no spare power capacity" not in page


def test_the_task_file_gives_the_whole_documents_only_while_it_still_matches(
    rack7_json: Path, tmp_path: Path
) -> None:
    report = load(rack7_json)
    (tmp_path / "task.json").write_text(json.dumps(RACK7_TASK), encoding="utf-8")
    report["context"] = {"task_file": "task.json"}
    evidence = evidence_from_task_file(report, tmp_path)
    assert evidence is not None and len(evidence.spans) == 7
    edited = {**RACK7_TASK, "documents": ["Something else entirely."] * 4}
    (tmp_path / "task.json").write_text(json.dumps(edited), encoding="utf-8")
    assert evidence_from_task_file(report, tmp_path) is None


def test_hostile_claims_ids_and_spans_are_escaped_everywhere(rack7_json: Path) -> None:
    report = load(rack7_json)
    for node in report["graph"]["nodes"]:
        node["claim"] = HOSTILE
        node["refute_reason"] = HOSTILE
    report["graph"]["nodes"][0]["id"] = HOSTILE
    report["headline"] = report["statement"] = report["question"] = HOSTILE
    report["calls"][0]["subject"] = HOSTILE
    page = render_report_html(report)
    elements = parsed(page)
    tags = {tag for tag, _ in elements.tags}
    assert not tags & {"img", "iframe", "object", "embed", "link", "base", "form"}
    assert sum(1 for tag, _ in elements.tags if tag == "script") == 2
    handlers = [name for _, attrs in elements.tags for name, _ in attrs if name.startswith("on")]
    assert handlers == []
    data = next(s for s in elements.scripts if s.startswith("{"))
    assert "<" not in data and json.loads(data)["nodes"][0]["claim"] == HOSTILE
    page.encode("utf-8")  # a lone surrogate does not make the page unwritable


def test_the_policy_lets_only_the_page_s_own_script_and_style_run(rack7_json: Path) -> None:
    page = (rack7_json.parent / "report.html").read_text(encoding="utf-8")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    script = parsed(page).scripts[-1]
    style = page.split("<style>", 1)[1].split("</style>", 1)[0]

    def digest(text: str) -> str:
        return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert f"script-src 'sha256-{digest(script)}'" in policy.group(1)
    assert f"style-src 'sha256-{digest(style)}'" in policy.group(1)
    assert policy.group(1).startswith("default-src 'none'")


def test_two_arguments_are_ringed_and_drawn_in_two_colours() -> None:
    graph: Any = {  # partial GraphData (no graph_id): what the page draws
        "nodes": [
            {"id": i, "claim": i, "type": t, "run_ids": ["r1"], "confidence": 0.9, "source": None}
            for i, t in [("a", "given"), ("b", "given"), ("c", "inference"), ("z", "conclusion")]
        ],
        "edges": [
            {"src": s, "dst": d, "relation": "supports", "confidence": 0.9, "run_ids": ["r1"]}
            for s, d in [("a", "c"), ("c", "z"), ("b", "z")]
        ],
    }
    page = render_page(
        Page(
            title="t",
            headline="h",
            statement="s",
            graph=graph,
            states={"z": "chosen"},
            answer="z",
            arguments=[["a", "c"], ["b"]],
        )
    )
    first, second = ARGUMENT_COLOURS[:2]
    assert page.count(f'class="ring" x="-4" y="-4" width="240" height="66" rx="10" '
                      f'stroke="{first}"') == 2  # fmt: skip
    assert page.count(f'stroke="{second}"') == 2  # b's ring and its line to z
    assert page.count('<g class="edge ') == 3
    assert page.count(f'stroke="{first}" marker-end') == 2  # a -> c -> z


def test_the_refusal_page_names_the_refused_link_and_why(tmp_path: Path) -> None:
    report = load(refusal(tmp_path))
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    link = report["candidates"][0]["failed_links"][0]
    assert '<text class="why"' in page and ">look_alike</text>" in page
    assert esc(link["detail"]) in page


def test_every_support_points_right_and_answers_stand_in_the_last_column() -> None:
    edges = [("a", "b", "supports"), ("b", "c", "supports"), ("a", "z", "supports"),
             ("c", "z", "assumes"), ("y", "c", "attacks")]  # fmt: skip
    place = layered(["z", "c", "b", "a", "y"], edges, last=["z", "y"])
    for src, dst, relation in edges:
        if relation != "attacks":
            assert place.column[src] < place.column[dst]
    assert place.column["z"] == place.column["y"] == place.columns - 1
    assert place == layered(["a", "b", "c", "y", "z"], list(reversed(edges)), last=["y", "z"])


def test_a_cycle_of_supports_still_gets_a_layout() -> None:
    place = layered(["a", "b", "c"], [("a", "b", "supports"), ("b", "c", "supports"),
                                      ("c", "a", "supports")])  # fmt: skip
    assert sorted(place.column.values()) == [0, 1, 2]
    assert place.rows == 1


def test_barycentre_ordering_uncrosses_two_parallel_chains() -> None:
    # Sorted by id the second column would read x2, y2 against y1, x1: one crossing.
    edges = [("b1", "x2", "supports"), ("a1", "y2", "supports")]
    place = layered(["a1", "b1", "x2", "y2"], edges)
    assert place.row["a1"] < place.row["b1"]
    assert place.row["y2"] < place.row["x2"]
