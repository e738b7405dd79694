"""Throughput and JSON validity of a built-in local model on interrogation calls.

    python benchmarks/bench_local_tokens.py [--model local] [--calls 6] [--threads N]
        [--concurrency 1] [--max-tokens 700] [--unconstrained]

Starts the model with :class:`orchestrator.llm.local.LocalModelServer`, sends ``--calls``
interrogation prompts (three small built-in tasks, cycled, each call with its own seed) and
prints, per call and in total, the prompt and generation speed that llama.cpp measures
(``timings``), how long the call took, and how the reply parsed: ``json.loads`` on the raw
text, then :func:`orchestrator.reply.parse.parse_graph` without a repair call, which also checks the
graph's structure (e.g. that the conclusion names a node). Prompt caching is off so every call
pays for its whole prompt, the honest figure for the first call of each fan-out.
``--unconstrained`` also runs the same calls without ``response_format`` for comparison.

The figures depend heavily on what else the machine is doing (llama.cpp threads stall when a
core is taken away), so the 1-minute load average and thread count are printed alongside.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests

from corpus.evidence import build_evidence
from orchestrator.llm.local import LOCAL_MODELS, LocalModelServer
from orchestrator.reply.parse import parse_graph
from orchestrator.reply.prompts import interrogation_messages
from orchestrator.reply.schemas import interrogation_response_format

TASKS: list[tuple[list[str], str]] = [
    (
        [
            "The east footbridge was shut for repairs from 3 March to 20 March.",
            "Nadia walks to the office over the east footbridge; when it is shut she takes the "
            "river bus instead.",
            "On 10 March every river bus stayed in port because of a storm warning.",
            "Nadia's team lead wrote that she worked from home on 10 March.",
        ],
        "How did Nadia get to the office on 10 March, if she went at all?",
    ),
    (
        [
            "Every sample in batch 7 was stored in freezer B.",
            "Freezer B lost power for nine hours on Sunday night.",
            "Samples kept above -20 C for more than six hours must be discarded.",
            "After a power cut, freezer B warms above -20 C within two hours.",
        ],
        "Can the samples in batch 7 still be used?",
    ),
    (
        [
            "The orchard harvested 1,200 kg of apples this season.",
            "A third of the harvest was sold to the cider press.",
            "Half of what remained was sold at the farm shop; the rest went to a school.",
        ],
        "How many kilograms of apples went to the school?",
    ),
]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def one_call(
    base_url: str, model: str, index: int, args: argparse.Namespace, schema: bool
) -> dict[str, Any]:
    """One interrogation call straight to the server (to read llama.cpp's own ``timings``)."""
    documents, question = TASKS[index % len(TASKS)]
    evidence = build_evidence(documents)
    body: dict[str, Any] = {
        "model": model,
        "messages": interrogation_messages(evidence, question, 2),
        "temperature": 0.8,
        "seed": 1000 + index,
        "max_tokens": args.max_tokens,
        "cache_prompt": False,
    }
    if schema:
        body["response_format"] = interrogation_response_format(span_ids=evidence.ids)
    started = time.monotonic()
    reply = requests.post(f"{base_url}/chat/completions", json=body, timeout=1800).json()
    wall = time.monotonic() - started
    choice = reply["choices"][0]
    text = choice["message"]["content"] or ""
    timings = reply.get("timings", {})
    return {
        "wall_s": wall,
        "prompt_tokens": reply["usage"]["prompt_tokens"],
        "completion_tokens": reply["usage"]["completion_tokens"],
        "prompt_tps": timings.get("prompt_per_second"),
        "gen_tps": timings.get("predicted_per_second"),
        "finish": choice.get("finish_reason"),
        "json": _is_json(text),
        "outcome": parse_graph(text).outcome,
    }


def run(server: LocalModelServer, args: argparse.Namespace, schema: bool) -> None:
    label = "bounded json_schema" if schema else "unconstrained"
    print(f"\n== {label}: {args.calls} calls, concurrency {args.concurrency}")
    started = time.monotonic()
    with ThreadPoolExecutor(args.concurrency) as pool:
        rows = list(
            pool.map(
                lambda i: one_call(server.base_url, server.model, i, args, schema),
                range(args.calls),
            )
        )
    wall = time.monotonic() - started
    for i, row in enumerate(rows):
        print(
            f"call {i}: {row['prompt_tokens']:4d} prompt tok @ {row['prompt_tps']:6.1f}/s, "
            f"{row['completion_tokens']:4d} gen tok @ {row['gen_tps']:5.1f}/s, "
            f"{row['wall_s']:6.1f} s, finish={row['finish']}, json={row['json']}, "
            f"parse={row['outcome']}"
        )
    generated = sum(r["completion_tokens"] for r in rows)
    outcomes = [r["outcome"] for r in rows]
    print(
        f"median prompt {statistics.median(r['prompt_tps'] for r in rows):.1f} tok/s, "
        f"median generation {statistics.median(r['gen_tps'] for r in rows):.1f} tok/s, "
        f"aggregate generation {generated / wall:.1f} tok/s, "
        f"median call {statistics.median(r['wall_s'] for r in rows):.1f} s, wall {wall:.1f} s"
    )
    print(
        f"valid JSON {sum(r['json'] for r in rows)}/{len(rows)}; parse outcomes: "
        + ", ".join(f"{name} {outcomes.count(name)}" for name in ("strict", "salvaged", "dropped"))
        + f"; hit max_tokens {sum(r['finish'] == 'length' for r in rows)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local", choices=sorted(LOCAL_MODELS))
    parser.add_argument("--calls", type=int, default=6)
    parser.add_argument("--threads", type=int, default=None, help="default: load-aware")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=700)
    parser.add_argument("--unconstrained", action="store_true")
    args = parser.parse_args()
    if args.calls < 1 or args.concurrency < 1 or args.max_tokens < 1:
        parser.error("--calls, --concurrency and --max-tokens must be >= 1")
    load = os.getloadavg()[0]
    with LocalModelServer(
        args.model, n_threads=args.threads, slots=max(2, args.concurrency)
    ) as server:
        print(
            f"model {args.model} ({server.spec.title}), {server.n_threads} threads, "
            f"load average {load:.2f} at start, server ready in {server.startup_s:.1f} s"
        )
        run(server, args, schema=True)
        if args.unconstrained:
            run(server, args, schema=False)
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
