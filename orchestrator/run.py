"""Answer one task with the full system: ``python -m orchestrator.run --task task.json``.

Library use: :func:`run_task` (the control loop of :mod:`orchestrator.loop` plus the report of
:mod:`orchestrator.report`). The CLI resolves ``--model`` through
:func:`orchestrator.backend.open_backend` (so ``--model local`` starts the built-in model),
prints progress to stderr and the report path (or, with ``--json``, the report) to stdout.

Exit codes: 0 the run finished (an answer or a refusal: refusing is a valid outcome), 1 the
model backend could not be used (no key, unreachable, key rejected, no credits, unknown model,
or a built-in model that cannot start), or no call returned a reply at all (server errors,
broken connections, time-outs: the report is written, refused as ``backend_failed``, and the
error line gives the backend's reason), 2 bad input (task file, its corpus index, flags,
models file). Errors
are one line on stderr, ``error: ...``, with the fix.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orchestrator._pricing import DEFAULT_MODELS_PATH
from orchestrator.client import ChatClient, GuardedClient, SupportsChat
from orchestrator.context import fit_documents
from orchestrator.corpus_mode import check_corpus, complete_report, run_corpus_task
from orchestrator.errors import (
    APIStatusError,
    BackendUnusableError,
    CallTimeBudgetError,
    ContextOverflowError,
    LLMError,
    LLMTimeoutError,
    RetryExhaustedError,
)
from orchestrator.loop import LoopResult, Progress, run_loop
from orchestrator.report import build_report, set_wall_clock, write_report
from orchestrator.schemas import SHAPES
from orchestrator.task import RunConfig, Task, TaskError, load_task, validate_task
from orchestrator.trace import Trace

__all__ = ["DEFAULT_BUDGET_SECONDS", "RunConfig", "Task", "TaskError", "main", "run_task"]

DEFAULT_BUDGET_SECONDS = 1800.0
"""The CLI's wall-clock budget per run: the README demo takes 3-6 minutes on a 2-core CPU."""
REFUSE_BACKEND_FAILED = "backend_failed"
"""The refusal of a run in which no call returned a reply: about the backend, not the
evidence (the loop itself can only see that no run was usable, ``all_runs_failed``)."""
TICK_S = 15.0
"""How often live progress reports the calls still running (a local call can take minutes)."""


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
    if checked.corpus is None:  # a corpus run packs each round's chunks instead
        config = fit_documents(checked.question, checked.documents, config)
    start = time.perf_counter()
    guard = GuardedClient(client, budget_s=budget_seconds)
    trace_path = out_dir / "trace.jsonl" if out_dir is not None else None
    live = progress.watch(guard, config) if isinstance(progress, LiveProgress) else None
    with Trace(trace_path) as trace, live or contextlib.nullcontext():
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
        unanswered = _no_reply(guard, result)
        if unanswered is not None and guard.last_error is not None:
            reason, fix = backend_failure(guard.last_error, guard.budget_s, unanswered)
            trace.event("backend_failed", error=reason)
            _mark_backend_failed(report, reason, fix)
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
        "max_concurrency": getattr(client, "max_concurrency", None),
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
        "--greedy-first",
        action="store_true",
        help="the first interrogation at temperature 0, the others sampled at --temp",
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
    parser.add_argument(
        "--context-tokens",
        type=int,
        metavar="N",
        help="the model's context window per request, which evidence is packed to fit "
        "(default: known for built-in models, else models.json context_tokens, else what the "
        "server reports, else unknown: nothing is packed)",
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
            greedy_first=args.greedy_first,
            retrieval_k=args.retrieval_k,
            max_retrieval_rounds=args.max_retrieval_rounds,
            context_tokens=args.context_tokens,
        )
        if not args.budget_seconds >= 0 or args.budget_seconds == float("inf"):
            raise TaskError(f"--budget-seconds {args.budget_seconds} must be a number >= 0")
        _check_backend_flags(args)
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

    progress = None if args.quiet else LiveProgress()
    try:
        with open_backend(
            model,
            base_url=args.base_url,
            timeout_s=args.request_timeout,
            max_retries=args.retries,
            concurrency=args.concurrency,
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
                    "task_file": str(args.task),
                    "base_url": backend.client.base_url,
                    "local_model": backend.is_local,
                    "context_window": {
                        "tokens": window,
                        "source": "--context-tokens"
                        if args.context_tokens is not None
                        else backend.context_source,
                    },
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
    if report["refusal_reason"] == REFUSE_BACKEND_FAILED:
        return _fail(1, f"{report['statement']} The report is in {out_dir}.")
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


def _check_backend_flags(args: argparse.Namespace) -> None:
    """Reject out-of-range backend flags as bad input, naming the flag."""
    timeout = args.request_timeout
    if timeout is not None and not (0 < timeout < float("inf")):
        raise TaskError(f"--request-timeout {timeout} must be a number of seconds > 0")
    if args.retries is not None and not 0 <= args.retries <= 10:
        raise TaskError(f"--retries {args.retries} must be a whole number in 0..10")
    if args.concurrency is not None and not 1 <= args.concurrency <= 1024:
        raise TaskError(f"--concurrency {args.concurrency} must be a whole number in 1..1024")


def _no_reply(guard: GuardedClient, result: LoopResult) -> str | None:
    """What got no reply when the run's outcome rests on none: every call of the run, or
    every call of a corpus run's last round (earlier rounds' replies did not judge the
    evidence the report is about); None when some reply counted."""
    if guard.succeeded == 0:
        return "no model call returned a reply"
    if result.calls and not any(call["ok"] for call in result.calls):
        return "no call of the last retrieval round returned a reply"
    return None


def backend_failure(error: LLMError, budget_s: float | None, unanswered: str) -> tuple[str, str]:
    """``(reason, fix)`` for a run in which no call returned a reply (``unanswered`` says
    which calls); ``error`` is the last failure. The fix depends on what kind of failure it
    was."""
    last = error.last_error if isinstance(error, RetryExhaustedError) else error
    reason = f"{unanswered}; the last failure: {error}"
    if isinstance(last, CallTimeBudgetError | LLMTimeoutError) or isinstance(
        error, CallTimeBudgetError
    ):
        budget = f" or --budget-seconds (now {budget_s:g})" if budget_s is not None else ""
        fix = (
            f"the backend answers too slowly for these limits: raise --request-timeout{budget}, "
            "lower --concurrency, or use a faster model or server"
        )
    elif isinstance(last, ContextOverflowError):
        fix = (
            "the prompt is longer than the model's context window: set --context-tokens to the "
            "server's real window, so evidence is packed to fit it, or lower --retrieval-k"
        )
    elif isinstance(last, APIStatusError) and (last.status >= 500 or last.status == 429):
        fix = "the server returned errors: check its log or status page, then run again"
    elif isinstance(last, APIStatusError):
        fix = "the server refused the requests: check the model name and the server's limits"
    else:
        fix = "check that the server is running and reachable, then run again"
    return reason, fix


def _mark_backend_failed(report: dict[str, Any], reason: str, fix: str) -> None:
    """Turn the loop's ``all_runs_failed`` into a refusal that blames the backend: no reply
    arrived, so nothing was learnt about the evidence."""
    statement = (
        f"No answer: the model backend failed, so the evidence was never judged ({reason}). "
        f"Fix: {fix}."
    )
    report.update(
        refusal_reason=REFUSE_BACKEND_FAILED,
        headline=f"Failed: {REFUSE_BACKEND_FAILED} (no model call returned a reply)",
        statement=" ".join(statement.split()),
    )
    report["limits"]["backend_failure"] = {"reason": reason, "fix": fix}


class LiveProgress:
    """Progress on stderr while a run works: a line when each call ends (its role and run,
    seconds, tokens generated, calls done of those planned so far, elapsed time and an
    estimate of what remains), and every :data:`TICK_S` seconds a line for the calls still
    running, so a long local call is never silent.

    The denominator is the calls planned so far (the fan-out's runs, then every call started),
    never the ``--budget-calls`` cap, which a run rarely reaches. Tokens are counted when a
    call ends: a call that is still running shows its time only.
    """

    def __init__(self, stream: Any = None) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._guard: GuardedClient | None = None
        self._fan_out = 0
        self._started = time.monotonic()
        self._last_tokens = 0

    @contextlib.contextmanager
    def watch(self, guard: GuardedClient, config: RunConfig) -> Iterator[None]:
        """Follow ``guard``'s calls during the run; the ticker thread stops on exit."""
        self._guard = guard
        self._fan_out = min(config.n * (2 if config.think_first else 1), config.budget_calls)
        self._started = time.monotonic()
        stop = threading.Event()
        ticker = threading.Thread(target=self._tick, args=(stop,), daemon=True)
        ticker.start()
        try:
            yield
        finally:
            stop.set()
            ticker.join(timeout=5)

    def __call__(self, event: dict[str, Any]) -> None:
        spend = f"${event['cost_usd_known']:.6f}"
        if event["calls_cost_unknown"]:
            spend += f" + {event['calls_cost_unknown']} call(s) of unknown cost"
        done = event["calls_done"]
        planned = max(done, self._planned())
        elapsed = time.monotonic() - self._started
        tokens = ""
        if self._guard is not None:
            total = self._guard.completion_tokens
            tokens = f", {total - self._last_tokens} tokens" if total > self._last_tokens else ""
            self._last_tokens = total
        left = planned - done
        eta = f", about {_duration(elapsed / done * left)} left" if left and done else ""
        self._say(
            f"{event['step']}: call {done} of {planned} planned done{tokens} (cap "
            f"{event['budget_calls']}); {_duration(elapsed)} elapsed{eta}; spend {spend}"
        )

    def _planned(self) -> int:
        started = self._guard.started if self._guard is not None else 0
        return max(started, self._fan_out)

    def _tick(self, stop: threading.Event) -> None:
        while not stop.wait(TICK_S):
            guard = self._guard
            running = guard.running() if guard is not None else []
            if running:
                calls = ", ".join(f"{label} {_duration(s)}" for label, s in running[:4])
                more = f" and {len(running) - 4} more" if len(running) > 4 else ""
                elapsed = _duration(time.monotonic() - self._started)
                self._say(f"in flight (running or queued): {calls}{more}; {elapsed} elapsed")

    def _say(self, text: str) -> None:
        with self._lock:
            print(f"[logic-graph] {text}", file=self._stream or sys.stderr, flush=True)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def _fail(code: int, message: str) -> int:
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
