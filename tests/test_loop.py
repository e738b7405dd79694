"""The control loop driven by a scripted in-process client (no network)."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from canned_runs import (
    CONTRADICTING,
    GOOD,
    GOOD_EDGES,
    GOOD_NODES,
    MALFORMED,
    NO,
    PARAPHRASE,
    RACK7_TASK,
    SALVAGEABLE,
    YES,
    Script,
    always,
    chain_run,
    model_graph,
    six_runs,
    split_votes,
    verdict,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st

from orchestrator.api import RunConfig, run_task
from orchestrator.llm.errors import APIStatusError, BackendRejectedError, BackendUnusableError
from orchestrator.llm.testing import ScriptedClient
from orchestrator.records.report import RunReport
from orchestrator.records.task import TaskError

# r2: same argument reworded; r3: no JSON; r4: only json_repair can read it; r5: misreads D2.
MIXED = six_runs(r2=PARAPHRASE, r3=MALFORMED, r4=SALVAGEABLE, r5=CONTRADICTING)


def run(
    script: Script,
    config: RunConfig | None = None,
    *,
    cost: float | None = 0.001,
    out_dir: Path | None = None,
) -> tuple[RunReport, ScriptedClient]:
    client = ScriptedClient(script, cost_per_call=cost)
    report = run_task(
        RACK7_TASK, client=client, model="scripted", config=config or RunConfig(), out_dir=out_dir
    )
    return report, client


def outcomes(report: RunReport) -> dict[str, str]:
    return {r["run_id"]: r["outcome"] for r in report["runs"]}


def roles(client: ScriptedClient, role: str) -> list[Mapping[str, Any]]:
    return [c for c in client.calls if c["kwargs"]["role"] == role]


def test_malformed_run_is_dropped_without_crashing_the_loop() -> None:
    report, client = run(Script(MIXED))
    assert outcomes(report)["r3"] == "dropped"
    assert [c["kwargs"]["tags"]["subject"] for c in roles(client, "repair")].count("r3") == 1
    r3 = next(r for r in report["runs"] if r["run_id"] == "r3")
    assert not r3["ingested"] and any("no JSON object" in e for e in r3["errors"])
    assert not any(n["id"].startswith("r3:") for n in report["graph"]["nodes"])
    assert report["answer"] == "yes"
    assert report["conclusion"] == "server x9 can be used for the nightly cron job"


def test_run_readable_only_by_json_repair_is_salvaged_and_counted() -> None:
    report, _ = run(Script(MIXED))
    assert outcomes(report)["r4"] == "salvaged"
    assert "r4" in report["candidates"][0]["run_ids"]
    assert report["schema_compliance"]["scripted"]["salvaged"] == 1
    assert report["schema_compliance"]["scripted"]["dropped"] == 1


def test_contradicting_run_triggers_reinterrogation_and_the_majority_refutes_it() -> None:
    script = Script(MIXED)
    report, client = run(script)
    verified = {c["kwargs"]["tags"]["subject"] for c in roles(client, "verification")}
    assert {YES, NO} <= verified  # both sides of the contradiction were checked
    killed = {k["id"]: k["reason"] for k in report["killed"]}
    assert NO in killed
    reason = killed[NO]
    assert reason is not None and "2 of 3" in reason
    assert YES not in killed  # the true side survives
    votes = next(v for v in report["verifications"] if v["node_id"] == NO)
    assert votes["tally"] == {"supported": 1, "refuted": 2, "not_determinable": 0, "no_vote": 0}
    # GOOD's reasons are joint (E and D3.1 together): one argument over two disjoint paths.
    assert report["chosen"]["node_id"] == YES and report["chosen"]["width"] == 1
    assert report["chosen"]["path_width"] == 2
    assert not report["refused"] and report["answer"] == "yes"


def test_givens_become_span_nodes_and_conclusions_answer_nodes_across_runs() -> None:
    report, _ = run(Script(MIXED))
    runs = {r["run_id"]: r for r in report["runs"]}
    assert runs["r1"]["conclusion_node"] == YES and runs["r4"]["conclusion_node"] == YES
    assert runs["r5"]["conclusion_node"] == NO
    nodes = {node["id"]: node for node in report["graph"]["nodes"]}
    assert sorted(n for n in nodes if ":" not in n or n.startswith("answer:")) == [
        "D1.2",
        "D2.1",
        "D3.1",
        NO,
        YES,
    ]
    assert all(n.split(":")[0] in runs for n in nodes if ":" in n and not n.startswith("answer"))
    assert {"r1", "r2", "r4", "r6"} <= set(nodes["D2.1"]["run_ids"])
    assert {"r1", "r2", "r4", "r6"} == {r for r in nodes[YES]["run_ids"] if r.startswith("r")}
    # r5's misquote of D2.1 is no given: it stays in the graph as an assumption.
    assert nodes["r5:X"]["type"] == "assumption"
    assert [(c["run_id"], c["node"], c["reason"]) for c in report["rejected_citations"]] == [
        ("r5", "X", "quote_mismatch")
    ]


def test_agreeing_runs_stop_at_once_with_no_disputes() -> None:
    report, client = run(Script(six_runs()))
    assert report["stop_reason"] == "no_disputes"
    assert report["rounds"] == 0 and not roles(client, "verification")
    assert report["chosen"]["run_support"] == 6


WIDE = model_graph(
    [
        *GOOD_NODES,
        *(
            {"id": f"s{i}", "claim": claim, "type": "inference", "confidence": 0.8}
            for i, claim in enumerate(
                [
                    "the platform team keeps x9 patched every week",
                    "patched hosts pass the scheduler health check",
                    "hosts passing the health check accept batch jobs",
                    "batch jobs include the nightly maintenance window",
                ]
            )
        ),
    ],
    [
        *GOOD_EDGES,
        {"src": "D", "dst": "s0", "relation": "supports", "confidence": 0.8},
        {"src": "s0", "dst": "s1", "relation": "supports", "confidence": 0.8},
        {"src": "s1", "dst": "s2", "relation": "supports", "confidence": 0.8},
        {"src": "s2", "dst": "s3", "relation": "supports", "confidence": 0.8},
        {"src": "s3", "dst": "Z", "relation": "supports", "confidence": 0.8},
    ],
    "Z",
)
"""GOOD plus a four-step chain only run r6 asserts: four isolated load-bearing claims."""


def test_width_reached_when_a_round_changes_nothing_and_the_top_has_width_k() -> None:
    # Every run's argument shares E and D3.1: width 1, so k=1 is the width this test reaches.
    report, client = run(Script(six_runs(r6=WIDE), votes=split_votes), RunConfig(k=1))
    assert report["stop_reason"] == "width_reached"
    assert report["rounds"] == 1
    assert len(roles(client, "verification")) == 9  # three claims, three votes each
    assert report["remaining_disputes"]["unverified"] == ["r6:s3"]
    assert {v["outcome"] for v in report["verifications"]} == {"no_majority"}


def test_disputes_exhausted_when_every_remaining_dispute_was_verified_once() -> None:
    report, client = run(Script(six_runs(r6=WIDE), votes=split_votes), RunConfig(k=3))
    assert report["stop_reason"] == "disputes_exhausted"
    assert report["rounds"] == 2
    subjects = [c["kwargs"]["tags"]["subject"] for c in roles(client, "verification")]
    assert sorted(set(subjects)) == ["r6:s0", "r6:s1", "r6:s2", "r6:s3"]
    assert all(subjects.count(s) == 3 for s in set(subjects))  # never re-interrogated
    assert report["remaining_disputes"]["unverified"] == []
    assert not report["refused"]  # width 1 < k=3 lowers confidence, it is no reason to refuse
    assert report["chosen"]["meets_k"] is False


def test_confirmed_claim_gets_confidence_point_nine_and_verifier_provenance() -> None:
    report, _ = run(Script(six_runs(r6=WIDE), votes=always("supported")), RunConfig(k=3))
    node = next(n for n in report["graph"]["nodes"] if n["id"] == "r6:s0")
    assert node["confidence"] == 0.9
    assert "v1.0" in node["run_ids"]
    assert report["stop_reason"] == "no_disputes"  # confirmed claims are no longer single-run


def test_three_not_determinable_votes_drop_confidence_to_one_half() -> None:
    report, _ = run(Script(six_runs(r6=WIDE), votes=always("not_determinable")))
    node = next(n for n in report["graph"]["nodes"] if n["id"] == "r6:s0")
    assert node["confidence"] == 0.5 and not node["refuted"]
    entry = next(v for v in report["verifications"] if v["node_id"] == "r6:s0")
    assert entry["outcome"] == "not_determinable"


def test_failed_and_unreadable_votes_count_toward_neither_majority() -> None:
    def votes(claim: str, nth: int) -> str | BaseException:
        if nth == 0:
            return APIStatusError(500, "fake outage")
        return "no verdict here" if nth == 1 else verdict("refuted")

    report, _ = run(Script(six_runs(r6=WIDE), votes=votes))
    entry = next(v for v in report["verifications"] if v["node_id"] == "r6:s0")
    assert entry["tally"] == {"supported": 0, "refuted": 1, "not_determinable": 0, "no_vote": 2}
    assert entry["outcome"] == "no_majority"
    assert not report["killed"]


def test_failed_interrogation_is_recorded_with_its_cost_not_raised() -> None:
    report, _ = run(Script(six_runs(r2=APIStatusError(401, "bad key"))))
    assert outcomes(report)["r2"] == "call_failed"
    call = next(c for c in report["calls"] if c["subject"] == "r2")
    assert call["ok"] is False and call["cost_usd"] == 0.0
    assert call["error"] is not None
    assert call["cost_source"] == "error_response" and "bad key" in call["error"]
    assert report["totals"]["failed_calls"] == 1 and report["totals"]["cost_usd"] is not None


def test_every_run_failing_refuses_with_all_runs_failed() -> None:
    report, _ = run(Script({f"r{i}": MALFORMED for i in range(1, 7)}))
    assert report["refused"] and report["refusal_reason"] == "all_runs_failed"
    assert report["stop_reason"] == "no_candidates"
    assert report["answer"] is None and report["chosen"]["width"] == 0
    assert "does not support a reliable answer" in report["statement"]


UNGROUNDED = model_graph(
    [
        {"id": "a", "claim": "x9 probably runs linux", "type": "assumption", "confidence": 0.5},
        {
            "id": "c",
            "claim": "x9 can take the nightly job",
            "type": "conclusion",
            "confidence": 0.5,
        },
    ],
    [{"src": "a", "dst": "c", "relation": "assumes", "confidence": 0.5}],
    "c",
)


def test_conclusion_resting_only_on_an_assumption_refuses_as_ungrounded() -> None:
    report, _ = run(Script({f"r{i}": UNGROUNDED for i in range(1, 7)}))
    assert report["refused"] and report["refusal_reason"] == "no_grounded_conclusion"
    assert report["stop_reason"] == "no_disputes"  # stop and refusal are independent
    assert report["candidates"][0]["grounded"] is False
    # The runs answered but argued from no evidence: the statement says so, and does not
    # blame the documents.
    assert report["statement"].startswith("No answer: no run drew an argument that carries one.")
    assert "does not support a reliable answer" not in report["statement"]


ON_THE_SENTENCE = model_graph(
    [
        {"id": "n1", "claim": "row 9: server x9; operating system: Linux", "type": "given"}
        | {"source": "D2.1", "confidence": 0.9}
    ],
    [],
    "n1",
    answer="yes",
)


def test_a_run_concluding_on_a_cited_sentence_grounds_its_answer_on_that_sentence() -> None:
    report, _ = run(Script({f"r{i}": ON_THE_SENTENCE for i in range(1, 7)}))
    assert not report["refused"] and report["answer"] == "yes"
    top = report["candidates"][0]
    assert top["grounded"] and top["run_support"] == 6
    # Six runs on one sentence are one argument, not six.
    assert top["width"] == 1
    assert [[claim["id"] for claim in a] for a in top["arguments"]] == [["D2.1"]]


# Both rest on the one sentence about x9 (D2.1): an argument must reach the question's subject.
# (Neither answer is right; they only need to be equal in everything but the runs behind them.
# "x9" itself would repeat the question, which is no answer.)
NINE = chain_run(
    "p",
    [],
    "the team of row 9 should host the nightly cron job",
    "row 9: server x9; operating system: Linux",
    source="D2.1",
    answer="row 9",
)
PLATFORM = chain_run(
    "q",
    [],
    "the platform team that owns server x9 ought to take the batch",
    "server x9; owner: platform team",
    source="D2.1",
    answer="the platform team",
)


def test_top_candidates_equal_on_every_key_refuse_as_tied() -> None:
    runs = {"r1": NINE, "r2": NINE, "r3": NINE, "r4": PLATFORM, "r5": PLATFORM, "r6": PLATFORM}
    report, _ = run(Script(runs))
    assert report["stop_reason"] == "no_disputes"
    first, second = report["candidates"][:2]
    assert (first["width"], first["max_flow"], first["run_support"]) == (
        second["width"],
        second["max_flow"],
        second["run_support"],
    )
    assert report["refused"] and report["refusal_reason"] == "candidates_tied"
    assert report["answer"] is None


def test_more_runs_behind_an_answer_break_an_otherwise_equal_ranking() -> None:
    runs = {"r1": NINE, "r2": NINE, "r3": NINE, "r4": NINE, "r5": PLATFORM, "r6": PLATFORM}
    report, _ = run(Script(runs))
    assert not report["refused"]
    assert report["answer"] == "row 9"
    assert [c["run_support"] for c in report["candidates"]] == [4, 2]


def test_a_verification_is_not_started_unless_all_its_calls_fit_the_budget() -> None:
    report, client = run(Script(six_runs(r5=CONTRADICTING)), RunConfig(budget_calls=8))
    assert len(client.calls) == 6 and report["budget"]["used"] == 6
    assert report["stop_reason"] == "budget_exhausted"
    assert report["remaining_disputes"]["contradiction_pairs"]


def test_no_repair_call_is_made_once_the_budget_is_spent() -> None:
    report, client = run(Script(six_runs(r4=SALVAGEABLE)), RunConfig(budget_calls=6))
    assert not roles(client, "repair")
    r4 = next(r for r in report["runs"] if r["run_id"] == "r4")
    assert r4["outcome"] == "salvaged" and "repair skipped: call budget exhausted" in r4["errors"]


def test_runs_beyond_the_budget_are_not_started() -> None:
    report, client = run(Script(six_runs()), RunConfig(budget_calls=4))
    assert len(client.calls) == 4
    assert sorted(outcomes(report).items())[-2:] == [("r5", "not_started"), ("r6", "not_started")]


RUN_KINDS = [GOOD, MALFORMED, CONTRADICTING, SALVAGEABLE, PARAPHRASE]


@settings(max_examples=40, deadline=None)
@given(
    budget=st.integers(min_value=1, max_value=30),
    n=st.integers(min_value=1, max_value=8),
    kinds=st.lists(st.integers(0, len(RUN_KINDS) - 1), min_size=8, max_size=8),
    verdicts=st.sampled_from(["mixed", "supported", "refuted", "split"]),
)
@example(budget=1, n=6, kinds=[1] * 8, verdicts="mixed")  # tiny budgets, repairs wanted
@example(budget=2, n=6, kinds=[3] * 8, verdicts="mixed")
@example(budget=3, n=2, kinds=[1, 3] * 4, verdicts="split")
@example(budget=8, n=6, kinds=[0, 2] * 4, verdicts="refuted")  # n + 2: no triple fits
@example(budget=10, n=6, kinds=[0, 2] * 4, verdicts="mixed")  # exactly one triple fits
def test_the_budget_is_never_exceeded(budget: int, n: int, kinds: list[int], verdicts: str) -> None:
    runs: dict[str, str | BaseException] = {
        f"r{i + 1}": RUN_KINDS[kind] for i, kind in enumerate(kinds)
    }
    votes = {
        "mixed": None,
        "supported": always("supported"),
        "refuted": always("refuted"),
        "split": split_votes,
    }[verdicts]
    script = Script(runs, votes=votes)
    report, client = run(script, RunConfig(n=n, budget_calls=budget, k=1))
    assert len(client.calls) <= budget
    assert report["totals"]["calls"] == len(client.calls) == report["budget"]["used"]
    assert report["stop_reason"] in {
        "no_candidates",
        "no_disputes",
        "nothing_to_gain",
        "width_reached",
        "disputes_exhausted",
        "budget_exhausted",
    }
    assert report["refused"] == (report["answer"] is None)


def test_interrogations_run_concurrently() -> None:
    # Six interrogations must all be in flight at once to pass the barrier; a serial loop
    # would break it after the timeout instead of hanging.
    barrier = threading.Barrier(6, timeout=10)
    report, _ = run(Script(six_runs(), barrier=barrier))
    assert not barrier.broken and report["answer"] is not None


def test_call_seeds_derive_from_the_base_seed() -> None:
    def seeds(seed: int | None) -> list[int | None]:
        _, client = run(Script(MIXED), RunConfig(seed=seed))
        return sorted(
            (c["kwargs"]["seed"] for c in client.calls), key=lambda s: -1 if s is None else s
        )

    first, again = seeds(7), seeds(7)
    assert first == again and len(set(first)) == len(first)
    assert seeds(8) != first
    assert set(seeds(None)) == {None}


def test_structured_output_sends_the_bounded_schemas() -> None:
    _, client = run(Script(MIXED), RunConfig(structured_output=True, max_nodes=12))
    formats: dict[str, Any] = {
        c["kwargs"]["role"]: c["kwargs"]["response_format"] for c in client.calls
    }
    graph_schema = formats["interrogation"]["json_schema"]["schema"]
    assert graph_schema["properties"]["nodes"]["maxItems"] == 12
    assert formats["verification"]["json_schema"]["name"] == "verdict"
    _, plain = run(Script(MIXED))
    assert all(c["kwargs"]["response_format"] is None for c in plain.calls)


def test_trace_records_every_step_and_call(tmp_path: Path) -> None:
    report, client = run(Script(MIXED), out_dir=tmp_path)
    events = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert [e["seq"] for e in events] == list(range(len(events)))
    names = [e["event"] for e in events]
    assert names[0] == "start" and names[-1] == "report"
    assert names.count("call") == len(client.calls) == report["totals"]["calls"]
    for step in ("fan_out", "run", "ingest", "merge", "assess", "round", "verdict", "stop"):
        assert step in names
    assert (tmp_path / "report.json").is_file() and (tmp_path / "report.md").is_file()


def test_invalid_task_is_rejected_before_any_call() -> None:
    client = ScriptedClient(Script(MIXED))
    with pytest.raises(TaskError, match="question"):
        run_task({"documents": ["d"]}, client=client, model="m")
    with pytest.raises(TaskError, match=r"documents\[1\]"):
        run_task({"question": "q", "documents": ["d", 3]}, client=client, model="m")
    assert client.calls == []


@pytest.mark.parametrize(
    ("field", "value"),
    [("n", 0), ("budget_calls", 0), ("temperature", 3.0), ("m_verify", 2), ("k", 11)],
)
def test_invalid_settings_name_the_field(field: str, value: object) -> None:
    with pytest.raises(TaskError, match=field):
        RunConfig(**{field: value})  # type: ignore[arg-type]


def test_a_client_error_that_is_not_an_llm_error_costs_its_run_and_the_loop_goes_on() -> None:
    report, _ = run(Script(six_runs(r2=KeyError("choices"))))
    assert outcomes(report)["r2"] == "call_failed"
    call = next(c for c in report["calls"] if c["subject"] == "r2")
    assert call["ok"] is False and call["cost_usd"] is None  # unknown: the client said nothing
    assert call["error"] is not None
    assert call["error"].startswith("UnexpectedClientError: the client raised KeyError")
    assert sum(1 for r in report["runs"] if r["ingested"]) == 5
    assert report["answer"] == "yes"


def test_a_verification_call_that_raises_a_non_llm_error_is_simply_no_vote() -> None:
    def votes(claim: str, nth: int) -> str | BaseException:
        return RuntimeError("socket library bug") if nth == 0 else verdict("refuted")

    report, _ = run(Script(six_runs(r6=WIDE), votes=votes))
    entry = next(v for v in report["verifications"] if v["node_id"] == "r6:s0")
    assert entry["tally"]["no_vote"] == 1 and entry["tally"]["refuted"] == 2
    assert entry["votes"][0]["error"] is not None
    assert "RuntimeError: socket library bug" in entry["votes"][0]["error"]


def test_a_backend_that_rejects_the_first_calls_ends_the_run_with_backend_unusable() -> None:
    rejected = BackendRejectedError(401, "HTTP 401: bad key", kind="unauthorized", fix="fix it")
    client = ScriptedClient(lambda model, messages, kwargs: rejected.fresh())
    with pytest.raises(BackendUnusableError, match=r"HTTP 401: bad key\. Fix: fix it"):
        run_task(RACK7_TASK, client=client, model="scripted", config=RunConfig(n=6))
    # Calls already under way may finish, but nothing starts after the verdict is known.
    assert 1 <= len(client.calls) <= 6
    assert len(client.ledger) == 6


def test_a_backend_that_fails_after_calls_succeeded_still_gets_a_report_that_says_so() -> None:
    def no_credits(claim: str, nth: int) -> BaseException:
        return BackendRejectedError(402, "HTTP 402: no credits", kind="payment_required", fix="x")

    report, client = run(Script(six_runs(r6=WIDE), votes=no_credits))
    assert report["limits"]["backend_error"] is not None
    assert "HTTP 402: no credits" in report["limits"]["backend_error"]
    verifications = [c for c in report["calls"] if c["role"] == "verification"]
    assert verifications and all(
        c["error"] is not None and "HTTP 402: no credits" in c["error"] for c in verifications
    )
    # Once the backend has said 402, later calls are answered by the guard, not sent.
    assert len(roles(client, "verification")) <= len(verifications)
    assert outcomes(report) == {f"r{i}": "strict" for i in range(1, 7)}


def test_the_wall_clock_budget_stops_the_loop_before_another_round_and_the_report_says_so() -> None:
    client = ScriptedClient(Script(six_runs(r6=WIDE)), cost_per_call=0.001, latency_s=1.5)
    report = run_task(
        RACK7_TASK, client=client, model="scripted", config=RunConfig(), budget_seconds=1.0
    )
    limits = report["limits"]
    assert limits["budget_seconds"] == 1.0 and limits["deadline_reached"] is True
    # Once the budget is spent the loop starts no verification round at all.
    assert report["stop_reason"] == "deadline_reached"
    assert limits["calls_not_made_for_time"] == 0
    assert len(roles(client, "verification")) == 0
    assert outcomes(report) == {f"r{i}": "strict" for i in range(1, 7)}


def test_the_report_lists_the_max_tokens_of_every_role() -> None:
    report, client = run(Script(six_runs()), RunConfig(think_first=False))
    assert report["limits"]["max_tokens"] == {
        "interrogation": 2048,
        "repair": 2048,
        "verification": 512,
    }
    assert {c["kwargs"]["max_tokens"] for c in roles(client, "interrogation")} == {2048}
    assert report["limits"]["calls_cut_at_max_tokens"] == 0


def test_greedy_first_makes_run_r1_greedy_and_samples_the_others() -> None:
    config = RunConfig(n=3, k=1, budget_calls=3, temperature=0.8, seed=1, greedy_first=True)
    _, client = run(Script(six_runs()), config)
    by_run = {
        call["kwargs"]["tags"]["subject"]: call["kwargs"]["temperature"]
        for call in roles(client, "interrogation")
    }
    assert by_run == {"r1": 0.0, "r2": 0.8, "r3": 0.8}
    # Without it every run is sampled, with the seeds greedy_first leaves unchanged.
    _, plain = run(Script(six_runs()), RunConfig(n=3, k=1, budget_calls=3, temperature=0.8, seed=1))
    assert {c["kwargs"]["temperature"] for c in roles(plain, "interrogation")} == {0.8}
    seeds = sorted(c["kwargs"]["seed"] for c in roles(client, "interrogation"))
    assert seeds == sorted(c["kwargs"]["seed"] for c in roles(plain, "interrogation"))
