"""Random store operations near the store's limits, for the state-file reload trials.

Shared by ``tests/test_faults_engine.py`` (a few short trials) and
``tests/faults_engine.py`` (100 longer ones). The limits are small so that calls meet
them: full graphs, rival groups over the cap, the memory budget, merges and deletions.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from graph_server.server import dispatch
from graph_server.state import StateFile
from graph_server.store import GraphStore
from graph_server.validation import NODE_TYPES, RELATIONS, StoreLimits

TRIAL_LIMITS = StoreLimits(
    max_graphs=3,
    max_nodes_per_graph=40,
    max_edges_per_graph=60,
    max_claim_bytes=6_000,
    max_rival_claims=4,
)
_SUBJECTS = ("the pump", "server x9", "the cron job", "rack 7", "the survey")
_PREDICATES = ("runs linux", "read {} bar", "does not run linux", "failed {} times", "is listed")


def random_claim(rng: random.Random) -> str:
    """A claim from a small vocabulary: many near-duplicates, negations and number variants."""
    predicate = rng.choice(_PREDICATES).format(rng.randrange(6))
    return f"{rng.choice(_SUBJECTS)} {predicate}"


def random_call(rng: random.Random, store: GraphStore) -> tuple[str, dict[str, Any]]:
    """One tool call with arguments, valid or not, as an agent might send it."""
    graph = f"g{rng.randrange(4)}"
    nodes = [f"n{i}" for i in range(50)]
    kind = rng.choices(
        ["assert", "merge", "refute", "update", "evidence", "delete"], [8, 2, 2, 2, 1, 1]
    )[0]
    if kind == "assert":
        return "assert_graph", {
            "graph_id": graph,
            "nodes": [
                {
                    "id": rng.choice(nodes),
                    "claim": random_claim(rng),
                    "type": rng.choice(NODE_TYPES),
                }
                for _ in range(rng.randrange(1, 12))
            ],
            "edges": [
                {
                    "src": rng.choice(nodes),
                    "dst": rng.choice(nodes),
                    "relation": rng.choice(RELATIONS),
                }
                for _ in range(rng.randrange(0, 25))
            ],
            "run_id": f"r{rng.randrange(5)}",
            "dedup": rng.random() < 0.8,
        }
    if kind == "merge":
        return "merge_duplicates", {"graph_id": graph}
    if kind == "refute":
        return "mark_refuted", {
            "graph_id": graph,
            "node_id": rng.choice(nodes),
            "reason": "misread",
        }
    if kind == "update":
        return "update_node", {
            "graph_id": graph,
            "node_id": rng.choice(nodes),
            "confidence": rng.random(),
            "run_id": f"v{rng.randrange(3)}",
        }
    if kind == "evidence":
        return "add_evidence", {
            "graph_id": graph,
            "spans": [{"id": f"D1.{rng.randrange(4)}", "text": random_claim(rng)}],
        }
    return "delete_graph", {"graph_id": graph}


def reload_trial(seed: int, calls: int, folder: Path) -> str | None:
    """Make ``calls`` random calls; after each accepted one, save and load the state file.

    Returns None when every saved file loaded back into an equal store, else what failed.
    """
    rng = random.Random(seed)
    store = GraphStore(limits=TRIAL_LIMITS)
    state = StateFile(folder / f"trial-{seed}.json")
    for step in range(calls):
        name, arguments = random_call(rng, store)
        if "error" in dispatch(store, name, arguments):
            continue
        state.save(store)
        loaded = GraphStore(limits=TRIAL_LIMITS)
        try:
            state.load_into(loaded)
        except Exception as exc:  # the figure counts any failure to reload
            return f"seed {seed}, call {step} ({name}): {exc}"
        if loaded.dump_state() != store.dump_state():
            return f"seed {seed}, call {step} ({name}): the reloaded store differs"
    return None
