"""The command line: ``python -m orchestrator.run --task task.json``.

Library use is :func:`orchestrator.api.run_task` (the loop of :mod:`orchestrator.loop.driver`
plus the report of :mod:`orchestrator.report.build`); this module only parses flags, opens the
backend and prints. The CLI resolves ``--model`` through
:func:`orchestrator.llm.backend.open_backend` (so ``--model local`` starts the built-in model),
prints progress to stderr and the report path (or, with ``--json``, the report) to stdout.

Exit codes (:func:`exit_code`; the same for ``logic-graph ask``):

* 0: answered;
* 3: refused on the evidence (refusing is a valid outcome, but a script should be able to
  tell it from an answer without reading the report);
* 1: the model backend could not be used (no key, unreachable, key rejected, no credits,
  unknown model, a built-in model that cannot start), no call returned a reply at all (the
  report is written, refused as ``backend_failed``), or the run's ``--budget-seconds`` ran out
  before it could answer (the report is written);
* 2: bad input (task file, its corpus index, flags, models file, an ``--out`` another run is
  writing into);
* 130: interrupted by Ctrl-C or SIGTERM: the report of what was done is written, marked
  ``interrupted`` (a second signal quits at once, without it).

Errors are one line on stderr, ``error: ...``, with the fix.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from orchestrator.api import default_model, model_defaults, run_task
from orchestrator.cli.interrupt import EXIT_INTERRUPTED, stop_on_signals
from orchestrator.cli.stage_flags import add_stage_flags, stage_settings
from orchestrator.cli.strategy_flags import add_strategy_flags
from orchestrator.llm import BackendUnusableError, RunStop, sampling_settings
from orchestrator.loop import check_corpus
from orchestrator.records import (
    RefusalReason,
    RunConfig,
    RunReport,
    Task,
    TaskError,
    load_task,
)
from orchestrator.reply import LAYOUTS, SHAPES
from orchestrator.report import LiveProgress

__all__ = [
    "DEFAULT_BUDGET_SECONDS",
    "EXIT_ANSWERED",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_REFUSED",
    "EXIT_USAGE",
    "add_run_options",
    "build_parser",
    "default_out",
    "execute",
    "exit_code",
    "fail",
    "main",
    "print_report_json",
]

EXIT_ANSWERED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_REFUSED = 3

DEFAULT_BUDGET_SECONDS = 1800.0
"""The CLI's wall-clock budget per run: the README demo takes 3-6 minutes on a 2-core CPU."""


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface (see ``--help``)."""
    parser = argparse.ArgumentParser(
        prog="python -m orchestrator.run",
        description="Answer a question from documents with sampled argument graphs, mechanical "
        "checks and targeted re-verification; refuse when the evidence does not carry an answer.",
    )
    parser.add_argument("--task", required=True, help="task JSON: question, documents")
    add_run_options(parser)
    return parser


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """Add every flag of a run but the task itself (``--task`` here, the question and its
    documents for ``logic-graph ask``): one definition for both commands."""
    defaults = RunConfig()
    _add_run_flags(parser, defaults)
    _add_backend_flags(parser)
    _add_output_flags(parser)
    add_strategy_flags(parser)
    _add_corpus_flags(parser, defaults)


def _add_run_flags(parser: argparse.ArgumentParser, defaults: RunConfig) -> None:
    """Add the model and the run's size, shape, sampling and budget flags."""
    parser.add_argument("--model", help="model id (default: default_model of models.json)")
    parser.add_argument(
        "--n",
        type=int,
        help=f"interrogations (default: the model's n in models.json, else {defaults.n})",
    )
    parser.add_argument(
        "--k", type=int, default=defaults.k, help="support width to aim for (default 2)"
    )
    parser.add_argument(
        "--shape",
        choices=SHAPES,
        help="interrogation shape: graph, chain (for small models), or plain-text working "
        "whose graph the system draws: worked, reasoned (default: the model's "
        "interrogation_shape in models.json, or its word_problems shape for a word problem, "
        "else graph)",
    )
    parser.add_argument(
        "--require-k",
        action="store_true",
        help="refuse an answer whose support width is below --k (default: give it, marked weak)",
    )
    parser.add_argument(
        "--budget-calls",
        type=int,
        help="hard cap on logical model calls, retries not included (default: the model's "
        f"budget_calls in models.json, else {defaults.budget_calls})",
    )
    parser.add_argument(
        "--temp",
        type=float,
        help="temperature (default: the model's temperature in models.json, else "
        f"{defaults.temperature:g})",
    )
    parser.add_argument("--seed", type=int, help="base seed; each call's seed derives from it")
    parser.add_argument(
        "--budget-seconds",
        type=float,
        default=DEFAULT_BUDGET_SECONDS,
        help="wall-clock budget of the run: no call starts after it, and calls in flight get "
        f"only the time left (default {DEFAULT_BUDGET_SECONDS:g}; 0 = no limit)",
    )


def _add_backend_flags(parser: argparse.ArgumentParser) -> None:
    """Add the endpoint, time-out, retry and concurrency flags of the backend."""
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: per model)")
    parser.add_argument(
        "--request-timeout",
        type=float,
        metavar="SECONDS",
        help="wall-clock limit of one HTTP attempt, whole answer included (default: models.json, "
        "else 120 for a server, 600 for a built-in model)",
    )
    parser.add_argument(
        "--retries",
        type=int,
        help="extra attempts after a time-out, 429 or 5xx, 0-10 (default: models.json, else 3 "
        "for a server, 0 for a built-in model)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        help="requests in flight at once, 1-1024 (default: models.json, else all at once for a "
        "server, the slots of a built-in model)",
    )


def _add_output_flags(parser: argparse.ArgumentParser) -> None:
    """Add the output folder and the request-form flags (structured output, think first,
    prompt layout)."""
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
        "--prompt-layout",
        choices=LAYOUTS,
        default="classic",
        help="where the evidence sits in each prompt: after each role's instructions "
        "(classic), or first, so that a server's prompt cache serves it to every call of the "
        "task (evidence_first)",
    )


def _add_corpus_flags(parser: argparse.ArgumentParser, defaults: RunConfig) -> None:
    """Add the corpus retrieval flags, the context window and ``--quiet``."""
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
    add_stage_flags(parser, defaults, model_stages=True)
    parser.add_argument(
        "--context-tokens",
        type=int,
        metavar="N",
        help="the model's context window per request, which evidence is packed to fit "
        "(default: known for built-in models, else models.json context_tokens, else what the "
        "server reports, else unknown: nothing is packed)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    started = time.monotonic()
    args = build_parser().parse_args(argv)
    try:
        task = _load_task_file(args.task)
    except TaskError as exc:
        return fail(EXIT_USAGE, str(exc))
    out_dir = Path(args.out) if args.out else default_out(Path(args.task).stem)
    return execute(args, task, out_dir, started=started, task_file=args.task)


def execute(
    args: argparse.Namespace,
    task: Task,
    out_dir: Path,
    *,
    started: float,
    task_file: str | None,
    show: Callable[[RunReport, Path], None] | None = None,
) -> int:
    """Run ``task`` with the flags of :func:`add_run_options` in ``args``, writing into
    ``out_dir``; ``started`` (``time.monotonic()``) is when the command began, which the
    wall-clock budget counts from, start-up and probes included. ``show`` prints the outcome
    to stdout (default: the report path, or the report with ``--json``). Returns the exit
    code (see the module docstring)."""
    try:
        model, config = _settings(args, task, task_file)
    except TaskError as exc:
        return fail(EXIT_USAGE, str(exc))
    budget_seconds = args.budget_seconds or None
    if out_dir.exists() and not out_dir.is_dir():
        return fail(EXIT_USAGE, f"--out {str(out_dir)!r} exists and is not a folder")
    # Imported here: the backend pulls in the local-model machinery, which --help and input
    # errors do not need.
    from orchestrator.llm import LocalModelError

    progress = None if args.quiet else LiveProgress()
    deadline = None if budget_seconds is None else started + budget_seconds
    stop = RunStop()
    try:
        with stop_on_signals(stop):
            report = _run(args, task, model, config, out_dir, deadline, progress, stop, task_file)
    except KeyboardInterrupt:
        print(
            "[logic-graph] interrupted before the first model call; nothing to report",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except BackendUnusableError as exc:  # no key, unreachable, 401/402/404
        return fail(EXIT_FAILED, str(exc))
    except ValueError as exc:  # bad model name / base URL / models.json / --out in use
        return fail(EXIT_USAGE, str(exc))
    except (LocalModelError, OSError) as exc:
        return fail(EXIT_FAILED, str(exc))
    if show is None:
        show = print_report_json if args.json else _print_path
    show(report, out_dir)
    return _ending(report, out_dir, quiet=args.quiet)


def exit_code(report: RunReport) -> int:
    """The exit code a finished run's ``report`` earns: 130 interrupted, 1 no reply from the
    backend or the time budget spent before an answer, 3 refused, 0 answered."""
    if "interrupted" in report:
        return EXIT_INTERRUPTED
    if report["refusal_reason"] == RefusalReason.BACKEND_FAILED:
        return EXIT_FAILED
    if report["refused"] and report["limits"]["deadline_reached"]:
        return EXIT_FAILED
    return EXIT_REFUSED if report["refused"] else EXIT_ANSWERED


def _ending(report: RunReport, out_dir: Path, *, quiet: bool) -> int:
    """Say on stderr how the run ended (errors even with ``--quiet``); returns the exit code."""
    code = exit_code(report)
    where = f"The report is in {out_dir}."
    if code == EXIT_INTERRUPTED:
        by = report["interrupted"]["by"] if "interrupted" in report else "a signal"
        print(f"[logic-graph] interrupted ({by}); {where}", file=sys.stderr)
    elif report["refusal_reason"] == RefusalReason.BACKEND_FAILED:
        fail(code, f"{report['statement']} {where}")
    elif code == EXIT_FAILED:
        fail(
            code,
            f"the run's wall-clock budget (--budget-seconds {report['limits']['budget_seconds']:g}"
            f") ran out before the evidence carried an answer ({report['refusal_reason']}). "
            f"{where} Fix: raise --budget-seconds, or use a faster model or server",
        )
    elif not quiet:
        outcome = "refused: " + str(report["refusal_reason"]) if report["refused"] else "answered"
        print(f"[logic-graph] {outcome}; report.md in {out_dir}", file=sys.stderr)
    return code


def print_report_json(report: RunReport, out_dir: Path) -> None:
    """``--json``: the report itself on stdout."""
    print(json.dumps(report, indent=2))


def _print_path(report: RunReport, out_dir: Path) -> None:
    print(out_dir / "report.json")


def _load_task_file(path: str) -> Task:
    """The task of the file at ``path``; raises TaskError (bad file, no evidence)."""
    task = load_task(Path(path))
    if task.corpus is None and not task.documents:
        # Refused here, before a model is started for nothing.
        raise TaskError(
            f"task file {path!r} has no documents, so there is nothing to answer from; "
            "add documents or give a corpus"
        )
    return task


# Flags set as given: each is the RunConfig field of its name (which checks it).
_FLAGS_AS_GIVEN = (
    "k",
    "require_k",
    "seed",
    "think_first",
    "leave_out",
    "prompt_layout",
    "retrieval_k",
    "max_retrieval_rounds",
    "context_tokens",
)


def _settings(args: argparse.Namespace, task: Task, task_file: str | None) -> tuple[str, RunConfig]:
    """(the model id, the run's config) from the parsed flags. Raises TaskError for a bad
    corpus, budget or backend flag, naming it."""
    if task.corpus is not None:
        check_corpus(task.corpus)
    model = args.model or default_model()
    defaults = model_defaults(model, task, hops=args.hops, shape=args.shape)
    config = RunConfig(
        **(defaults.sampling | sampling_settings(args.n, args.temp, args.budget_calls)),
        interrogation_shape=defaults.shape,
        greedy_first=defaults.greedy_first if args.greedy_first is None else args.greedy_first,
        hops=defaults.hops,
        diversity=args.diversity or defaults.diversity,
        adaptive=defaults.adaptive if args.adaptive is None else args.adaptive,
        **{name: getattr(args, name) for name in _FLAGS_AS_GIVEN},
        **stage_settings(args),
    )
    if not args.budget_seconds >= 0 or args.budget_seconds == float("inf"):
        raise TaskError(f"--budget-seconds {args.budget_seconds} must be a number >= 0")
    _check_backend_flags(args)
    return model, config


def _run(
    args: argparse.Namespace,
    task: Task,
    model: str,
    config: RunConfig,
    out_dir: Path,
    deadline: float | None,
    progress: LiveProgress | None,
    stop: RunStop,
    task_file: str | None,
) -> RunReport:
    """Open the backend for ``model`` and run ``task`` on it; returns the report. The run's
    wall-clock budget ends at ``deadline`` (``time.monotonic()``), whatever start-up took.
    Raises what :func:`orchestrator.llm.backend.open_backend` and
    :func:`orchestrator.api.run_task` raise."""
    from orchestrator.llm import open_backend

    with open_backend(
        model,
        base_url=args.base_url,
        timeout_s=args.request_timeout,
        max_retries=args.retries,
        concurrency=args.concurrency,
        deadline=deadline,
    ) as backend:
        structured = args.structured_output
        if structured is None:
            structured = backend.response_format_default
        window = config.context_tokens or backend.context_tokens
        report = run_task(
            task,
            client=backend.client,
            model=backend.model,
            config=replace(config, structured_output=structured, context_tokens=window),
            out_dir=out_dir,
            progress=progress,
            context={
                "task_file": task_file,
                "base_url": backend.client.base_url,
                "local_model": backend.is_local,
                "context_window": {
                    "tokens": window,
                    "source": "--context-tokens"
                    if args.context_tokens is not None
                    else backend.context_source,
                },
            },
            budget_seconds=args.budget_seconds or None,
            # Start-up and probes count in the budget: it began when the command did.
            budget_started=None if deadline is None else deadline - args.budget_seconds,
            stop=stop,
        )
    return report


def default_out(stem: str) -> Path:
    """``runs/<UTC time>-<stem>``, the stem made safe for a folder name."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem) or "task"
    return Path("runs") / f"{stamp}-{name}"


def _check_backend_flags(args: argparse.Namespace) -> None:
    """Reject out-of-range backend flags as bad input, naming the flag."""
    timeout = args.request_timeout
    if timeout is not None and not (0 < timeout < float("inf")):
        raise TaskError(f"--request-timeout {timeout} must be a number of seconds > 0")
    if args.retries is not None and not 0 <= args.retries <= 10:
        raise TaskError(f"--retries {args.retries} must be a whole number in 0..10")
    if args.concurrency is not None and not 1 <= args.concurrency <= 1024:
        raise TaskError(f"--concurrency {args.concurrency} must be a whole number in 1..1024")


def fail(code: int, message: str) -> int:
    """Print ``message`` as one ``error: ...`` line on stderr; returns ``code``."""
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
