"""Figures for the engine's part of issue 35 (nothing lost, nothing unbounded).

Prints, one line each:

* 2,000 templated claims ("the server in rack {i} runs linux") sent in one ``assert_graph``
  over MCP stdio to a server with ``--state-file``: edges made against the edge limit,
  seconds for the call, the server's peak RSS, and whether the restarted server loads the
  file (goal: under the limit, under 5 s and 500 MB; it loads);
* ``merge_duplicates`` over MCP on 20,000 such claims asserted without dedup: seconds and
  peak RSS (it used to pass 10 GB);
* state-file reload after random accepted calls near the store's limits: trials whose every
  saved file loaded back into an equal store (goal: 100 of 100);
* ``argument_width`` on 20,000 claims and 100,000 support links, acyclic and with cycles:
  seconds to the answer under the default limits, and seconds to the bounded error with
  ``max_request_seconds`` at 2 s;
* the server's RSS at start, after loading about 100 MB of claims into 10 graphs, and after
  deleting them all; once more with ``PYTHONMALLOC=malloc``, which tells references kept
  (they would stay) from allocator fragmentation (it goes).

RSS comes from /proc (Linux). ``benchmarks/bench_faults.py`` calls :func:`main`; ``run``
takes any ``report`` callable for the lines. Usage: ``python tests/faults_engine.py``.
"""

from __future__ import annotations

import functools
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from fault_operations import reload_trial
from raw_server import RawServer

from graph_server.errors import StoreError
from graph_server.store import GraphStore
from graph_server.validation import StoreLimits

TEMPLATED_CLAIMS = 2_000
MERGE_CLAIMS = 20_000
RELOAD_TRIALS = 100
CALLS_PER_TRIAL = 60
BIG_NODES, BIG_EDGES = 20_000, 100_000
BOUNDED_SECONDS = 2.0
MEMORY_GRAPHS, MEMORY_CLAIMS, MEMORY_CLAIM_CHARS = 10, 5_000, 1_900


def templated(count: int) -> list[dict[str, str]]:
    """Claims that differ only in their rack number."""
    return [
        {"id": f"n{i}", "claim": f"the server in rack {i} runs linux", "type": "given"}
        for i in range(count)
    ]


def status_mb(pid: int, field: str) -> float:
    """A memory field of /proc/PID/status (``VmRSS``, ``VmHWM``) in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise LookupError(f"{field} not in /proc/{pid}/status")


def timed_call(server: RawServer, tool: str, arguments: dict[str, Any]) -> tuple[Any, float]:
    """``server.call`` and its wall-clock seconds."""
    started = time.perf_counter()
    answer = server.call(tool, arguments)
    return answer, time.perf_counter() - started


def templated_over_mcp(folder: Path) -> str:
    state = folder / "templated.json"
    server = RawServer("--state-file", str(state), errlog=folder / "stderr")
    try:
        server.start()
        answer, seconds = timed_call(
            server, "assert_graph", {"graph_id": "racks", "nodes": templated(TEMPLATED_CLAIMS)}
        )
        listed = server.call("list_graphs", {})
        peak = status_mb(server.process.pid, "VmHWM")
    finally:
        server.stop()
    edges = listed["graphs"][0]["edges"]
    withheld = answer["contradictions_withheld"]
    again = RawServer("--state-file", str(state), errlog=folder / "stderr")
    try:
        again.start()
        reloaded = again.call("list_graphs", {}) == listed
    finally:
        again.stop()
    return (
        f"{TEMPLATED_CLAIMS:,} templated claims over MCP: {edges:,} edges (limit "
        f"{StoreLimits().max_edges_per_graph:,}), {seconds:.2f} s, server peak {peak:.0f} MB; "
        f"withheld: {[entry['size'] for entry in withheld]} claims in "
        f"{len(withheld)} group(s); state file reloads after a restart: "
        f"{'yes' if reloaded else 'NO'}"
    )


def merge_over_mcp(folder: Path) -> str:
    server = RawServer(errlog=folder / "stderr")
    try:
        server.start()
        server.call(
            "assert_graph",
            {"graph_id": "racks", "nodes": templated(MERGE_CLAIMS), "dedup": False},
        )
        answer, seconds = timed_call(server, "merge_duplicates", {"graph_id": "racks"})
        edges = server.call("list_graphs", {})["graphs"][0]["edges"]
        peak = status_mb(server.process.pid, "VmHWM")
    finally:
        server.stop()
    return (
        f"merge_duplicates on {MERGE_CLAIMS:,} templated claims over MCP: {seconds:.2f} s, "
        f"{edges:,} edges, {len(answer['merges'])} merges, server peak {peak:.0f} MB"
    )


def reload_trials(folder: Path) -> str:
    started = time.perf_counter()
    failures = [
        failure
        for seed in range(RELOAD_TRIALS)
        if (failure := reload_trial(seed, CALLS_PER_TRIAL, folder)) is not None
    ]
    shown = f"; first failure: {failures[0]}" if failures else ""
    return (
        f"state file reloads equal after every accepted call: {RELOAD_TRIALS - len(failures)} "
        f"of {RELOAD_TRIALS} trials ({CALLS_PER_TRIAL} random calls each near the limits, "
        f"{time.perf_counter() - started:.0f} s){shown}"
    )


def big_graph(store: GraphStore, cyclic: bool) -> str:
    """Fill graph ``big`` of ``store``; returns the conclusion's id."""
    rng = random.Random(35)
    nodes = [
        {
            "id": f"c{i}",
            "claim": f"claim number {i} about item {i * 7}",
            "type": "given" if i < BIG_NODES // 10 else "inference",
        }
        for i in range(BIG_NODES - 1)
    ]
    nodes.append({"id": "goal", "claim": "the goal holds", "type": "conclusion"})
    ids = [node["id"] for node in nodes]
    links: set[tuple[int, int]] = set()
    while len(links) < BIG_EDGES:
        a, b = rng.sample(range(BIG_NODES), 2)
        links.add((a, b) if cyclic else (min(a, b), max(a, b)))
    edges = [
        {"src": ids[a], "dst": ids[b], "relation": "supports", "run_ids": [f"r{rng.randrange(6)}"]}
        for a, b in sorted(links)
    ]
    store.assert_graph("big", nodes, dedup=False)
    step = store.limits.max_items_per_call
    for start in range(0, len(edges), step):
        store.assert_graph("big", [], edges[start : start + step], dedup=False)
    return "goal"


def _refusal(call: Callable[[], object]) -> str | None:
    """The message of the StoreError ``call`` raises, or None when it answers."""
    try:
        call()
    except StoreError as refused:
        return str(refused)
    return None


def argument_width_figures() -> list[str]:
    lines = []
    for cyclic in (False, True):
        shape = "with support cycles" if cyclic else "acyclic"
        store = GraphStore()
        goal = big_graph(store, cyclic)
        started = time.perf_counter()
        try:
            answer = store.argument_width("big", goal)
            outcome = f"width {answer.width}, capped {answer.capped}"
        except StoreError as refused:
            outcome = str(refused)[:60]
        seconds = time.perf_counter() - started
        bounded = GraphStore(limits=StoreLimits(max_request_seconds=BOUNDED_SECONDS))
        big_graph(bounded, cyclic)
        started = time.perf_counter()
        error = _refusal(functools.partial(bounded.argument_width, "big", goal))
        to_error = time.perf_counter() - started
        ending = "answered within the limit" if error is None else f"error {error[:48]!r}"
        lines.append(
            f"argument_width, {BIG_NODES:,} claims and {BIG_EDGES:,} links {shape}: "
            f"{seconds:.2f} s ({outcome}); with max_request_seconds={BOUNDED_SECONDS:g}: "
            f"{to_error:.2f} s, {ending}"
        )
    return lines


def memory_after_deletion(folder: Path, allocator: str | None = None) -> str:
    """Server RSS at start, holding about 100 MB of claims, and after deleting every graph.

    ``allocator``: a ``PYTHONMALLOC`` value for the server (None: CPython's default). With
    ``malloc`` every freed object goes back to glibc, which ``delete_graph`` trims; with the
    default, pymalloc keeps an arena while any object in it lives, so a few small objects the
    MCP SDK keeps (jsonschema's reference caches) hold freed space that later calls reuse.
    """
    previous = os.environ.pop("PYTHONMALLOC", None)
    if allocator is not None:
        os.environ["PYTHONMALLOC"] = allocator
    try:
        server = RawServer(errlog=folder / "stderr")
    finally:
        os.environ.pop("PYTHONMALLOC", None)
        if previous is not None:
            os.environ["PYTHONMALLOC"] = previous
    filler = "lorem ipsum dolor sit amet " * (MEMORY_CLAIM_CHARS // 27)
    try:
        server.start()
        pid = server.process.pid
        at_start = status_mb(pid, "VmRSS")
        for graph in range(MEMORY_GRAPHS):
            for first in range(0, MEMORY_CLAIMS, 1_000):
                nodes = [
                    {"id": f"n{i}", "claim": f"claim {graph} {i} {filler}", "type": "given"}
                    for i in range(first, first + 1_000)
                ]
                server.call("assert_graph", {"graph_id": f"g{graph}", "nodes": nodes})
        held = server.call("list_graphs", {})["claim_bytes"]
        loaded = status_mb(pid, "VmRSS")
        for graph in range(MEMORY_GRAPHS):
            server.call("delete_graph", {"graph_id": f"g{graph}"})
        deleted = status_mb(pid, "VmRSS")
    finally:
        server.stop()
    return (
        f"server RSS ({'PYTHONMALLOC=' + allocator if allocator else 'default allocator'}): "
        f"{at_start:.0f} MB at start, {loaded:.0f} MB holding {held / 1e6:.0f} MB of claims in "
        f"{MEMORY_GRAPHS} graphs, {deleted:.0f} MB after deleting them all"
    )


def run(report: Callable[[str], None]) -> None:
    """Measure every figure and hand each line to ``report`` as soon as it is known."""
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        report(templated_over_mcp(folder))
        report(merge_over_mcp(folder))
        report(reload_trials(folder))
        for line in argument_width_figures():
            report(line)
        report(memory_after_deletion(folder))
        report(memory_after_deletion(folder, "malloc"))


def main(argv: list[str] | None = None) -> int:
    """Print every figure (what ``benchmarks/bench_faults.py`` calls); takes no flags."""
    if argv:
        raise SystemExit(f"faults_engine takes no arguments, got {argv}")
    run(lambda line: print(line, flush=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
