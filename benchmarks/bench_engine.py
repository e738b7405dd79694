"""Engine benchmark: every figure of the performance section of issue 2.

Run ``python benchmarks/bench_engine.py`` (``--quick`` for a smoke run with small
sizes). Prints one plain-text table; each timing is the median wall-clock time
over several repetitions, with the median CPU time of the process beside it
(on a shared, busy machine wall time can exceed CPU time; the engine is
single-threaded, so CPU time is what it would take on an idle core).

Dedup figures time the full-graph pass that ``GraphStore.merge_duplicates``
runs (``dedup.plan_merges`` then ``dedup.apply_plan``) on a graph holding every
synthetic claim un-merged, plus the public ``assert_graph`` ingest of the same
claims (which deduplicates them on the way in) and a ``merge_duplicates``
re-pass over the result. Each full pass is also timed, in the same run, with the
engine's previous planner ("before": every similar pair found by the prefix-filtered
search, then classified; ``tests/dedup_reference.py``), and the ratio is printed.
At 1,000 claims both are also compared with the plain pairwise loop; all must give
identical clusters and contradictions, or the script exits with status 1.

Issue 12 figures run in child processes so that peak RSS is the call's own:
``assert_graph`` of 20,000 templated claims (``synthetic.templated_claims``; goal
< 5 s and peak RSS < 600 MB), the same with the previous planner at a smaller
size, and RSS before loading 200 graphs of 500 claims, after, and after deleting
them all (goal: back within 10% of the figure before).

Graph figures use layered synthetic argument graphs (see ``tests/synthetic.py``) with
1% of the claims refuted, and time the public ``GraphStore`` methods.
"""

from __future__ import annotations

import argparse
import functools
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from graph_server import dedup
from graph_server import store as store_module
from graph_server.records import AssertGraphAnswer
from graph_server.similarity import pairwise_similar_pairs, similar_pairs
from graph_server.store import GraphStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import synthetic  # the claims and graphs of every figure
from dedup_reference import reference_plan  # the previous planner

JACCARD, RATIO = 0.7, 0.85


@dataclass
class Row:
    figure: str
    size: str
    wall_ms: float
    cpu_ms: float
    goal_ms: float | None = None
    note: str = ""
    other_goal_missed: bool = False
    """A goal that is not a time (peak or returned memory) was missed; the note says which."""

    def status(self) -> str:
        if self.other_goal_missed:
            return "MISSED"
        if self.goal_ms is None:
            return ""
        return "ok" if self.wall_ms < self.goal_ms else "MISSED"


def measure(action: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    """Median wall and CPU milliseconds over ``repeats`` calls, and the last result."""
    walls, cpus = [], []
    result = None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = action()
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return statistics.median(walls), statistics.median(cpus), result


# --------------------------------------------------------------------- dedup


def claims_graph(claims: list[synthetic.Claim]) -> nx.MultiDiGraph:
    """The store's graph layout holding every claim as its own, un-merged node."""
    graph = nx.MultiDiGraph()
    for index, claim in enumerate(claims):
        graph.add_node(
            f"c{index}",
            claim=claim.text,
            type="inference",
            confidence=0.8,
            run_ids={claim.run_id},
            refuted=False,
            refute_reason=None,
            aliases=[],
            merged_ids=[],
        )
    return graph


def dedup_quality(claims: list[synthetic.Claim], plan: dedup.MergePlan) -> str:
    """How the plan treated the known variants: merged paraphrases, separated conflicts."""
    cluster_of = {node: n for n, cluster in enumerate(plan.clusters) for node in cluster}
    base_node = {c.origin: f"c{i}" for i, c in enumerate(claims) if c.kind == "base"}

    def together(index: int, claim: synthetic.Claim) -> bool:
        mine, theirs = f"c{index}", base_node[claim.origin]
        return mine in cluster_of and cluster_of.get(mine) == cluster_of.get(theirs)

    share: dict[str, float] = {}
    for kind in ("paraphrase", "negated", "numeric"):
        members = [(i, c) for i, c in enumerate(claims) if c.kind == kind]
        merged = sum(together(i, c) for i, c in members)
        share[kind] = 100 * merged / max(1, len(members))
    distinct_merged = sum(
        len({claims[int(node[1:])].origin for node in cluster}) - 1 for cluster in plan.clusters
    )
    return (
        f"paraphrases merged {share['paraphrase']:.0f}%, negated merged "
        f"{share['negated']:.0f}%, numeric merged {share['numeric']:.0f}%, "
        f"distinct bases merged {distinct_merged}, contradictions {len(plan.contradictions)}"
    )


def full_pass(
    claims: list[synthetic.Claim], planner: Callable[..., dedup.MergePlan] = dedup.plan_merges
) -> dedup.MergePlan:
    """The pass ``GraphStore.merge_duplicates`` runs, over every claim un-merged."""
    graph = claims_graph(claims)
    plan = planner(graph, JACCARD, RATIO)
    dedup.apply_plan(graph, plan)
    return plan


def full_pass_row(claims: list[synthetic.Claim], repeats: int) -> tuple[Row, dedup.MergePlan]:
    """The "merge_duplicates full pass" row (merges, dedup quality) and the plan it timed."""
    size = len(claims)
    wall, cpu, plan = measure(functools.partial(full_pass, claims), repeats)
    row = Row(
        "merge_duplicates full pass",
        f"{size} claims",
        wall,
        cpu,
        {5000: 2000.0, 20000: 3000.0}.get(size),
        f"{sum(len(c) - 1 for c in plan.clusters)} merges; " + dedup_quality(claims, plan),
    )
    return row, plan


def reference_rows(
    claims: list[synthetic.Claim], now: Row, plan: dedup.MergePlan, compare_pairwise: bool
) -> list[Row]:
    """The "same pass, before" (and "pairwise loop") rows: speed-up and agreement with ``plan``;
    on a disagreement, prints the rows so far and exits with status 1."""
    finders = [("  same pass, before (issue 12)", similar_pairs)]
    if compare_pairwise:
        finders.append(("  same pass, pairwise loop", pairwise_similar_pairs))
    timed = []
    for label, find_pairs in finders:
        planner = functools.partial(reference_plan, find_pairs=find_pairs)
        timed.append((label, *measure(functools.partial(full_pass, claims, planner), 1)))
    rows: list[Row] = []
    for label, reference_wall, reference_cpu, reference in timed:
        identical = (reference.clusters, reference.contradictions) == (
            plan.clusters,
            plan.contradictions,
        )
        rows.append(
            Row(
                label,
                now.size,
                reference_wall,
                reference_cpu,
                None,
                f"now {reference_wall / now.wall_ms:.1f}x faster (wall), "
                f"{reference_cpu / now.cpu_ms:.1f}x (cpu); "
                f"identical clusters and contradictions: {identical}",
            )
        )
        if not identical:
            print_rows([now, *rows])
            sys.exit("the dedup planners disagree")
    return rows


def ingest_rows(claims: list[synthetic.Claim], repeats: int) -> list[Row]:
    """The "assert_graph (ingest + dedup)" row (merged, contradictions) and the
    "merge_duplicates re-pass" row over its result (merges, 0 expected)."""
    size = f"{len(claims)} claims"
    payload = [
        {"id": f"c{i}", "claim": c.text, "type": "inference", "run_ids": [c.run_id]}
        for i, c in enumerate(claims)
    ]

    def ingest() -> tuple[GraphStore, AssertGraphAnswer]:
        store = GraphStore()
        return store, store.assert_graph("bench", payload, [])

    wall, cpu, (store, result) = measure(ingest, repeats)
    ingested = Row(
        "assert_graph (ingest + dedup)",
        size,
        wall,
        cpu,
        None,
        f"{len(result.auto_merged)} merged, {len(result.contradictions_created)} contradictions",
    )
    wall, cpu, again = measure(lambda: store.merge_duplicates("bench"), repeats)
    repassed = Row(
        "merge_duplicates re-pass",
        size,
        wall,
        cpu,
        None,
        f"{len(again.merges)} merges (0 expected)",
    )
    return [ingested, repassed]


def bench_dedup(size: int, repeats: int, compare_pairwise: bool) -> list[Row]:
    """The dedup rows at ``size`` claims: the full pass now and before, then the ingest."""
    claims = synthetic.claims(size, seed=size)
    now, plan = full_pass_row(claims, repeats)
    return [
        now,
        *reference_rows(claims, now, plan, compare_pairwise),
        *ingest_rows(claims, repeats),
    ]


# --------------------------------------------------------------------- graphs

CHECKS = (
    "check_structure",
    "support_width",
    "critical_links",
    "surviving_claims",
    "disputed_nodes",
)


def bench_graph(nodes: int, edges: int, repeats: int, goals: bool) -> list[Row]:
    graph = synthetic.argument_graph(nodes, edges, seed=nodes)
    size = f"{nodes} n / {edges} e"
    rows = []

    def ingest() -> tuple[GraphStore, AssertGraphAnswer]:
        store = GraphStore()
        return store, store.assert_graph("bench", graph.nodes, graph.edges)

    wall, cpu, (store, result) = measure(ingest, max(1, repeats // 2))
    rows.append(
        Row(
            "assert_graph",
            size,
            wall,
            cpu,
            1000.0 if goals and nodes == 2000 else None,
            f"{len(result.accepted_nodes)} nodes, {len(result.accepted_edges)} edges, "
            f"{len(result.rejected)} rejected, {len(result.auto_merged)} merged",
        )
    )

    # 1% of the claims, spread over the layers.
    refuted = [f"n{i}" for i in range(7, nodes, 100)]
    wall, cpu, _ = measure(lambda: store.mark_refuted("bench", refuted[0], "bench"), 1)
    rows.append(Row("mark_refuted (2 widths)", size, wall, cpu, None, f"{refuted[0]}"))
    for node_id in refuted[1:]:
        store.mark_refuted("bench", node_id, "bench")

    width = store.support_width("bench", graph.conclusion).disjoint_paths
    for name in CHECKS:
        method = functools.partial(getattr(store, name), "bench")
        if name != "surviving_claims":
            method = functools.partial(method, graph.conclusion)
        wall, cpu, answer = measure(method, repeats)
        result = answer.model_dump(by_alias=True)
        rows.append(
            Row(
                name,
                size,
                wall,
                cpu,
                100.0 if goals and nodes == 500 else None,
                _summary(name, result, width),
            )
        )
    return rows


def _summary(name: str, result: dict[str, Any], width: int) -> str:
    if name == "check_structure":
        return (
            f"{len(result['orphans'])} orphans, {len(result['cycles'])} cycles, "
            f"unreachable={result['unreachable_conclusion']}"
        )
    if name == "support_width":
        return f"width {width}, max_flow {result['max_flow']}"
    if name == "critical_links":
        return (
            f"cut {len(result['min_cut_nodes'])}, {len(result['bridge_edges'])} bridges, "
            f"{len(result['ranked'])} ranked"
        )
    if name == "surviving_claims":
        return (
            f"{len(result['in'])} in, {len(result['out'])} out, "
            f"{len(result['undecided'])} undecided, {len(result['surviving'])} surviving"
        )
    return (
        f"{len(result['contradiction_pairs'])} contradiction pairs, "
        f"{len(result['isolated_load_bearing'])} isolated load-bearing"
    )


# ------------------------------------------------------------ issue 12 (children)


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def _peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM). Not getrusage: on Linux ru_maxrss survives
    fork and exec, so a child would report its parent's peak."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child_templated(size: int, planner: str) -> dict[str, Any]:
    """One assert_graph of ``size`` templated claims in this (fresh) process."""
    if planner == "before":
        # The previous planner, with the store's call form (it ignores the new keywords).
        def before(graph: nx.MultiDiGraph, j: float, r: float, focus: Any = None, **_: Any) -> Any:
            return reference_plan(graph, j, r, focus=focus, find_pairs=similar_pairs)

        store_module.plan_merges = before  # type: ignore[attr-defined,assignment]
    claims = synthetic.templated_claims(size, seed=size)
    payload = [{"id": f"t{i}", "claim": c, "type": "given"} for i, c in enumerate(claims)]
    store = GraphStore()
    wall, cpu = time.perf_counter(), time.process_time()
    result = store.assert_graph("bench", payload, run_id="r1")
    return {
        "wall_ms": (time.perf_counter() - wall) * 1000,
        "cpu_ms": (time.process_time() - cpu) * 1000,
        "peak_mb": _peak_rss_mb(),
        "merged": len(result.auto_merged),
        "contradictions": len(result.contradictions_created),
    }


def child_memory(graphs: int, nodes: int) -> dict[str, Any]:
    """RSS before loading ``graphs`` x ``nodes`` claims, after, and after deleting them.

    The payloads are made first and kept as JSON bytes, decoded one graph at a time,
    as a server would receive them: objects the claim generator keeps alive must not
    be interleaved with the graphs' (they would pin the allocator's arenas).
    """
    blobs = [
        json.dumps(
            [
                {"id": f"c{i}", "claim": c.text, "type": "inference", "run_ids": [c.run_id]}
                for i, c in enumerate(synthetic.claims(nodes, seed=g))
            ]
        ).encode()
        for g in range(graphs)
    ]
    store = GraphStore()
    # One small graph first, so one-off costs (lazy imports, compiled patterns) are in.
    store.assert_graph("warm-up", json.loads(blobs[0])[:100])
    store.merge_duplicates("warm-up")
    store.delete_graph("warm-up")
    before = _rss_mb()
    for g, blob in enumerate(blobs):
        store.assert_graph(f"g{g}", json.loads(blob))
    loaded = _rss_mb()
    for g in range(graphs):
        store.delete_graph(f"g{g}")
    return {"before_mb": before, "loaded_mb": loaded, "after_mb": _rss_mb()}


def run_child(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def bench_issue12(size: int, before_size: int, graphs: int, nodes: int) -> list[Row]:
    rows = []
    for planner, claims in (("now", size), ("before", before_size), ("now", before_size)):
        if claims <= 0:
            continue
        got = run_child("templated", str(claims), planner)
        goal = 5000.0 if planner == "now" and claims == 20000 else None
        over = planner == "now" and claims == 20000 and got["peak_mb"] >= 600
        rows.append(
            Row(
                f"assert_graph templated ({planner})",
                f"{claims} claims",
                got["wall_ms"],
                got["cpu_ms"],
                goal,
                f"peak RSS {got['peak_mb']:.0f} MB"
                + (" (goal < 600 MB: MISSED)" if over else " (goal < 600 MB)" if goal else "")
                + f"; {got['merged']} merged, {got['contradictions']} contradictions",
                other_goal_missed=over,
            )
        )
    memory = run_child("memory", str(graphs), str(nodes))
    ratio = memory["after_mb"] / memory["before_mb"]
    rows.append(
        Row(
            "RSS: load, then delete_graph",
            f"{graphs} x {nodes} claims",
            0.0,
            0.0,
            None,
            f"before {memory['before_mb']:.0f} MB, loaded {memory['loaded_mb']:.0f} MB, after "
            f"deleting all {memory['after_mb']:.0f} MB ({100 * (ratio - 1):+.1f}%; goal within "
            f"10%: {'ok' if ratio <= 1.10 else 'MISSED'})",
            other_goal_missed=ratio > 1.10,
        )
    )
    return rows


# ---------------------------------------------------------------------- table


HEADER = f"{'figure':<30} {'size':<18} {'wall ms':>9} {'cpu ms':>9} {'goal':>6}  status  notes"


def print_rows(rows: list[Row]) -> None:
    for row in rows:
        goal = f"<{row.goal_ms:.0f}" if row.goal_ms is not None else ""
        print(
            f"{row.figure:<30} {row.size:<18} {row.wall_ms:>9.1f} {row.cpu_ms:>9.1f} "
            f"{goal:>6}  {row.status():<6}  {row.note}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repetition")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument(
        "--before-size",
        type=int,
        default=None,
        help="templated claims for the previous planner's ingest (it is quadratic there; "
        "default 20000, 1000 with --quick)",
    )
    options = parser.parse_args()
    if options.child:
        kind, *rest = options.child
        if kind == "templated":
            print(json.dumps(child_templated(int(rest[0]), rest[1])))
        else:
            print(json.dumps(child_memory(int(rest[0]), int(rest[1]))))
        return

    runs: list[Callable[[], list[Row]]]
    if options.quick:
        runs = [
            lambda: bench_dedup(1000, 1, compare_pairwise=True),
            lambda: bench_issue12(2000, options.before_size or 1000, 20, 100),
            lambda: bench_graph(500, 1500, 1, goals=True),
        ]
    else:
        runs = [
            lambda: bench_dedup(1000, 3, compare_pairwise=True),
            lambda: bench_dedup(5000, 3, compare_pairwise=False),
            lambda: bench_dedup(20000, 1, compare_pairwise=False),
            lambda: bench_issue12(20000, options.before_size or 20000, 200, 500),
            lambda: bench_graph(500, 1500, 7, goals=True),
            lambda: bench_graph(2000, 6000, 5, goals=True),
        ]
    print(HEADER)
    print("-" * len(HEADER), flush=True)
    missed = []
    for run in runs:
        rows = run()
        print_rows(rows)
        missed += [f"{r.figure.strip()} @ {r.size}" for r in rows if r.status() == "MISSED"]
    print(f"\ngoals missed: {', '.join(missed) if missed else 'none'}")


if __name__ == "__main__":
    main()
