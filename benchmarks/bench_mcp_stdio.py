"""Benchmark the MCP server over real stdio: latency and memory under churn.

Spawns ``python -m graph_server.server`` through the SDK's stdio client (as an MCP
host would) and prints:

* round-trip latency of ``check_structure`` on the rack-7 fixture graph: median,
  p99, mean and max over ``--calls`` sequential calls (goal: median < 5 ms), next to
  the same call made in-process on a GraphStore (library mode) for scale;
* the server process's resident memory before and after ``--churn`` sequential
  calls that create, check and delete graphs (goal: growth < 20 MB once the
  graphs are deleted).

RSS is read from /proc, so memory figures are Linux-only; elsewhere they print as
unknown. Usage: ``python benchmarks/bench_mcp_stdio.py [--calls N] [--churn N]``.
"""

import argparse
import importlib.metadata
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from graph_server.fixture import CONCLUSION, RUNS
from graph_server.store import GraphStore

REPO_ROOT = Path(__file__).resolve().parent.parent
SERVER_ARGS = ["-m", "graph_server.server"]
BENCH_GRAPH = "bench"
CALLS_PER_CHURN_ROUND = len(RUNS) + 2  # assert each run, check_structure, delete_graph


def server_pid() -> int | None:
    """Pid of the server subprocess this process spawned, or None if /proc is unavailable."""
    children: list[str] = []
    try:
        for task in Path(f"/proc/{os.getpid()}/task").iterdir():
            children += (task / "children").read_text().split()
        for pid in children:
            if "graph_server.server" in Path(f"/proc/{pid}/cmdline").read_text():
                return int(pid)
    except OSError:
        return None
    return None


def rss_mb(pid: int | None) -> float | None:
    """Resident set size of ``pid`` in MB (VmRSS from /proc), None when unknown."""
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, round(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


async def ok(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    """Call a tool and fail loudly if it returns an error result."""
    result = await client.call_tool(name, arguments)
    if result.is_error:
        raise RuntimeError(f"{name} failed: {result.content}")
    return result.structured_content


async def assert_fixture(client: Client, graph_id: str) -> None:
    for run_id, nodes, edges in RUNS:
        args = {"graph_id": graph_id, "nodes": nodes, "edges": edges, "run_id": run_id}
        await ok(client, "assert_graph", args)


def library_latency_ms(calls: int) -> list[float]:
    """Sorted in-process check_structure latencies on the fixture, for comparison."""
    store = GraphStore()
    for run_id, nodes, edges in RUNS:
        store.assert_graph(BENCH_GRAPH, nodes, edges, run_id=run_id)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        store.check_structure(BENCH_GRAPH, CONCLUSION)
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)


def describe(label: str, times_ms: list[float]) -> str:
    return (
        f"{label}: median {statistics.median(times_ms):.3f} ms, "
        f"p99 {percentile(times_ms, 0.99):.3f} ms, mean {statistics.fmean(times_ms):.3f} ms, "
        f"max {times_ms[-1]:.3f} ms over {len(times_ms)} calls"
    )


def shown_mb(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1f} MB"


async def run(calls: int, churn: int) -> None:
    params = StdioServerParameters(command=sys.executable, args=SERVER_ARGS, cwd=REPO_ROOT)
    sdk = importlib.metadata.version("mcp")
    print(f"python {platform.python_version()}, mcp SDK {sdk}, {os.cpu_count()} CPUs")
    with open(os.devnull, "w") as errlog:
        start = time.perf_counter()
        async with Client(stdio_client(params, errlog=errlog)) as client:
            print(f"server start + handshake: {time.perf_counter() - start:.2f} s")
            pid = server_pid()
            await assert_fixture(client, BENCH_GRAPH)
            check = {"graph_id": BENCH_GRAPH, "conclusion_id": CONCLUSION}
            for _ in range(50):  # warm-up: imports, caches, thread pool
                await ok(client, "check_structure", check)

            times = []
            for _ in range(calls):
                t0 = time.perf_counter()
                await ok(client, "check_structure", check)
                times.append((time.perf_counter() - t0) * 1000)
            times.sort()
            median = statistics.median(times)
            print(describe("check_structure over stdio", times))
            print(f"  goal median < 5 ms: {'met' if median < 5 else 'NOT met'}")
            print(describe("check_structure in-process (library mode)", library_latency_ms(calls)))

            rounds = max(1, churn // CALLS_PER_CHURN_ROUND)
            before = rss_mb(pid)
            t0 = time.perf_counter()
            for i in range(rounds):
                graph_id = f"churn-{i}"
                await assert_fixture(client, graph_id)
                await ok(client, "check_structure", {"graph_id": graph_id, "conclusion_id": "Z"})
                await ok(client, "delete_graph", {"graph_id": graph_id})
            elapsed = time.perf_counter() - t0
            after = rss_mb(pid)
            left = await ok(client, "list_graphs", {})
    total = rounds * CALLS_PER_CHURN_ROUND
    print(
        f"churn: {total} sequential calls ({rounds} x assert_graph x{len(RUNS)}, "
        f"check_structure, delete_graph) in {elapsed:.1f} s, {total / elapsed:.0f} calls/s"
    )
    print(f"server RSS before churn: {shown_mb(before)}, after: {shown_mb(after)}")
    if before is not None and after is not None:
        growth = after - before
        verdict = "met" if growth < 20 else "NOT met"
        print(f"  RSS growth: {growth:+.1f} MB (goal < 20 MB: {verdict})")
    print(f"graphs left after churn: {[g['graph_id'] for g in left['graphs']]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed check_structure calls")
    parser.add_argument("--churn", type=int, default=5000, help="create/check/delete calls")
    args = parser.parse_args()
    anyio.run(run, args.calls, args.churn)


if __name__ == "__main__":
    main()
