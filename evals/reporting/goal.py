"""The goal table of the verdict issue (`evals.goal`) as Markdown."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from evals.reporting.cells import points, signed


def render_goal_table(table: Mapping[str, Any]) -> str:
    """The table as Markdown: arm counts, one line per goal, the paired comparisons, then
    one row per baseline compared."""

    lines = _render_parts(table.get("parts", {}))
    lines += [
        f"{table['items']} items ({table['answerable']} answerable)",
        "",
        "| arm | right | wrong | abstained or no answer | right per wrong |",
        "|---:|---:|---:|---:|---:|",
    ]
    for arm, c in table["arms"].items():
        ratio = f"{c['right'] / c['wrong']:.2f}" if c["wrong"] else "-"
        lines.append(f"| {arm} | {c['right']} | {c['wrong']} | {c['other']} | {ratio} |")
    lines += ["", "| goal | estimate (%) | 95% interval (%) | verdict |", "|---|---:|---|---|"]
    for goal in table["goals"].values():
        span = (
            f"{points(goal['low'])} .. {points(goal['high'])}" if goal["low"] is not None else "-"
        )
        lines.append(f"| {goal['asks']} | {points(goal['value'])} | {span} | {goal['verdict']} |")
    lines += ["", "| paired difference | estimate | 95% interval |", "|---|---:|---|"]
    for compared in table.get("comparisons", {}).values():
        show = points if compared["percent"] else signed
        low, high = compared["low"], compared["high"]
        span = f"{show(low)} .. {show(high)}" if low is not None else "-"
        lines.append(f"| {compared['asks']} | {show(compared['value'])} | {span} |")
    return "\n".join(lines + _render_baselines(table.get("baselines", {})))


def _render_baselines(baselines: Mapping[str, Any]) -> list[str]:
    """One row per ``--baseline``: the paired items, both sides' counts and the three paired
    differences with their intervals; nothing without baselines."""
    if not baselines:
        return []
    lines = [
        "",
        "| arm 6 against | items | arm 6 right / wrong | baseline right / wrong "
        "| right per wrong, difference | right answers per item (%) | wrong answers per item (%) |",
        "|---|---:|---|---|---|---|---|",
    ]
    for label, compared in baselines.items():
        own, other = compared["arm6"], compared["baseline"]
        cells = [
            _with_interval(compared["ratio"], signed),
            _with_interval(compared["right"], points),
            _with_interval(compared["wrong"], points),
        ]
        lines.append(
            f"| {label} | {compared['items']} | {own['right']} / {own['wrong']} "
            f"| {other['right']} / {other['wrong']} | " + " | ".join(cells) + " |"
        )
    return lines


def _with_interval(estimate: Mapping[str, Any], show: Callable[[float | None], str]) -> str:
    """``value [low, high]``, or ``-`` where the estimate is undefined."""
    if estimate["value"] is None:
        return "-"
    return f"{show(estimate['value'])} [{show(estimate['low'])}, {show(estimate['high'])}]"


def _render_parts(parts: Mapping[str, Any]) -> list[str]:
    """One row per folder (right / wrong / other of each arm), then a blank line; nothing
    for a single folder, whose counts are the pooled ones."""
    if len(parts) < 2:
        return []
    arms = sorted({arm for part in parts.values() for arm in part["arms"]})
    lines = [
        "| folder | items | " + " | ".join(f"arm {a} right / wrong / other" for a in arms) + " |",
        "|---|---:|" + "---|" * len(arms),
    ]
    for label, part in parts.items():
        cells = []
        for arm in arms:
            c = part["arms"].get(arm)
            cells.append(f"{c['right']} / {c['wrong']} / {c['other']}" if c else "-")
        lines.append(f"| {label} | {part['items']} | " + " | ".join(cells) + " |")
    return [*lines, ""]
