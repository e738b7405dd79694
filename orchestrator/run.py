"""Answer one task with the full system: ``python -m orchestrator.run --task task.json``.

Library use: :func:`run_task` (the control loop of :mod:`orchestrator.loop` plus the report of
:mod:`orchestrator.report`). The CLI resolves ``--model`` through
:func:`orchestrator.backend.open_backend` (so ``--model local`` starts the built-in model),
prints progress to stderr and the report path (or, with ``--json``, the report) to stdout.

Exit codes: 0 the run finished (an answer or a refusal: refusing is a valid outcome), 1 the
model backend could not be used (no key, unreachable, key rejected, no credits, unknown model,
or a built-in model that cannot start), 2 bad input (task file, its corpus index, flags,
models file). Errors
are one line on stderr, ``error: ...``, with the fix.
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
from orchestrator.client import ChatClient, GuardedClient, SupportsChat
from orchestrator.corpus_mode import check_corpus, complete_report, run_corpus_task
from orchestrator.errors import BackendUnusableError
from orchestrator.loop import Progress, run_loop
from orchestrator.report import build_report, set_wall_clock, write_report
from orchestrator.schemas import SHAPES
from orchestrator.task import RunConfig, Task, TaskError, load_task, validate_task
from orchestrator.trace import Trace

__all__ = ["DEFAULT_BUDGET_SECONDS", "RunConfig", "Task", "TaskError", "main", "run_task"]

DEFAULT_BUDGET_SECONDS = 1800.0
"""The CLI's wall-clock budget per run: the README demo takes 3-6 minutes on a 2-core CPU."""


def run_task(
    task: dict[str, Any] | Task,
    *,
    client: SupportsChat,
    model: str,
    config: RunConfig | None = None,
    out_dir: Path | None = None,
    progress: Progress | None = None,
    context: dict[str, Any] | None = None,
    budget_seconds: float | None = None,
) -> dict[str, Any]:
    """Answer ``task`` (``{"question", "documents" or "corpus", "expected_answer"?}``) and
    return the report. A corpus task is answered in retrieval rounds
    (:mod:`orchestrator.corpus_mode`) and its report gains ``retrieval``.

    ``client`` is anything with ``ChatClient.chat``'s signature (a ChatClient, a
    ScriptedClient); ``config`` defaults to :class:`RunConfig()`; with ``out_dir``,
    report.json, report.md and trace.jsonl are written there. ``progress`` is called after
    every model call with ``{"step", "calls_done", "budget_calls", "cost_usd_known",
    "calls_cost_unknown"}``; ``context`` is copied into the report. ``budget_seconds`` is the
    run's wall-clock budget: no call starts after it, and a ChatClient call that starts gets
    only the time left (None: no budget). ``report["limits"]`` reports every bound.

    Raises :class:`TaskError` for an invalid task or a corpus that cannot be searched, before
    any call is made, and
    :class:`BackendUnusableError` when the backend refused or could not be reached (no key,
    DNS, connection refused, 401, 402, 404) before any call succeeded: after the first such
    failure no further request is sent. If calls had succeeded first, the run goes on and the
    report's ``limits.backend_error`` says what happened.
    """
    checked = validate_task(task)
    config = config if config is not None else RunConfig()
    if not isinstance(config, RunConfig):
        raise TaskError(f"config must be a RunConfig, got {type(config).__name__}")
    if budget_seconds is not None and not (
        isinstance(budget_seconds, int | float) and 0 < budget_seconds < float("inf")
    ):
        raise TaskError(f"budget_seconds={budget_seconds!r} is invalid: must be None or > 0")
    start = time.perf_counter()
    guard = GuardedClient(client, budget_s=budget_seconds)
    trace_path = out_dir / "trace.jsonl" if out_dir is not None else None
    with Trace(trace_path) as trace:
        corpus_run = None
        if checked.corpus is None:
            result = run_loop(
                checked, client=guard, model=model, config=config, trace=trace, progress=progress
            )
        else:
            corpus_run = run_corpus_task(
                checked, client=guard, model=model, config=config, trace=trace, progress=progress
            )
            result = corpus_run.result
        if guard.unusable is not None and guard.succeeded == 0:
            trace.event("backend_unusable", kind=guard.unusable.kind, error=str(guard.unusable))
            raise guard.unusable.fresh()
        built = time.perf_counter()
        report = build_report(
            result,
            wall_s=built - start,
            trace_file=trace_path.name if trace_path is not None else None,
            context=context,
            limits=_limits(client, config, guard),
        )
        if corpus_run is not None:
            complete_report(report, corpus_run, config)
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


def _limits(client: SupportsChat, config: RunConfig, guard: GuardedClient) -> dict[str, Any]:
    """Every bound this run ran under, and whether it bit (report.json ``limits``)."""
    max_tokens = {
        "interrogation": config.max_tokens_interrogation,
        "repair": config.max_tokens_interrogation,
        "verification": config.max_tokens_verification,
    }
    if config.think_first:
        max_tokens["think"] = config.max_tokens_think
    http: dict[str, Any] | None = None
    if isinstance(client, ChatClient):
        http = {
            "timeout_s_per_attempt": client.timeout_s,
            "max_retries": client.max_retries,
            "default_max_tokens": client.default_max_tokens,
        }
    return {
        "budget_seconds": guard.budget_s,
        "deadline_reached": guard.deadline_reached,
        "calls_not_made_for_time": guard.refused_for_time,
        "max_tokens": max_tokens,
        "http": http,
        "backend_error": str(guard.unusable) if guard.unusable is not None else None,
    }


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
        "--shape",
        choices=SHAPES,
        help="interrogation shape: the full argument graph, or the chain of sentences to the "
        "answer that small models can fill (default: the model's interrogation_shape in "
        "models.json, else graph)",
    )
    parser.add_argument(
        "--require-k",
        action="store_true",
        help="refuse an answer whose support width is below --k (default: give it, marked weak)",
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
    parser.add_argument(
        "--budget-seconds",
        type=float,
        default=DEFAULT_BUDGET_SECONDS,
        help="wall-clock budget of the run: no call starts after it, and calls in flight get "
        f"only the time left (default {DEFAULT_BUDGET_SECONDS:g}; 0 = no limit)",
    )
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
    parser.add_argument(
        "--retrieval-k",
        type=int,
        default=defaults.retrieval_k,
        help=f"corpus tasks: chunks retrieved per round (default {defaults.retrieval_k})",
    )
    parser.add_argument(
        "--max-retrieval-rounds",
        type=int,
        default=defaults.max_retrieval_rounds,
        help="corpus tasks: retrieval rounds before refusing as insufficient_evidence "
        f"(default {defaults.max_retrieval_rounds})",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        task = load_task(Path(args.task))
        if task.corpus is not None:
            check_corpus(task.corpus)
        elif not task.documents:  # refused here, before a model is started for nothing
            raise TaskError(
                f"task file {args.task!r} has no documents, so there is nothing to answer from; "
                "add documents or give a corpus"
            )
        model = args.model or default_model()
        config = RunConfig(
            n=args.n,
            k=args.k,
            require_k=args.require_k,
            interrogation_shape=args.shape or model_shape(model),
            budget_calls=args.budget_calls,
            temperature=args.temp,
            seed=args.seed,
            think_first=args.think_first,
            retrieval_k=args.retrieval_k,
            max_retrieval_rounds=args.max_retrieval_rounds,
        )
        if not args.budget_seconds >= 0 or args.budget_seconds == float("inf"):
            raise TaskError(f"--budget-seconds {args.budget_seconds} must be a number >= 0")
    except TaskError as exc:
        return _fail(2, str(exc))
    budget_seconds = args.budget_seconds or None
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
                budget_seconds=budget_seconds,
            )
    except BackendUnusableError as exc:  # no key, unreachable, 401/402/404
        return _fail(1, str(exc))
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


def model_shape(model: str, models_path: Path = DEFAULT_MODELS_PATH) -> str:
    """The ``interrogation_shape`` models.json sets for ``model``; ``graph`` when the file, the
    model or the setting is missing (an unknown value fails in :class:`RunConfig`)."""
    try:
        data = json.loads(models_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return "graph"
    entries = data.get("models") if isinstance(data, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("id") == model:
            shape = entry.get("interrogation_shape", "graph")
            return shape if isinstance(shape, str) else repr(shape)
    return "graph"


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
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
