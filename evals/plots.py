"""PNG plots of a run's summary (the optional ``plots`` extra: matplotlib).

Each function returns the note summary.md shows: a link to the picture, or why it was skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PLOT_NAME = "accuracy_vs_cost.png"
RISK_PLOT_NAME = "risk_coverage.png"


def write_plot(summary: dict[str, Any], path: Path) -> str:
    """Accuracy against cost per arm as PNG; returns the note for summary.md.

    Needs matplotlib (the ``plots`` extra); without it nothing is written. When any arm's cost
    is unknown or every cost is zero (a local model), tokens per item stand in for cost and
    the axis says so.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "Plot skipped: matplotlib is not installed (`pip install -e '.[plots]'`)."
    arms = summary["arms"]
    points = [(a, m) for a, m in arms.items() if m["accuracy"] is not None]
    costs = [m["cost_usd"] for _, m in points]
    by_cost = all(c is not None for c in costs) and any(c for c in costs)
    figure, axes = plt.subplots(figsize=(6, 4))
    # Arms that land on the same point share one label instead of overprinting each other.
    labels: dict[tuple[float, float], list[str]] = {}
    for arm, m in points:
        x = m["cost_usd"] if by_cost else m["tokens_per_item"]
        if x is not None:
            labels.setdefault((x, 100 * m["accuracy"]), []).append(arm)
    for (x, y), names in sorted(labels.items()):
        axes.scatter(x, y)
        axes.annotate("arm " + ", ".join(names), (x, y), textcoords="offset points", xytext=(4, 4))
    axes.set_ylim(-5, 105)
    axes.set_xlabel("total cost (USD)" if by_cost else "tokens per item (cost is zero or unknown)")
    axes.set_ylabel("accuracy (%)")
    axes.set_title(f"{summary['config'].get('dataset')} / {summary['config'].get('model')}")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return f"Plot: [{path.name}]({path.name})."


def write_risk_coverage_plot(summary: dict[str, Any], path: Path) -> str:
    """Risk against coverage as PNG: a curve for each arm that scores its confidence, one point
    for each other arm; returns the note for summary.md (nothing is written without
    matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "Risk-coverage plot skipped: matplotlib is not installed."
    figure, axes = plt.subplots(figsize=(6, 4))
    for arm, m in summary["arms"].items():
        # One colour per arm: lines and scatter points would otherwise draw from two
        # separate colour cycles and two arms could share a colour.
        colour = f"C{(int(arm) - 1) % 10}"
        curve = summary["risk_coverage"].get(arm)
        if curve:
            xs = [100 * p["coverage"] for p in curve]
            ys = [100 * p["risk"] for p in curve]
            axes.plot(xs, ys, marker="o", color=colour, label=f"arm {arm} (by confidence)")
        elif m["coverage"] is not None and m["accuracy_answered"] is not None:
            risk = 100 * (1 - m["accuracy_answered"])
            axes.scatter(
                [100 * m["coverage"]], [risk], marker="x", color=colour, label=f"arm {arm}"
            )
    axes.set_xlim(-5, 105)
    axes.set_ylim(-5, 105)
    axes.set_xlabel("coverage (% of items answered)")
    axes.set_ylabel("risk (% of answers wrong)")
    axes.set_title(f"{summary['config'].get('dataset')} / {summary['config'].get('model')}")
    if axes.get_legend_handles_labels()[0]:
        axes.legend(fontsize="small")
    else:  # no arm answered anything: say so on the plot rather than leave it blank
        axes.text(50, 50, "no answers to plot", ha="center")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return f"Risk-coverage plot: [{path.name}]({path.name})."
