"""Answer one task with the full system: ``python -m orchestrator.run --task task.json``.

Library use: :func:`run_task` (the control loop of :mod:`orchestrator.loop` plus the report of
:mod:`orchestrator.report`). The CLI resolves ``--model`` through
:func:`orchestrator.backend.open_backend` (so ``--model local`` starts the built-in model),
prints progress to stderr and the report path (or, with ``--json``, the report) to stdout.

Exit codes: 0 the run finished (an answer or a refusal: refusing is a valid outcome), 1 the
model backend could not be used, 2 bad input (task file, flags, models file).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orchestrator._pricing import DEFAULT_MODELS_PATH
from orchestrator.client import SupportsChat
from orchestrator.loop import Progress, run_loop
from orchestrator.report import build_report, set_wall_clock, write_report
from orchestrator.task import RunConfig, Task, TaskError, load_task, validate_task
from orchestrator.trace import Trace

__all__ = ["RunConfig", "Task", "TaskError", "main", "run_task"]


def run_task(
    task: dict[str, Any] | Task,
    *,
    client: SupportsChat,
    model: str,
    config: RunConfig | None = None,
    out_dir: Path | None = None,
    progress: Progress | None = None,
    context: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Answer ``task`` (``{"question", "documents", "expected_answer"?}``) and return the report.

    ``client`` is anything with ``ChatClient.chat``'s signature (a ChatClient, a
    ScriptedClient); ``config`` defaults to :class:`RunConfig()`; with ``out_dir``,
    report.json, report.md and trace.jsonl are written there. ``progress`` is called after
    every model call with ``{"step", "calls_done", "budget_calls", "cost_usd_known",
    "calls_cost_unknown"}``; ``context`` is copied into the report. Raises
    :class:`TaskError` for an invalid task, before any call is made.
    """
    checked = validate_task(task)
    config = config if config is not None else RunConfig()
    if not isinstance(config, RunConfig):
        raise TaskError(f"config must be a RunConfig, got {type(config).__name__}")
    start = time.perf_counter()
    trace_path = out_dir / "trace.jsonl" if out_dir is not None else None
    with Trace(trace_path) as trace:
        result = run_loop(
            checked, client=client, model=model, config=config, trace=trace, progress=progress
        )
        built = time.perf_counter()
        report = build_report(
            result,
            wall_s=built - start,
            trace_file=trace_path.name if trace_path is not None else None,
            context=context,
        )
        report["timing"]["local_s"]["report"] = round(time.perf_counter() - built, 6)
        set_wall_clock(report, time.perf_counter() - start)
        trace.event(
            "report",
            refused=report["refused"],
            refusal_reason=report["refusal_reason"],
            stop_reason=report["stop_reason"],
            calls=report["totals"]["calls"],
            wall_s=report["timing"]["wall_s"],
        )
    if out_dir is not None:
        write_report(report, out_dir)
    return report


# ---------------------------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface (see ``--help``)."""
    defaults = RunConfig()
    parser = argparse.ArgumentParser(
        prog="python -m orchestrator.run",
        description="Answer a question from documents with sampled argument graphs, mechanical "
        "checks and targeted re-verification; refuse when the evidence does not carry an answer.",
    )
    parser.add_argument("--task", required=True, help="task JSON: question, documents")
    parser.add_argument("--model", help="model id (default: default_model of models.json)")
    parser.add_argument("--n", type=int, default=defaults.n, help="interrogations (default 6)")
    parser.add_argument(
        "--k", type=int, default=defaults.k, help="support width to aim for (default 2)"
    )
    parser.add_argument(
        "--budget-calls",
        type=int,
        default=defaults.budget_calls,
        help="hard cap on logical model calls, retries not included (default 20)",
    )
    parser.add_argument(
        "--temp", type=float, default=defaults.temperature, help="temperature (default 0.8)"
    )
    parser.add_argument("--seed", type=int, help="base seed; each call's seed derives from it")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: per model)")
    parser.add_argument("--out", help="output folder (default: runs/<time>-<task name>)")
    parser.add_argument("--json", action="store_true", help="print the report JSON to stdout")
    parser.add_argument(
        "--structured-output",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="send a bounded JSON schema as response_format (default: on for local models)",
    )
    parser.add_argument(
        "--think-first",
        action="store_true",
        help="each interrogation reasons in plain text, then writes the graph (two calls)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        task = load_task(Path(args.task))
        config = RunConfig(
            n=args.n,
            k=args.k,
            budget_calls=args.budget_calls,
            temperature=args.temp,
            seed=args.seed,
            think_first=args.think_first,
        )
        model = args.model or default_model()
    except TaskError as exc:
        return _fail(2, str(exc))
    out_dir = Path(args.out) if args.out else _default_out(Path(args.task))
    if out_dir.exists() and not out_dir.is_dir():
        return _fail(2, f"--out {str(out_dir)!r} exists and is not a folder")
    # Imported here: the backend pulls in the local-model machinery, which --help and input
    # errors do not need.
    from orchestrator.backend import open_backend
    from orchestrator.local import LocalModelError

    progress = None if args.quiet else _progress_printer()
    try:
        with open_backend(model, base_url=args.base_url) as backend:
            structured = args.structured_output
            if structured is None:
                structured = backend.response_format_default
            report = run_task(
                task,
                client=backend.client,
                model=backend.model,
                config=replace(config, structured_output=structured),
                out_dir=out_dir,
                progress=progress,
                context={
                    "task_file": str(args.task),
                    "base_url": backend.client.base_url,
                    "local_model": backend.is_local,
                },
            )
    except ValueError as exc:  # bad model name / base URL / models.json
        return _fail(2, str(exc))
    except (LocalModelError, OSError) as exc:
        return _fail(1, str(exc))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(out_dir / "report.json")
    if not args.quiet:
        outcome = "refused: " + str(report["refusal_reason"]) if report["refused"] else "answered"
        print(f"[logic-graph] {outcome}; report.md in {out_dir}", file=sys.stderr)
    return 0


def default_model(models_path: Path = DEFAULT_MODELS_PATH) -> str:
    """``default_model`` from models.json; raises :class:`TaskError` when it is missing."""
    try:
        data = json.loads(models_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TaskError(f"no --model given and {models_path} cannot be read: {exc}") from exc
    model = data.get("default_model") if isinstance(data, dict) else None
    if not isinstance(model, str) or not model.strip():
        raise TaskError(f"no --model given and {models_path} has no 'default_model'")
    return model


def _default_out(task_path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", task_path.stem) or "task"
    return Path("runs") / f"{stamp}-{name}"


def _progress_printer() -> Progress:
    lock = threading.Lock()

    def show(event: dict[str, Any]) -> None:
        spend = f"${event['cost_usd_known']:.6f}"
        if event["calls_cost_unknown"]:
            spend += f" + {event['calls_cost_unknown']} call(s) of unknown cost"
        with lock:
            print(
                f"[logic-graph] {event['step']}: {event['calls_done']}/{event['budget_calls']} "
                f"calls, spend {spend}",
                file=sys.stderr,
                flush=True,
            )

    return show


def _fail(code: int, message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
