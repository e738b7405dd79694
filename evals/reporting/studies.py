"""The study tables: item flips between two runs, what each arm answered across runs, and
one row per replayed setting of the replay study."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evals.compare import ArmFlips
from evals.metrics import abstention_metrics
from evals.results import ArmRows, ResultRow
from evals.score import ABSTAINED, CORRECT, WRONG, row_outcome

ANSWER_HEADER = (
    "| run | arm | items | correct answers | answered (coverage) | acc. on answered "
    "| abstained | unanswerable: abstained / answered | net score |\n"
    "|---|---:|---:|---:|---:|---:|---:|---|---:|"
)
STUDY_HEADER = (
    "| set | setting | items | arm 1 right/wrong/abst. | arm 6 right/wrong/abst. "
    "| arm 7 right/wrong/abst. | calls unavailable |\n"
    "|---|---|---:|---|---|---|---:|"
)


def render_flips(flipped: Mapping[int, ArmFlips], name_a: str, name_b: str) -> str:
    """Markdown for `evals.compare.compare`: per arm, the items that flipped."""
    lines = [f"# Item flips: {name_a} -> {name_b}", ""]
    for arm, entry in flipped.items():
        lines.append(f"## Arm {arm}: {len(entry.flipped)} of {entry.items} items flipped")
        lines.append("")
        if entry.flipped:
            lines += [
                "| item | before | after | before: why | after: why |",
                "|---|---|---|---|---|",
            ]
            for f in entry.flipped:
                lines.append(
                    f"| {f.id} | {f.before} | {f.after} | {f.why_before} | {f.why_after} |"
                )
            lines.append("")
    return "\n".join(lines)


@dataclass(frozen=True)
class Arm6Details:
    """What arm 6's reports say about a run: refusal reasons, interrogation runs by parse
    outcome, and givens by why they were rejected (accepted ones counted apart)."""

    refusals: Counter[str | None]
    outcomes: Counter[str]
    givens: Counter[str]


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def answer_row(label: str, arm: int, rows: Sequence[ResultRow]) -> str:
    """One line of the answer table: an arm's answers, abstentions and net score."""
    m = abstention_metrics(rows)
    return (
        f"| {label} | {arm} | {m['items']} | {m['correct_answers']} "
        f"| {m['answered']} ({_ratio(m['coverage'])}) | {_ratio(m['accuracy_answered'])} "
        f"| {m['abstained']} | {m['correct_abstentions']} / {m['wrong_on_unanswerable']} "
        f"| {m['net_score']:+d} |"
    )


def arm6_note(label: str, details: Arm6Details) -> str:
    """The line under the answer table that says why a run's arm 6 refused."""
    return (
        f"- {label}, arm 6: refusals {dict(details.refusals)}; interrogation runs "
        f"{dict(details.outcomes)}; givens {dict(details.givens)}"
    )


def render_answer_table(rows: Sequence[str], notes: Sequence[str]) -> str:
    """The answer table (lines from `answer_row`), a blank line, then the arm 6 notes."""
    return "\n".join([ANSWER_HEADER, *rows, "", "\n".join(notes)])


def tally(rows: ArmRows) -> str:
    """``right / wrong / abstained`` over an arm's rows (an abstention on an unanswerable
    item is right)."""
    counts: Counter[str] = Counter()
    for row in rows.values():
        outcome = row_outcome(row)
        if outcome == ABSTAINED and row.get("answerable") is False:
            outcome = CORRECT
        counts[outcome] += 1
    return f"{counts[CORRECT]} / {counts[WRONG]} / {counts[ABSTAINED]}"


def study_cells(arms: Mapping[int, ArmRows], unavailable: int) -> str:
    """The cells of a replay-study row after its set and setting: items, the tallies of
    arms 1, 6 and 7, and the calls the banks could not answer."""
    tallies = " | ".join(tally(arms.get(arm, {})) for arm in (1, 6, 7))
    return f"{len(arms.get(6, {}))} | {tallies} | {unavailable}"


def comparison_lines(checked: str, baseline: str, found: Mapping[str, Any]) -> list[str]:
    """A :func:`evals.goal.baseline_comparison` as plain lines: each side's right / wrong /
    other, then the paired differences, ``checked`` minus ``baseline``, in right answers per
    wrong one and in right and wrong answers per 100 items, each with its interval."""
    width = max(len(checked), len(baseline)) + 1
    lines = [
        f"{checked + ':':<{width}} {_outcomes(found['arm6'])}",
        f"{baseline + ':':<{width}} {_outcomes(found['baseline'])}",
        f"right per wrong, {checked} minus {baseline}: {_gap(found['ratio'])}",
        f"right answers per 100 items, {checked} minus {baseline}: {_gap(found['right'], 100)}",
        f"wrong answers per 100 items, {checked} minus {baseline}: {_gap(found['wrong'], 100)}",
    ]
    return lines


def _outcomes(side: Mapping[str, int]) -> str:
    return f"{side['right']} right / {side['wrong']} wrong / {side['other']} other"


def _gap(part: Mapping[str, float | None], scale: float = 1.0) -> str:
    """``value [low, high]`` scaled and signed, or ``undefined``."""
    value, low, high = part["value"], part["low"], part["high"]
    if value is None or low is None or high is None:
        return "undefined"
    return f"{value * scale:+.2f} [{low * scale:+.2f}, {high * scale:+.2f}]"
