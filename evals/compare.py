"""Statistics between arms of one run, and item-by-item flips between two runs.

`arm_statistics` feeds the *Statistics* section of every summary: for arm 6 against arms 1,
2 and 7 (those present), paired bootstrap intervals for the difference in accuracy and in net
score, an exact McNemar test, each arm's risk-coverage area, and arm 6 against arm 7 at matched
coverage. `flips` compares two runs of the same items (e.g. two replays of one bank): which
items went from right to wrong, to abstained and back, with arm 6's reasons.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evals.results import run_arms
from evals.score import ABSTAINED, CORRECT, WRONG, row_outcome
from evals.stats import aurc, compare_arms, matched_coverage

# Arm 6 is compared with: one plain call, naive revisit, self-consistency.
COMPARED_WITH = (1, 2, 7)

Rows = Mapping[str, Mapping[str, Any]]


def arm_statistics(arms: Mapping[int, Rows], *, seed: int = 0) -> dict[str, Any]:
    """The statistics of one run's arms (item id -> row per arm); see the module docstring."""
    pairs = {
        f"6-{other}": compare_arms(arms[6], arms[other], row_outcome, seed=seed)
        for other in COMPARED_WITH
        if 6 in arms and other in arms
    }
    areas = {str(arm): aurc(list(rows.values()), row_outcome) for arm, rows in sorted(arms.items())}
    matched = None
    if 6 in arms and 7 in arms:
        common = sorted(arms[6].keys() & arms[7].keys())
        matched = {
            "items": len(common),
            **matched_coverage(
                [arms[6][i] for i in common], [arms[7][i] for i in common], row_outcome
            ),
        }
    return {"pairs": pairs, "aurc": areas, "matched_coverage_6_7": matched}


def _pp(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f}"


def _interval(interval: Mapping[str, float | None], scale: float = 100.0) -> str:
    diff, low, high = interval["diff"], interval["low"], interval["high"]
    if diff is None or low is None or high is None:
        return "n/a"
    return f"{scale * diff:+.1f} [{scale * low:+.1f}, {scale * high:+.1f}]"


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def render_statistics(stats: Mapping[str, Any]) -> str:
    """The *Statistics* section of summary.md."""
    lines = ["## Statistics", ""]
    pairs = stats["pairs"]
    if pairs:
        lines += [
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
        lines += [
            "",
            "Intervals: paired percentile bootstrap over items (10,000 resamples, seed 0). "
            "Net per item: right answers minus wrong answers, per item. McNemar: exact "
            "two-sided binomial test on the items exactly one arm got right.",
            "",
        ]
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


def _state(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "missing"
    result = row_outcome(row)
    if result == ABSTAINED and row.get("answerable") is False:
        return "right (abstained)"
    return {CORRECT: "right", WRONG: "wrong"}.get(result, result)


def _why(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return ""
    raw_extra = row.get("extra")
    extra: Mapping[str, Any] = raw_extra if isinstance(raw_extra, Mapping) else {}
    parts = [
        f"{key} {extra[key]}"
        for key in ("refusal_reason", "stop_reason", "outcome")
        if extra.get(key)
    ]
    if row.get("answer") is not None:
        parts.insert(0, f"answer {row['answer']!r}")
    if row.get("width") is not None:
        parts.append(f"width {row['width']}")
    return ", ".join(str(p) for p in parts)


def flips(arms_a: Mapping[int, Rows], arms_b: Mapping[int, Rows]) -> dict[str, Any]:
    """Per arm present in both runs: the items whose state (right / wrong / abstained / ...)
    differs between run A and run B, sorted by item id, with each side's reason."""
    result: dict[str, Any] = {}
    for arm in sorted(arms_a.keys() & arms_b.keys()):
        items = sorted(arms_a[arm].keys() | arms_b[arm].keys())
        changed = []
        for item in items:
            before, after = arms_a[arm].get(item), arms_b[arm].get(item)
            if _state(before) != _state(after):
                changed.append(
                    {
                        "id": item,
                        "before": _state(before),
                        "after": _state(after),
                        "why_before": _why(before),
                        "why_after": _why(after),
                    }
                )
        result[str(arm)] = {"items": len(items), "flipped": changed}
    return result


def render_flips(flipped: Mapping[str, Any], name_a: str, name_b: str) -> str:
    """Markdown for `flips`."""
    lines = [f"# Item flips: {name_a} -> {name_b}", ""]
    for arm, entry in flipped.items():
        lines.append(f"## Arm {arm}: {len(entry['flipped'])} of {entry['items']} items flipped")
        lines.append("")
        if entry["flipped"]:
            lines += [
                "| item | before | after | before: why | after: why |",
                "|---|---|---|---|---|",
            ]
            for f in entry["flipped"]:
                lines.append(
                    f"| {f['id']} | {f['before']} | {f['after']} | {f['why_before']} "
                    f"| {f['why_after']} |"
                )
            lines.append("")
    return "\n".join(lines)


def compare_runs(run_a: Path, run_b: Path, out: Path | None = None) -> str:
    """The items that flipped between two runs of the same items, as Markdown (see
    :func:`flips`); also written to ``out`` when given."""
    text = render_flips(flips(run_arms(run_a), run_arms(run_b)), str(run_a), str(run_b))
    if out is not None:
        out.write_text(text + "\n", encoding="utf-8")
    return text
