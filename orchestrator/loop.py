"""The control loop (design §4.1): fan out, merge, assess, re-interrogate, stop, decide.

One call of :func:`run_loop` answers one task with a fresh in-memory graph:

1. **Fan out** ``n`` interrogations in a thread pool (fresh context each; with
   ``think_first`` each is a plain-text reasoning turn followed by the graph turn). Each reply
   is parsed by :func:`orchestrator.parse.parse_graph`; a reply that is not strict JSON gets
   one repair call when the budget allows, then salvage, else the run is dropped. Runs are
   anchored to the evidence (:mod:`orchestrator.anchor`: givens must pass the citation check
   and become span nodes, conclusions become answer nodes) and ingested in order as run
   ``r<i>``.
2. **Merge** duplicates across runs; every merge and contradiction, at ingest or in this
   pass, is kept for the report. Then **settle the attacks**: a run's ``attacks`` edges are
   held back during the fan-out and asserted only now, each when the runs that drew it are at
   least half as many as the runs behind the claim it attacks, and at least two when two or
   more runs are usable. One run's stray attack must not sink an answer five runs reached, nor
   a cited sentence two runs rest on (the 0.5B model draws attacks almost at random), while an
   objection that runs repeat still counts; every attack, counted or set aside, is reported.
3. **Assess** (:mod:`orchestrator.assess`): ranked candidate answers and the disputed queue.
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

Budget: :class:`orchestrator.budget.CallBudget` caps logical calls; every call is reserved
before it is made. A verification starts only when all ``m_verify`` of its calls can be
reserved at once: a partial set could miss the majority or the all-not-determinable rule and
would spend calls on a verdict that cannot count.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from graph_server.store import GraphStore
from orchestrator import parse, prompts, schemas
from orchestrator.anchor import ANSWER_PREFIX, AnchoredRun, anchor_run
from orchestrator.answers import UNANSWERABLE, normalise_text
from orchestrator.assess import Assessment, Candidate, assess, engine
from orchestrator.budget import CallBudget
from orchestrator.calls import CallOutcome, CallSpec, make_call
from orchestrator.chain import ChainContext
from orchestrator.client import SupportsChat
from orchestrator.evidence import Evidence, build_evidence
from orchestrator.policy import (
    CONFIRMED_CONFIDENCE,
    UNDETERMINED_CONFIDENCE,
    attack_counts,
    call_seed,
    decide,
    majority,
    refutation_reason,
    stop_rule,
    verdict_outcome,
)
from orchestrator.task import RunConfig, Task
from orchestrator.trace import Trace

GRAPH_ID = "task"

MAX_PARALLEL_CALLS = 64
"""Thread-pool ceiling; calls beyond it queue (the budget, not this, bounds how many run)."""

Progress = Callable[[dict[str, Any]], None]


@dataclass
class LoopResult:
    """Everything one run established; :mod:`orchestrator.report` turns it into a report."""

    task: Task
    model: str
    config: RunConfig
    started_at: str
    runs: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    merges: list[dict[str, Any]]
    contradictions_created: list[dict[str, Any]]
    citations: list[dict[str, Any]]
    attacks: list[dict[str, Any]]
    evidence: Evidence
    answers: dict[str, dict[str, Any]]
    verifications: list[dict[str, Any]]
    rounds: int
    assessment: Assessment
    interrogated: list[str]
    stop_reason: str
    stop_detail: str
    refusal_reason: str | None
    chosen: Candidate | None
    structure: dict[str, dict[str, Any]]
    critical_links: dict[str, Any] | None
    graph: dict[str, Any]
    budget_used: int
    model_wait_s: float
    compliance: dict[str, Any]
    phases: list[dict[str, Any]] = field(default_factory=list)
    local_s: dict[str, float] = field(default_factory=dict)


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
    :class:`orchestrator.errors.UnexpectedClientError`); programming errors of the loop itself
    (and :class:`orchestrator.assess.EngineError`) propagate."""
    return _Loop(task, client, model, config, trace, progress).run()


class _Loop:
    def __init__(
        self,
        task: Task,
        client: SupportsChat,
        model: str,
        config: RunConfig,
        trace: Trace,
        progress: Progress | None,
    ) -> None:
        self.task = task
        self.client = client
        self.model = model
        self.config = config
        self.trace = trace
        self.progress = progress
        self.store = GraphStore()
        self.budget = CallBudget(config.budget_calls)
        self.compliance = parse.ComplianceTally()
        self.calls: list[dict[str, Any]] = []
        self.phases: list[dict[str, Any]] = []
        self.nodes: dict[str, dict[str, Any]] = {}
        self.evidence = build_evidence(task.documents)
        # Normalised once: every assessment looks entity answers up in these.
        self.evidence_texts = tuple(normalise_text(span.text) for span in self.evidence.spans)
        self.chain = ChainContext.of(task.question, (span.text for span in self.evidence.spans))
        self.spans = {span.id: span.text for span in self.evidence.spans}
        self.merges: list[dict[str, Any]] = []
        self.contradictions: list[dict[str, Any]] = []
        self.citations: list[dict[str, Any]] = []
        self.claims: dict[str, str] = {}
        self.answers: dict[str, dict[str, Any]] = {}
        self.held_attacks: list[tuple[str, dict[str, Any]]] = []
        self.attacks: list[dict[str, Any]] = []
        self.local_s: dict[str, float] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------------------ driver

    def run(self) -> LoopResult:
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self.trace.event(
            "start",
            model=self.model,
            config=self.config.to_dict(),
            documents=len(self.task.documents),
            prompt_versions=dict(prompts.PROMPT_VERSIONS),
        )
        runs = self._fan_out()
        with self._timed("merge"):
            has_graph = self._has_graph()
            merged = engine(self.store.merge_duplicates(GRAPH_ID)) if has_graph else None
            self._refresh_nodes()
        if merged:
            self._note_merges("merge pass", merged["merges"], merged["contradictions_created"])
        usable = sum(1 for run in runs if run["ingested"])
        with self._timed("attacks"):
            self._settle_attacks(usable)
        self.trace.event(
            "merge",
            merges=merged["merges"] if merged else [],
            contradictions_created=merged["contradictions_created"] if merged else [],
        )

        interrogated: list[str] = []
        verifications: list[dict[str, Any]] = []
        previous: Assessment | None = None
        rounds = 0
        while True:
            with self._timed("assess"):
                current = assess(
                    self.store,
                    GRAPH_ID,
                    self.nodes,
                    self.answers,
                    self.evidence_texts,
                    chain=self.chain,
                )
            self.trace.event("assess", round=rounds, **_assessment_summary(current))
            stop = self._stop(current, previous, interrogated, usable)
            if stop is not None:
                stop_reason, stop_detail = stop
                break
            rounds += 1
            verifications += self._round(rounds, current, interrogated)
            previous = current
        self.trace.event("stop", stop_reason=stop_reason, detail=stop_detail)

        refusal, chosen = decide(
            current,
            usable,
            self._unanswerable_runs(),
            has_evidence=bool(self.evidence.spans),
            require_width=self.config.k if self.config.require_k else None,
        )
        self.trace.event(
            "decide",
            refusal_reason=refusal,
            chosen=chosen.node_id if chosen else None,
            width=chosen.width if chosen else None,
        )
        with self._timed("details"):
            structure = {
                c.node_id: engine(self.store.check_structure(GRAPH_ID, c.node_id))
                for c in current.candidates
            }
            critical = (
                engine(self.store.critical_links(GRAPH_ID, chosen.node_id)) if chosen else None
            )
            graph = engine(self.store.get_graph(GRAPH_ID)) if has_graph else _empty_graph()
        with self._lock:
            calls = sorted(self.calls, key=_call_order)
        return LoopResult(
            task=self.task,
            model=self.model,
            config=self.config,
            started_at=started_at,
            runs=runs,
            calls=calls,
            merges=self.merges,
            contradictions_created=self.contradictions,
            citations=self.citations,
            attacks=self.attacks,
            evidence=self.evidence,
            answers=self.answers,
            verifications=verifications,
            rounds=rounds,
            assessment=current,
            interrogated=interrogated,
            stop_reason=stop_reason,
            stop_detail=stop_detail,
            refusal_reason=refusal,
            chosen=chosen,
            structure=structure,
            critical_links=critical,
            graph=graph,
            budget_used=self.budget.used,
            model_wait_s=round(sum(p["model_wait_s"] for p in self.phases), 6),
            compliance=self.compliance.to_dict(),
            phases=self.phases,
            local_s={name: round(seconds, 6) for name, seconds in sorted(self.local_s.items())},
        )

    def _stop(
        self,
        current: Assessment,
        previous: Assessment | None,
        interrogated: list[str],
        usable: int,
    ) -> tuple[str, str] | None:
        # A guarded client (orchestrator.client.GuardedClient) knows the run's wall-clock
        # budget; once it is spent every call would be refused, so no round can help.
        return stop_rule(
            current,
            previous,
            interrogated,
            usable,
            k=self.config.k,
            m_verify=self.config.m_verify,
            budget_remaining=self.budget.remaining,
            budget_limit=self.budget.limit,
            deadline_reached=bool(getattr(self.client, "deadline_reached", False)),
        )

    # ----------------------------------------------------------------------------- fan-out

    def _fan_out(self) -> list[dict[str, Any]]:
        started: list[int] = []
        skipped: list[dict[str, Any]] = []
        # A think-first run is two calls (reasoning, then the graph), reserved together.
        per_run = 2 if self.config.think_first else 1
        for index in range(1, self.config.n + 1):
            if not self.evidence.spans:  # nothing a given could cite: no call can help
                skipped.append(_run_record(f"r{index}", "not_started", ["no evidence"]))
            elif self.budget.try_reserve(per_run):
                started.append(index)
            else:
                skipped.append(_run_record(f"r{index}", "not_started", ["call budget exhausted"]))
        self.trace.event("fan_out", started=[f"r{i}" for i in started], skipped=len(skipped))
        runs: list[dict[str, Any]] = []
        if started:
            with ThreadPoolExecutor(max_workers=min(len(started), MAX_PARALLEL_CALLS)) as pool:
                futures = [pool.submit(self._interrogate, index) for index in started]
                # Ingest in run order as soon as each run and all earlier ones are done, so
                # the store works while slower calls are still out (same result as ingesting
                # after the whole fan-out, because the order is the same).
                for future in futures:
                    runs.append(future.result())
                    with self._timed("ingest"):
                        self._ingest(runs[-1])
        self.phases.append(
            {
                "phase": "fan_out",
                "model_wait_s": round(max((run["wait_s"] for run in runs), default=0.0), 6),
            }
        )
        return runs + skipped

    def _interrogate(self, index: int) -> dict[str, Any]:
        run_id = f"r{index}"
        config = self.config
        if config.interrogation_shape == "chain":
            messages = prompts.chain_messages(
                self.evidence, self.task.question, think_first=config.think_first
            )
            shape_format = schemas.chain_response_format(self.evidence.ids)
        else:
            messages = prompts.interrogation_messages(
                self.evidence,
                self.task.question,
                config.k,
                max_nodes=config.max_nodes,
                think_first=config.think_first,
            )
            shape_format = schemas.interrogation_response_format(
                config.max_nodes, config.max_edges, span_ids=self.evidence.ids
            )
        response_format = shape_format if config.structured_output else None
        # With greedy_first, run r1 is the model's single best guess (see RunConfig).
        temperature = 0.0 if config.greedy_first and index == 1 else config.temperature
        wait = 0.0
        if config.think_first:
            # The reasoning turn is free text; only the second turn is held to the schema.
            thought = self._call(
                "think",
                "fan_out",
                run_id,
                messages,
                None,
                config.max_tokens_think,
                self._seed("think", index),
                temperature=temperature,
            )
            wait += thought.record["latency_s"]
            if thought.text is None or not thought.text.strip():
                why = str(thought.error) if thought.error else "empty reasoning reply"
                return self._failed_run(run_id, why, wait)
            messages = prompts.commit_messages(messages, thought.text)
        first = self._call(
            "interrogation",
            "fan_out",
            run_id,
            messages,
            response_format,
            config.max_tokens_interrogation,
            self._seed("interrogation", index),
            temperature=temperature,
        )
        wait += first.record["latency_s"]
        if first.text is None:
            return self._failed_run(run_id, str(first.error), wait)
        bad_text = first.text
        notes: list[str] = []
        with self._timed("parse"):
            parsed = self._parse(bad_text)
        if parsed.outcome != "strict":
            if self.budget.try_reserve():
                repair_records: list[dict[str, Any]] = []

                def repair(problem: str) -> str:
                    outcome = self._call(
                        "repair",
                        "fan_out",
                        run_id,
                        prompts.repair_messages(messages, bad_text, problem),
                        response_format,
                        config.max_tokens_interrogation,
                        self._seed("repair", index),
                        temperature=temperature,
                    )
                    repair_records.append(outcome.record)
                    if outcome.error is not None:
                        raise outcome.error
                    assert outcome.text is not None
                    return outcome.text

                parsed = self._parse(bad_text, repair)
                for record in repair_records:
                    wait += record["latency_s"]
                    record["parse_outcome"] = parsed.outcome
            else:
                notes.append("repair skipped: call budget exhausted")
        first.record["parse_outcome"] = parsed.outcome
        self.compliance.record(self.model, parsed.outcome)
        run = _run_record(run_id, parsed.outcome, [*parsed.errors, *notes])
        run["graph"] = parsed.graph
        run["wait_s"] = wait
        self.trace.event(
            "run",
            run_id=run_id,
            outcome=parsed.outcome,
            nodes=len(parsed.graph["nodes"]) if parsed.graph else 0,
            edges=len(parsed.graph["edges"]) if parsed.graph else 0,
            errors=list(run["errors"]),
        )
        return run

    def _parse(self, text: str, repair: parse.Repair | None = None) -> parse.GraphParse:
        """An interrogation reply parsed in the run's shape (a chain is built into a graph)."""
        if self.config.interrogation_shape == "chain":
            return parse.parse_chain(text, self.spans, repair)
        return parse.parse_graph(text, repair)

    def _failed_run(self, run_id: str, why: str, wait: float) -> dict[str, Any]:
        """The record of a run whose call failed (traced; the loop goes on without it)."""
        run = _run_record(run_id, "call_failed", [why])
        run["wait_s"] = wait
        self.trace.event("run", run_id=run_id, outcome="call_failed", error=why)
        return run

    def _ingest(self, run: dict[str, Any]) -> None:
        """Anchor one parsed run to the evidence, assert it, and note what the store kept."""
        graph = run.pop("graph", None)
        if graph is None:
            return
        run_id = run["run_id"]
        anchored = anchor_run(run_id, graph, self.evidence, self.task.question, self.claims)
        self.citations += anchored.citations
        run["errors"] += anchored.notes
        run["answer"], run["answer_key"] = anchored.answer, anchored.answer_key
        run["conclusion_claim"] = anchored.conclusion_claim
        run["leniencies"] = anchored.leniencies
        edges = [e for e in anchored.edges if e["relation"] != "attacks"]
        self.held_attacks += [(run_id, e) for e in anchored.edges if e["relation"] == "attacks"]
        result = self.store.assert_graph(GRAPH_ID, anchored.nodes, edges, run_id=run_id)
        if "error" in result:
            run["errors"].append(f"store rejected the run: {result['error']}")
            self.trace.event("ingest", run_id=run_id, error=result["error"])
            return
        for node in anchored.nodes:
            self.claims.setdefault(node["id"], node["claim"])
        accepted = set(result["accepted_nodes"])
        run["ingested"] = bool(accepted)
        run["conclusion_node"] = anchored.conclusion if anchored.conclusion in accepted else None
        if run["conclusion_node"] is not None:
            self._note_answer(run_id, anchored)
        run["accepted_nodes"] = len(result["accepted_nodes"])
        run["accepted_edges"] = len(result["accepted_edges"])
        run["rejected"] = result["rejected"]
        self._note_merges(
            f"ingest {run_id}", result["auto_merged"], result["contradictions_created"]
        )
        self.trace.event(
            "ingest",
            run_id=run_id,
            accepted_nodes=len(result["accepted_nodes"]),
            accepted_edges=len(result["accepted_edges"]),
            rejected=result["rejected"],
            auto_merged=result["auto_merged"],
            contradictions_created=result["contradictions_created"],
            citations=[[c["node"], c["span"], c["reason"]] for c in anchored.citations],
        )

    def _note_answer(self, run_id: str, anchored: AnchoredRun) -> None:
        """Record which run gave which answer under which conclusion node."""
        node_id = anchored.conclusion
        assert node_id is not None
        info = self.answers.setdefault(node_id, {"key": anchored.answer_key, "answers": []})
        info["answers"].append(
            {
                "run_id": run_id,
                "answer": anchored.answer,
                "claim": anchored.conclusion_claim,
                "guessed_conclusion": anchored.guessed_conclusion,
            }
        )

    def _note_merges(
        self, at: str, merges: list[list[str]], contradictions: list[list[str]]
    ) -> None:
        """Keep every merge and contradiction with the claims involved, for the report."""
        for kept, merged in merges:
            self.merges.append(
                {
                    "at": at,
                    "kept": kept,
                    "merged": merged,
                    "kept_claim": self.claims.get(kept),
                    "merged_claim": self.claims.get(merged),
                }
            )
        for a, b in contradictions:
            self.contradictions.append(
                {"at": at, "pair": [a, b], "claims": [self.claims.get(a), self.claims.get(b)]}
            )

    def _settle_attacks(self, usable_runs: int) -> None:
        """Assert the held attack edges that meet the quorum (module docstring, step 2)."""
        if not self.held_attacks or not self._has_graph():
            return
        graph = engine(self.store.get_graph(GRAPH_ID))
        current = {node["id"]: node for node in graph["nodes"]}
        resolve = {old: node["id"] for node in graph["nodes"] for old in node["merged_ids"]}
        drawn_by: dict[tuple[str, str], set[str]] = {}
        for run_id, edge in self.held_attacks:
            src, dst = (resolve.get(end, end) for end in (edge["src"], edge["dst"]))
            if src in current and dst in current and src != dst:
                drawn_by.setdefault((src, dst), set()).add(run_id)
        for (src, dst), runs in sorted(drawn_by.items()):
            target_runs = sum(1 for r in current[dst]["run_ids"] if r.startswith("r"))
            counted = attack_counts(len(runs), target_runs, usable_runs)
            self.attacks.append(
                {
                    "src": src,
                    "dst": dst,
                    "runs": sorted(runs, key=_run_number),
                    "target_runs": target_runs,
                    "counted": counted,
                }
            )
            if counted:
                for run_id in sorted(runs, key=_run_number):
                    edge = {"src": src, "dst": dst, "relation": "attacks", "confidence": 1.0}
                    engine(self.store.assert_graph(GRAPH_ID, [], [edge], run_id=run_id))
        self._refresh_nodes()
        self.trace.event("attacks", attacks=self.attacks)

    def _unanswerable_runs(self) -> int:
        """Interrogation runs whose answer was "unanswerable"."""
        return len(self.answers.get(ANSWER_PREFIX + UNANSWERABLE, {}).get("answers", []))

    # ------------------------------------------------------------------------ verification

    def _round(
        self, round_no: int, current: Assessment, interrogated: list[str]
    ) -> list[dict[str, Any]]:
        untried = [node for node in current.disputed if node not in interrogated]
        targets: list[str] = []
        for node_id in untried[: self.config.max_per_round]:
            if not self.budget.try_reserve(self.config.m_verify):
                break
            targets.append(node_id)
        interrogated.extend(targets)
        self.trace.event("round", round=round_no, targets=targets)
        m = self.config.m_verify
        workers = max(1, min(len(targets) * m, MAX_PARALLEL_CALLS))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {
                (node_id, j): pool.submit(self._verify_call, round_no, node_id, j)
                for node_id in targets
                for j in range(m)
            }
            votes = {
                node_id: [futures[(node_id, j)].result() for j in range(m)] for node_id in targets
            }
        self.phases.append(
            {
                "phase": f"round_{round_no}",
                "model_wait_s": max(
                    (v["latency_s"] for node_votes in votes.values() for v in node_votes),
                    default=0.0,
                ),
            }
        )
        with self._timed("verdicts"):
            return [
                self._apply_verdict(round_no, slot, node_id, votes[node_id])
                for slot, node_id in enumerate(targets)
            ]

    def _verify_call(self, round_no: int, node_id: str, j: int) -> dict[str, Any]:
        claim = self.nodes[node_id]["claim"]
        response_format = (
            schemas.verification_response_format() if self.config.structured_output else None
        )
        outcome = self._call(
            "verification",
            f"round_{round_no}",
            node_id,
            prompts.verification_messages(self.evidence, claim),
            response_format,
            self.config.max_tokens_verification,
            self._seed("verification", round_no, node_id, j),
            vote=j,
        )
        vote: dict[str, Any] = {
            "j": j,
            "verdict": None,
            "reason": None,
            "parse_outcome": None,
            "error": None,
            "latency_s": outcome.record["latency_s"],
        }
        if outcome.text is None:
            vote["error"] = str(outcome.error)
            return vote
        with self._timed("parse"):
            verdict = parse.parse_verdict(outcome.text)
        outcome.record["parse_outcome"] = verdict.outcome
        vote.update(verdict=verdict.verdict, reason=verdict.reason, parse_outcome=verdict.outcome)
        if verdict.verdict is None:
            vote["error"] = "; ".join(verdict.errors)
        return vote

    def _apply_verdict(
        self, round_no: int, slot: int, node_id: str, votes: list[dict[str, Any]]
    ) -> dict[str, Any]:
        m = self.config.m_verify
        needed = majority(m)
        tally = Counter(v["verdict"] for v in votes)
        node = self.nodes[node_id]
        old = float(node["confidence"])
        entry: dict[str, Any] = {
            "round": round_no,
            "node_id": node_id,
            "claim": node["claim"],
            "votes": votes,
            "tally": {
                "supported": tally["supported"],
                "refuted": tally["refuted"],
                "not_determinable": tally["not_determinable"],
                "no_vote": tally[None],
            },
            "majority_needed": needed,
            "confidence_before": old,
            "confidence_after": old,
        }
        outcome = verdict_outcome(tally, m)
        if outcome == "refuted":
            first = next(v["reason"] for v in votes if v["verdict"] == "refuted")
            reason = refutation_reason(tally["refuted"], m, round_no, first)
            # No conclusion_id: the next assessment recomputes every candidate's width anyway,
            # so asking the store for a before/after width here would only repeat that work.
            engine(self.store.mark_refuted(GRAPH_ID, node_id, reason[:1900]))
            node["refuted"], node["refute_reason"] = True, reason[:1900]
            entry.update(outcome="refuted", action=f"mark_refuted({node_id})")
        elif outcome == "confirmed":
            run_id = f"v{round_no}.{slot}"
            new = max(old, CONFIRMED_CONFIDENCE)
            result = engine(
                self.store.update_node(GRAPH_ID, node_id, confidence=new, run_id=run_id)
            )
            self.nodes[node_id] = result["node"]
            entry.update(
                outcome="confirmed",
                action=f"confidence {old:g} -> {new:g}, provenance {run_id}",
                confidence_after=new,
            )
        elif outcome == "not_determinable":
            new = min(old, UNDETERMINED_CONFIDENCE)
            result = engine(self.store.update_node(GRAPH_ID, node_id, confidence=new))
            self.nodes[node_id] = result["node"]
            entry.update(
                outcome="not_determinable",
                action=f"confidence {old:g} -> {new:g}",
                confidence_after=new,
            )
        else:
            entry.update(outcome="no_majority", action="none")
        self.trace.event(
            "verdict",
            round=round_no,
            node_id=node_id,
            outcome=entry["outcome"],
            tally=entry["tally"],
            action=entry["action"],
        )
        return entry

    # ---------------------------------------------------------------------------- plumbing

    def _call(
        self,
        role: str,
        step: str,
        subject: str,
        messages: list[dict[str, Any]],
        response_format: dict[str, Any] | None,
        max_tokens: int | None,
        seed: int | None,
        *,
        vote: int | None = None,
        temperature: float | None = None,
    ) -> CallOutcome:
        """Make one reserved logical call; record it whatever happens (``temperature``: None
        for the run's configured one)."""
        spec = CallSpec(
            step=step,
            role=role,
            subject=subject,
            messages=messages,
            response_format=response_format,
            max_tokens=max_tokens,
            seed=seed,
            temperature=self.config.temperature if temperature is None else temperature,
            vote=vote,
        )
        outcome = make_call(self.client, self.model, spec)
        record = outcome.record
        with self._lock:
            self.calls.append(record)
            done = len(self.calls)
            known = sum(r["cost_usd"] for r in self.calls if r["cost_usd"] is not None)
            unknown = sum(1 for r in self.calls if r["cost_usd"] is None)
        self.trace.event(
            "call",
            step=step,
            role=role,
            subject=subject,
            vote=vote,
            ok=record["ok"],
            latency_s=record["latency_s"],
            attempts=record["attempts"],
            error=record["error"],
        )
        if self.progress is not None:
            self.progress(
                {
                    "step": step,
                    "calls_done": done,
                    "budget_calls": self.budget.limit,
                    "cost_usd_known": round(known, 12),
                    "calls_cost_unknown": unknown,
                }
            )
        return outcome

    @contextmanager
    def _timed(self, name: str) -> Iterator[None]:
        """Add the block's wall time to ``local_s[name]`` (where the non-model time goes)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            with self._lock:
                self.local_s[name] = self.local_s.get(name, 0.0) + time.perf_counter() - start

    def _seed(self, *parts: object) -> int | None:
        """A per-call seed derived from ``config.seed`` (None when unseeded), stable across
        processes (no ``hash()`` randomisation)."""
        return call_seed(self.config.seed, *parts)

    def _has_graph(self) -> bool:
        return any(g["graph_id"] == GRAPH_ID for g in self.store.list_graphs()["graphs"])

    def _refresh_nodes(self) -> None:
        if self._has_graph():
            graph = engine(self.store.get_graph(GRAPH_ID))
            self.nodes = {node["id"]: node for node in graph["nodes"]}


def _run_record(run_id: str, outcome: str, errors: list[str]) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "outcome": outcome,
        "errors": list(errors),
        "ingested": False,
        "conclusion_node": None,
        "answer": None,
        "answer_key": "",
        "conclusion_claim": None,
        "accepted_nodes": 0,
        "accepted_edges": 0,
        "rejected": [],
        "wait_s": 0.0,
        "leniencies": [],
    }


def _assessment_summary(assessment: Assessment) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "id": c.node_id,
                "grounded": c.grounded,
                "refuted": c.refuted,
                "width": c.width,
                "max_flow": c.max_flow,
                "run_support": c.run_support,
            }
            for c in assessment.candidates
        ],
        "contradiction_pairs": [list(p) for p in assessment.contradiction_pairs],
        "isolated_load_bearing": [item["id"] for item in assessment.isolated],
    }


def _run_number(run_id: str) -> int:
    return int(run_id[1:]) if run_id[1:].isdigit() else 0


def _call_order(record: dict[str, Any]) -> tuple[Any, ...]:
    step = record["step"]
    step_no = 0 if step == "fan_out" else int(step.split("_")[1])
    subject = record["subject"]
    run_no = int(subject[1:]) if subject[1:].isdigit() else 0
    role_no = {"think": 0, "interrogation": 1, "repair": 2, "verification": 3}.get(
        record["role"], 4
    )
    return (step_no, run_no, subject, role_no, record["vote"] if record["vote"] is not None else -1)


def _empty_graph() -> dict[str, Any]:
    return {"graph_id": GRAPH_ID, "nodes": [], "edges": []}
