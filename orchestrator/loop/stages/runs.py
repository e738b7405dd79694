"""The owner of :class:`orchestrator.records.RunRecord`: every write to a run's record is one of
the functions here. A run is made once, by the stage that asked it (:func:`run_record`), and
changed once more, when it is ingested (:func:`take_graph`, then :func:`note_ingest`)."""

from __future__ import annotations

from graph_server.errors import StoreError
from graph_server.records import AssertGraphAnswer
from orchestrator.checks import AnchoredRun
from orchestrator.records import RunRecord
from orchestrator.reply import ReplyGraph


def run_record(
    run_id: str,
    outcome: str,
    errors: list[str],
    *,
    graph: ReplyGraph | None = None,
    wait_s: float = 0.0,
) -> RunRecord:
    """A run's record before anything of it was ingested; ``graph`` is the parsed reply to
    ingest (the key is present only when given), ``wait_s`` the model time it took."""
    run: RunRecord = {
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
        "wait_s": wait_s,
        "leniencies": [],
    }
    if graph is not None:
        run["graph"] = graph
    return run


def take_graph(run: RunRecord) -> ReplyGraph | None:
    """The parsed reply of ``run``, removed from it (None when it has none to ingest)."""
    return run.pop("graph", None)


def note_ingest(
    run: RunRecord, anchored: AnchoredRun, kept: AssertGraphAnswer | StoreError
) -> None:
    """What ingesting ``run`` established: its anchored answer, then what the store kept of
    it (``kept``: the store's answer to ``assert_graph``; the error it raised rejects the run)."""
    run["errors"] += anchored.notes
    run["answer"], run["answer_key"] = anchored.answer, anchored.answer_key
    run["conclusion_claim"] = anchored.conclusion_claim
    run["leniencies"] = anchored.leniencies
    if isinstance(kept, StoreError):
        run["errors"].append(f"store rejected the run: {kept}")
        return
    accepted = set(kept.accepted_nodes)
    run["ingested"] = bool(accepted)
    run["conclusion_node"] = anchored.conclusion if anchored.conclusion in accepted else None
    run["accepted_nodes"] = len(kept.accepted_nodes)
    run["accepted_edges"] = len(kept.accepted_edges)
    run["rejected"] = [item.model_dump() for item in kept.rejected]


def run_number(run_id: str) -> int:
    """The number of run ``r<i>`` (0 for an id of another form)."""
    return int(run_id[1:]) if run_id[1:].isdigit() else 0
