"""report.json / report.md rendering and the Mermaid diagram."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from canned_runs import (
    CONTRADICTING,
    MALFORMED,
    PARAPHRASE,
    RACK7_TASK,
    SALVAGEABLE,
    WRONG_TEXT,
    Script,
    six_runs,
    verdict,
)

from graph_server import mermaid
from orchestrator.api import RunConfig, run_task
from orchestrator.llm.testing import ScriptedClient
from orchestrator.records.report import RunReport
from orchestrator.report.build import totals, write_report
from orchestrator.report.markdown import render_markdown

MIXED = six_runs(r2=PARAPHRASE, r3=MALFORMED, r4=SALVAGEABLE, r5=CONTRADICTING)

NODE_LINE = re.compile(r'^    (n\d+)(\[\("|\["|>"|\{\{")([^"]*)("\)\]|"\]|"\}\})$')
EDGE_LINE = re.compile(r"^    (n\d+) (-->|-\.->|--x) (n\d+)$")


def report_for(script: Script, *, cost: float | None = 0.001, tmp: Path | None = None) -> RunReport:
    client = ScriptedClient(script, cost_per_call=cost)
    return run_task(RACK7_TASK, client=client, model="scripted", config=RunConfig(), out_dir=tmp)


def mermaid_block(markdown: str) -> str:
    match = re.search(r"```mermaid\n(.*?)\n```", markdown, re.DOTALL)
    assert match, "report.md has no mermaid block"
    return match.group(1)


def check_flowchart(chart: str) -> tuple[set[str], int]:
    """Structural validity: every line is a known statement; edges and classes use defined
    node aliases; linkStyle indices exist. Returns (node aliases, edge count)."""
    lines = chart.splitlines()
    assert lines[0] == "flowchart TD"
    aliases: set[str] = set()
    edges = 0
    for line in lines[1:]:
        if node := NODE_LINE.match(line):
            assert node.group(1) not in aliases
            aliases.add(node.group(1))
        elif edge := EDGE_LINE.match(line):
            assert {edge.group(1), edge.group(3)} <= aliases
            edges += 1
        elif line.startswith("    classDef "):
            assert re.match(r"^    classDef \w+ [\w:#\-,. ]+$", line)
        elif line.startswith("    class "):
            members, _ = line.removeprefix("    class ").split(" ")
            assert set(members.split(",")) <= aliases
        elif line.startswith("    linkStyle "):
            indices = line.split(" ")[5].split(",")
            assert all(0 <= int(i) < edges for i in indices)
        else:
            assert line.startswith("    %% "), f"unexpected Mermaid line: {line!r}"
    return aliases, edges


def test_report_json_holds_answer_candidates_evidence_costs_and_graph(tmp_path: Path) -> None:
    report = report_for(Script(MIXED), tmp=tmp_path)
    on_disk = json.loads((tmp_path / "report.json").read_text())
    assert on_disk == json.loads(json.dumps(report))
    for key in (
        "answer",
        "refused",
        "refusal_reason",
        "statement",
        "stop_reason",
        "chosen",
        "candidates",
        "surviving_claims",
        "killed",
        "remaining_disputes",
        "verifications",
        "runs",
        "calls",
        "totals",
        "budget",
        "schema_compliance",
        "prompt_versions",
        "config",
        "timing",
        "graph",
        "trace_file",
    ):
        assert key in report, key
    chosen = report["chosen"]
    weak = "weak support: 1 independent line of evidence, below k=2"
    assert report["headline"] == f"Answer ({weak}): yes"
    assert chosen["answer"] == report["answer"] == "yes"
    assert chosen["claim"] == report["conclusion"]
    # GOOD lists its reasons jointly: one argument, though two node-disjoint paths reach it.
    assert chosen["width"] == len(chosen["arguments"]) == 1
    assert chosen["path_width"] == len(chosen["paths"]) == 2
    assert all(set(step) == {"id", "claim"} for step in chosen["arguments"][0])
    first_path = chosen["paths"][0]
    assert all(set(step) == {"id", "claim"} and step["claim"] for step in first_path)
    assert first_path[-1]["id"] == chosen["node_id"]
    assert {c["node_id"] for c in report["candidates"]} == {"answer:yes", "answer:no"}
    assert all(k["reason"] for k in report["killed"])
    call = report["calls"][0]
    for field in ("role", "model", "prompt_tokens", "cost_usd", "latency_s", "parse_outcome"):
        assert field in call
    assert report["totals"]["calls"] == len(report["calls"])
    assert report["totals"]["cost_usd"] == pytest.approx(0.001 * len(report["calls"]))
    assert report["prompt_versions"]["interrogation"].startswith("interrogation/")
    assert report["timing"]["wall_s"] >= report["timing"]["model_wait_s"] >= 0
    assert {n["id"] for n in report["graph"]["nodes"]} >= {"answer:yes", "r5:X"}
    assert [g["span"] for g in report["givens"]] == ["D1.2", "D2.1", "D3.1"]
    assert all(g["text"] == g["claim"] and g["document"] for g in report["givens"])
    assert [c["reason"] for c in report["rejected_citations"]] == ["quote_mismatch"]
    assert report["contradictions_created"][0]["pair"] == ["answer:no", "answer:yes"]
    assert any(m["at"].startswith("ingest r") for m in report["merges"])


def test_unknown_cost_stays_unknown_instead_of_zero() -> None:
    report = report_for(Script(MIXED), cost=None)
    t = report["totals"]
    assert t["cost_usd"] is None
    assert t["cost_usd_known"] == 0.0 and t["calls_cost_unknown"] == t["calls"]


def test_totals_separate_logical_calls_from_http_attempts() -> None:
    # Partial call records: only the fields totals reads.
    calls: Any = [
        {
            "role": "interrogation",
            "ok": True,
            "attempts": 3,
            "prompt_tokens": 10,
            "completion_tokens": None,
            "cost_usd": 0.5,
            "cost_source": "usage",
            "latency_s": 1.0,
        },
        {
            "role": "verification",
            "ok": False,
            "attempts": 1,
            "prompt_tokens": None,
            "completion_tokens": None,
            "cost_usd": 0.0,
            "cost_source": "error_response",
            "latency_s": 0.5,
        },
    ]
    t = totals(calls, budget_calls=5)
    assert (t["calls"], t["http_attempts"], t["retries"]) == (2, 4, 2)
    assert t["prompt_tokens"] == 10  # the failed call was an error answer: no tokens
    assert t["completion_tokens"] is None and t["completion_tokens_known"] == 0
    assert t["cost_usd"] == 0.5


def test_markdown_shows_answer_evidence_and_a_valid_mermaid_graph(tmp_path: Path) -> None:
    report = report_for(Script(MIXED), tmp=tmp_path)
    markdown = (tmp_path / "report.md").read_text()
    assert markdown == render_markdown(report)
    assert report["answer"] is not None
    assert "## Answer" in markdown and report["answer"] in markdown
    assert "## Independent lines of evidence for the answer" in markdown
    assert "refuted by 2 of 3" in markdown
    chart = mermaid_block(markdown)
    aliases, edges = check_flowchart(chart)
    assert len(aliases) == len(report["graph"]["nodes"]) and edges == len(report["graph"]["edges"])
    assert re.search(r"^    class [n\d,]+ refuted$", chart, re.MULTILINE)
    assert re.search(r"^    class n\d+ chosen$", chart, re.MULTILINE)
    assert "--x" in chart and "linkStyle" in chart


def test_refusal_markdown_leads_with_the_refusal_and_its_reason() -> None:
    report = report_for(Script({f"r{i}": MALFORMED for i in range(1, 7)}))
    markdown = render_markdown(report)
    assert "## Refused: `all_runs_failed`" in markdown
    assert "does not support a reliable answer" in markdown
    assert "```mermaid" not in markdown  # no graph to draw
    assert "No run produced a candidate answer." in markdown


def test_labels_escape_quotes_brackets_and_markup() -> None:
    label = mermaid.escape_label('He said "yes" [D1] {x} <b>|#;')
    assert '"' not in label and "[" not in label and "<" not in label and "|" not in label
    assert "#quot;yes#quot;" in label and "#91;D1#93;" in label
    assert mermaid.escape_label("word " * 50).endswith("…")
    assert len(mermaid.escape_label("word " * 50)) == mermaid.LABEL_CHARS


def test_hostile_claim_text_still_gives_a_valid_diagram() -> None:
    # Partial graph data (no graph_id): only what flowchart reads.
    graph: Any = {
        "nodes": [
            _node("a", 'x"]\n--> evil[("', "given"),
            _node("b", "```mermaid\nclassDef", "conclusion"),
        ],
        "edges": [_edge("a", "b", "supports")],
    }
    chart = mermaid.flowchart(
        graph, chosen="b", candidates=["b"], surviving=["a", "b"], disputed=[]
    )
    assert check_flowchart(chart) == ({"n0", "n1"}, 1)
    assert "```" not in chart


def test_big_graphs_are_cut_to_the_most_informative_nodes() -> None:
    nodes = [_node(f"g{i:03}", f"fact number {i}", "given") for i in range(200)]
    nodes.append(_node("z", "the answer", "conclusion"))
    nodes.append({**_node("bad", "a refuted claim", "inference"), "refuted": True})
    edges = [_edge(f"g{i:03}", "z", "supports") for i in range(200)]
    graph: Any = {"nodes": nodes, "edges": edges}  # partial graph data, as above
    chart = mermaid.flowchart(
        graph,
        chosen="z",
        candidates=["z"],
        surviving=[n["id"] for n in nodes],
        disputed=["g150"],
        priority=["g199"],
    )
    aliases, edge_count = check_flowchart(chart)
    assert len(aliases) == mermaid.DEFAULT_MAX_NODES
    for kept in ("the answer", "fact number 199", "fact number 150", "a refuted claim"):
        assert kept in chart
    assert "%% 142 of 202 nodes" in chart
    assert edge_count == mermaid.DEFAULT_MAX_NODES - 2  # edges whose ends were both kept


def test_write_report_creates_the_folder_and_both_files(tmp_path: Path) -> None:
    report = report_for(Script(MIXED))
    json_path, md_path = write_report(report, tmp_path / "deep" / "out")
    assert json.loads(json_path.read_text())["answer"] == report["answer"]
    text = md_path.read_text()
    assert text.startswith("# Answer (weak support: 1 independent line of evidence, below k=2)")
    assert "**Expected answer:**" in text and "## Evidence cited" in text
    assert "quote_mismatch" in text and "## Merges, contradictions and attacks" in text


def _node(node_id: str, claim: str, node_type: str) -> dict[str, Any]:
    return {
        "id": node_id,
        "claim": claim,
        "type": node_type,
        "confidence": 0.9,
        "run_ids": ["r1"],
        "refuted": False,
        "refute_reason": None,
        "aliases": [],
        "merged_ids": [],
    }


def _edge(src: str, dst: str, relation: str) -> dict[str, Any]:
    return {"src": src, "dst": dst, "relation": relation, "confidence": 0.8, "run_ids": ["r1"]}


CLOCK_KEYS = {"timing", "latency_s", "wait_s", "latency_s_sum", "started_at"}


def without_clock(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_clock(v) for k, v in value.items() if k not in CLOCK_KEYS}
    if isinstance(value, list):
        return [without_clock(v) for v in value]
    return value


def by_claim(claim: str, nth: int) -> str:
    """Votes that depend on the claim only, not on which thread asked first."""
    return verdict("refuted" if any(t in claim for t in WRONG_TEXT) else "supported")


def test_reports_are_identical_across_runs_apart_from_clock_readings() -> None:
    first = report_for(Script(MIXED, votes=by_claim))
    second = report_for(Script(MIXED, votes=by_claim))
    assert first["killed"] and first["verifications"]
    assert without_clock(first) == without_clock(second)
    assert (
        render_markdown(first).split("## Argument graph")[1].split("## Verifications")[0]
        == (render_markdown(second).split("## Argument graph")[1].split("## Verifications")[0])
    )


def test_markdown_shows_arrows_as_written_and_never_passes_raw_html_through() -> None:
    report = report_for(Script(six_runs()))
    report["stop_detail"] = "edge n1->n4 dropped <script>alert(1)</script>"
    report["runs"][0]["errors"] = ["edge n1->n4 dropped", "> not a quote"]
    markdown = render_markdown(report)
    assert "&gt;" not in markdown and "&lt;" not in markdown
    assert "edge n1->n4 dropped \\<script>alert(1)\\</script>" in markdown
    assert re.search(r"(?<!\\)<", markdown.split("```mermaid")[0]) is None
    assert "| edge n1->n4 dropped; > not a quote |" in markdown


def test_markdown_lists_the_limits_and_says_when_the_time_budget_ran_out() -> None:
    report = report_for(Script(six_runs()))
    report["limits"].update(
        {
            "budget_seconds": 60.0,
            "deadline_reached": True,
            "calls_not_made_for_time": 4,
            "http": {"timeout_s_per_attempt": 120.0, "max_retries": 3, "default_max_tokens": 4096},
        }
    )
    markdown = render_markdown(report)
    assert (
        "- Limits: wall-clock budget 60 s; max_tokens interrogation 2048, repair 2048, "
        "verification 512; 120 s per HTTP attempt, 3 retries at most" in markdown
    )
    assert "**The wall-clock budget ran out**: 4 call(s) were not made" in markdown
