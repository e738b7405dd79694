"""The fan-out: ``n`` interrogations in fresh contexts, in a thread pool, ingested in run order.

Each interrogation is one call (two with ``think_first``: plain-text reasoning, then the
graph); a reply that is not strict JSON gets one repair call when the budget allows, then
salvage (:mod:`orchestrator.reply.parse`), else the run is dropped. A dropped or failed run never
stops the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from corpus.evidence import Evidence, shuffled_order
from orchestrator.checks import parse_worked
from orchestrator.llm import ChatMessage, JsonObject
from orchestrator.loop.calls import CallSpec
from orchestrator.loop.stages.context import MAX_PARALLEL_CALLS, LoopContext
from orchestrator.loop.stages.runs import run_record
from orchestrator.records import CallRecord, RunRecord, Task
from orchestrator.reply import (
    WORKING_SHAPES,
    GraphParse,
    Repair,
    parse_chain,
    parse_graph,
    prompts,
    reasoned_messages,
    schemas,
)

Ingest = Callable[[RunRecord], None]


@dataclass(frozen=True)
class Interrogation:
    """What one run sends: its messages and response format, temperature, token cap."""

    index: int
    messages: list[ChatMessage]
    response_format: JsonObject | None
    temperature: float

    @property
    def run_id(self) -> str:
        return f"r{self.index}"


def fan_out(ctx: LoopContext, ingest: Ingest, indices: range | None = None) -> list[RunRecord]:
    """Start every run of ``indices`` (default: all ``n``) the budget allows, call ``ingest``
    on each in run order as soon as it and all earlier ones are back, and return the run
    records (started runs first, in order, then the ones not started)."""
    started: list[int] = []
    skipped: list[RunRecord] = []
    # A think-first run is two calls (reasoning, then the graph), reserved together.
    per_run = 2 if ctx.inputs.config.think_first else 1
    for index in indices if indices is not None else range(1, ctx.inputs.config.n + 1):
        if not ctx.inputs.evidence.spans:  # nothing a given could cite: no call can help
            skipped.append(run_record(f"r{index}", "not_started", ["no evidence"]))
        elif ctx.caller.budget.try_reserve(per_run):
            started.append(index)
        else:
            skipped.append(run_record(f"r{index}", "not_started", ["call budget exhausted"]))
    ctx.trace.event("fan_out", started=[f"r{i}" for i in started], skipped=len(skipped))
    runs: list[RunRecord] = []
    if started:
        with ThreadPoolExecutor(max_workers=min(len(started), MAX_PARALLEL_CALLS)) as pool:
            futures = [pool.submit(interrogate, ctx, index) for index in started]
            # Ingest in run order as soon as each run and all earlier ones are done, so the
            # store works while slower calls are still out (same result as ingesting after
            # the whole fan-out, because the order is the same).
            for future in futures:
                runs.append(future.result())
                with ctx.timed("ingest"):
                    ingest(runs[-1])
    ctx.caller.phases.append(
        {
            "phase": "fan_out",
            "model_wait_s": round(max((run["wait_s"] for run in runs), default=0.0), 6),
        }
    )
    return runs + skipped


def interrogation(ctx: LoopContext, index: int, shown: Evidence | None = None) -> Interrogation:
    """The messages, format and temperature of run ``r<index>`` in the run's shape. With
    ``diversity="shuffle"`` every run after the first is greedy and sees the documents in its
    own order (:func:`corpus.evidence.shuffled_order`), span ids kept: runs made different by
    what they see, not by sampling; with ``diversity="reword"`` run 2 is greedy and asked in
    the other working shape's words (:func:`reworded_shape`). ``shown`` (greedy, ids kept)
    replaces the evidence the run sees: leave-the-argument-out
    (:func:`orchestrator.loop.stages.leave_out`)."""
    config, evidence = ctx.inputs.config, ctx.inputs.evidence if shown is None else shown
    # With greedy_first, run r1 is the model's single best guess (see RunConfig).
    temperature = 0.0 if config.greedy_first and index == 1 else config.temperature
    order, shape = None, config.interrogation_shape
    if shown is not None:
        temperature = 0.0
    elif config.diversity == "shuffle" and index > 1:
        order, temperature = shuffled_order(len(ctx.inputs.task.documents), index), 0.0
    elif config.diversity == "reword" and index > 1:
        shape, temperature = reworded_shape(shape), 0.0
    # The working shapes' replies are plain text: there is no JSON shape to hold them to.
    if shape == "worked":
        messages = prompts.worked_messages(
            evidence, ctx.inputs.task.question, order=order, layout=config.prompt_layout
        )
        return Interrogation(index, messages, None, temperature)
    if shape == "reasoned":
        task = ctx.inputs.task
        messages = reasoned_messages(task.question, shown_documents(task, evidence, order))
        return Interrogation(index, messages, None, temperature)
    if shape == "chain":
        messages = prompts.chain_messages(
            evidence,
            ctx.inputs.task.question,
            think_first=config.think_first,
            order=order,
            layout=config.prompt_layout,
        )
        shape_format = schemas.chain_response_format(evidence.ids)
    else:
        messages = prompts.interrogation_messages(
            evidence,
            ctx.inputs.task.question,
            config.k,
            max_nodes=config.max_nodes,
            think_first=config.think_first,
            order=order,
            layout=config.prompt_layout,
        )
        shape_format = schemas.interrogation_response_format(
            config.max_nodes, config.max_edges, span_ids=evidence.ids
        )
    response_format = shape_format if config.structured_output else None
    return Interrogation(index, messages, response_format, temperature)


def reworded_shape(shape: str) -> str:
    """The working shape whose words a reworded run is asked in: the other one."""
    return next(other for other in WORKING_SHAPES if other != shape)


def shown_documents(
    task: Task, evidence: Evidence, order: Sequence[int] | None = None
) -> tuple[str, ...]:
    """The documents the reasoned shape shows: each document the evidence holds, its
    sentences joined, in ``order`` (document numbers, 1-based) or as numbered. None for a word
    problem, whose one document is its own statement: the prompt shows it once, as the
    question, as the baselines' prompt does."""
    if task.is_word_problem:
        return ()
    by_document: dict[int, list[str]] = {}
    for span in evidence.spans:
        by_document.setdefault(span.document, []).append(span.text)
    shown = list(order) if order is not None else sorted(by_document)
    return tuple(" ".join(by_document[n]) for n in shown if n in by_document)


def interrogate(ctx: LoopContext, index: int, shown: Evidence | None = None) -> RunRecord:
    """Run ``r<index>``: its calls, the parse (with repair) and its record, the parsed graph
    under ``graph``; ``shown`` as in :func:`interrogation`."""
    asked = interrogation(ctx, index, shown)
    messages, wait = asked.messages, 0.0
    if ctx.inputs.config.think_first:
        # The reasoning turn is free text; only the second turn is held to the schema.
        thought = ctx.call(
            _spec(
                asked,
                "think",
                messages,
                None,
                ctx.inputs.config.max_tokens_think,
                ctx.seed("think", index),
            )
        )
        wait += thought.record["latency_s"]
        if thought.text is None or not thought.text.strip():
            why = str(thought.error) if thought.error else "empty reasoning reply"
            return _failed_run(ctx, asked.run_id, why, wait)
        messages = prompts.commit_messages(messages, thought.text)
    first = ctx.call(
        _spec(
            asked,
            "interrogation",
            messages,
            asked.response_format,
            ctx.inputs.config.max_tokens_interrogation,
            ctx.seed("interrogation", index),
        )
    )
    wait += first.record["latency_s"]
    if first.text is None:
        return _failed_run(ctx, asked.run_id, str(first.error), wait)
    parsed, notes, repair_wait = _parse_or_repair(ctx, asked, messages, first.text)
    wait += repair_wait
    first.record["parse_outcome"] = parsed.outcome
    ctx.caller.compliance.record(ctx.inputs.model, parsed.outcome)
    errors = [*parsed.errors, *notes]
    run = run_record(asked.run_id, parsed.outcome, errors, graph=parsed.graph, wait_s=wait)
    ctx.trace.event(
        "run",
        run_id=asked.run_id,
        outcome=parsed.outcome,
        nodes=len(parsed.graph["nodes"]) if parsed.graph else 0,
        edges=len(parsed.graph["edges"]) if parsed.graph else 0,
        errors=list(run["errors"]),
    )
    return run


def _parse_or_repair(
    ctx: LoopContext, asked: Interrogation, messages: list[ChatMessage], bad_text: str
) -> tuple[GraphParse, list[str], float]:
    """The reply parsed; if it is not strict JSON, with one repair call when the budget
    allows. Returns the parse, notes for the run record and the repair calls' wait."""
    notes: list[str] = []
    wait = 0.0
    with ctx.timed("parse"):
        parsed = _parse(ctx, bad_text)
    if parsed.outcome == "strict":
        return parsed, notes, wait
    if ctx.inputs.config.interrogation_shape in WORKING_SHAPES:
        # A repair turn asks for clean JSON; a working without an answer line has none to
        # give.
        return parsed, notes, wait
    if not ctx.caller.budget.try_reserve():
        notes.append("repair skipped: call budget exhausted")
        return parsed, notes, wait
    repair_records: list[CallRecord] = []

    def repair(problem: str) -> str:
        outcome = ctx.call(
            _spec(
                asked,
                "repair",
                prompts.repair_messages(messages, bad_text, problem),
                asked.response_format,
                ctx.inputs.config.max_tokens_interrogation,
                ctx.seed("repair", asked.index),
            )
        )
        repair_records.append(outcome.record)
        if outcome.error is not None:
            raise outcome.error
        assert outcome.text is not None
        return outcome.text

    parsed = _parse(ctx, bad_text, repair)
    for record in repair_records:
        wait += record["latency_s"]
        record["parse_outcome"] = parsed.outcome
    return parsed, notes, wait


def _spec(
    asked: Interrogation,
    role: str,
    messages: list[ChatMessage],
    response_format: JsonObject | None,
    max_tokens: int | None,
    seed: int | None,
) -> CallSpec:
    return CallSpec(
        step="fan_out",
        role=role,
        subject=asked.run_id,
        messages=messages,
        response_format=response_format,
        max_tokens=max_tokens,
        seed=seed,
        temperature=asked.temperature,
    )


def _parse(ctx: LoopContext, text: str, repair: Repair | None = None) -> GraphParse:
    """An interrogation reply parsed in the run's shape (a chain is built into a graph)."""
    if ctx.inputs.config.interrogation_shape in WORKING_SHAPES:
        every_quantity = ctx.inputs.task.is_word_problem
        return parse_worked(text, ctx.inputs.spans, every_quantity=every_quantity)
    if ctx.inputs.config.interrogation_shape == "chain":
        return parse_chain(text, ctx.inputs.spans, repair)
    return parse_graph(text, repair)


def _failed_run(ctx: LoopContext, run_id: str, why: str, wait: float) -> RunRecord:
    """The record of a run whose call failed (traced; the loop goes on without it)."""
    run = run_record(run_id, "call_failed", [why], wait_s=wait)
    ctx.trace.event("run", run_id=run_id, outcome="call_failed", error=why)
    return run
