"""The control loop (design §4.1): fan out, merge, assess, re-interrogate, stop, decide.

One call of :func:`run_loop` answers one task with a fresh in-memory graph:

1. **Fan out** ``n`` interrogations in a thread pool (fresh context each; with
   ``think_first`` each is a plain-text reasoning turn followed by the graph turn). Each reply
   is parsed by :func:`orchestrator.reply.parse.parse_graph`; a reply that is not strict JSON gets
   one repair call when the budget allows, then salvage, else the run is dropped. Runs are
   anchored to the evidence (:mod:`orchestrator.checks.anchor`: givens must pass the citation check
   and become span nodes, conclusions become answer nodes) and ingested in order as run
   ``r<i>``.
2. **Merge** duplicates across runs; every merge and contradiction, at ingest or in this
   pass, is kept for the report. Then **settle the attacks**: a run's ``attacks`` edges are
   held back during the fan-out and asserted only now, each when the runs that drew it are at
   least half as many as the runs behind the claim it attacks, and at least two when two or
   more runs are usable. One run's stray attack must not sink an answer five runs reached, nor
   a cited sentence two runs rest on (the 0.5B model draws attacks almost at random), while an
   objection that runs repeat still counts; every attack, counted or set aside, is reported.
3. **Assess** (:mod:`orchestrator.checks.assess`): ranked candidate answers and the disputed queue.
4. **Stop?** In this order: ``no_candidates`` (nothing to judge), ``no_disputes``,
   ``width_reached`` (the ranking did not change in the last round and the top candidate is
   grounded with width >= k), ``disputes_exhausted`` (every disputed claim left was already
   verified once; claims are never re-interrogated), ``deadline_reached`` (the run's
   wall-clock budget is spent), ``budget_exhausted`` (fewer calls left than one verification
   needs).
5. **Re-interrogate** up to ``max_per_round`` untried disputed claims with ``m_verify`` fresh
   verification calls each (the claim and the documents only), then apply the majority
   verdict, and go back to 3.
6. **Decide**: answer with the top candidate, or refuse (``all_runs_failed``,
   ``no_grounded_conclusion``, ``candidates_tied``, ``runs_found_no_answer``, ``below_k``
   when ``require_k`` is set and the answer's width is below k, or ``no_evidence`` for a task
   without documents, which makes no call at all).
   ``stop_reason`` says why the loop ended; ``refusal_reason`` says why no answer is given.
   They are independent.

Each step is a stage of :mod:`orchestrator.loop.stages` (fan-out, anchoring and ingest, merging,
attack settling, assessment, verification rounds, decision details) with typed input and
output; the rules (stop, decide, the attack quorum, the verdict rule) are the pure functions of
:mod:`orchestrator.loop.policy`; every model call is made and recorded by
:func:`orchestrator.loop.calls.make_call`. This module is the driver that runs them.

Budget: :class:`orchestrator.loop.budget.CallBudget` caps logical calls; every call is reserved
before it is made. A verification starts only when all ``m_verify`` of its calls can be
reserved at once: a partial set could miss the majority or the all-not-determinable rule and
would spend calls on a verdict that cannot count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from corpus.evidence import Evidence
from graph_server.record_data import GraphData
from orchestrator.checks import Assessment, Candidate
from orchestrator.llm import SupportsChat
from orchestrator.loop.budget import CallBudget
from orchestrator.loop.policy import Stop, decide, stop_rule
from orchestrator.loop.stages.context import (
    GRAPH_ID,
    MAX_PARALLEL_CALLS,
    Caller,
    GraphState,
    LoopContext,
    Progress,
    RunInputs,
)
from orchestrator.loop.stages.decision import Details, assess_graph, decision_details
from orchestrator.loop.stages.fan_out import fan_out
from orchestrator.loop.stages.hops import hop_interrogation
from orchestrator.loop.stages.leave_out import flipped, leave_argument_out
from orchestrator.loop.stages.merge import (
    Ingested,
    MergePass,
    ingest_run,
    merge_pass,
    settle_attacks,
)
from orchestrator.loop.stages.runs import run_record
from orchestrator.loop.stages.verify import verification_round
from orchestrator.loop.trace import Trace
from orchestrator.records import (
    HOPS_BEFORE_INTERROGATION,
    AnswerRecord,
    AttackRecord,
    CallRecord,
    CitationRecord,
    ContradictionRecord,
    HopsRecord,
    LeaveOutRecord,
    MergeRecord,
    PhaseRecord,
    RunConfig,
    RunRecord,
    StopReason,
    Task,
    VerificationRecord,
)
from orchestrator.reply import prompts

__all__ = ["GRAPH_ID", "MAX_PARALLEL_CALLS", "LoopResult", "Progress", "decide", "run_loop"]


@dataclass
class LoopResult:
    """Everything one run established; :mod:`orchestrator.report.build` turns it into a report."""

    task: Task
    model: str
    config: RunConfig
    started_at: str
    runs: list[RunRecord]
    calls: list[CallRecord]
    merges: list[MergeRecord]
    contradictions_created: list[ContradictionRecord]
    citations: list[CitationRecord]
    attacks: list[AttackRecord]
    evidence: Evidence
    answers: dict[str, AnswerRecord]
    verifications: list[VerificationRecord]
    rounds: int
    assessment: Assessment
    interrogated: list[str]
    stop_reason: StopReason
    stop_detail: str
    refusal_reason: str | None
    chosen: Candidate | None
    structure: dict[str, dict[str, Any]]
    critical_links: dict[str, Any] | None
    graph: GraphData
    budget_used: int
    model_wait_s: float
    compliance: dict[str, Any]
    phases: list[PhaseRecord] = field(default_factory=list)
    local_s: dict[str, float] = field(default_factory=dict)
    hops: HopsRecord | None = None
    leave_out: LeaveOutRecord | None = None


@dataclass
class Verified:
    """The assess -> stop? -> verify cycle's result: the last assessment, the rounds run, the
    claims verified (in order), one record per verification, and why it stopped."""

    assessment: Assessment
    rounds: int
    interrogated: list[str]
    verifications: list[VerificationRecord]
    stop: Stop


def run_loop(
    task: Task,
    *,
    client: SupportsChat,
    model: str,
    config: RunConfig,
    trace: Trace,
    progress: Progress | None = None,
) -> LoopResult:
    """Run the control loop on a validated task; never makes more than
    ``config.budget_calls`` logical calls. Model failures and bad replies are recorded, not
    raised, and so is any exception a client's ``chat`` raises (wrapped in
    :class:`orchestrator.llm.errors.UnexpectedClientError`); programming errors of the loop itself
    (and :class:`graph_server.errors.StoreError`) propagate."""
    ctx = LoopContext(
        RunInputs.of(task, model, config),
        Caller(client, CallBudget(config.budget_calls), progress),
        GraphState(),
        trace,
    )
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    trace.event(
        "start",
        model=model,
        config=config.to_dict(),
        documents=len(task.documents),
        prompt_versions=prompts.prompt_versions(config.prompt_layout),
    )
    ingested = Ingested()
    first_hops = _ask_hop_by_hop_first(ctx, ingested)
    runs = _interrogate(ctx, ingested, hops_asked=first_hops is not None)
    if first_hops is not None:
        runs.append(first_hops[1])
    merged = merge_pass(ctx, ingested)
    usable = _usable(runs)
    with ctx.timed("attacks"):
        settle_attacks(ctx, ingested, usable)
    trace.event("merge", merges=merged.merges, contradictions_created=merged.contradictions_created)
    hops, merged = (
        (first_hops[0], merged) if first_hops else _ask_hop_by_hop(ctx, ingested, runs, merged)
    )
    left_out = _leave_out(ctx, ingested, runs)
    if left_out is not None:
        merged = merge_pass(ctx, ingested)
    usable = _usable(runs)
    verified = _verify_until_stop(ctx, ingested, usable)
    if hops is None and ctx.inputs.hops == "on_failure":
        # The verification refuted what had grounded the answer: that is a failed first
        # chain too, found later, and the calls left may still ask it hop by hop.
        hops, merged = _ask_hop_by_hop(ctx, ingested, runs, merged)
        if hops is not None:
            usable = _usable(runs)
            verified = _verify_until_stop(ctx, ingested, usable, verified)
    trace.event("stop", stop_reason=verified.stop.reason, detail=verified.stop.detail)
    refusal, chosen = _decision(ctx, ingested, usable, verified, left_out)
    details = decision_details(ctx, verified.assessment, chosen, merged.has_graph)
    result = _result(ctx, started_at, runs, ingested, verified, (refusal, chosen), details)
    result.hops, result.leave_out = hops, left_out
    return result


def _usable(runs: list[RunRecord]) -> int:
    """How many runs put something into the graph."""
    return sum(1 for run in runs if run["ingested"])


def _decision(
    ctx: LoopContext,
    ingested: Ingested,
    usable: int,
    verified: Verified,
    left_out: LeaveOutRecord | None,
) -> tuple[str | None, Candidate | None]:
    """The run's :func:`decide` on the last assessment (fragile when the leave-out run
    flipped it), traced."""
    config = ctx.inputs.config
    refusal, chosen = decide(
        verified.assessment,
        usable,
        ingested.unanswerable_runs(),
        has_evidence=bool(ctx.inputs.evidence.spans),
        require_width=config.k if config.require_k else None,
        fragile=flipped(verified.assessment, left_out),
    )
    ctx.trace.event(
        "decide",
        refusal_reason=refusal,
        chosen=chosen.node_id if chosen else None,
        width=chosen.width if chosen else None,
    )
    return refusal, chosen


def _interrogate(ctx: LoopContext, ingested: Ingested, *, hops_asked: bool) -> list[RunRecord]:
    """The fan-out: all ``n`` runs at once, or with ``config.adaptive`` the first alone and
    the others only when it gives no grounded answer (the others are then recorded as not
    started, not needed). None is started when the hops, asked first (``hops_asked``), gave a
    grounded answer, nor with the hops only (``only``) when they gave none: the run then
    refuses."""

    def ingest(run: RunRecord) -> None:
        ingest_run(ctx, ingested, run)

    n = ctx.inputs.config.n
    if hops_asked and (why := _settled_by_hops(ctx, ingested)):
        return [run_record(f"r{i}", "not_started", [why]) for i in range(1, n + 1)]
    if not ctx.inputs.config.adaptive or n == 1:
        return fan_out(ctx, ingest)
    runs = fan_out(ctx, ingest, range(1, 2))
    merge_pass(ctx, ingested)
    if _grounded_answer(ctx, ingested):
        why = "not needed: r1 gave a grounded answer (adaptive)"
        return runs + [run_record(f"r{i}", "not_started", [why]) for i in range(2, n + 1)]
    return runs + fan_out(ctx, ingest, range(2, n + 1))


def _settled_by_hops(ctx: LoopContext, ingested: Ingested) -> str | None:
    """Why no interrogation is started after the hops: they gave a grounded answer, or they
    gave none with the hops only (``only``); None when the interrogations are still asked."""
    if _grounded_answer(ctx, ingested):
        return f"not needed: the hops gave a grounded answer (hops {ctx.inputs.hops})"
    if ctx.inputs.hops == "only":
        return "not asked: the hops gave no grounded answer (hops only)"
    return None


def _grounded_answer(ctx: LoopContext, ingested: Ingested) -> bool:
    """Whether the graph as it stands gives a grounded top answer."""
    top = assess_graph(ctx, ingested.answers, 0).top
    return top is not None and top.grounded


def _leave_out(
    ctx: LoopContext, ingested: Ingested, runs: list[RunRecord]
) -> LeaveOutRecord | None:
    """With ``config.leave_out`` and a grounded top answer, one more run without the sentences
    its arguments rest on (:mod:`.stages.leave_out`); None when it did not apply."""
    if not ctx.inputs.config.leave_out:
        return None
    top = assess_graph(ctx, ingested.answers, 0).top
    if top is None or not top.grounded:
        return None
    record, run = leave_argument_out(ctx, top, len(runs) + 1)
    if run is not None:
        runs.append(run)
        with ctx.timed("ingest"):
            ingest_run(ctx, ingested, run)
        record["answer"] = run["answer"]
    return record


def _ask_hop_by_hop_first(
    ctx: LoopContext, ingested: Ingested
) -> tuple[HopsRecord, RunRecord] | None:
    """With the hops first or only (``ctx.inputs.hops``), the hop stage before any
    interrogation, as run ``r<n+1>`` (the number it has when asked after the ``n`` runs),
    ingested and its values marked checked; None otherwise. On a question that spells out its
    own hops the first chain seldom passes the checks where the lookups do, so asking them
    first saves its call."""
    if ctx.inputs.hops not in HOPS_BEFORE_INTERROGATION or not ctx.inputs.evidence.spans:
        return None
    run_id = f"r{ctx.inputs.config.n + 1}"
    record, run = hop_interrogation(ctx, run_id, "first")
    if run.get("graph") is not None:
        _ingest_hop_run(ctx, ingested, run)
    return record, run


def _ingest_hop_run(ctx: LoopContext, ingested: Ingested, run: RunRecord) -> MergePass:
    """Ingest and merge the hop stage's run, and mark the values its hops found checked
    (:attr:`GraphState.checked`): the hop check tied each to its sentence."""
    with ctx.timed("ingest"):
        ingest_run(ctx, ingested, run)
    merged = merge_pass(ctx, ingested)
    ctx.graph.checked |= {
        node_id
        for node_id, node in ctx.graph.nodes().items()
        if node["type"] == "inference" and run["run_id"] in node["run_ids"]
    }
    return merged


def _ask_hop_by_hop(
    ctx: LoopContext, ingested: Ingested, runs: list[RunRecord], merged: MergePass
) -> tuple[HopsRecord | None, MergePass]:
    """The hop stage (:mod:`orchestrator.loop.stages.hops`) when the hop setting in force
    (``ctx.inputs.hops``) asks for it now: always, or when the interrogations give no grounded
    answer; None when the stage did not run. Its run, if it assembled an argument, is ingested
    like an interrogation's and merged (the merge report returned; ``merged`` when nothing was
    merged), and the values its hops found are marked checked (:attr:`GraphState.checked`): the
    hop check tied each to its sentence."""
    setting = ctx.inputs.hops
    if setting == "off" or setting in HOPS_BEFORE_INTERROGATION or not ctx.inputs.evidence.spans:
        return None, merged
    trigger = "always"
    if setting == "on_failure":
        if _grounded_answer(ctx, ingested):
            return None, merged
        trigger = "no grounded answer"
    run_id = f"r{len(runs) + 1}"
    record, run = hop_interrogation(ctx, run_id, trigger)
    runs.append(run)
    if run.get("graph") is None:
        return record, merged
    return record, _ingest_hop_run(ctx, ingested, run)


def _verify_until_stop(
    ctx: LoopContext, ingested: Ingested, usable: int, earlier: Verified | None = None
) -> Verified:
    """Assess, and run verification rounds until a stop rule holds; after ``earlier``
    verification rounds, on from where they stopped (their claims are not asked again, and
    rounds are numbered on)."""
    interrogated = list(earlier.interrogated) if earlier else []
    verifications = list(earlier.verifications) if earlier else []
    previous: Assessment | None = None
    rounds = earlier.rounds if earlier else 0
    while True:
        current = assess_graph(ctx, ingested.answers, rounds)
        # A guarded client (orchestrator.llm.GuardedClient) knows the run's wall-clock
        # budget; once it is spent every call would be refused, so no round can help.
        stop = stop_rule(
            current,
            previous,
            interrogated,
            usable,
            k=ctx.inputs.config.k,
            m_verify=ctx.inputs.config.m_verify,
            budget_remaining=ctx.caller.budget.remaining,
            budget_limit=ctx.caller.budget.limit,
            deadline_reached=bool(getattr(ctx.caller.client, "deadline_reached", False)),
        )
        if stop is not None:
            return Verified(current, rounds, interrogated, verifications, stop)
        rounds += 1
        verifications += verification_round(ctx, rounds, current, interrogated)
        previous = current


def _result(
    ctx: LoopContext,
    started_at: str,
    runs: list[RunRecord],
    ingested: Ingested,
    verified: Verified,
    decision: tuple[str | None, Candidate | None],
    details: Details,
) -> LoopResult:
    """The stages' outputs gathered into one :class:`LoopResult`."""
    with ctx.caller.lock:
        calls = sorted(ctx.caller.records, key=_call_order)
    return LoopResult(
        task=ctx.inputs.task,
        model=ctx.inputs.model,
        config=ctx.inputs.config,
        started_at=started_at,
        runs=runs,
        calls=calls,
        merges=ingested.merges,
        contradictions_created=ingested.contradictions,
        citations=ingested.citations,
        attacks=ingested.attacks,
        evidence=ctx.inputs.evidence,
        answers=ingested.answers,
        verifications=verified.verifications,
        rounds=verified.rounds,
        assessment=verified.assessment,
        interrogated=verified.interrogated,
        stop_reason=verified.stop.reason,
        stop_detail=verified.stop.detail,
        refusal_reason=decision[0],
        chosen=decision[1],
        structure=details.structure,
        critical_links=details.critical_links,
        graph=details.graph,
        budget_used=ctx.caller.budget.used,
        model_wait_s=round(sum(p["model_wait_s"] for p in ctx.caller.phases), 6),
        compliance=ctx.caller.compliance.to_dict(),
        phases=ctx.caller.phases,
        local_s={name: round(seconds, 6) for name, seconds in sorted(ctx.caller.local_s.items())},
    )


def _call_order(record: CallRecord) -> tuple[Any, ...]:
    """Calls in the report: fan-out first, then by round, run, subject, role and vote."""
    step = record["step"]
    step_no = 0 if step == "fan_out" else int(step.split("_")[1])
    subject = record["subject"]
    run_no = int(subject[1:]) if subject[1:].isdigit() else 0
    role_no = {"think": 0, "interrogation": 1, "repair": 2, "verification": 3}.get(
        record["role"], 4
    )
    return (step_no, run_no, subject, role_no, record["vote"] if record["vote"] is not None else -1)
