"""Wall clock of the control loop against a fake model server with a fixed latency per call.

    python benchmarks/bench_orchestrator.py [--latency 1.0] [--repeats 3]

Two figures (issue 4):

1. **Fan-out**: one call through :class:`ChatClient` versus a whole ``run_task`` with N=6 and
   a budget of 6 calls (so: six parallel interrogations, parse, merge, assess, report).
   Target: ratio <= 1.3.
2. **Time outside model calls** for six 40-node runs (12 givens, 24 shared inferences and 3
   run-only inferences each, one run contradicting the answer), followed by one verification
   round: ``wall - model wait``, where model wait is the critical path of every parallel phase
   (the slowest call chain in the fan-out and in each round). Target: < 5 % of the wall clock.
   The same workload is also run with a zero-latency in-process client, whose whole wall clock
   is local work (parse, merge, checks, report), as a cross-check.

The server is :class:`orchestrator.llm.testing.FakeOpenAIServer` on 127.0.0.1 (real sockets and
JSON); nothing leaves the machine. Medians over ``--repeats`` runs are printed. On a busy
machine the wall-clock shares inflate (local work waits for a core); the CPU time of the
zero-latency run does not, and is printed as a second view of the same figure.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from corpus.evidence import build_evidence
from orchestrator.api import RunConfig, run_task
from orchestrator.llm.chat import ChatMessage
from orchestrator.llm.client import ChatClient
from orchestrator.llm.testing import FakeOpenAIServer, FakeReply, ScriptedClient, completion_body
from orchestrator.reply import prompts

VERIFY_SYSTEM = prompts.verification_messages(build_evidence(["x"]), "y")[0]["content"]
SMALL_GRAPH = json.dumps(
    {
        "nodes": [
            {
                "id": "a",
                "claim": "row 9 lists server x9",
                "type": "given",
                "source": "D1.1",
                "confidence": 0.9,
            },
            {
                "id": "b",
                "claim": "server x9 runs linux",
                "type": "given",
                "source": "D2.1",
                "confidence": 0.9,
            },
            {"id": "z", "claim": "x9 can take the nightly job", "type": "conclusion"},
        ],
        "edges": [
            {"from": "a", "to": "z", "relation": "supports", "confidence": 0.8},
            {"from": "b", "to": "z", "relation": "supports", "confidence": 0.8},
        ],
        "conclusion_node": "z",
        "answer": "yes",
    }
)
QUESTION = "Can server x9 take the nightly job?"
TASK = {
    "question": QUESTION,
    "documents": [
        "Row 9 lists server x9.",
        "Server x9 runs Linux.",
        "The nightly job needs Linux.",
    ],
}


def _words(rng: random.Random, count: int) -> list[str]:
    """Distinct made-up words (no numbers: numbers would trigger the numeric dedup guard)."""
    syllables = ["ka", "lo", "mi", "ru", "se", "ta", "vo", "ne", "pi", "du", "ge", "ho"]
    words: set[str] = set()
    while len(words) < count:
        words.add("".join(rng.choice(syllables) for _ in range(3)))
    return sorted(words)


SERVER = "kalomi"
"""The server the forty-node runs argue about: the question's subject, so arguments reach it."""


def forty_node_runs(seed: int = 0) -> tuple[list[str], list[str]]:
    """Six interrogation replies of 40 nodes each over one shared argument (see module doc),
    and the documents their givens cite: one sentence each, given ``g<i>`` quoting ``D<i+1>.1``."""
    rng = random.Random(seed)
    vocab = _words(rng, 400)

    def claim(*premises: str) -> str:
        """Six words, one of them taken from each premise (a link whose two claims share no
        word is set aside as ``no_bridge``)."""
        bridges = [rng.choice(premise.split()) for premise in premises]
        return " ".join(rng.sample(vocab, 6 - len(bridges)) + bridges)

    givens = [claim() for _ in range(12)]
    shared_sources = [rng.sample(range(12 + j), 2) for j in range(24)]
    shared: list[str] = []
    for j, sources in enumerate(shared_sources):
        premises = [(givens + shared)[source] for source in sources]
        shared.append(claim(*premises, *([SERVER] if j == 23 else [])))
    answer = f"the nightly job can run on server {SERVER}"
    replies = []
    for run in range(6):
        nodes: list[dict[str, Any]] = [
            {"id": f"g{i}", "claim": c, "type": "given", "source": f"D{i + 1}.1"}
            for i, c in enumerate(givens)
        ]
        # Runs reword shared claims (case, final period): the merge must fold them together.
        nodes += [
            {"id": f"s{j}", "claim": c.capitalize() + "." if run % 2 else c, "type": "inference"}
            for j, c in enumerate(shared)
        ]
        nodes += [
            {"id": f"u{j}", "claim": claim(shared[20 + j], SERVER), "type": "inference"}
            for j in range(3)
        ]
        conclusion = answer if run != 5 else f"the nightly job cannot run on server {SERVER}"
        nodes.append({"id": "c", "claim": conclusion, "type": "conclusion"})
        ids = [f"g{i}" for i in range(12)] + [f"s{j}" for j in range(24)]
        edges: list[dict[str, Any]] = [
            {"from": ids[src], "to": f"s{j}", "relation": "supports"}
            for j, sources in enumerate(shared_sources)
            for src in sources
        ]
        edges += [{"from": f"s{20 + j}", "to": f"u{j}", "relation": "supports"} for j in range(3)]
        edges += [{"from": f"u{j}", "to": "c", "relation": "supports"} for j in range(3)]
        edges += [{"from": "s23", "to": "c", "relation": "supports"}]
        for item in nodes + edges:
            item["confidence"] = 0.8
        reply = {"nodes": nodes, "edges": edges, "conclusion_node": "c"}
        replies.append(json.dumps(reply | {"answer": "yes" if run != 5 else "no"}))
    return [given.capitalize() + "." for given in givens], replies


class Handler:
    """Interrogation i gets reply i (by arrival order); verifications refute the negation."""

    def __init__(self, replies: list[str], latency: float) -> None:
        self.replies = replies
        self.latency = latency
        self.count = 0

    def text(self, messages: Sequence[Mapping[str, Any]]) -> str:
        if messages[0]["content"] == VERIFY_SYSTEM:
            refuted = "cannot" in messages[-1]["content"]
            verdict = "refuted" if refuted else "supported"
            return json.dumps({"verdict": verdict, "reason": "[D1] settles it"})
        self.count += 1  # the server calls handlers on many threads; order is all that varies
        return self.replies[(self.count - 1) % len(self.replies)]

    def __call__(self, request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
        body = completion_body(self.text(request["messages"]), cost=1e-5)
        return FakeReply(body=body, delay_s=self.latency)

    def scripted(self, model: str, messages: list[ChatMessage], kwargs: object) -> str:
        return self.text(messages)


def fan_out(latency: float, repeats: int) -> None:
    singles, walls = [], []
    with FakeOpenAIServer(Handler([SMALL_GRAPH], latency)) as server:
        client = ChatClient(server.base_url)
        for _ in range(repeats):
            start = time.perf_counter()
            client.chat("fake", [{"role": "user", "content": "hi"}])
            singles.append(time.perf_counter() - start)
            start = time.perf_counter()
            report = run_task(
                TASK, client=client, model="fake", config=RunConfig(n=6, budget_calls=6)
            )
            walls.append(time.perf_counter() - start)
            assert report["totals"]["calls"] == 6 and report["answer"] is not None
    single, wall = statistics.median(singles), statistics.median(walls)
    print(f"single call:            {single:.3f} s")
    print(f"N=6 fan-out (run_task): {wall:.3f} s")
    print(f"ratio:                  {wall / single:.3f}  (target <= 1.3)")


def overhead(latency: float, repeats: int) -> None:
    documents, replies = forty_node_runs()
    question = f"Can the nightly job run on server {SERVER.capitalize()}?"
    task = {"question": question, "documents": documents}
    config = RunConfig(n=6, budget_calls=15, k=2)
    rows = []
    with FakeOpenAIServer(Handler(replies, latency)) as server:
        client = ChatClient(server.base_url)
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as out:
                start = time.perf_counter()
                report = run_task(
                    task, client=client, model="fake", config=config, out_dir=Path(out)
                )
                wall = time.perf_counter() - start
            rows.append((wall, report["timing"]["model_wait_s"], report))
    wall, wait, report = sorted(rows, key=lambda r: r[0] - r[1])[len(rows) // 2]
    nodes = len(report["graph"]["nodes"])
    print(
        f"graph: 6 runs x 40 nodes -> {nodes} nodes after merge, "
        f"{len(report['graph']['edges'])} edges; {report['totals']['calls']} calls, "
        f"{report['rounds']} verification round(s), stop {report['stop_reason']}, "
        f"killed {[k['id'] for k in report['killed']]}"
    )
    print(f"wall clock (incl. writing report files): {wall:.3f} s")
    print(f"model wait (critical path):              {wait:.3f} s")
    print(
        f"time outside model calls:                {wall - wait:.3f} s = "
        f"{100 * (wall - wait) / wall:.2f} % of wall clock  (target < 5 %)"
    )
    local = report["timing"]["local_s"]
    print("  of which (s): " + ", ".join(f"{name} {value:.3f}" for name, value in local.items()))
    offline, cpu = [], []
    for _ in range(repeats):
        scripted = ScriptedClient(Handler(replies, 0.0).scripted)
        with tempfile.TemporaryDirectory() as out:
            start, start_cpu = time.perf_counter(), time.process_time()
            run_task(task, client=scripted, model="fake", config=config, out_dir=Path(out))
            offline.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    print(
        f"same workload, zero-latency client:      {statistics.median(offline):.3f} s wall, "
        f"{statistics.median(cpu):.3f} s CPU (all local work: parse, merge, checks, report; "
        f"CPU time = {100 * statistics.median(cpu) / wait:.2f} % of the model wait, a "
        "load-independent estimate)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per fake call")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"== fan-out, {args.latency:g} s per call, median of {args.repeats} ==")
    fan_out(args.latency, args.repeats)
    print(f"\n== time outside model calls, median of {args.repeats} ==")
    overhead(args.latency, args.repeats)


if __name__ == "__main__":
    main()
