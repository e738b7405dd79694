"""Every table the evaluation prints, in one place: summary.md (`render_summary`, its per-arm
tables and statistics), the goal table, item flips between two runs, the answer table across
runs and the replay study's rows. Each takes computed figures and returns Markdown; none
reads files or computes a metric."""

from evals.reporting.goal import render_goal_table
from evals.reporting.statistics import render_statistics
from evals.reporting.studies import (
    STUDY_HEADER,
    Arm6Details,
    answer_row,
    arm6_note,
    comparison_lines,
    render_answer_table,
    render_flips,
    study_cells,
    tally,
)
from evals.reporting.summary import abstention_table, arm_table, render_summary

__all__ = [
    "STUDY_HEADER",
    "Arm6Details",
    "abstention_table",
    "answer_row",
    "arm6_note",
    "arm_table",
    "comparison_lines",
    "render_answer_table",
    "render_flips",
    "render_goal_table",
    "render_statistics",
    "render_summary",
    "study_cells",
    "tally",
]
