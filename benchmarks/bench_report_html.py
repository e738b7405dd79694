"""report.html at 500 nodes: the build time in Python and the load time in headless Chromium.

Run ``python benchmarks/bench_report_html.py`` (``--nodes``, ``--edges``, ``--repeat``). The
report is the scripted rack-7 report with its graph replaced by a layered synthetic one
(``synthetic.argument_graph``: 500 claims, 1,000 links, a quarter of them givens citing 25
documents of 5 sentences, 1% refuted), the answer's three node-disjoint arguments, and six
refused links. Prints the median of ``--repeat`` builds (:func:`render_report_html`) and of
as many page loads in one Chromium: from ``Page.navigate`` until the page's script has run
and two animation frames have been drawn (so layout and paint of the whole SVG are in it),
measured in the page (``performance.now()``, from navigation start) and from Python.
Needs Debian's ``chromium``; without it only the build time is printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from browser import Browser, find_chromium  # noqa: E402
from report_pages import rack7  # noqa: E402
from synthetic import argument_graph  # noqa: E402

from corpus.evidence import build_evidence  # noqa: E402
from orchestrator.report.html import render_report_html  # noqa: E402

REASONS = ("look_alike", "no_bridge", "off_subject")
PAINTED = (
    "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => "
    "done(document.body.dataset.ready === 'yes' ? performance.now() : -1))))"
)


def big_report(nodes: int, edges: int, out: Path) -> tuple[dict[str, Any], Any]:
    """The scripted rack-7 report with a synthetic graph of ``nodes`` claims, and its
    documents."""
    report = json.loads(rack7(out).read_text(encoding="utf-8"))
    synthetic = argument_graph(nodes, edges, seed=1)
    documents = [
        " ".join(f"Document {d} states fact {s} about rack {d * 10 + s}." for s in range(1, 6))
        for d in range(1, 26)
    ]
    evidence = build_evidence(documents)
    spans = [span.id for span in evidence.spans]
    graph_nodes = []
    for index, node in enumerate(synthetic.nodes):
        refuted = index % 100 == 7
        given = node["type"] == "given"
        graph_nodes.append(
            {
                **node,
                "refuted": refuted,
                "refute_reason": "refuted by 2 of 3 verification calls" if refuted else None,
                "aliases": [],
                "merged_ids": [],
                "source": spans[index % len(spans)] if given else None,
            }
        )
    graph_edges = [{**edge, "run_ids": ["r1"]} for edge in synthetic.edges]
    drawn = nx.DiGraph()
    drawn.add_edges_from((e["src"], e["dst"]) for e in graph_edges if e["relation"] != "attacks")
    givens = [n["id"] for n in graph_nodes if n["type"] == "given" and n["id"] in drawn]
    drawn.add_edges_from(("source", g) for g in givens)
    # Below about 100 nodes the random links may leave the answer unsupported: no arguments.
    drawn.add_nodes_from(("source", "n0"))
    reached = nx.has_path(drawn, "source", "n0")
    paths = list(nx.node_disjoint_paths(drawn, "source", "n0"))[:3] if reached else []
    arguments = [[{"id": n, "claim": ""} for n in path[1:-1]] for path in paths]
    into_answer = [e for e in graph_edges if e["dst"] == "n0"][:6]
    report["graph"] = {"graph_id": "task", "nodes": graph_nodes, "edges": graph_edges}
    report["chosen"] = {**report["chosen"], "node_id": "n0", "arguments": arguments}
    report["candidates"] = [
        {
            **report["candidates"][0],
            "node_id": "n0",
            "width": len(arguments),
            "failed_links": [
                {"src": e["src"], "dst": "n0", "reason": REASONS[i % 3], "detail": "synthetic"}
                for i, e in enumerate(into_answer)
            ],
            "set_aside": [],
        }
    ]
    report["surviving_claims"] = [
        {"id": n["id"], "claim": n["claim"]} for n in graph_nodes if not n["refuted"]
    ]
    report["killed"] = [
        {"id": n["id"], "claim": n["claim"], "reason": n["refute_reason"]}
        for n in graph_nodes
        if n["refuted"]
    ]
    return report, evidence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--edges", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-html-") as folder:
        out = Path(folder)
        report, evidence = big_report(args.nodes, args.edges, out / "run")
        builds = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            html = render_report_html(report, evidence)  # type: ignore[arg-type]
            builds.append(time.perf_counter() - start)
        page = out / "big.html"
        page.write_text(html, encoding="utf-8")
        print(
            f"report.html of {args.nodes} nodes, {len(report['graph']['edges'])} edges: "
            f"{len(html.encode()) / 1e6:.2f} MB, built in {statistics.median(builds):.3f} s "
            f"(median of {args.repeat}, Python)"
        )
        chromium = find_chromium()
        if chromium is None:
            print("no chromium: load time not measured (apt-get install chromium)")
            return
        in_page, outside = [], []
        with Browser(chromium) as browser:
            for _ in range(args.repeat):
                start = time.perf_counter()
                tab = browser.open(page.as_uri())
                painted = tab.evaluate(PAINTED)
                outside.append(time.perf_counter() - start)
                if painted < 0 or tab.problems:
                    raise SystemExit(f"the page did not get ready: {tab.problems}")
                in_page.append(painted / 1000)
                tab.close()
        print(
            f"headless Chromium, navigation start to ready and painted: "
            f"{statistics.median(in_page):.3f} s in the page, "
            f"{statistics.median(outside):.3f} s from Python including opening the tab "
            f"(median of {args.repeat})"
        )


if __name__ == "__main__":
    main()
