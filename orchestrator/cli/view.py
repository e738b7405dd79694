"""``logic-graph view PATH [--out FILE] [--graph ID] [--open]``: the HTML page of a saved graph.

PATH is a run's report.json, an ``export_graph`` json answer (or the ``graph`` object inside
one), or a graph server's ``--state-file`` (``--graph`` picks one of its graphs when it holds
several). The page is written to ``--out``, by default beside PATH with the suffix ``.html``
(so report.json gives report.html again), its path printed; ``--open`` then opens it in the
default browser. A report's page shows the whole documents when the task file it names
(``context.task_file``, looked up from the current folder, then from the report's) still holds
the cited sentences, else only the cited sentences.

Exit codes: 0 written; 1 the file cannot be read or drawn; 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from graph_server.html_files import ViewError, export_html, is_export, is_state, state_html
from orchestrator.records import RunReport
from orchestrator.report import evidence_from_task_file, render_report_html

EXIT_OK, EXIT_FAILED = 0, 1


def page_for(path: Path, graph_id: str | None = None) -> str:
    """The page for the file at ``path``; raises :class:`ViewError` saying why not."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ViewError(f"{path} cannot be read as JSON: {exc}") from None
    if is_state(data):
        return state_html(path, graph_id)[1]
    if isinstance(data, dict) and "report_version" in data and "graph" in data:
        report = cast(RunReport, data)
        try:
            evidence = evidence_from_task_file(report, Path.cwd()) or evidence_from_task_file(
                report, path.parent
            )
            return render_report_html(report, evidence)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ViewError(
                f"{path} is not a report.json this version can draw ({exc!r})"
            ) from None
    if is_export(data):
        return export_html(data, path.stem)
    raise ViewError(
        f"{path} is neither a report.json, an export_graph json answer nor a state file"
    )


def view_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="logic-graph view",
        description="Write (and with --open, open) the HTML page of a report.json, an "
        "export_graph json file or a graph server's --state-file.",
    )
    parser.add_argument("path", type=Path, help="report.json, an export json or a state file")
    parser.add_argument("--out", type=Path, help="where to write the page (default: PATH.html)")
    parser.add_argument("--graph", help="which graph of a state file holding several")
    parser.add_argument("--open", action="store_true", help="open the page in a browser")
    args = parser.parse_args(argv)
    out: Path = args.out or args.path.with_suffix(".html")
    try:
        html = page_for(args.path, args.graph)
        out.write_text(html, encoding="utf-8")
    except (ViewError, OSError) as exc:
        print(f"logic-graph view: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(out)
    if args.open:
        webbrowser.open(out.resolve().as_uri())
    return EXIT_OK
