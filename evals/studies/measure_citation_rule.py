"""Measure the citation check's containment rule on givens that a real model wrote.

Where the data comes from: every ``report.json`` under ``RUN_DIR/arm6/<item>/`` of an
``evals.run`` results folder, and the item's documents from the data set. A report of version
2 lists each given with the span it cited (``citations``); an older report only has the
merged graph, so its givens (claims and aliases of ``given`` nodes) are paired with the span
they match best.

For every claim, the *intended* span is the cited one (v2) or the best-matching one (v1); the
*wrong* spans are the item's other sentences that the claim's names and numbers also fit, i.e.
exactly the citations the number and name rules cannot catch and containment must. For each
candidate threshold the script prints how many intended citations pass (want: all) and how
many wrong ones pass (want: none), for token containment (the rule in
:mod:`orchestrator.citation`) and for rapidfuzz's ``partial_ratio`` as the alternative.

    python -m evals.studies.measure_citation_rule evals/results/<runstamp> --dataset multihop
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from corpus.evidence import Evidence, Span, build_evidence
from evals.datasets.loaders import load_items
from evals.options import REPO
from graph_server.citation import (
    QUOTE_MISMATCH,
    check_citation,
    containment,
)
from graph_server.similarity import CITATION_MARKER, claim_key, normalize

CONTAINMENT_THRESHOLDS = (0.5, 0.6, 0.67, 0.75, 0.8, 0.9, 1.0)
PARTIAL_RATIO_THRESHOLDS = (60, 70, 80, 90)


def fits_names_and_numbers(claim: str, span: Span, evidence: Evidence) -> bool:
    """Whether the citation check's number and name rules let ``claim`` cite ``span``."""
    check = check_citation(claim, span.id, evidence, min_containment=0.0)
    return check.reason in (None, QUOTE_MISMATCH)


def score(claim: str, span: Span) -> tuple[float, float]:
    """(token containment, partial_ratio) of ``claim`` against ``span``."""
    said, quoted = claim_key(claim), claim_key(span.text)
    return containment(said.content, quoted.content), fuzz.partial_ratio(
        normalize(claim), normalize(span.text)
    )


def claims_of(report: dict[str, Any], evidence: Evidence) -> list[tuple[str, Span]]:
    """(claim, intended span) pairs from one report."""
    pairs: list[tuple[str, Span]] = []
    if report.get("report_version", 1) >= 2:
        for citation in report.get("citations", []):
            span = evidence.get(citation.get("source"))
            if span is not None:
                pairs.append((CITATION_MARKER.sub(" ", citation["claim"]), span))
        return pairs
    for node in report["graph"]["nodes"]:
        if node["type"] != "given":
            continue
        for claim in [node["claim"], *node.get("aliases", [])]:
            text = CITATION_MARKER.sub(" ", claim)
            best = max(evidence.spans, key=lambda s: score(text, s)[0], default=None)
            if best is not None:
                pairs.append((text, best))
    return pairs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="evals results folder(s)")
    parser.add_argument("--dataset", default="multihop", help="shipped set name or file path")
    args = parser.parse_args()
    shipped = REPO / "evals" / "datasets" / f"{args.dataset}.jsonl"
    path = shipped if shipped.is_file() else Path(args.dataset)
    items = {str(item["id"]): item for item in load_items(path)}
    intended: list[tuple[float, float]] = []
    wrong: list[tuple[float, float]] = []
    for run in args.runs:
        for path in sorted(run.glob("arm6/*/report.json")):
            item = items.get(path.parent.name)
            if item is None:
                continue
            evidence = build_evidence(item["documents"] or [item["question"]])
            report = json.loads(path.read_text())
            for claim, span in claims_of(report, evidence):
                if not fits_names_and_numbers(claim, span, evidence):
                    continue
                intended.append(score(claim, span))
                wrong += [
                    score(claim, other)
                    for other in evidence.spans
                    if other.id != span.id
                    and other.text != span.text
                    and fits_names_and_numbers(claim, other, evidence)
                ]
    print(f"{len(intended)} model-written givens whose names and numbers fit their span; ")
    print(f"{len(wrong)} wrong spans that the same names and numbers also fit\n")
    print("| rule | threshold | intended spans passing | wrong spans passing |")
    print("|---|---:|---:|---:|")
    for position, thresholds, label in (
        (0, CONTAINMENT_THRESHOLDS, "token containment"),
        (1, PARTIAL_RATIO_THRESHOLDS, "partial_ratio"),
    ):
        for threshold in thresholds:
            ok = sum(1 for s in intended if s[position] >= threshold)
            bad = sum(1 for s in wrong if s[position] >= threshold)
            print(
                f"| {label} | {threshold:g} | {_share(ok, len(intended))} "
                f"| {_share(bad, len(wrong))} |"
            )
    return 0


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "0/0"


if __name__ == "__main__":
    raise SystemExit(main())
