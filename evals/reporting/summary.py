"""summary.md: the per-arm tables, arm 6's width strata, the statistics and the goals."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from evals.metrics import G2_MARGIN_PP
from evals.reporting.cells import number, share, table, usd
from evals.reporting.statistics import render_statistics
from orchestrator.llm import is_local_model


def _cost_per_correct(m: Mapping[str, Any]) -> str:
    if m["cost_usd"] is None:
        return f"unknown (cost >= {usd(m['cost_usd_known'])})"
    if m["cost_usd"] == 0:
        return "$0 (zero-cost model)"
    if not m["correct"]:
        return "n/a (no correct answers)"
    return usd(m["cost_per_correct_usd"])


def _correct_per_usd(m: Mapping[str, Any]) -> str:
    if m["cost_usd"] is None:
        return "unknown"
    if m["cost_usd"] == 0:
        return "unbounded (zero cost)"
    return f"{m['correct_per_usd']:.1f}"


_ARM_HEADER = (
    "arm | items | correct | accuracy | cost per correct | total cost | correct per $ "
    "| mean wall clock | tokens | tokens/item | calls/item | refusals | answered acc. "
    "| errors | no ANSWER line"
)
_ABSTENTION_HEADER = (
    "arm | items | accuracy | answered (coverage) | acc. on answered | abstained "
    "| unanswerable items | correct abstentions | wrong on unanswerable | no answer "
    "| errors | net score"
)


def _arm_row(label: str, m: Mapping[str, Any]) -> tuple[object, ...]:
    total = (
        usd(m["cost_usd"])
        if m["cost_usd"] is not None
        else (f"unknown (>= {usd(m['cost_usd_known'])})")
    )
    return (
        label,
        m["items"],
        m["correct"],
        share(m["accuracy"]),
        f"**{_cost_per_correct(m)}**",
        total,
        _correct_per_usd(m),
        f"{number(m['mean_latency_s'], 2)} s",
        number(m["tokens"]),
        number(m["tokens_per_item"]),
        number(m["calls_per_item"], 1),
        f"{m['refusals']} ({share(m['refusal_rate'])})",
        share(m["accuracy_answered"]),
        m["errors"],
        m["missing_answer_line"],
    )


def _abstention_row(label: str, m: Mapping[str, Any]) -> tuple[object, ...]:
    return (
        label,
        m["items"],
        share(m["accuracy"]),
        f"{m['answered']} ({share(m['coverage'])})",
        share(m["accuracy_answered"]),
        m["abstained"],
        m["unanswerable_items"],
        m["correct_abstentions"],
        m["wrong_on_unanswerable"],
        m["no_answer"],
        m["errors"],
        f"{m['net_score']:+d}",
    )


def arm_table(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """The per-arm markdown table; `rows` are (label, metrics)."""
    return "\n".join(table(_ARM_HEADER, (_arm_row(label, m) for label, m in rows)))


def abstention_table(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """The answers / abstentions / net score markdown table; `rows` are (label, metrics)."""
    return "\n".join(table(_ABSTENTION_HEADER, (_abstention_row(label, m) for label, m in rows)))


def _spent(invocation: Mapping[str, Any], model: object) -> str:
    spent = invocation.get("spent_usd")
    if spent is not None:
        return usd(spent)
    if isinstance(model, str) and is_local_model(model):
        return "$0 (built-in local model)"
    if "finished" not in invocation:
        return "unknown (the invocation did not finish)"
    return f"unknown (>= {usd(invocation.get('spent_usd_known'))})"


def _header_lines(summary: Mapping[str, Any]) -> list[str]:
    """The run's data set, model, settings, prompts and invocations."""
    config = summary["config"]
    lines = [
        "# Evaluation summary",
        "",
        f"- dataset: `{config.get('dataset')}`; model: `{config.get('model')}`",
        f"- settings: `{json.dumps(config.get('settings', {}), sort_keys=True)}`",
        f"- prompts: `{json.dumps(config.get('prompts', {}), sort_keys=True)}`",
    ]
    for position, inv in enumerate(summary["invocations"], start=1):
        lines.append(
            f"- invocation {position}: {inv.get('started')} to "
            f"{inv.get('finished', '(unfinished)')}"
            f", {inv.get('calls', '?')} calls, spent {_spent(inv, config.get('model'))}"
            + (f"; **stopped: {inv['stopped']}**" if inv.get("stopped") else "")
        )
    return lines


def _arm_lines(summary: Mapping[str, Any]) -> list[str]:
    """The per-arm table and the answers / abstentions / net score table."""
    named = [(f"{a} {m['name']}", m) for a, m in summary["arms"].items()]
    return [
        "",
        "## Per arm",
        "",
        arm_table(named),
        "",
        "Accuracy counts refusals, missing answers and errors as wrong, except that "
        "abstaining on an unanswerable item is right; *answered acc.* is accuracy over items "
        "that got an answer. Total cost covers every call of the recorded items (calls of an "
        "item abandoned at the cost cap are in the invocation's spend, not in any arm).",
        "",
        "## Answers, abstentions and net score",
        "",
        abstention_table(named),
        "",
        "Net score: right answers minus wrong answers; an abstention scores 0, so a wrong "
        "answer is worse than an honest refusal. Any answer to an unanswerable item is wrong. "
        "A tied self-consistency vote counts as an abstention.",
        "",
    ]


def _width_lines(summary: Mapping[str, Any]) -> list[str]:
    """Arm 6 by the width of its chosen conclusion ([] without arm 6)."""
    if "arm6_width" not in summary:
        return []
    strata = summary["arm6_width"]
    arm6 = summary["arms"]["6"]
    rows = table(
        "width | items | answered | correct | accuracy (answered)",
        (
            (bucket, v["items"], v["answered"], v["correct"], share(v["accuracy_answered"]))
            for bucket, v in strata["buckets"].items()
        ),
    )
    return [
        "## Arm 6 by support width of the chosen conclusion (G4)",
        "",
        *rows,
        "",
        f"Items without a chosen conclusion: {strata['no_conclusion']}. "
        f"Refusal rate {share(arm6['refusal_rate'])}; accuracy on answered items "
        f"{share(arm6['accuracy_answered'])} vs {share(arm6['accuracy'])} over all items.",
        "",
    ]


def _replay_lines(summary: Mapping[str, Any]) -> list[str]:
    """How a replay's calls were answered ([] for a recorded run)."""
    if "replay" not in summary:
        return []
    calls = summary["replay"]["calls"]
    return [
        f"Replayed from {', '.join(summary['replay']['banks'])}: {calls['replayed']} calls "
        f"answered from the bank, {calls['live']} made live, {calls['unavailable']} "
        "unavailable (a request the bank lacks; counted as a failed call).",
        "",
    ]


def _goal_lines(summary: Mapping[str, Any]) -> list[str]:
    """The G2-G4 readings."""
    g2 = summary["goals"]["G2"]
    lines = [
        "## Goals",
        "",
        f"- **G2** (arm 6 >= +{G2_MARGIN_PP:g} pp accuracy over arms 2/3/7 at <= cost): "
        f"{g2['verdict']}; on net score (arm 6 above each): {g2['net_verdict']}",
    ]
    for other, v in g2["versus"].items():
        delta = "unknown" if v["accuracy_delta_pp"] is None else f"{v['accuracy_delta_pp']:+.1f} pp"
        lines.append(
            f"  - vs arm {other} on {v['items']} common items: accuracy {delta}; net score "
            f"{v['net_arm6']:+d} vs {v['net_other']:+d}; calls/item "
            f"{number(v['calls_arm6'], 1)} vs {number(v['calls_other'], 1)}; cost "
            f"{usd(v['cost_usd_arm6'])} vs {usd(v['cost_usd_other'])}"
        )
    lines.append(
        "- **G3** (>= 2x correct per dollar of one frontier-class call): compare arm 6's "
        "*correct per $* here with arm 1 run on a frontier model (`python -m evals.summary "
        "RUN_A RUN_B`)."
    )
    if "G4" in summary["goals"]:
        g4 = summary["goals"]["G4"]
        lines.append(
            f"- **G4** (accuracy rises with support width): {g4['verdict']}; width 1: "
            f"{share(g4['accuracy_width_1'])} of {g4['answered_width_1']}, width >= 2: "
            f"{share(g4['accuracy_width_2_plus'])} of {g4['answered_width_2_plus']}"
        )
    return lines


def render_summary(summary: Mapping[str, Any], plot_note: str) -> str:
    """summary.md for one run."""
    lines = [
        *_header_lines(summary),
        *_arm_lines(summary),
        *_width_lines(summary),
        render_statistics(summary["statistics"]),
        *_replay_lines(summary),
        *_goal_lines(summary),
        "",
        plot_note,
        "",
    ]
    return "\n".join(lines)
