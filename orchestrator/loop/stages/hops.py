"""The hop stage: when the first chain fails the checks, read the plan off the question (or ask
the model for one), ask each lookup alone, and hand the loop the chain the hops amount to as one
more run (rules in :mod:`orchestrator.checks.hops`).

Every call here is greedy (temperature 0): a lookup is a single-fact question, which small
models answer best without sampling. The plan and each lookup cost one call each, reserved from
the run's budget one at a time, so a budget that runs out stops the hops where they are. A
failed call, an unreadable reply or a hop that fails its check ends the hops: a chain with a
broken link cannot be assembled. Nothing here raises for a model's failure.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from corpus.evidence import Evidence
from orchestrator.checks import decompose
from orchestrator.checks import hops as rules
from orchestrator.llm import ChatMessage, JsonObject
from orchestrator.loop.calls import CallSpec
from orchestrator.loop.stages.context import LoopContext
from orchestrator.loop.stages.runs import run_record
from orchestrator.records import HopsRecord, RunRecord
from orchestrator.reply import normalise_chain, parse_lookup, parse_plan, prompts, schemas

MAX_TOKENS_PLAN = 256
MAX_TOKENS_LOOKUP = 128


def hop_interrogation(ctx: LoopContext, run_id: str, trigger: str) -> tuple[HopsRecord, RunRecord]:
    """Plan, look up each hop, and return the record of what happened and the run to ingest
    (its ``graph`` set when every hop was found and the hops give an answer: one line per
    option for a comparison, else one chain)."""
    record: HopsRecord = {
        "run_id": run_id,
        "trigger": trigger,
        "plan": None,
        "plan_source": None,
        "plan_outcome": "not_asked",
        "plan_problem": None,
        "hops": [],
        "answer": None,
        "calls": 0,
    }
    lookups = _plan(ctx, run_id, record)
    if lookups is None:
        return record, run_record(run_id, "dropped", [f"hops: no plan ({record['plan_problem']})"])
    found = _look_up(ctx, run_id, lookups, record)
    record["hops"] = [hop.to_dict() for hop in found]
    answer = rules.hop_answer(ctx.inputs.task.question, found)
    record["answer"] = answer
    ctx.trace.event(
        "hops", run_id=run_id, plan=record["plan"], statuses=[hop.status for hop in found]
    )
    if answer is None:
        why = f"hops: no answer ({dict(rules.hop_summary(found))})"
        return record, run_record(run_id, "dropped", [why])
    join = rules.assembled_join(ctx.inputs.task.question, found, answer, ctx.inputs.spans)
    if join is not None:
        compared = rules.compared_entities(ctx.inputs.task.question, found)
        ctx.graph.told_apart = ctx.graph.told_apart | compared
        return record, run_record(run_id, "strict", [], graph=join)
    graph, errors, problem = normalise_chain(
        rules.assembled_chain(found, answer), ctx.inputs.spans, len(found)
    )
    if graph is None:  # pragma: no cover - every found hop cites a known sentence
        why = f"hops: the chain could not be built ({problem})"
        return record, run_record(run_id, "dropped", [*errors, why])
    return record, run_record(run_id, "strict", errors, graph=graph)


def _plan(ctx: LoopContext, run_id: str, record: HopsRecord) -> list[str] | None:
    """The checked plan, or None with the reason in ``record``: read off the question's
    grammar when it unwinds (:func:`orchestrator.checks.decompose.decompose`, no call), else asked
    of the model (one call)."""
    unwound = decompose(ctx.inputs.task.question)
    if unwound is not None:
        record["plan"], record["plan_outcome"], record["plan_source"] = unwound, "read", "question"
        record["plan_problem"] = rules.plan_problem(unwound, ctx.inputs.task.question)
        return None if record["plan_problem"] else unwound
    record["plan_source"] = "model"
    if not ctx.caller.budget.try_reserve():
        record["plan_problem"] = "call budget exhausted"
        return None
    shape = schemas.plan_response_format() if ctx.inputs.config.structured_output else None
    messages = prompts.plan_messages(ctx.inputs.task.question)
    outcome = ctx.call(_spec(run_id, "plan", messages, shape, MAX_TOKENS_PLAN, ctx))
    record["calls"] += 1
    if outcome.text is None:
        record["plan_outcome"] = "call_failed"
        record["plan_problem"] = str(outcome.error)
        return None
    parsed = parse_plan(outcome.text)
    outcome.record["parse_outcome"] = parsed.outcome
    record["plan_outcome"] = parsed.outcome
    if parsed.value is None:
        record["plan_problem"] = "; ".join(parsed.errors) or "unreadable"
        return None
    lookups: list[str] = list(parsed.value)
    record["plan"] = lookups
    problem = rules.plan_problem(lookups, ctx.inputs.task.question)
    record["plan_problem"] = problem
    return None if problem else lookups


def _look_up(
    ctx: LoopContext, run_id: str, lookups: list[str], record: HopsRecord
) -> list[rules.Hop]:
    """Each lookup in order until one fails; the hops not asked are kept as such."""
    found: list[rules.Hop] = []
    answers: list[str] = []
    for number, planned in enumerate(lookups, 1):
        asked = rules.fill(planned, answers)
        if len(answers) < number - 1 or not ctx.caller.budget.try_reserve():
            why = "an earlier hop failed" if len(answers) < number - 1 else "call budget exhausted"
            found.append(rules.Hop(number, planned, asked, detail=why))
            continue
        hop = _ask(ctx, run_id, number, planned, asked, answers, ctx.inputs.evidence, record)
        if hop.status in RETRIED and hop.sentence is not None and ctx.caller.budget.try_reserve():
            # One more try without the document the refused sentence stands in: the 1.5B
            # answers from a look-alike's paragraph ("Arlstone Works" for "Arlfield Works").
            shown = _without_document(ctx.inputs.evidence, hop.sentence)
            again = _ask(ctx, run_id, number, planned, asked, answers, shown, record)
            hop = replace(again, detail=f"second try, without the document of {hop.sentence} "
                          f"({hop.status}): {again.detail}")  # fmt: skip
        found.append(hop)
        if hop.status == rules.FOUND and hop.answer is not None:
            answers.append(hop.answer)
    return found


RETRIED = (rules.NOT_IN_SENTENCE, rules.OFF_HOP)
"""Hop failures worth one more call: the model read the wrong paragraph."""


def _ask(
    ctx: LoopContext,
    run_id: str,
    number: int,
    planned: str,
    asked: str,
    answers: list[str],
    shown: Evidence,
    record: HopsRecord,
) -> rules.Hop:
    """One lookup call (already reserved) against the ``shown`` evidence, judged."""
    structured = ctx.inputs.config.structured_output
    shape = schemas.lookup_response_format(shown.ids) if structured else None
    messages = prompts.lookup_messages(shown, asked, layout=ctx.inputs.config.prompt_layout)
    outcome = ctx.call(_spec(run_id, "lookup", messages, shape, MAX_TOKENS_LOOKUP, ctx, number))
    record["calls"] += 1
    hop = _judge(ctx, number, planned, asked, outcome.text, answers, outcome.error)
    if outcome.text is not None:
        readable = hop.status != rules.UNREADABLE
        outcome.record["parse_outcome"] = "strict" if readable else "dropped"
    return hop


def _without_document(evidence: Evidence, span_id: str) -> Evidence:
    """``evidence`` less the document that ``span_id`` belongs to (span ids unchanged)."""
    span = evidence.get(span_id)
    document = span.document if span is not None else -1
    return Evidence(tuple(s for s in evidence.spans if s.document != document))


def _judge(
    ctx: LoopContext,
    number: int,
    planned: str,
    asked: str,
    text: str | None,
    answers: list[str],
    error: Any,
) -> rules.Hop:
    """One hop's outcome from its reply."""
    if text is None:
        return rules.Hop(number, planned, asked, status=rules.CALL_FAILED, detail=str(error))
    parsed = parse_lookup(text)
    if parsed.value is None:
        why = "; ".join(parsed.errors)
        status = rules.NO_SENTENCE if "no sentence" in why else rules.UNREADABLE
        return rules.Hop(number, planned, asked, status=status, detail=why)
    span_id, answer = parsed.value
    span = ctx.inputs.evidence.get(span_id)
    if span is None:
        detail = f"{span_id!r} is no evidence sentence"
        return rules.Hop(number, planned, asked, span_id, answer, rules.NO_SENTENCE, detail)
    bridges = [answers[ref - 1] for ref in rules.references(planned, number)]
    value = rules.read_value(span.checked_text, answer, asked, bridges)
    problem = rules.hop_problem(span.checked_text, value, asked, bridges)
    if problem is None:
        detail = f"cites {span.id}"
        if value != answer:
            detail += f", whose value is {value!r} (the reply wrote {answer!r})"
        return rules.Hop(number, planned, asked, span.id, value, rules.FOUND, detail)
    # The citation check's repair, for a hop: a wrong sentence number with the right value is
    # read as the one sentence that carries the hop, when exactly one does. Only a sentence
    # that carries the reply's own value counts: a value taken off a sentence that does not
    # would "correct" a look-alike's value into the right paragraph's, an answer the model
    # never gave. That sentence may still write the value whole ("Elvow": "Elvow River").
    carrying = [
        other
        for other in ctx.inputs.evidence.spans
        if rules.hop_problem(other.checked_text, answer, asked, bridges) is None
    ]
    if len(carrying) == 1:
        carrier = carrying[0]
        detail = f"cites {carrier.id} (cited as {span.id}: {problem[1]})"
        value = _read(carrier.checked_text, answer, asked, bridges)
        return rules.Hop(number, planned, asked, carrier.id, value, rules.FOUND, detail)
    return rules.Hop(number, planned, asked, span.id, value, *problem)


def _read(sentence: str, answer: str, asked: str, bridges: list[str]) -> str:
    """``answer`` read as ``sentence``, which carries it, writes it
    (:func:`orchestrator.checks.hops.read_value`), when the sentence carries that reading
    too; else ``answer``."""
    value = rules.read_value(sentence, answer, asked, bridges)
    return value if rules.hop_problem(sentence, value, asked, bridges) is None else answer


def _spec(
    run_id: str,
    role: str,
    messages: list[ChatMessage],
    response_format: JsonObject | None,
    max_tokens: int,
    ctx: LoopContext,
    number: int = 0,
) -> CallSpec:
    return CallSpec(
        step="fan_out",
        role=role,
        subject=run_id,
        messages=messages,
        response_format=response_format,
        max_tokens=max_tokens,
        seed=ctx.seed(role, run_id, number),
        temperature=0.0,
    )
