"""report.html: a run's report as one page to look at (see docs/report.md).

This module only chooses what the page shows from report.json; the drawing, the escaping and
the page's behaviour are :mod:`graph_server.html_view`'s, shared with ``export_graph``.
The documents come from the run's :class:`~corpus.evidence.Evidence` when it is at hand (a
run writes its own page); report.json alone holds only the cited sentences, so a page built
from it later shows those, unless the task file it names still gives the same sentences.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from corpus.evidence import Evidence, build_evidence
from graph_server.html_view import Cell, Document, Items, NodeLink, Page, Section, Table
from graph_server.html_view import render_page as _render
from graph_server.mermaid import node_state
from graph_server.svg_graph import RefusedLink
from orchestrator.records import RunReport

CITED_ONLY = (
    "report.json holds only the cited sentences, so only they are shown; a page written by "
    "the run itself shows the whole documents."
)


def render_report_html(report: RunReport, evidence: Evidence | None = None) -> str:
    """The page for ``report``; ``evidence`` (the run's documents) shows them whole."""
    return _render(report_page(report, evidence))


def evidence_from_task_file(report: RunReport, base: Path) -> Evidence | None:
    """The documents of the task file the report names (``context.task_file``, relative to
    ``base`` if not absolute), when every cited sentence is still word for word in them."""
    name = report.get("context", {}).get("task_file")
    if not isinstance(name, str):
        return None
    path = Path(name) if Path(name).is_absolute() else base / name
    try:
        documents = json.loads(path.read_text(encoding="utf-8"))["documents"]
        evidence = build_evidence([str(d) for d in documents])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    spans = evidence.by_id
    for given in report["givens"]:
        span = spans.get(given["span"] or "")
        if given["span"] is not None and (span is None or span.text != given["text"]):
            return None
    return evidence


def report_page(report: RunReport, evidence: Evidence | None = None) -> Page:
    """What the page shows of ``report``: node states as report.md's diagram gives them, the
    chosen answer's arguments, every refused link once, then the sections."""
    chosen = report["chosen"]
    disputed = {
        c["id"] for pair in report["remaining_disputes"]["contradiction_pairs"] for c in pair
    }
    disputed |= {d["id"] for d in report["remaining_disputes"]["isolated_load_bearing"]}
    candidates = {c["node_id"] for c in report["candidates"]}
    surviving = {c["id"] for c in report["surviving_claims"]}
    states = {
        node["id"]: node_state(node, chosen["node_id"], candidates, surviving, disputed)
        for node in report["graph"]["nodes"]
    }
    refused: dict[tuple[str, str], RefusedLink] = {}
    for candidate in report["candidates"]:
        for link in candidate["failed_links"]:
            key = (link["src"], link["dst"])
            refused.setdefault(key, RefusedLink(key[0], key[1], link["reason"], link["detail"]))
    documents, note = _documents(report, evidence)
    return Page(
        title=f"{report['headline']} - {report['question']}",
        headline=report["headline"],
        statement=f"Question: {report['question']} {report['statement']}",
        graph=report["graph"],
        states=states,
        answer=chosen["node_id"],
        arguments=[[step["id"] for step in argument] for argument in chosen["arguments"]],
        refused=list(refused.values()),
        documents=documents,
        documents_note=note,
        sections=[_candidates(report), _disputes(report)],
        appendix=[_calls(report)],
        sources=_sources(report),
    )


def _sources(report: RunReport) -> dict[str, str]:
    """A corpus run's cited spans -> the file, page and chunk each comes from."""
    out: dict[str, str] = {}
    for given in report["givens"]:
        citation = given.get("citation")
        if given["span"] is not None and citation is not None:
            out[given["span"]] = citation["citation"]
    return out


def _documents(report: RunReport, evidence: Evidence | None) -> tuple[list[Document], str]:
    """The documents in order, titled by the chunk each one is in a corpus run."""
    if evidence is not None:
        rows = [(span.document, span.sentence, span.id, span.text) for span in evidence.spans]
        note = ""
    else:
        rows = sorted(
            {
                (g["document"], g["sentence"], g["span"], g["text"] or "")
                for g in report["givens"]
                if g["span"] is not None and g["document"] is not None and g["sentence"] is not None
            }
        )
        note = CITED_ONLY
    chunks = report.get("retrieval", {}).get("chunks_shown", [])
    by_document: dict[int, list[tuple[str, str]]] = {}
    for document, _, span_id, text in rows:
        by_document.setdefault(document, []).append((span_id, text))
    documents = [
        Document(
            title=f"D{number}" + (f": {chunks[number - 1]}" if 0 < number <= len(chunks) else ""),
            sentences=sentences,
        )
        for number, sentences in sorted(by_document.items())
    ]
    return documents, note


def _candidates(report: RunReport) -> Section:
    rows: list[list[Cell]] = []
    set_aside: list[list[Cell]] = []
    for c in report["candidates"]:
        rows.append(
            [
                str(c["rank"]),
                NodeLink(c["node_id"], c["answer"] or c["claim"]),
                "yes" if c["grounded"] else "no",
                ", ".join(c["flags"]) or None,
                str(c["width"]),
                str(c["run_support"]),
            ]
        )
        for item in c["set_aside"]:
            claims: list[Cell] = [f"{c['answer'] or c['node_id']}: {item['reason']}: "]
            for k, step in enumerate(item["claims"]):
                claims += [" → " if k else None, NodeLink(step["id"], step["id"])]
            set_aside.append([part for part in claims if part is not None])
    blocks: list[Any] = [
        Table(("rank", "answer", "grounded", "flags", "width", "runs"), rows)
        if rows
        else "No candidate answer."
    ]
    if set_aside:
        blocks += ["Derivations set aside (they do not count as arguments):", Items(set_aside)]
    return Section("candidates", "Candidate answers", blocks)


def _disputes(report: RunReport) -> Section:
    killed: list[list[Cell]] = [
        [NodeLink(k["id"], k["id"]), f": {k['claim']} (refuted: {k['reason'] or 'no reason'})"]
        for k in report["killed"]
    ]
    remaining = report["remaining_disputes"]
    pairs: list[list[Cell]] = [
        [NodeLink(a["id"], a["id"]), " contradicts ", NodeLink(b["id"], b["id"])]
        for a, b in remaining["contradiction_pairs"]
    ]
    isolated: list[list[Cell]] = [
        [
            NodeLink(item["id"], item["id"]),
            f": {item['claim']} (one run carries it; "
            f"{'verified' if item['verified'] else 'not verified'})",
        ]
        for item in remaining["isolated_load_bearing"]
    ]
    return Section(
        "disputes",
        "Refuted and disputed claims",
        [
            "Refuted:",
            Items(killed),
            "Contradictions left:",
            Items(pairs),
            "Load-bearing claims from a single run:",
            Items(isolated),
        ],
    )


def _calls(report: RunReport) -> Section:
    t = report["totals"]
    summary = (
        f"{t['calls']} calls of a budget of {report['budget']['limit']} "
        f"({t['http_attempts']} HTTP attempts, {t['failed_calls']} failed); tokens "
        f"{_known(t['prompt_tokens'])} in, {_known(t['completion_tokens'])} out; cost "
        f"{_cost(t['cost_usd'])} ({t['calls_cost_unknown']} call(s) of unknown cost); "
        f"model {report['model']}; stop: {report['stop_reason']} ({report['stop_detail']})."
    )
    limits = Items(
        [[f"{key}: {json.dumps(value, sort_keys=True)}"] for key, value in report["limits"].items()]
    )
    rows = [
        [
            str(i),
            c["step"],
            c["role"],
            str(c["subject"]),
            "yes" if c["ok"] else "no",
            f"{_known(c['prompt_tokens'])}/{_known(c['completion_tokens'])}",
            _cost(c["cost_usd"]),
            f"{c['latency_s']:.2f}",
            str(c["attempts"]),
            c["parse_outcome"],
        ]
        for i, c in enumerate(report["calls"], 1)
    ]
    headers = ("#", "step", "role", "subject", "ok", "tokens in/out", "cost", "latency s",
               "attempts", "parse")  # fmt: skip
    return Section(
        "calls", "Calls, cost and limits", [summary, "Limits:", limits, Table(headers, rows)]
    )


def _known(value: int | None) -> str:
    return "unknown" if value is None else str(value)


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.6f}"
