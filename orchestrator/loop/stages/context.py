"""What every stage of one run shares, in three records: the run's fixed inputs
(:class:`RunInputs`), the call machinery and its accounting (:class:`Caller`), and the graph
built so far (:class:`GraphState`, whose store is the one copy of the graph); plus the trace.
Plumbing only; no rule lives here."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from corpus.evidence import Evidence, build_evidence
from graph_server.record_data import NodeData, node_data
from graph_server.store import GraphStore
from orchestrator.checks import ChainContext, hops_in_force
from orchestrator.llm import SupportsChat
from orchestrator.loop.budget import CallBudget
from orchestrator.loop.calls import CallOutcome, CallSpec, make_call
from orchestrator.loop.policy import call_seed
from orchestrator.loop.trace import Trace, TraceEvent
from orchestrator.records import CallRecord, PhaseRecord, RunConfig, Task
from orchestrator.reply import ComplianceTally, normalise_text

GRAPH_ID = "task"

MAX_PARALLEL_CALLS = 64
"""Thread-pool ceiling; calls beyond it queue (the budget, not this, bounds how many run)."""

Progress = Callable[[TraceEvent], None]


@dataclass(frozen=True)
class RunInputs:
    """What one run is given and never changes: the task, the model, the settings, and what
    is read off the task once (its evidence spans, their normalised texts for the entity
    look-ups, the chain checks' context, span id -> text, the hop setting in force)."""

    task: Task
    model: str
    config: RunConfig
    evidence: Evidence
    evidence_texts: tuple[str, ...]
    chain: ChainContext
    spans: dict[str, str]
    hops: str
    """``config.hops`` as it applies to this question: ``auto`` is read here, once, as ``first``
    or ``off``."""

    @classmethod
    def of(cls, task: Task, model: str, config: RunConfig) -> RunInputs:
        """The inputs of a run of ``model`` on ``task``; the evidence is split once here."""
        evidence = build_evidence(task.documents, task.headings or None)
        return cls(
            task=task,
            model=model,
            config=config,
            evidence=evidence,
            # Normalised once: every assessment looks entity answers up in these. A corpus
            # chunk's heading is shown with it, so an answer read there came from the evidence.
            evidence_texts=tuple(normalise_text(text) for text in _shown_texts(evidence)),
            chain=ChainContext.of(
                task.question,
                (span.checked_text for span in evidence.spans),
                {span.id: span.reading for span in evidence.spans if span.reading},
            ),
            spans={span.id: span.text for span in evidence.spans},
            hops=hops_in_force(config.hops, task.question),
        )


def _shown_texts(evidence: Evidence) -> list[str]:
    """Every text the prompts show of ``evidence``: its spans, then each heading once, in
    document order (:attr:`corpus.evidence.Span.heading`; inline documents have none)."""
    headings = dict.fromkeys(span.heading for span in evidence.spans if span.heading)
    return [span.text for span in evidence.spans] + list(headings)


@dataclass
class Caller:
    """The call machinery and what it accounts: the client, the call budget, the progress
    callback, and the records worker threads append to under ``lock`` (every call's record,
    the phases' model waits, the reply-parsing tally, the non-model time by name)."""

    client: SupportsChat
    budget: CallBudget
    progress: Progress | None
    records: list[CallRecord] = field(default_factory=list)
    phases: list[PhaseRecord] = field(default_factory=list)
    compliance: ComplianceTally = field(default_factory=ComplianceTally)
    local_s: dict[str, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class GraphState:
    """The graph built so far: the store (the one copy of the graph; read it, never a copy)
    and the first claim seen under each node id (for the report's merge lines)."""

    store: GraphStore = field(default_factory=GraphStore)
    claims: dict[str, str] = field(default_factory=dict)
    checked: set[str] = field(default_factory=set)
    """Claims the system checked against their sentences itself (a hop's values), which no
    verification round asks about (:func:`orchestrator.checks.assess.assess`)."""
    told_apart: frozenset[str] = frozenset()
    """Names the hops found for a comparison's two options
    (:func:`orchestrator.checks.hops.compared_entities`), which the chain check takes for two
    things, never for look-alikes of each other (:meth:`ChainContext.telling_apart`)."""

    def has_graph(self) -> bool:
        """Whether any run reached the store yet."""
        return any(g.graph_id == GRAPH_ID for g in self.store.list_graphs().graphs)

    def nodes(self) -> dict[str, NodeData]:
        """The graph's nodes as the store has them now, by id (none before any run)."""
        if not self.has_graph():
            return {}
        return {node.id: node_data(node) for node in self.store.get_graph(GRAPH_ID).nodes}


@dataclass
class LoopContext:
    """One run's shared state: its inputs, its call machinery, its graph and its trace."""

    inputs: RunInputs
    caller: Caller
    graph: GraphState
    trace: Trace

    def call(self, spec: CallSpec) -> CallOutcome:
        """Make one reserved logical call (:func:`orchestrator.loop.calls.make_call`), keep its
        record, trace it and report progress."""
        caller = self.caller
        outcome = make_call(caller.client, self.inputs.model, spec)
        record = outcome.record
        with caller.lock:
            caller.records.append(record)
            done = len(caller.records)
            known = sum(r["cost_usd"] for r in caller.records if r["cost_usd"] is not None)
            unknown = sum(1 for r in caller.records if r["cost_usd"] is None)
        self.trace.event(
            "call",
            step=spec.step,
            role=spec.role,
            subject=spec.subject,
            vote=spec.vote,
            ok=record["ok"],
            latency_s=record["latency_s"],
            attempts=record["attempts"],
            error=record["error"],
        )
        if caller.progress is not None:
            caller.progress(
                {
                    "step": spec.step,
                    "role": spec.role,
                    "calls_done": done,
                    "budget_calls": caller.budget.limit,
                    "cost_usd_known": round(known, 12),
                    "calls_cost_unknown": unknown,
                }
            )
        return outcome

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Add the block's wall time to ``caller.local_s[name]`` (where the non-model time
        goes)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            with self.caller.lock:
                local_s = self.caller.local_s
                local_s[name] = local_s.get(name, 0.0) + time.perf_counter() - start

    def seed(self, *parts: object) -> int | None:
        """The call's seed (:func:`orchestrator.loop.policy.call_seed` of ``config.seed``)."""
        return call_seed(self.inputs.config.seed, *parts)
