"""Turn a finished loop into report.json (for programs) and report.md (for people).

:func:`build_report` returns a JSON-ready :class:`~orchestrator.records.report.RunReport`, built
here from typed parts; :func:`write_report` writes it as report.json
and, drawn by :func:`orchestrator.report.markdown.render_markdown`, as report.md, and by
:func:`orchestrator.report.html.render_report_html` as report.html.
Field meanings are documented in docs/orchestrator.md. Unknown quantities (cost, tokens) are
None, never 0.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from corpus.evidence import Evidence
from orchestrator.checks import Candidate
from orchestrator.loop import LoopResult
from orchestrator.records import (
    AccountingPart,
    CallRecord,
    CandidateRecord,
    ChosenRecord,
    ClaimRef,
    CorpusPart,
    Disputes,
    FailurePart,
    GivenRecord,
    InterruptPart,
    Limits,
    RefusalReason,
    Retrieval,
    RunLimits,
    RunReport,
    StopPart,
    Timing,
    Totals,
)
from orchestrator.reply import prompts
from orchestrator.report.html import render_report_html
from orchestrator.report.markdown import render_markdown

if TYPE_CHECKING:
    from orchestrator.loop import CorpusRun

REPORT_VERSION = 2
BUDGET_COUNTS = (
    "logical calls (interrogations, repairs, verifications); HTTP retries inside a call are "
    "counted apart as http_attempts and do not count against the cap"
)
_NO_ANSWER = "The available evidence does not support a reliable answer."

Nodes = dict[str, dict[str, Any]]
"""The graph's nodes by id."""
Claim = Callable[[str], ClaimRef]
"""A node id -> the id with its claim."""
TokenField = Literal["prompt_tokens", "completion_tokens"]


@dataclass(frozen=True)
class BackendFailure:
    """No reply the run's outcome rests on arrived: why (``reason``) and what to do (``fix``).
    The report then refuses with ``backend_failed`` (see :func:`orchestrator.api.run_task`)."""

    reason: str
    fix: str

    def statement(self) -> str:
        statement = (
            f"No answer: the model backend failed, so the evidence was never judged "
            f"({self.reason}). Fix: {self.fix}."
        )
        return " ".join(statement.split())


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
    assessment = result.assessment
    claim = _claims(nodes)
    candidates = [
        _candidate(rank, c, result, claim) for rank, c in enumerate(assessment.candidates, 1)
    ]
    chosen = result.chosen
    config = corpus.config if corpus is not None else result.config
    headline, refusal_reason, statement = _outcome(result, corpus, backend_failure)
    givens = _givens(result, nodes)
    if corpus is not None:
        for given in givens:
            given["citation"] = corpus.citation(given["span"])
    return {
        "report_version": REPORT_VERSION,
        "headline": headline,
        "question": result.task.question,
        "expected_answer": result.task.expected_answer,
        "answer": plain_answer(chosen.answer) if chosen else None,
        "conclusion": chosen.claim if chosen else None,
        "refused": chosen is None,
        "refusal_reason": refusal_reason,
        "statement": statement,
        **_stop(result),
        "chosen": _chosen(result, candidates),
        "candidates": candidates,
        "surviving_claims": [claim(n) for n in assessment.labels["surviving"]],
        "labels": {key: assessment.labels[key] for key in ("in", "out", "undecided")},
        "killed": [
            {"id": n, "claim": node["claim"], "reason": node["refute_reason"]}
            for n, node in sorted(nodes.items())
            if node["refuted"]
        ],
        "remaining_disputes": _remaining_disputes(result, nodes, claim),
        "verifications": result.verifications,
        "hops": result.hops,
        "leave_out": result.leave_out,
        "rounds": result.rounds,
        "runs": result.runs,
        "givens": givens,
        "citations": result.citations,
        "rejected_citations": [c for c in result.citations if not c["ok"]],
        "attacks": result.attacks,
        "evidence_spans": len(result.evidence.spans),
        "merges": result.merges,
        "contradictions_created": result.contradictions_created,
        **_accounting(result, corpus, limits, backend_failure),
        "prompt_versions": dict(prompts.PROMPT_VERSIONS),
        "model": result.model,
        "config": config.to_dict(),
        "context": dict(context or {}),
        "timing": _timing(
            result, wall_s, corpus.model_wait_s() if corpus is not None else result.model_wait_s
        ),
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


def _outcome(
    result: LoopResult, corpus: CorpusRun | None, failure: BackendFailure | None
) -> tuple[str, str | None, str]:
    """``(headline, refusal_reason, statement)``: the loop's, unless the corpus rounds ended
    in another refusal, unless the backend failed."""
    headline, reason, statement = _headline(result), result.refusal_reason, _statement(result)
    if corpus is not None and corpus.refusal_reason != reason:
        reason = corpus.refusal_reason
        headline = f"Refused: {reason}"
        statement = corpus.refusal_statement()
    if failure is not None:
        reason = RefusalReason.BACKEND_FAILED
        headline = f"Failed: {RefusalReason.BACKEND_FAILED} (no model call returned a reply)"
        statement = failure.statement()
    return headline, reason, statement


def _accounting(
    result: LoopResult,
    corpus: CorpusRun | None,
    limits: RunLimits,
    failure: BackendFailure | None,
) -> AccountingPart:
    """report.json ``calls``, ``totals``, ``budget``, ``limits`` and ``schema_compliance``:
    the loop's, or for a corpus run every round's and the rewrite's."""
    config = corpus.config if corpus is not None else result.config
    calls = corpus.calls if corpus is not None else result.calls
    used = corpus.budget_used if corpus is not None else result.budget_used
    return {
        "calls": calls,
        "totals": totals(calls, config.budget_calls),
        "budget": {
            "limit": config.budget_calls,
            "used": used,
            "unused": config.budget_calls - used,
            "counts": BUDGET_COUNTS,
        },
        "limits": _limits(limits, calls, failure),
        "schema_compliance": (
            corpus.schema_compliance() if corpus is not None else result.compliance
        ),
    }


def _limits(
    limits: RunLimits, calls: Sequence[CallRecord], failure: BackendFailure | None
) -> Limits:
    """report.json ``limits``: the run's bounds, the calls cut at ``max_tokens``, and the
    backend failure when there was one."""
    failed: FailurePart = (
        {"backend_failure": {"reason": failure.reason, "fix": failure.fix}}
        if failure is not None
        else {}
    )
    return {
        **limits,
        "calls_cut_at_max_tokens": sum(1 for call in calls if call["finish_reason"] == "length"),
        **failed,
    }


def _remaining_disputes(result: LoopResult, nodes: Nodes, claim: Claim) -> Disputes:
    """The disputes the loop left: contradiction pairs, single-run load-bearing claims (and
    whether each was verified), and the disputed claims never verified."""
    assessment = result.assessment
    verified = set(result.interrogated)
    return {
        "contradiction_pairs": [[claim(a), claim(b)] for a, b in assessment.contradiction_pairs],
        "isolated_load_bearing": [
            {**item, "claim": nodes[item["id"]]["claim"], "verified": item["id"] in verified}
            for item in assessment.isolated
        ],
        "unverified": [n for n in assessment.disputed if n not in verified],
    }


def _timing(result: LoopResult, wall_s: float, model_wait_s: float) -> Timing:
    """report.json ``timing``: wall clock, model wait, overhead, phases, local seconds."""
    return {
        "started_at": result.started_at,
        "wall_s": round(wall_s, 6),
        "model_wait_s": model_wait_s,
        "overhead_s": round(max(0.0, wall_s - model_wait_s), 6),
        "phases": result.phases,
        "local_s": dict(result.local_s),
    }


def set_wall_clock(report: RunReport, wall_s: float) -> None:
    """Refresh ``timing.wall_s`` and ``timing.overhead_s`` once the whole run is over."""
    timing = report["timing"]
    timing["wall_s"] = round(wall_s, 6)
    timing["overhead_s"] = round(max(0.0, wall_s - timing["model_wait_s"]), 6)


def totals(calls: Sequence[CallRecord], budget_calls: int) -> Totals:
    """Sums over the per-call records.

    ``calls`` is what the budget caps; ``http_attempts`` includes retries. Token and cost
    totals are None when any call's figure is unknown (the ``*_known`` fields hold the known
    part). A failed call whose every attempt got an error answer (``cost_source ==
    "error_response"``) used no tokens; any other failed call's tokens are unknown.
    """
    by_role: dict[str, int] = {}
    for call in calls:
        by_role[call["role"]] = by_role.get(call["role"], 0) + 1
    prompt, prompt_known = _token_sums(calls, "prompt_tokens")
    completion, completion_known = _token_sums(calls, "completion_tokens")
    costs = [call["cost_usd"] for call in calls]
    # Rounded to 1e-12 USD only to hide float summation noise (0.1 + 0.2).
    known_cost = round(sum(c for c in costs if c is not None), 12)
    attempts = sum(int(call["attempts"]) for call in calls)
    return {
        "calls": len(calls),
        "calls_by_role": dict(sorted(by_role.items())),
        "failed_calls": sum(1 for call in calls if not call["ok"]),
        "budget_calls": budget_calls,
        "http_attempts": attempts,
        "retries": attempts - len(calls),
        "prompt_tokens": prompt,
        "prompt_tokens_known": prompt_known,
        "completion_tokens": completion,
        "completion_tokens_known": completion_known,
        "cost_usd": known_cost if None not in costs else None,
        "cost_usd_known": known_cost,
        "calls_cost_unknown": sum(1 for c in costs if c is None),
        "latency_s_sum": round(sum(call["latency_s"] for call in calls), 6),
    }


def _token_sums(calls: Sequence[CallRecord], field: TokenField) -> tuple[int | None, int]:
    """``(sum or None when any call's figure is unknown, sum of the known figures)``."""
    known = [_tokens(call, field) for call in calls]
    part = sum(t for t in known if t is not None)
    return (part if None not in known else None), part


def _tokens(call: CallRecord, field: TokenField) -> int | None:
    if call["ok"]:
        value = call[field]
        return int(value) if value is not None else None
    return 0 if call["cost_source"] == "error_response" else None


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


# ----------------------------------------------------------------------------- assembly


def _claims(nodes: Nodes) -> Claim:
    def claim(node_id: str) -> ClaimRef:
        node = nodes.get(node_id)
        return {"id": node_id, "claim": node["claim"] if node else ""}

    return claim


def _candidate(rank: int, c: Candidate, result: LoopResult, claim: Claim) -> CandidateRecord:
    info = result.answers.get(c.node_id)
    return {
        "rank": rank,
        "node_id": c.node_id,
        "answer": c.answer,
        "answer_key": c.answer_key,
        "claim": c.claim,
        "flags": list(c.flags),
        "failed_links": [link.to_dict() for link in c.failed_links],
        "answers_by_run": info["answers"] if info else [],
        "grounded": c.grounded,
        "refuted": c.refuted,
        "surviving": c.surviving,
        "width": c.width,
        "path_width": c.path_width,
        "max_flow": c.max_flow,
        "run_support": c.run_support,
        "run_ids": list(c.run_ids),
        "meets_k": c.grounded and c.width >= result.config.k,
        "arguments": [[claim(n) for n in argument] for argument in c.arguments],
        "argument_cut": list(c.argument_cut),
        "set_aside": [
            {"claims": [claim(n) for n in claims], "reason": reason}
            for claims, reason in c.set_aside
        ],
        "arguments_capped": c.arguments_capped,
        "paths": [[claim(n) for n in path] for path in c.paths],
        "structure": result.structure.get(c.node_id),
    }


def _chosen(result: LoopResult, candidates: list[CandidateRecord]) -> ChosenRecord:
    """The answer's support; on refusal the same keys with no answer and width 0."""
    if result.chosen is None:
        return {
            "node_id": None,
            "answer": None,
            "claim": None,
            "width": 0,
            "path_width": 0,
            "max_flow": 0.0,
            "run_support": 0,
            "meets_k": False,
            "arguments": [],
            "argument_cut": [],
            "arguments_capped": False,
            "paths": [],
            "min_cut_nodes": [],
            "bridge_edges": [],
        }
    entry = next(c for c in candidates if c["node_id"] == result.chosen.node_id)
    links = result.critical_links or {}
    return {
        "node_id": entry["node_id"],
        "answer": entry["answer"],
        "claim": entry["claim"],
        "width": entry["width"],
        "path_width": entry["path_width"],
        "max_flow": entry["max_flow"],
        "run_support": entry["run_support"],
        "meets_k": entry["meets_k"],
        "arguments": entry["arguments"],
        "argument_cut": entry["argument_cut"],
        "arguments_capped": entry["arguments_capped"],
        "paths": entry["paths"],
        "min_cut_nodes": links.get("min_cut_nodes", []),
        "bridge_edges": links.get("bridge_edges", []),
    }


def _headline(result: LoopResult) -> str:
    """The outcome in plain words: ``Answer: yes``, ``Answer (weak support: ...): yes`` when
    the width is below k, or ``Refused: <reason>``. A reader who sees only this line must not
    take a one-line argument for a well-supported one."""
    chosen = result.chosen
    if chosen is None:
        return f"Refused: {result.refusal_reason}"
    k = result.config.k
    if chosen.width < k:
        lines = "line" if chosen.width == 1 else "lines"
        caveat = f"weak support: {chosen.width} independent {lines} of evidence, below k={k}"
        return f"Answer ({caveat}): {plain_answer(chosen.answer)}"
    return f"Answer: {plain_answer(chosen.answer)}"


_RULE_LINE = re.compile(r"[=\-*_~#]{3,}")
_LINE_MARKER = re.compile(r"^(?:#{1,6}|>|[-*+])\s+")
_TRAILING_RULE = re.compile(r"\s+[=\-~#]{3,}$")
_EMPHASIS = re.compile(r"\*\*|__|\*|`")


def plain_answer(answer: str | None) -> str | None:
    """A model's short answer without Markdown: heading marks and their ``====`` underline,
    rules, quote and list markers, bold, italics and code ticks. Models echo a document's
    title with its underline ("Git 2.29 Release Notes ====="); the words are the answer."""
    if answer is None:
        return None
    kept = []
    for line in answer.splitlines():
        line = line.strip()
        if _RULE_LINE.fullmatch(line):
            continue
        kept.append(_EMPHASIS.sub("", _LINE_MARKER.sub("", line)))
    text = _TRAILING_RULE.sub("", " ".join(" ".join(kept).split()))
    return text or answer.strip()


def _stop(result: LoopResult) -> StopPart:
    """Why the loop ended. A task without evidence never ran a model, so the loop's generic
    "no run produced a usable graph" would read as if runs had failed: it is said plainly."""
    if result.refusal_reason == RefusalReason.NO_EVIDENCE:
        return {"stop_reason": "no_evidence", "stop_detail": "the task has no evidence"}
    return {"stop_reason": result.stop_reason, "stop_detail": result.stop_detail}


def _givens(result: LoopResult, nodes: Nodes) -> list[GivenRecord]:
    """Every given in the graph with the span it stands for (all givens are span nodes)."""
    out: list[GivenRecord] = []
    for node_id, node in sorted(nodes.items()):
        if node["type"] != "given":
            continue
        span = result.evidence.get(node.get("source"))
        out.append(
            {
                "id": node_id,
                "span": span.id if span else None,
                "document": span.document if span else None,
                "sentence": span.sentence if span else None,
                "text": span.text if span else None,
                "claim": node["claim"],
                "run_ids": node["run_ids"],
                "refuted": node["refuted"],
            }
        )
    return out


def _statement(result: LoopResult) -> str:
    chosen = result.chosen
    if chosen is not None:
        k = result.config.k
        lines = "line" if chosen.width == 1 else "lines"
        target = "meets" if chosen.width >= k else "is below"
        claim = chosen.claim if chosen.claim.endswith((".", "!", "?")) else chosen.claim + "."
        return (
            f"Answer: {plain_answer(chosen.answer)}. Conclusion: {claim} It rests on "
            f"{chosen.width} independent {lines} of evidence (argument width {chosen.width}, "
            f"which {target} the target k={k}), reached by {chosen.run_support} of "
            f"{result.config.n} interrogations."
        )
    reason = result.refusal_reason
    if reason == RefusalReason.ALL_RUNS_FAILED:
        failed = sum(1 for run in result.runs if not run["ingested"])
        why = f"None of the {failed} interrogations produced a usable argument graph."
    elif reason == RefusalReason.TIED:
        first, second = result.assessment.candidates[:2]
        why = (
            f"The two best-supported answers ({first.claim!r} and {second.claim!r}) are tied on "
            f"argument width ({first.width}), flow and the number of runs behind them."
        )
    elif reason == RefusalReason.NO_GROUNDED:
        # The runs answered but argued badly: say that, not that the documents lack the
        # answer (on rack-7 the 0.5B's six "yes" runs cited only sentences that never name x9).
        return _no_argument(result)
    elif reason == RefusalReason.BELOW_K:
        top = result.assessment.top
        width = top.width if top is not None else 0
        why = (
            f"The best-supported answer rests on {width} independent line(s) of evidence, "
            f"below the required k={result.config.k} (--require-k)."
        )
    elif reason == RefusalReason.NO_EVIDENCE:
        why = "The task has no evidence to reason from, so no model call was made."
    elif reason == RefusalReason.UNANSWERABLE:
        why = (
            "No argument carries an answer, and at least half the interrogations found that "
            "the evidence does not decide the question."
        )
    else:
        why = f"Refusal reason: {reason}."
    return f"{_NO_ANSWER} {why}"


def _no_argument(result: LoopResult) -> str:
    """The statement of a ``no_grounded_conclusion`` refusal: no run's argument carries an
    answer, with the candidates' flags and the links the chain check refused, by kind."""
    candidates = result.assessment.candidates
    flagged = sorted({f for c in candidates for f in c.flags})
    failed = Counter(link.reason for c in candidates for link in c.failed_links)
    parts = [
        "No answer: no run drew an argument that carries one. No candidate answer is connected "
        "to a surviving, cited document sentence through unrefuted reasoning that reaches the "
        "question's subject"
    ]
    if failed:
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(failed.items()))
        parts.append(f"; links that did not count: {kinds}")
    if flagged:
        parts.append(f"; candidate flags: {', '.join(flagged)}")
    return "".join(parts) + "."
