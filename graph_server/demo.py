"""Build the rack-7 fixture in a fresh store and print every check as JSON.

``python -m graph_server.demo`` needs no model and no network.
"""

from __future__ import annotations

import json
from typing import Any

from graph_server.fixture import CONCLUSION, RUNS
from graph_server.store import GraphStore


def run_demo(graph_id: str = "rack7") -> dict[str, Any]:
    """Every store call of the fixture walk-through, keyed by step name."""
    store = GraphStore()
    steps: dict[str, Any] = {}
    for run_id, nodes, edges in RUNS:
        steps[f"assert_graph[{run_id}]"] = store.assert_graph(graph_id, nodes, edges, run_id=run_id)
    steps["merge_duplicates"] = store.merge_duplicates(graph_id)
    steps["check_structure"] = store.check_structure(graph_id, CONCLUSION)
    steps["support_width"] = store.support_width(graph_id, CONCLUSION)
    steps["argument_width"] = store.argument_width(graph_id, CONCLUSION)
    steps["critical_links"] = store.critical_links(graph_id, CONCLUSION)
    steps["surviving_claims"] = store.surviving_claims(graph_id)
    steps["disputed_nodes"] = store.disputed_nodes(graph_id, CONCLUSION)
    steps["mark_refuted[D]"] = store.mark_refuted(graph_id, "D", "survey column misread")
    steps["support_width[after D refuted]"] = store.support_width(graph_id, CONCLUSION)
    steps["check_structure[after D refuted]"] = store.check_structure(graph_id, CONCLUSION)
    steps["get_graph"] = store.get_graph(graph_id)
    return steps


def main() -> None:
    print(json.dumps(run_demo(), indent=2))


if __name__ == "__main__":
    main()
