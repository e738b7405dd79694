"""What a run tells people and programs: report.json, report.md, report.html, spans, progress.

- :mod:`.build`: a finished loop turned into report.json and report.md, from its sections:
  :mod:`._outcome` (the headline and statement), :mod:`._graph` (candidates, support, disputes,
  givens), :mod:`._accounting` (calls, totals, limits, timing);
- :mod:`.markdown`, :mod:`.html`: the two renderings for people;
- :mod:`.otel`: OpenTelemetry spans of a finished run;
- :mod:`.progress`: live progress on stderr while a run works;
- :mod:`.outdir`: one run per output folder.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from orchestrator.report.build import BackendFailure, build_report, set_wall_clock, write_report
from orchestrator.report.html import evidence_from_task_file, render_report_html
from orchestrator.report.outdir import locked_out_dir
from orchestrator.report.progress import LiveProgress

if TYPE_CHECKING:
    from orchestrator.report.otel import export_run


def __getattr__(name: str) -> Any:
    # The spans need the otel extra: export_run is imported on first use (PEP 562), so a run
    # without the extra, or without LOGIC_GRAPH_OTEL, loads no OpenTelemetry module.
    if name == "export_run":
        return import_module("orchestrator.report.otel").export_run
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BackendFailure",
    "LiveProgress",
    "build_report",
    "evidence_from_task_file",
    "export_run",
    "locked_out_dir",
    "render_report_html",
    "set_wall_clock",
    "write_report",
]
