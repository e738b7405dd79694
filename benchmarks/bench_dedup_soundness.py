"""How often dedup merges claims about different things, on documents we did not tune on.

    python benchmarks/bench_dedup_soundness.py                      # this checkout's engine
    python benchmarks/bench_dedup_soundness.py --engine-root OLD     # another checkout's engine

Prints three figures:

1. **Evidence sentences merged with other sentences** in ``evals/datasets/multihop.jsonl``:
   every sentence of an item's documents is ingested as a given (one run per document) and a
   full ``merge_duplicates`` pass runs; an item counts when a sentence that carries the answer
   (``meta.evidence``) ends up in one node with a different sentence. Distractor sentences are
   built to share names and wording with those sentences, so every such merge is a false one.
2. **Typo-rule name pairs**: over every distinct capitalised word of 7+ characters in the
   data set (near-miss names by construction), how many pairs are one edit apart, and how many
   of those the slot guard's typo rule (``is_variant``) would treat as one word. Zero means
   the rule never confuses two real names there.
3. **Paraphrase merges** on the fixed restatement pairs of the soundness tests.

``--engine-root`` puts another checkout first on ``sys.path`` (e.g. a ``git worktree`` of the
previous commit) to measure its engine on the same data.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "evals" / "datasets" / "multihop.jsonl"
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")

PARAPHRASES = [
    ("Server x9 runs Linux [D2]", "server x9 runs linux."),
    ("The servers run Linux", "the server runs linux"),
    ("Wenna Korick was born in Quelheim", "Wenna Korick was born in the town of Quelheim"),
    ("The cron scheduler runs only on Linux hosts", "only on linux hosts runs the cron scheduler"),
    ("Rookton Foundry was founded in 1818.", "Rookton Foundry was founded in 1818"),
    ("The Faldham Bridge spans the Naren River.", "the faldham bridge spans the naren river"),
]


def merged_items(store_cls: type, items: list[dict]) -> tuple[int, int]:
    """(items with an evidence sentence merged into another sentence, merges in all)."""
    bad_items = merges = 0
    for item in items:
        store = store_cls()
        evidence = {e["sentence"] for e in item["meta"]["evidence"]}
        for d, document in enumerate(item["documents"], 1):
            nodes = [
                {"id": f"d{d}s{s}", "claim": sentence, "type": "given"}
                for s, sentence in enumerate(SENTENCE_END.split(document), 1)
            ]
            store.assert_graph("g", nodes, [], run_id=f"r{d}")
        store.merge_duplicates("g")
        bad = False
        for node in store.get_graph("g")["nodes"]:
            texts = {node["claim"], *node["aliases"]}
            merges += len(node["merged_ids"])
            if len(texts) > 1 and texts & evidence:
                bad = True
        bad_items += bad
    return bad_items, merges


def name_pairs(items: list[dict], is_variant: object, distance: object) -> tuple[int, int, int]:
    """(distinct names of 7+ chars, pairs one edit apart, pairs the typo rule joins)."""
    names = sorted(
        {w.lower() for item in items for d in item["documents"] for w in CAPITALISED.findall(d)}
    )
    names = [n for n in names if len(n) >= 7]
    close = [(a, b) for a, b in combinations(names, 2) if distance(a, b) <= 1]  # type: ignore[operator]
    joined = sum(1 for a, b in close if is_variant(a, b))  # type: ignore[operator]
    return len(names), len(close), joined


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine-root", type=Path, default=ROOT)
    args = parser.parse_args()
    sys.path.insert(0, str(args.engine_root.resolve()))
    from rapidfuzz.distance import Levenshtein

    from graph_server.store import GraphStore

    items = [json.loads(line) for line in DATA.read_text().splitlines()]
    started = time.perf_counter()
    bad, merges = merged_items(GraphStore, items)
    elapsed = time.perf_counter() - started
    print(f"engine: {args.engine_root}")
    print(
        f"items whose answer-bearing sentence merged with another sentence: {bad} of "
        f"{len(items)} ({merges} merges in all; {elapsed:.1f} s)"
    )
    try:
        from graph_server.similarity import is_variant
    except ImportError:  # an engine from before the slot guard has no typo rule
        print("typo rule: none in this engine")
    else:
        names, close, joined = name_pairs(items, is_variant, Levenshtein.distance)
        print(
            f"names of 7+ chars: {names}; pairs one edit apart: {close}; joined by the "
            f"typo rule: {joined}"
        )
    store_merged = 0
    for a, b in PARAPHRASES:
        store = GraphStore()
        store.assert_graph("g", [{"id": "a", "claim": a, "type": "given"}], run_id="r1")
        result = store.assert_graph("g", [{"id": "b", "claim": b, "type": "given"}], run_id="r2")
        store_merged += bool(result["auto_merged"])
    print(f"restatement pairs merged: {store_merged} of {len(PARAPHRASES)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
