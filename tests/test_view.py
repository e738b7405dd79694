"""``export_graph`` html and ``logic-graph view``: pages for stored, exported and saved graphs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from canned_runs import RACK7_TASK
from report_pages import rack7
from test_export_and_state import GRAPH, SPAN, fixture_store

from graph_server.state import StateFile
from orchestrator.cli.main import main
from orchestrator.report.html import CITED_ONLY


def test_export_graph_html_draws_every_node_and_marks_the_cited_sentence() -> None:
    store = fixture_store()
    answer = store.export_graph(GRAPH, "html")
    assert answer.format == "html" and answer.graph is None
    page = answer.content
    assert page is not None
    for node in store.get_graph(GRAPH).nodes:
        assert f'data-id="{node.id}"' in page
    assert f'<span class="sent cited" id="s0"><b class="span">D1.1</b> {SPAN["text"]}' in page
    assert 'class="node st-refuted' in page
    assert page == fixture_store().export_graph(GRAPH, "html").content


def test_view_of_an_export_json_file_draws_what_the_store_itself_draws(tmp_path: Path) -> None:
    store = fixture_store()
    path = tmp_path / "rack7.json"
    path.write_text(store.export_graph(GRAPH, "json").model_dump_json(), encoding="utf-8")
    assert main(["view", str(path)]) == 0
    assert (tmp_path / "rack7.html").read_text(encoding="utf-8") == (
        store.export_graph(GRAPH, "html").content
    )


def test_view_of_a_state_file_draws_the_graph_asked_for_and_names_them_when_unsure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = fixture_store()
    store.assert_graph("other", [{"id": "a", "claim": "a lone claim", "type": "assumption"}])
    state = tmp_path / "state.json"
    StateFile(state).save(store)
    assert main(["view", str(state)]) == 1
    assert "holds 2 graphs; choose one with --graph (other, rack7)" in capsys.readouterr().err
    out = tmp_path / "page.html"
    assert main(["view", str(state), "--graph", GRAPH, "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert out.read_text(encoding="utf-8") == store.export_graph(GRAPH, "html").content


def test_view_of_report_json_and_the_task_file_it_names_gives_the_page_the_run_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report_json = rack7(tmp_path / "run")
    written_by_the_run = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    report = json.loads(report_json.read_text(encoding="utf-8"))
    assert main(["view", str(report_json), "--out", str(tmp_path / "alone.html")]) == 0
    assert CITED_ONLY in (tmp_path / "alone.html").read_text(encoding="utf-8")

    (tmp_path / "rack7.json").write_text(json.dumps(RACK7_TASK), encoding="utf-8")
    report["context"] = {"task_file": "rack7.json"}
    report_json.write_text(json.dumps(report), encoding="utf-8")
    (tmp_path / "run" / "report.html").unlink()
    monkeypatch.chdir(tmp_path)
    assert main(["view", str(report_json)]) == 0
    again = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert again == written_by_the_run


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("not json", "cannot be read as JSON"),
        ('{"hello": 1}', "neither a report.json, an export_graph json answer nor a state file"),
        ('{"report_version": 2, "graph": {"nodes": []}}', "not a report.json this version can"),
    ],
)
def test_view_refuses_a_file_it_cannot_draw_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, why: str
) -> None:
    path = tmp_path / "report.json"
    path.write_text(text, encoding="utf-8")
    assert main(["view", str(path)]) == 1
    assert why in capsys.readouterr().err
    assert not (tmp_path / "report.html").exists()


def test_a_broken_export_is_refused_by_the_store_not_drawn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exported = fixture_store().export_graph(GRAPH, "json").model_dump()
    exported["graph"]["edges"].append(
        {"src": "nowhere", "dst": "B", "relation": "supports", "confidence": 1, "run_ids": []}
    )
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(exported), encoding="utf-8")
    assert main(["view", str(path)]) == 1
    assert "does not load into a graph store" in capsys.readouterr().err
    assert not (tmp_path / "broken.html").exists()
