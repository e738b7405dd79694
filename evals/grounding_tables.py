"""The grounding screen's tables: per model and per category, as Markdown.

Pure functions over :class:`evals.grounding.ModelSummary`; like :mod:`evals.grounding` they
import nothing else from the project, so ``screen.py`` can use them without reaching the
evaluation harness.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from evals.grounding import CATEGORIES, PROMPT_VERSION, ModelSummary


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def _rate(num: int, den: int) -> str:
    return "n/a" if den == 0 else f"{num / den:.2f} ({num}/{den})"


def usd(value: float) -> str:
    """Dollars to the micro-dollar, as the screen prints them."""
    return f"${value:.6f}"


def _total_cost(s: ModelSummary) -> str:
    if s.cost_usd is not None:
        return usd(s.cost_usd)
    return f"unknown (>= {usd(s.cost_usd_known)}; {s.calls_cost_unknown} calls unpriced)"


def _cost_per_grounded(s: ModelSummary) -> str:
    if s.counts.get("grounded", 0) == 0:
        return "n/a (none grounded)"
    per = s.cost_per_grounded
    return "unknown" if per is None else usd(per)


def summary_table(summaries: Sequence[ModelSummary]) -> str:
    """The per-model markdown table (also what is printed)."""
    lines = [
        "| model | graded | grounded | memorized | abstain | other | leak rate "
        "| correct abstention | total cost | cost / grounded |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        cells = [
            s.model,
            f"{s.graded}/{s.items}",
            _pct(s.pct("grounded")),
            _pct(s.pct("memorized")),
            _pct(s.pct("abstain")),
            _pct(s.pct("other")),
            _rate(s.leaks, s.unanswerable),
            _rate(s.correct_abstentions, s.unanswerable),
            _total_cost(s),
            _cost_per_grounded(s),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def category_table(summaries: Sequence[ModelSummary]) -> str:
    """Per category, the share of graded items with the expected behaviour (grounded for
    answerable categories, abstain for unanswerable), and the memorized share beside it."""
    header = " | ".join(f"{c} (expected / memorized)" for c in CATEGORIES)
    lines = [f"| model | {header} |", "|---|" + "---|" * len(CATEGORIES)]
    for s in summaries:
        cells = [s.model]
        for cat in CATEGORIES:
            counts = s.by_category.get(cat, {})
            total = sum(counts.values())
            good = counts.get("abstain" if cat == "unanswerable" else "grounded", 0)
            leaked = counts.get("memorized", 0)
            cells.append("n/a" if total == 0 else f"{good}/{total} / {leaked}/{total}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary_markdown(
    summaries: Sequence[ModelSummary], *, items_path: Path, n_items: int, results_path: Path
) -> str:
    return (
        "# Grounding screen summary\n\n"
        f"Generated {_now()} from `{results_path}` over {n_items} items of `{items_path}` "
        f"(prompt {PROMPT_VERSION}, temperature 0, one call per item per model).\n\n"
        f"{summary_table(summaries)}\n\n"
        "Percentages are over graded items. Leak rate: unanswerable items answered with the "
        "world-knowledge value; correct abstention: unanswerable items where the model "
        "abstained. Total cost covers every recorded call for these items, failed ones "
        "included; it is unknown when any call's cost is.\n\n"
        "## By category\n\n"
        f"{category_table(summaries)}\n"
    )
