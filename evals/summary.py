"""Summaries of evaluation runs: ``summary.md``, ``summary.json`` and ``summary.html``.

Command line (``python -m evals.summary`` is the same)::

    logic-graph eval summary RUN_DIR                 # rebuild RUN_DIR/summary.{md,json}
    logic-graph eval summary RUN_A RUN_B [--out F]   # one table across runs (e.g. for G3)
    logic-graph eval compare RUN_A RUN_B [--out F]   # items that flipped between two runs

Everything is recomputed from the raw JSONL files (the latest line per item counts), so the
summary can be rebuilt at any time without new calls. Costs are honest: an arm's total cost is
unknown when any of its calls' costs is; cost per correct answer is reported as unknown, as
"no correct answers", or as $0 for a zero-cost (local) model, never as a made-up number. The
metrics are `evals.metrics`; the tables are `evals.reporting`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.compare import arm_statistics
from evals.metrics import arm_metrics, g2_reading, risk_coverage, width_strata
from evals.plots import PLOT_NAME, RISK_PLOT_NAME, write_plot, write_risk_coverage_plot
from evals.reporting import arm_table, render_summary
from evals.results import ArmRows, run_arms
from evals.summary_html import render_summary_html


def _arm_name(arm: int, rows: ArmRows) -> str:
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


def write_summary(run_dir: Path) -> dict[str, Any]:
    """Write summary.md, summary.html, summary.json and the plot for `run_dir`; return the
    summary with its markdown under ``"markdown"``."""
    summary = summarize(run_dir)
    plot_note = write_plot(summary, run_dir / PLOT_NAME)
    if "Plot skipped" not in plot_note:
        plot_note += " " + write_risk_coverage_plot(summary, run_dir / RISK_PLOT_NAME)
    summary["plot"] = PLOT_NAME if (run_dir / PLOT_NAME).is_file() else None
    summary["plot_note"] = plot_note
    markdown = render_summary(summary, plot_note)
    (run_dir / "summary.md").write_text(markdown, encoding="utf-8")
    page = render_summary_html(summary, run_arms(run_dir), run_dir)
    (run_dir / "summary.html").write_text(page, encoding="utf-8")
    (run_dir / "summary.json").write_text(
        json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    return {**summary, "markdown": markdown}


def combined_table(run_dirs: Sequence[Path]) -> str:
    """One per-arm table across several runs, rows labelled by model and arm (for G3)."""
    rows: list[tuple[str, dict[str, Any]]] = []
    for run_dir in run_dirs:
        summary = summarize(run_dir)
        model = summary["config"].get("model", run_dir.name)
        dataset = summary["config"].get("dataset", "?")
        rows += [(f"{model} / {dataset} / arm {a}", m) for a, m in summary["arms"].items()]
    return arm_table(rows)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evals.summary``: the same as ``logic-graph eval summary``."""
    from evals.command import main as eval_main

    return eval_main(["summary", *(sys.argv[1:] if argv is None else argv)], alias="evals.summary")


if __name__ == "__main__":
    sys.exit(main())
