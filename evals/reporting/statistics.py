"""The *Statistics* section of summary.md: arm 6 against arms 1, 2 and 7 (bootstrap
intervals, McNemar), each arm's risk-coverage area, and arms 6 and 7 at matched coverage."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evals.reporting.cells import share


def _interval(interval: Mapping[str, float | None], scale: float = 100.0) -> str:
    """``diff [low, high]`` of a paired interval, scaled and signed; "n/a" when undefined."""
    diff, low, high = interval["diff"], interval["low"], interval["high"]
    if diff is None or low is None or high is None:
        return "n/a"
    return f"{scale * diff:+.1f} [{scale * low:+.1f}, {scale * high:+.1f}]"


def _share(value: float | None) -> str:
    return share(value, missing="n/a")


def _pair_lines(pairs: Mapping[str, Any]) -> list[str]:
    """Arm 6 against each other arm: the intervals and McNemar table, a verdict per pair."""
    lines = [
        "| pair | items | accuracy diff, pp [95% CI] | net per item diff, x100 [95% CI] "
        "| McNemar (6 only / other only) | p |",
        "|---|---:|---|---|---|---:|",
    ]
    for name, p in pairs.items():
        m = p["mcnemar"]
        lines.append(
            f"| arm {name.replace('-', ' vs arm ')} | {p['items']} "
            f"| {_interval(p['accuracy_diff'])} | {_interval(p['net_diff'])} "
            f"| {m['only_a']} / {m['only_b']} | {m['p']:.3g} |"
        )
    lines.append("")
    for name, p in pairs.items():
        other = name.split("-")[1]
        verdicts = []
        for measure in ("accuracy", "net"):
            diff = p[f"{measure}_diff"]["diff"]
            if diff is None:
                verdicts.append(f"{measure}: no common items")
            elif p["distinguishable"][measure]:
                side = "above" if diff > 0 else "below"
                verdicts.append(f"{measure}: arm 6 is {side} arm {other} (CI excludes 0)")
            else:
                verdicts.append(f"{measure}: not distinguishable from zero (the CI includes 0)")
        lines.append(f"- Arm 6 vs arm {other}: " + "; ".join(verdicts) + ".")
    return [
        *lines,
        "",
        "Intervals: paired percentile bootstrap over items (10,000 resamples, seed 0). "
        "Net per item: right answers minus wrong answers, per item. McNemar: exact "
        "two-sided binomial test on the items exactly one arm got right.",
        "",
    ]


def render_statistics(stats: Mapping[str, Any]) -> str:
    """The *Statistics* section of summary.md."""
    lines = ["## Statistics", ""]
    if stats["pairs"]:
        lines += _pair_lines(stats["pairs"])
    lines += [
        "| arm | AURC (lower is better) | answered | max coverage |",
        "|---|---:|---:|---:|",
    ]
    for arm, area in stats["aurc"].items():
        value = "n/a" if area["aurc"] is None else f"{area['aurc']:.3f}"
        lines.append(f"| {arm} | {value} | {area['answered']} | {_share(area['max_coverage'])} |")
    lines += [
        "",
        "AURC: mean risk (wrong share) over the answered ranks, most confident first (arm 6 by "
        "support width, then run support; arm 7 by vote share; other arms are one point). "
        "Areas are comparable only at similar coverage, hence the next table.",
        "",
    ]
    matched = stats.get("matched_coverage_6_7")
    if matched:
        lines += [
            "| matched coverage (arms 6 and 7) | items | arm 6 accuracy | arm 7 accuracy |",
            "|---:|---:|---:|---:|",
            f"| {_share(matched['coverage'])} | {matched['items']} "
            f"| {_share(matched['accuracy_a'])} | {_share(matched['accuracy_b'])} |",
            "",
        ]
    return "\n".join(lines)
