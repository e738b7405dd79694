"""report.html in a real browser: headless Chromium driven over its DevTools protocol.

For the rack-7 fixture report, a refusal and a corpus-mode report (tests/report_pages.py):
the page loads without a console error, shows every node of report.json, reveals a given's
cited sentence when the node is clicked (and the node when its sentence's link is), writes
each refused link's reason on it, and sends no request anywhere. Skipped when no Chromium is
installed (Debian: ``apt-get install chromium``), except under .ci/run, which installs it and
sets ``LOGIC_GRAPH_REQUIRE_CHROMIUM=1``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import Browser, Tab, find_chromium
from report_pages import REPORTS

from orchestrator.report.html import render_report_html

CHROMIUM = find_chromium()
REQUIRED = os.environ.get("LOGIC_GRAPH_REQUIRE_CHROMIUM") == "1"
"""Set by .ci/run, which installs Chromium: there a missing browser is a failure, not a skip."""
pytestmark = pytest.mark.skipif(
    CHROMIUM is None and not REQUIRED, reason="needs Chromium (Debian: apt-get install chromium)"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None, "LOGIC_GRAPH_REQUIRE_CHROMIUM=1 but no chromium on the PATH"
    with Browser(CHROMIUM) as running:
        yield running


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {name: run(tmp_path_factory.mktemp(name)) for name, run in REPORTS.items()}


def open_report(browser: Browser, report_json: Path) -> tuple[dict[str, Any], Tab]:
    report = json.loads(report_json.read_text(encoding="utf-8"))
    tab = browser.open((report_json.parent / "report.html").as_uri())
    assert tab.evaluate("document.body.dataset.ready") == "yes"
    return report, tab


def inspector_text(tab: Tab) -> str:
    return str(tab.evaluate("document.getElementById('inspector').innerText"))


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_the_page_shows_every_node_without_an_error_or_a_request(
    browser: Browser, reports: dict[str, Path], name: str
) -> None:
    report, tab = open_report(browser, reports[name])
    drawn = tab.evaluate(
        "[...document.querySelectorAll('g.node')]"
        ".filter(g => g.getBBox().width > 0).map(g => g.dataset.id)"
    )
    assert sorted(drawn) == sorted(node["id"] for node in report["graph"]["nodes"])
    assert report["graph"]["nodes"], "a page with no node would test nothing"
    assert tab.problems == []
    assert tab.requests == [(reports[name].parent / "report.html").as_uri()]


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_clicking_a_given_reveals_the_sentence_it_cites_and_its_link_leads_back(
    browser: Browser, reports: dict[str, Path], name: str
) -> None:
    report, tab = open_report(browser, reports[name])
    givens = [g for g in report["givens"] if g["span"] is not None]
    assert givens
    for given in givens:
        number = tab.evaluate(
            f"[...document.querySelectorAll('g.node')]"
            f".find(g => g.dataset.id === {json.dumps(given['id'])}).dataset.i"
        )
        tab.click(f"#n{number}")
        assert given["claim"] in inspector_text(tab)
        if given.get("citation"):  # a corpus run says which file, page and chunk
            assert given["citation"]["citation"] in inspector_text(tab)
        assert (
            tab.evaluate("document.querySelector('#inspector blockquote').textContent")
            == (given["text"])
        )
        marked = tab.evaluate("document.querySelector('.sent.current').textContent")
        assert given["text"] in marked and given["span"] in marked
        tab.click("#fit")  # deselects nothing, but proves the toolbar is live
        tab.evaluate("document.querySelector('.sent.current a.to-node').scrollIntoView()")
        tab.click(".sent.current a.to-node")
        assert tab.evaluate("document.querySelector('.node.selected').dataset.id") == given["id"]
    assert tab.problems == []
    assert len(tab.requests) == 1


def test_a_refused_link_carries_its_reason_on_the_graph_and_in_its_table(
    browser: Browser, reports: dict[str, Path]
) -> None:
    report, tab = open_report(browser, reports["refusal"])
    [link] = report["candidates"][0]["failed_links"]
    assert link["reason"] == "look_alike"
    on_graph = tab.evaluate(
        "[...document.querySelectorAll('.edge.rel-refused')].map(e => "
        "[e.querySelector('.why').textContent, e.querySelector('title').textContent])"
    )
    assert on_graph == [["look_alike", f"{link['src']} refused {link['dst']}: look_alike "
                         f"({link['detail']})"]]  # fmt: skip
    table = str(tab.evaluate("document.getElementById('sec-refused').innerText"))
    assert "look_alike" in table and link["detail"] in table
    assert report["refused"] and report["headline"] in str(tab.evaluate("document.title"))


def test_hostile_claims_are_shown_as_text_and_run_nothing(
    browser: Browser, reports: dict[str, Path], tmp_path: Path
) -> None:
    report = json.loads(reports["rack7"].read_text(encoding="utf-8"))
    hostile = (
        '</script><script>window.pwned = 1</script><img src="http://127.0.0.1:9/x" '
        'onerror="window.pwned = 2">" onmouseover=\'window.pwned = 3\' <!--'
    )
    report["graph"]["nodes"][0]["claim"] = hostile
    report["headline"] = hostile
    (tmp_path / "report.html").write_text(render_report_html(report), encoding="utf-8")
    tab = browser.open((tmp_path / "report.html").as_uri())
    assert tab.evaluate("document.body.dataset.ready") == "yes"
    assert tab.evaluate("typeof window.pwned") == "undefined"
    assert tab.evaluate("document.querySelectorAll('img, iframe, object').length") == 0
    assert tab.evaluate("document.querySelector('h1').textContent") == hostile
    number = tab.evaluate(
        f"[...document.querySelectorAll('g.node')]"
        f".find(g => g.dataset.id === {json.dumps(report['graph']['nodes'][0]['id'])}).dataset.i"
    )
    tab.click(f"#n{number}")
    assert tab.evaluate("document.querySelector('#inspector .claim').textContent") == hostile
    assert tab.problems == []
    assert tab.requests == [(tmp_path / "report.html").as_uri()]


def test_an_answer_of_width_two_is_drawn_as_two_roads_in_two_colours(
    browser: Browser, reports: dict[str, Path]
) -> None:
    report, tab = open_report(browser, reports["two_lines"])
    arguments = report["chosen"]["arguments"]
    assert report["chosen"]["width"] == len(arguments) == 2
    ringed = []
    for argument in arguments:
        colours = tab.evaluate(
            "(ids => [...new Set([...document.querySelectorAll('g.node')]"
            ".filter(g => ids.includes(g.dataset.id))"
            ".map(g => g.querySelector('.ring').getAttribute('stroke')))])"
            f"({json.dumps([step['id'] for step in argument])})"
        )
        assert len(colours) == 1, colours  # every claim of one argument in one colour
        ringed += colours
    assert len(set(ringed)) == 2
    lines = tab.evaluate(
        "[...new Set([...document.querySelectorAll('.edge path[stroke]')]"
        ".map(p => getComputedStyle(p).stroke))].length"
    )
    assert lines == 2
    assert tab.problems == []
