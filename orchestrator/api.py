"""Answer one task with the full system: the library entry point.

:func:`run_task` runs the control loop of :mod:`orchestrator.loop.driver` (or, for a corpus task,
the retrieval rounds of :mod:`orchestrator.loop.corpus_mode` around it) behind a
:class:`orchestrator.llm.GuardedClient`, and builds the report of
:mod:`orchestrator.report.build`. :func:`default_model`, :func:`model_shape`,
:func:`model_greedy_first`, :func:`model_hops` and :func:`model_sampling` read models.json;
:func:`model_defaults` gives all of a model's settings for one question.
The command line (:mod:`orchestrator.cli.run`) and the evaluation harness (:mod:`evals`) both
call in here; nothing here parses arguments or prints.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.checks import hops_in_force
from orchestrator.llm import (
    APIStatusError,
    CallTimeBudgetError,
    ChatClient,
    ContextOverflowError,
    GuardedClient,
    LLMError,
    LLMTimeoutError,
    ModelEntry,
    ModelsFile,
    ModelsFileError,
    ResponseTooLargeError,
    RetryExhaustedError,
    RunInterruptedError,
    RunStop,
    SamplingSettings,
    SupportsChat,
    read_models_file,
)
from orchestrator.loop import (
    CorpusRun,
    LoopResult,
    Progress,
    Trace,
    TraceEvent,
    fit_documents,
    run_corpus_task,
    run_loop,
)
from orchestrator.records import (
    DIVERSITY,
    HOPS,
    HOPS_BEFORE_INTERROGATION,
    HttpLimits,
    InterruptRecord,
    RunConfig,
    RunLimits,
    RunReport,
    Task,
    TaskError,
    validate_task,
)
from orchestrator.reply import SHAPES
from orchestrator.report import (
    BackendFailure,
    LiveProgress,
    build_report,
    locked_out_dir,
    set_wall_clock,
    write_report,
)

OTEL_VARIABLE = "LOGIC_GRAPH_OTEL"
"""Set to ``otlp`` or a file path, each run's OpenTelemetry spans go there (report/otel.py,
the ``otel`` extra)."""

__all__ = [
    "ModelDefaults",
    "RunConfig",
    "Task",
    "TaskError",
    "backend_failure",
    "default_model",
    "model_defaults",
    "model_greedy_first",
    "model_hops",
    "model_sampling",
    "model_shape",
    "run_task",
]


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
    stop: RunStop | None = None,
    budget_started: float | None = None,
) -> RunReport:
    """Answer ``task`` (``{"question", "documents" or "corpus", "expected_answer"?}``) and
    return the report. A corpus task is answered in retrieval rounds
    (:mod:`orchestrator.loop.corpus_mode`) and its report gains ``retrieval``.

    ``client`` is anything with ``ChatClient.chat``'s signature (a ChatClient, a
    ScriptedClient); ``config`` defaults to :class:`RunConfig()`; with ``out_dir``,
    report.json, report.md and trace.jsonl are written there, under a lock on the folder.
    ``progress`` is called after every model call with ``{"step", "role", "calls_done",
    "budget_calls", "cost_usd_known", "calls_cost_unknown"}``, and with ``{"announce": text,
    "round": n}`` when a corpus run rewrites its question or starts a retrieval round;
    ``context`` is copied into the report. ``budget_seconds`` is the run's wall-clock budget:
    no call starts after it, and a ChatClient call that starts gets only the time left (None:
    no budget); ``budget_started`` (a ``time.monotonic()`` time) starts it before the run, so
    that what came first (a model's start-up, probes of the server) counts in it too.
    ``report["limits"]`` reports every bound. ``stop`` (:class:`RunStop`): once requested, no
    further call is made and calls in flight are cut; the report is built from what was done
    and gains ``interrupted`` (see :func:`mark_interrupted`).

    Raises :class:`TaskError` for an invalid task or a corpus that cannot be searched, before
    any call is made (:class:`orchestrator.report.outdir.OutDirInUseError` when another run writes
    into ``out_dir``), and :class:`BackendUnusableError` when the backend refused or could not
    be reached (no key, DNS, connection refused, 401, 402, 404) before any call succeeded:
    after the first such failure no further request is sent. If calls had succeeded first, the
    run goes on and the report's ``limits.backend_error`` says what happened.
    """
    checked, config = _checked(task, config, budget_seconds)
    spans = _span_exporter()
    start = time.perf_counter()
    guard = GuardedClient(client, budget_s=budget_seconds, stop=stop, started=budget_started)
    trace_path = out_dir / "trace.jsonl" if out_dir is not None else None
    lock = locked_out_dir(out_dir) if out_dir is not None else contextlib.nullcontext()
    with lock, Trace(trace_path) as trace, _watched(progress, guard, config, checked):
        result, corpus_run = _answer(checked, guard, model, config, trace, progress)
        limits = _limits(client, config, guard)
        report = _report(
            result, corpus_run, guard, trace, started=start, limits=limits, context=context
        )
        if out_dir is not None:  # still under the folder's lock
            write_report(report, out_dir, evidence=result.evidence)
        events = trace.events()
    if spans is not None:
        spans(report, events)
    return report


def _watched(
    progress: Progress | None, guard: GuardedClient, config: RunConfig, task: Task
) -> contextlib.AbstractContextManager[object]:
    """Live progress following ``guard``'s calls while the run works, when ``progress`` is a
    :class:`LiveProgress`; else nothing."""
    if isinstance(progress, LiveProgress):
        return progress.watch(guard, config, corpus=task.corpus is not None)
    return contextlib.nullcontext()


def _report(
    result: LoopResult,
    corpus_run: CorpusRun | None,
    guard: GuardedClient,
    trace: Trace,
    *,
    started: float,
    limits: RunLimits,
    context: dict[str, Any] | None,
) -> RunReport:
    """The report of the finished (or interrupted) run begun at ``started`` (a
    ``time.perf_counter()`` time), under ``limits``: the backend failure it blames, if any,
    its interruption and its timing; a ``report`` event in the trace."""
    built = time.perf_counter()
    # An interrupted run's unanswered calls are the interrupt's doing, not the backend's.
    failure = None if guard.interrupted else _backend_failed(guard, result)
    if failure is not None:
        trace.event("backend_failed", error=failure.reason)
    report = build_report(
        result,
        wall_s=built - started,
        trace_file=trace.path.name if trace.path is not None else None,
        context=context,
        limits=limits,
        corpus=corpus_run,
        backend_failure=failure,
    )
    report["timing"]["local_s"]["report"] = round(time.perf_counter() - built, 6)
    if guard.interrupted:
        mark_interrupted(report, guard.stop.reason if guard.stop is not None else None)
        trace.event("interrupted", **report["interrupted"])
    set_wall_clock(report, time.perf_counter() - started)
    trace.event(
        "report",
        refused=report["refused"],
        refusal_reason=report["refusal_reason"],
        stop_reason=report["stop_reason"],
        calls=report["totals"]["calls"],
        wall_s=report["timing"]["wall_s"],
    )
    return report


def _span_exporter() -> Callable[[RunReport, list[TraceEvent]], None] | None:
    """What sends a run's OpenTelemetry spans where ``LOGIC_GRAPH_OTEL`` says, or None when it
    is unset; loads the otel extra only then, and says so before any call if it is missing."""
    target = os.environ.get(OTEL_VARIABLE)
    if not target:
        return None
    try:
        from orchestrator.report import export_run
    except ImportError as exc:
        raise TaskError(
            f"{OTEL_VARIABLE} is set but the otel extra is missing ({exc}); "
            "pip install -e '.[otel]', or unset it"
        ) from None
    return lambda report, events: export_run(report, events, target)


def mark_interrupted(report: RunReport, by: str | None) -> None:
    """Mark ``report`` as the report of a run stopped early: ``interrupted`` (what stopped it,
    how many calls were not made or cut off), and a headline and statement that say so. The
    outcome itself stays what the finished part of the run established."""
    stopped = sum(
        1
        for call in report["calls"]
        if (call["error"] or "").startswith(f"{RunInterruptedError.__name__}:")
    )
    record: InterruptRecord = {"by": by or "stop requested", "calls_stopped": stopped}
    report["interrupted"] = record
    report["headline"] = f"Interrupted ({record['by']}); {report['headline']}"
    report["statement"] = (
        f"The run was interrupted ({record['by']}): {stopped} call(s) were not made or were cut "
        f"off, and this report covers only what was done before. {report['statement']}"
    )


def _checked(
    task: dict[str, Any] | Task, config: RunConfig | None, budget_seconds: float | None
) -> tuple[Task, RunConfig]:
    """The validated task and the run's settings (the documents of a plain task fitted to the
    context window); raises :class:`TaskError` before any call."""
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
    return checked, config


def _answer(
    task: Task,
    client: GuardedClient,
    model: str,
    config: RunConfig,
    trace: Trace,
    progress: Progress | None,
) -> tuple[LoopResult, CorpusRun | None]:
    """Run the loop, or the retrieval rounds of a corpus task: the (last) loop's result and
    the corpus run, if any. Raises :class:`BackendUnusableError` when the backend could not
    be used before any call succeeded."""
    corpus_run = None
    if task.corpus is None:
        result = run_loop(
            task, client=client, model=model, config=config, trace=trace, progress=progress
        )
    else:
        corpus_run = run_corpus_task(
            task, client=client, model=model, config=config, trace=trace, progress=progress
        )
        result = corpus_run.result
    if client.unusable is not None and client.succeeded == 0:
        trace.event("backend_unusable", kind=client.unusable.kind, error=str(client.unusable))
        raise client.unusable.fresh()
    return result, corpus_run


def _limits(client: SupportsChat, config: RunConfig, guard: GuardedClient) -> RunLimits:
    """Every bound this run ran under, and whether it bit (report.json ``limits``)."""
    max_tokens = {
        "interrogation": config.max_tokens_interrogation,
        "repair": config.max_tokens_interrogation,
        "verification": config.max_tokens_verification,
    }
    if config.think_first:
        max_tokens["think"] = config.max_tokens_think
    http: HttpLimits | None = None
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


def default_model(models_path: Path | None = None) -> str:
    """``default_model`` from models.json (default: the repository's); raises
    :class:`TaskError` when the file cannot be read or names no default."""
    models = _models_file(models_path)
    if models.default_model is None:
        raise TaskError(f"no --model given and {models.path} has no 'default_model'")
    return models.default_model


def model_shape(model: str, models_path: Path | None = None) -> str:
    """The ``interrogation_shape`` models.json sets for ``model``; ``graph`` when the model
    or the setting is missing (an unknown value fails in :class:`RunConfig`)."""
    return _shape_of(_model_entry(model, models_path))


def model_greedy_first(model: str, models_path: Path | None = None) -> bool:
    """The ``greedy_first`` models.json sets for ``model`` (run ``r1`` at temperature 0, see
    :class:`RunConfig`); False when the model or the setting is missing."""
    return _greedy_first_of(_model_entry(model, models_path))


def model_hops(model: str, models_path: Path | None = None) -> str:
    """The ``hops`` models.json sets for ``model`` (ask hop by hop, see :class:`RunConfig`);
    ``off`` when the model or the setting is missing (an unknown value fails on reading the
    file, naming the field)."""
    return _hops_of(_model_entry(model, models_path))


def model_sampling(model: str, models_path: Path | None = None) -> SamplingSettings:
    """The sampling settings models.json sets for ``model`` (:class:`SamplingSettings`),
    only those present (empty when the model is missing); :func:`model_defaults` gives a
    question's, hop budget included. :class:`RunConfig` checks their values, naming the
    field."""
    return _model_entry(model, models_path).sampling()


def _shape_of(entry: ModelEntry) -> str:
    return entry.interrogation_shape or "graph"


def _greedy_first_of(entry: ModelEntry) -> bool:
    return entry.greedy_first is True


def _hops_of(entry: ModelEntry) -> str:
    return entry.hops or "off"


@dataclass(frozen=True)
class ModelDefaults:
    """What models.json sets for a run of one model on one task (each setting as the function
    of its name reads it): the run's sampling settings, the interrogation shape, whether
    ``r1`` is greedy, the hop setting, what makes its runs differ and whether they are
    adaptive. ``word_problem``: the entry's ``word_problems`` settings were applied."""

    sampling: SamplingSettings
    shape: str
    greedy_first: bool
    hops: str
    diversity: str = "sample"
    adaptive: bool = False
    word_problem: bool = False


def model_defaults(
    model: str,
    task: Task,
    *,
    hops: str | None = None,
    shape: str | None = None,
    models_path: Path | None = None,
) -> ModelDefaults:
    """The settings models.json gives ``model`` for ``task``, the hop setting ``hops`` and
    the interrogation shape ``shape`` when the caller gives them.

    A run that will ask its hops first (:func:`orchestrator.checks.hops_in_force`) gets the
    entry's ``hop_budget_calls`` as its budget, where it sets one. A numeric word problem
    (:attr:`Task.is_numeric_word_problem`) gets the entry's ``word_problems`` settings in place
    of its own, where they set one, and no hops unless ``hops`` is given; not when ``shape``
    is given: those settings were measured together with their shape, and a caller who chose
    another shape gets the entry's own.
    """
    entry = _model_entry(model, models_path)
    greedy_first = _greedy_first_of(entry)
    own = entry.word_problems if shape is None and task.is_numeric_word_problem else None
    if own is None:
        setting = hops or _hops_of(entry)
        return ModelDefaults(
            sampling=entry.sampling(
                hops_in_force(setting, task.question) in HOPS_BEFORE_INTERROGATION
            ),
            shape=shape or _shape_of(entry),
            greedy_first=greedy_first,
            hops=setting,
        )
    # A word problem's statement is its only evidence: there are no hops to look up, and
    # its settings were measured without them.
    return ModelDefaults(
        sampling=entry.sampling(word_problem=True),
        shape=own.interrogation_shape or _shape_of(entry),
        greedy_first=greedy_first if own.greedy_first is None else own.greedy_first,
        hops=hops or "off",
        diversity=own.diversity or "sample",
        adaptive=own.adaptive is True,
        word_problem=True,
    )


def _models_file(models_path: Path | None) -> ModelsFile:
    """models.json read once (:func:`read_models_file`); its error becomes a
    :class:`TaskError` (refused before any call)."""
    try:
        return read_models_file(
            models_path,
            choices={"hops": HOPS, "interrogation_shape": SHAPES, "diversity": DIVERSITY},
        )
    except ModelsFileError as exc:
        raise TaskError(str(exc)) from exc


def _model_entry(model: str, models_path: Path | None) -> ModelEntry:
    """The models.json entry for ``model``; one without settings when the file does not
    list it."""
    return _models_file(models_path).entry(model) or ModelEntry(model)


def _backend_failed(guard: GuardedClient, result: LoopResult) -> BackendFailure | None:
    """The backend failure the report blames, when no reply the outcome rests on arrived."""
    unanswered = _no_reply(guard, result)
    if unanswered is None or guard.last_error is None:
        return None
    return BackendFailure(*backend_failure(guard.last_error, guard.budget_s, unanswered))


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
    elif isinstance(last, ResponseTooLargeError):
        fix = (
            "the server sent answers larger than the client reads (a broken or hostile "
            "server: every request carries max_tokens): check the server and its logs"
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
