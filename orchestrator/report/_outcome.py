"""The report's outcome in words: the headline, the answer without Markdown, the statement of
an answer or a refusal, and why the loop stopped."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from orchestrator.loop import LoopResult
from orchestrator.records import OutcomePart, RefusalReason, StopPart

if TYPE_CHECKING:
    from orchestrator.loop import CorpusRun

_NO_ANSWER = "The available evidence does not support a reliable answer."


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


def outcome_part(
    result: LoopResult, corpus: CorpusRun | None, failure: BackendFailure | None
) -> OutcomePart:
    """report.json's outcome: the headline, the question, the answer or the refusal and the
    statement. The loop's refusal, unless the corpus rounds ended in another refusal, unless
    the backend failed."""
    headline, reason, statement = _headline(result), result.refusal_reason, _statement(result)
    if corpus is not None and corpus.refusal_reason != reason:
        reason = corpus.refusal_reason
        headline = f"Refused: {reason}"
        statement = corpus.refusal_statement()
    if failure is not None:
        reason = RefusalReason.BACKEND_FAILED
        headline = f"Failed: {RefusalReason.BACKEND_FAILED} (no model call returned a reply)"
        statement = failure.statement()
    chosen = result.chosen
    return {
        "headline": headline,
        "question": result.task.question,
        "expected_answer": result.task.expected_answer,
        "answer": plain_answer(chosen.answer) if chosen else None,
        "conclusion": chosen.claim if chosen else None,
        "refused": chosen is None,
        "refusal_reason": reason,
        "statement": statement,
    }


def stop_part(result: LoopResult) -> StopPart:
    """Why the loop ended. A task without evidence never ran a model, so the loop's generic
    "no run produced a usable graph" would read as if runs had failed: it is said plainly."""
    if result.refusal_reason == RefusalReason.NO_EVIDENCE:
        return {"stop_reason": "no_evidence", "stop_detail": "the task has no evidence"}
    return {"stop_reason": result.stop_reason, "stop_detail": result.stop_detail}


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
    elif reason == RefusalReason.FRAGILE and result.leave_out is not None:
        left_out = result.leave_out
        why = (
            f"The best-supported answer rests on {', '.join(left_out['hidden'])}; asked again "
            f"without those sentences, the model verified another answer "
            f"({left_out['answer']!r}), so the first hangs on those sentences alone."
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
