"""Turn a finished loop into report.json (for programs) and report.md (for people).

:func:`build_report` returns a JSON-ready :class:`~orchestrator.records.report.RunReport`, built
here from typed parts, one module each: the outcome in words (:mod:`._outcome`), the sections
read off the graph (:mod:`._graph`), the calls, totals, limits and timing (:mod:`._accounting`).
:func:`write_report` writes it as report.json
and, drawn by :func:`orchestrator.report.markdown.render_markdown`, as report.md, and by
:func:`orchestrator.report.html.render_report_html` as report.html.
Field meanings are documented in docs/orchestrator.md. Unknown quantities (cost, tokens) are
None, never 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from corpus.evidence import Evidence
from orchestrator.loop import LoopResult
from orchestrator.records import CorpusPart, InterruptPart, Retrieval, RunLimits, RunReport
from orchestrator.reply import prompts
from orchestrator.report._accounting import accounting_part, set_wall_clock, timing, totals
from orchestrator.report._graph import assessment_part, givens
from orchestrator.report._outcome import BackendFailure, outcome_part, plain_answer, stop_part
from orchestrator.report.html import render_report_html
from orchestrator.report.markdown import render_markdown

if TYPE_CHECKING:
    from orchestrator.loop import CorpusRun

__all__ = [
    "REPORT_VERSION",
    "BackendFailure",
    "build_report",
    "plain_answer",
    "set_wall_clock",
    "totals",
    "write_report",
]

REPORT_VERSION = 2


def build_report(
    result: LoopResult,
    *,
    wall_s: float,
    trace_file: str | None = None,
    context: dict[str, Any] | None = None,
    limits: RunLimits,
    corpus: CorpusRun | None = None,
    backend_failure: BackendFailure | None = None,
) -> RunReport:
    """The report for ``result``; ``wall_s`` is the run's wall clock so far (the caller
    may refresh ``timing`` after rendering); ``context`` (e.g. base URL, task file) is copied
    into ``report["context"]``. ``limits`` (the run's bounds, see
    :func:`orchestrator.api.run_task`) is copied into ``report["limits"]``, with the count of
    calls cut off at ``max_tokens`` added.

    ``corpus`` (a corpus run, whose last round's loop is ``result``): calls, totals, budget,
    compliance and model wait cover every round and the rewrite; the settings are the run's
    own; the rounds' refusal (``insufficient_evidence`` for lack of support) replaces the last
    loop's; every given gains the file, page, chunk and offsets of the span it cites;
    ``report["retrieval"]`` tells the rounds. ``backend_failure``: the report refuses with
    ``backend_failed`` and ``limits.backend_failure`` says why and what to do."""
    nodes = {node["id"]: node for node in result.graph["nodes"]}
    config = corpus.config if corpus is not None else result.config
    return {
        "report_version": REPORT_VERSION,
        **outcome_part(result, corpus, backend_failure),
        **stop_part(result),
        **assessment_part(result, nodes),
        "verifications": result.verifications,
        "hops": result.hops,
        "leave_out": result.leave_out,
        "rounds": result.rounds,
        "runs": result.runs,
        "givens": givens(result, nodes, corpus),
        "citations": result.citations,
        "rejected_citations": [c for c in result.citations if not c["ok"]],
        "attacks": result.attacks,
        "evidence_spans": len(result.evidence.spans),
        "merges": result.merges,
        "contradictions_created": result.contradictions_created,
        **accounting_part(result, corpus, limits, backend_failure),
        "prompt_versions": prompts.prompt_versions(result.config.prompt_layout),
        "model": result.model,
        "config": config.to_dict(),
        "context": dict(context or {}),
        "timing": timing(result, wall_s, corpus),
        "graph": result.graph,
        "trace_file": trace_file,
        **_corpus_part(corpus),
        **InterruptPart(),  # a finished run's report has no ``interrupted``
    }


def _corpus_part(corpus: CorpusRun | None) -> CorpusPart:
    """report.json ``retrieval``, a corpus run's only: the index, the rewrite, each round and
    how the rounds ended."""
    if corpus is None:
        return {}
    retrieval: Retrieval = {
        "index": corpus.index,
        "rewrite": corpus.rewrite,
        "rounds": corpus.rounds,
        "end": corpus.end,
        "last_refusal_reason": corpus.result.refusal_reason,
        "chunks_shown": list(corpus.evidence.labels),
        "context_tokens": corpus.config.context_tokens,
    }
    if corpus.hyde is not None:
        retrieval["hyde"] = corpus.hyde
    return {"retrieval": retrieval}


def write_report(
    report: RunReport, out_dir: Path, evidence: Evidence | None = None
) -> tuple[Path, Path]:
    """Write ``report.json``, ``report.md`` and ``report.html`` into ``out_dir`` (created if
    needed); ``evidence``, the run's documents, lets report.html show them whole."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "report.json"
    md_path = out_dir / "report.md"
    json_path.write_text(json.dumps(report, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    md_path.write_text(render_markdown(report), encoding="utf-8")
    html = render_report_html(report, evidence)
    (out_dir / "report.html").write_text(html, encoding="utf-8")
    return json_path, md_path
