"""Summaries of evaluation runs: per-arm metrics, arm 6's width strata and the G2-G4 readings.

Usage::

    python -m evals.summary RUN_DIR                 # rebuild RUN_DIR/summary.{md,json}
    python -m evals.summary RUN_A RUN_B [--out F]   # one table across runs (e.g. for G3)
    python -m evals.summary --compare RUN_A RUN_B   # items that flipped between two runs

Everything is recomputed from the raw JSONL files (the latest line per item counts), so the
summary can be rebuilt at any time without new calls. Costs are honest: an arm's total cost is
unknown when any of its calls' costs is; cost per correct answer is reported as unknown, as
"no correct answers", or as $0 for a zero-cost (local) model, never as a made-up number.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from evals.compare import arm_statistics, compare_runs, render_statistics
from evals.plots import PLOT_NAME, RISK_PLOT_NAME, write_plot, write_risk_coverage_plot
from evals.results import run_arms
from evals.score import ABSTAINED, CORRECT, NO_ANSWER, WRONG, row_outcome
from evals.summary_html import render_summary_html
from orchestrator.llm import is_local_model

# The width strata of arm 6 (G4); widths above the last bucket join it.
WIDTH_BUCKETS = ("0", "1", "2", "3+")
G2_MARGIN_PP = 5.0


# --- metrics -------------------------------------------------------------------------------


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def abstention_metrics(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Answers, abstentions and the net score of one arm.

    ``correct`` counts right answers plus abstentions on unanswerable items; ``answered`` the
    items that got an answer (right or wrong); ``coverage`` answered over items;
    ``accuracy_answered`` (selective accuracy) right answers over answered; ``net_score`` right
    answers minus wrong ones, so abstaining scores 0 and a wrong answer costs a point.
    """
    n = len(rows)
    counts = Counter(row_outcome(r) for r in rows)
    unanswerable = [r for r in rows if r.get("answerable") is False]
    correct_abstentions = sum(row_outcome(r) == ABSTAINED for r in unanswerable)
    answered = counts[CORRECT] + counts[WRONG]
    return {
        "items": n,
        "correct": counts[CORRECT] + correct_abstentions,
        "correct_answers": counts[CORRECT],
        "wrong_answers": counts[WRONG],
        "accuracy": _ratio(counts[CORRECT] + correct_abstentions, n),
        "answered": answered,
        "coverage": _ratio(answered, n),
        "accuracy_answered": _ratio(counts[CORRECT], answered),
        "abstained": counts[ABSTAINED],
        "no_answer": counts[NO_ANSWER],
        "unanswerable_items": len(unanswerable),
        "correct_abstentions": correct_abstentions,
        "wrong_on_unanswerable": sum(row_outcome(r) == WRONG for r in unanswerable),
        "net_score": counts[CORRECT] - counts[WRONG],
        "net_per_item": _ratio(counts[CORRECT] - counts[WRONG], n),
    }


def arm_metrics(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Metrics of one arm over its result rows: `abstention_metrics` plus costs and usage.

    ``accuracy`` counts errors, refusals and missing answers as wrong, except that abstaining
    on an unanswerable item is right. ``cost_usd`` is None when any row's cost is unknown
    (``cost_usd_known`` keeps the known part); ``cost_per_correct_usd`` is None when cost is
    unknown or nothing is correct; ``correct_per_usd`` is None when cost is unknown or zero.
    """
    n = len(rows)
    scored = abstention_metrics(rows)
    correct = scored["correct"]
    refused = sum(bool(r.get("refused")) for r in rows)
    errors = sum(bool(r.get("error")) for r in rows)
    costs = [r.get("cost_usd") for r in rows]
    cost_known = all(isinstance(c, int | float) for c in costs)
    cost = sum(float(r.get("cost_usd_known") or 0.0) for r in rows)
    tokens = [r.get("tokens") for r in rows]
    tokens_known = all(isinstance(t, int) for t in tokens)
    qa = [r for r in rows if r.get("kind") == "qa"]
    return {
        **scored,
        "mean_f1": _ratio(sum(float(r.get("f1") or 0.0) for r in qa), len(qa)),
        "refusals": refused,
        "refusal_rate": _ratio(refused, n),
        "errors": errors,
        "missing_answer_line": sum(r.get("answer_format") == "missing" for r in rows),
        "cost_usd": cost if cost_known else None,
        "cost_usd_known": cost,
        "cost_per_correct_usd": cost / correct if cost_known and correct else None,
        "correct_per_usd": correct / cost if cost_known and cost > 0 else None,
        "mean_latency_s": _ratio(sum(float(r.get("latency_s") or 0.0) for r in rows), n),
        "tokens": sum(t for t in tokens if isinstance(t, int)) if tokens_known else None,
        "tokens_per_item": _ratio(sum(t for t in tokens if isinstance(t, int)), n)
        if tokens_known
        else None,
        "calls_per_item": _ratio(sum(int(r.get("n_calls") or 0) for r in rows), n),
    }


def _bucket(width: Any) -> str | None:
    if not isinstance(width, int) or width < 0:
        return None
    return WIDTH_BUCKETS[min(width, len(WIDTH_BUCKETS) - 1)]


def width_strata(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Arm 6 by support width of the chosen conclusion (G4).

    Returns ``{"buckets": {bucket: {"items", "answered", "correct", "accuracy_answered"}},
    "no_conclusion": int, "g4": {...}}``. Accuracy is over answered items only: a refusal is
    not a wrong conclusion. The G4 reading compares width >= 2 against width 1 and checks that
    accuracy does not fall from one bucket to the next (buckets 1, 2, 3+ that have answers).
    """
    buckets: dict[str, dict[str, int]] = {
        b: {"items": 0, "answered": 0, "correct": 0} for b in WIDTH_BUCKETS
    }
    no_conclusion = 0
    for row in rows:
        bucket = _bucket(row.get("width"))
        if bucket is None:
            no_conclusion += 1
            continue
        buckets[bucket]["items"] += 1
        if not row.get("refused") and not row.get("error"):
            buckets[bucket]["answered"] += 1
            buckets[bucket]["correct"] += bool(row.get("correct"))
    accuracy = {b: _ratio(v["correct"], v["answered"]) for b, v in buckets.items()}
    table = {b: {**v, "accuracy_answered": accuracy[b]} for b, v in buckets.items()}
    wide_answered = sum(buckets[b]["answered"] for b in ("2", "3+"))
    wide = _ratio(sum(buckets[b]["correct"] for b in ("2", "3+")), wide_answered)
    series = [acc for b in ("1", "2", "3+") if (acc := accuracy[b]) is not None]
    monotone = all(a <= b for a, b in itertools.pairwise(series))
    narrow = accuracy["1"]
    if narrow is None or wide is None:
        verdict = "not enough data (needs answered items of width 1 and of width >= 2)"
    elif wide > narrow and monotone:
        verdict = "holds"
    else:
        verdict = "does not hold"
    return {
        "buckets": table,
        "no_conclusion": no_conclusion,
        "g4": {
            "accuracy_width_1": narrow,
            "accuracy_width_2_plus": wide,
            "answered_width_1": buckets["1"]["answered"],
            "answered_width_2_plus": wide_answered,
            "monotone": monotone,
            "verdict": verdict,
        },
    }


# The arms G2 compares arm 6 with: naive revisit, verbatim re-injection, self-consistency.
G2_ARMS = (2, 3, 7)


def g2_reading(arms: dict[int, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """G2: arm 6 against arms 2, 3 and 7 (self-consistency), on the items both have.

    Two readings. ``verdict`` (accuracy): met when arm 6 is at least `G2_MARGIN_PP` points more
    accurate than each compared arm at equal or lower total cost; cost comparisons with unknown
    costs are unknown (None) and do not meet it. ``net_verdict``: met when arm 6's net score
    (right minus wrong answers) is higher than each compared arm's.
    """
    compared = [other for other in G2_ARMS if other in arms]
    if 6 not in arms or not compared:
        return {
            "verdict": "not applicable (needs arm 6 and arm 2, 3 or 7)",
            "net_verdict": "not applicable",
            "versus": {},
        }
    versus: dict[str, Any] = {}
    met = net_met = True
    for other in compared:
        common = sorted(arms[6].keys() & arms[other].keys())
        mine = arm_metrics([arms[6][i] for i in common])
        theirs = arm_metrics([arms[other][i] for i in common])
        delta = (
            100 * (mine["accuracy"] - theirs["accuracy"])
            if mine["accuracy"] is not None and theirs["accuracy"] is not None
            else None
        )
        cheaper = (
            mine["cost_usd"] <= theirs["cost_usd"] + 1e-12
            if mine["cost_usd"] is not None and theirs["cost_usd"] is not None
            else None
        )
        versus[str(other)] = {
            "items": len(common),
            "accuracy_delta_pp": delta,
            "cost_usd_arm6": mine["cost_usd"],
            "cost_usd_other": theirs["cost_usd"],
            "equal_or_lower_cost": cheaper,
            "net_arm6": mine["net_score"],
            "net_other": theirs["net_score"],
            "calls_arm6": mine["calls_per_item"],
            "calls_other": theirs["calls_per_item"],
        }
        met = met and delta is not None and delta >= G2_MARGIN_PP and cheaper is True
        net_met = net_met and bool(common) and mine["net_score"] > theirs["net_score"]
    return {
        "verdict": "met" if met else "not met",
        "net_verdict": "met" if net_met else "not met",
        "versus": versus,
    }


def risk_coverage(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The risk-coverage curve of an arm that scores its own confidence (arm 6: support width;
    arm 7: vote share), [] for an arm that does not.

    Answering only when confidence >= t, for each distinct t from the highest down: one point
    ``{"threshold", "coverage", "risk", "answered"}`` where coverage is answered items over all
    items and risk is wrong answers over answered ones. O(n log n).
    """
    answered = [r for r in rows if row_outcome(r) in (CORRECT, WRONG)]
    scored = [r for r in answered if isinstance(r.get("confidence"), int | float)]
    if not scored or not rows:
        return []
    scored.sort(key=lambda r: -float(r["confidence"]))
    points = []
    wrong = 0
    for position, row in enumerate(scored, start=1):
        wrong += row_outcome(row) == WRONG
        last = position == len(scored)
        if last or float(scored[position]["confidence"]) != float(row["confidence"]):
            points.append(
                {
                    "threshold": row["confidence"],
                    "answered": position,
                    "coverage": position / len(rows),
                    "risk": wrong / position,
                }
            )
    return points


def _arm_name(arm: int, rows: dict[str, dict[str, Any]]) -> str:
    """The arm's name as its result lines record it."""
    names = {str(r.get("arm_name")) for r in rows.values() if r.get("arm_name")}
    return names.pop() if len(names) == 1 else f"arm {arm}"


def summarize(run_dir: Path) -> dict[str, Any]:
    """Everything summary.md and summary.json show, computed from `run_dir`'s files."""
    meta_path = run_dir / "run.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
    arms = run_arms(run_dir)
    summary: dict[str, Any] = {
        "run_dir": str(run_dir),
        "config": meta.get("config", {}),
        "invocations": meta.get("invocations", []),
        "arms": {
            str(arm): {"name": _arm_name(arm, rows), **arm_metrics(list(rows.values()))}
            for arm, rows in arms.items()
        },
        "goals": {"G2": g2_reading(arms)},
        "risk_coverage": {
            str(arm): curve
            for arm, rows in arms.items()
            if (curve := risk_coverage(list(rows.values())))
        },
    }
    summary["statistics"] = arm_statistics(arms)
    replay_path = run_dir / "replay.json"
    if replay_path.is_file():
        summary["replay"] = json.loads(replay_path.read_text(encoding="utf-8"))
    if 6 in arms:
        summary["arm6_width"] = width_strata(list(arms[6].values()))
        summary["goals"]["G4"] = summary["arm6_width"]["g4"]
    return summary


# --- rendering -----------------------------------------------------------------------------


def usd(value: float | None) -> str:
    """Dollars with enough digits for cheap models; "unknown" for None."""
    if value is None:
        return "unknown"
    if value == 0:
        return "$0"
    return f"${value:.6f}" if value < 0.01 else f"${value:.4f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _cost_per_correct(m: dict[str, Any]) -> str:
    if m["cost_usd"] is None:
        return f"unknown (cost >= {usd(m['cost_usd_known'])})"
    if m["cost_usd"] == 0:
        return "$0 (zero-cost model)"
    if not m["correct"]:
        return "n/a (no correct answers)"
    return usd(m["cost_per_correct_usd"])


def _correct_per_usd(m: dict[str, Any]) -> str:
    if m["cost_usd"] is None:
        return "unknown"
    if m["cost_usd"] == 0:
        return "unbounded (zero cost)"
    return f"{m['correct_per_usd']:.1f}"


def _number(value: float | None, digits: int = 0) -> str:
    return "unknown" if value is None else f"{value:,.{digits}f}"


def _table(header: str, rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table's lines: ``header`` (its cells joined by " | "), then ``rows``; the
    first column left-aligned, the figures right-aligned."""
    separator = "|---|" + "---:|" * header.count(" | ")
    return [f"| {header} |", separator, *("| " + " | ".join(map(str, row)) + " |" for row in rows)]


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


def _arm_row(label: str, m: dict[str, Any]) -> tuple[object, ...]:
    total = (
        usd(m["cost_usd"])
        if m["cost_usd"] is not None
        else (f"unknown (>= {usd(m['cost_usd_known'])})")
    )
    return (
        label,
        m["items"],
        m["correct"],
        _pct(m["accuracy"]),
        f"**{_cost_per_correct(m)}**",
        total,
        _correct_per_usd(m),
        f"{_number(m['mean_latency_s'], 2)} s",
        _number(m["tokens"]),
        _number(m["tokens_per_item"]),
        _number(m["calls_per_item"], 1),
        f"{m['refusals']} ({_pct(m['refusal_rate'])})",
        _pct(m["accuracy_answered"]),
        m["errors"],
        m["missing_answer_line"],
    )


def _abstention_row(label: str, m: dict[str, Any]) -> tuple[object, ...]:
    return (
        label,
        m["items"],
        _pct(m["accuracy"]),
        f"{m['answered']} ({_pct(m['coverage'])})",
        _pct(m["accuracy_answered"]),
        m["abstained"],
        m["unanswerable_items"],
        m["correct_abstentions"],
        m["wrong_on_unanswerable"],
        m["no_answer"],
        m["errors"],
        f"{m['net_score']:+d}",
    )


def arm_table(rows: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """The per-arm markdown table; `rows` are (label, metrics)."""
    return "\n".join(_table(_ARM_HEADER, (_arm_row(label, m) for label, m in rows)))


def abstention_table(rows: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """The answers / abstentions / net score markdown table; `rows` are (label, metrics)."""
    return "\n".join(_table(_ABSTENTION_HEADER, (_abstention_row(label, m) for label, m in rows)))


def _spent(invocation: dict[str, Any], model: object) -> str:
    spent = invocation.get("spent_usd")
    if spent is not None:
        return usd(spent)
    if isinstance(model, str) and is_local_model(model):
        return "$0 (built-in local model)"
    if "finished" not in invocation:
        return "unknown (the invocation did not finish)"
    return f"unknown (>= {usd(invocation.get('spent_usd_known'))})"


def _header_lines(summary: dict[str, Any]) -> list[str]:
    """The run's data set, model, settings, prompts and invocations."""
    config = summary["config"]
    lines = [
        "# Evaluation summary",
        "",
        f"- dataset: `{config.get('dataset')}`; model: `{config.get('model')}`",
        f"- settings: `{json.dumps(config.get('settings', {}), sort_keys=True)}`",
        f"- prompts: `{json.dumps(config.get('prompts', {}), sort_keys=True)}`",
    ]
    for number, inv in enumerate(summary["invocations"], start=1):
        lines.append(
            f"- invocation {number}: {inv.get('started')} to {inv.get('finished', '(unfinished)')}"
            f", {inv.get('calls', '?')} calls, spent {_spent(inv, config.get('model'))}"
            + (f"; **stopped: {inv['stopped']}**" if inv.get("stopped") else "")
        )
    return lines


def _arm_lines(summary: dict[str, Any]) -> list[str]:
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


def _width_lines(summary: dict[str, Any]) -> list[str]:
    """Arm 6 by the width of its chosen conclusion ([] without arm 6)."""
    if "arm6_width" not in summary:
        return []
    strata = summary["arm6_width"]
    arm6 = summary["arms"]["6"]
    table = _table(
        "width | items | answered | correct | accuracy (answered)",
        (
            (bucket, v["items"], v["answered"], v["correct"], _pct(v["accuracy_answered"]))
            for bucket, v in strata["buckets"].items()
        ),
    )
    return [
        "## Arm 6 by support width of the chosen conclusion (G4)",
        "",
        *table,
        "",
        f"Items without a chosen conclusion: {strata['no_conclusion']}. "
        f"Refusal rate {_pct(arm6['refusal_rate'])}; accuracy on answered items "
        f"{_pct(arm6['accuracy_answered'])} vs {_pct(arm6['accuracy'])} over all items.",
        "",
    ]


def _replay_lines(summary: dict[str, Any]) -> list[str]:
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


def _goal_lines(summary: dict[str, Any]) -> list[str]:
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
            f"{_number(v['calls_arm6'], 1)} vs {_number(v['calls_other'], 1)}; cost "
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
            f"{_pct(g4['accuracy_width_1'])} of {g4['answered_width_1']}, width >= 2: "
            f"{_pct(g4['accuracy_width_2_plus'])} of {g4['answered_width_2_plus']}"
        )
    return lines


def render_markdown(summary: dict[str, Any], plot_note: str) -> str:
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


def write_summary(run_dir: Path) -> dict[str, Any]:
    """Write summary.md, summary.html, summary.json and the plot for `run_dir`; return the
    summary with its markdown under ``"markdown"``."""
    summary = summarize(run_dir)
    plot_note = write_plot(summary, run_dir / PLOT_NAME)
    if "Plot skipped" not in plot_note:
        plot_note += " " + write_risk_coverage_plot(summary, run_dir / RISK_PLOT_NAME)
    summary["plot"] = PLOT_NAME if (run_dir / PLOT_NAME).is_file() else None
    summary["plot_note"] = plot_note
    markdown = render_markdown(summary, plot_note)
    (run_dir / "summary.md").write_text(markdown, encoding="utf-8")
    page = render_summary_html(summary, run_arms(run_dir), run_dir)
    (run_dir / "summary.html").write_text(page, encoding="utf-8")
    (run_dir / "summary.json").write_text(
        json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    return {**summary, "markdown": markdown}


def combined_table(run_dirs: Sequence[Path]) -> str:
    """One per-arm table across several runs, rows labelled by model and arm (for G3)."""
    rows = []
    for run_dir in run_dirs:
        summary = summarize(run_dir)
        model = summary["config"].get("model", run_dir.name)
        dataset = summary["config"].get("dataset", "?")
        rows += [(f"{model} / {dataset} / arm {a}", m) for a, m in summary["arms"].items()]
    return arm_table(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.summary", description=__doc__)
    parser.add_argument("runs", nargs="+", type=Path, help="run directories")
    parser.add_argument("--out", type=Path, help="write the combined table here")
    parser.add_argument(
        "--compare",
        action="store_true",
        help="with two runs of the same items (e.g. two replays): list the items that flipped",
    )
    args = parser.parse_args(argv)
    missing = [str(d) for d in args.runs if not (d / "raw").is_dir()]
    if missing:
        print(f"evals.summary: not a run directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.compare:
        if len(args.runs) != 2:
            print("evals.summary: --compare takes exactly two runs", file=sys.stderr)
            return 2
        print(compare_runs(args.runs[0], args.runs[1], args.out))
        return 0
    if len(args.runs) == 1 and args.out is None:
        print(write_summary(args.runs[0])["markdown"])
        return 0
    table = combined_table(args.runs)
    if args.out is not None:
        args.out.write_text(table + "\n", encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
