"""How often dedup merges claims about different things, and how often it still merges
restatements. No model needed; runs in a few seconds.

    python benchmarks/bench_dedup_soundness.py                      # this checkout's engine
    python benchmarks/bench_dedup_soundness.py --engine-root OLD     # another checkout's engine

``OLD`` is any directory holding a ``graph_server`` package, e.g. the engine before the
slot guard: ``mkdir /tmp/old && git archive 1be3a86 graph_server | tar -x -C /tmp/old``.

Prints four figures:

1. **Evidence sentences merged with other sentences** in ``evals/datasets/multihop.jsonl``:
   every sentence of an item's documents (split after ``.``, ``!`` or ``?``) is ingested as
   a given, one run per document, into one graph per item, and a full ``merge_duplicates``
   pass follows; an item counts when a sentence that carries the answer (``meta.evidence``)
   ends up in one node with a different sentence. Distractor sentences are built to share
   names and wording with those sentences, so every such merge is a false one.
2. **Typo-rule pairs** (engines with ``similarity.is_variant`` only): over the distinct
   capitalised words of 7+ characters in the whole data set (fictional names built as near
   misses of each other), the pairs one edit apart (optimal string alignment: a swap of
   adjacent letters is one edit) and how many of them the slot guard's typo rule treats as
   one word; then the same over the stemmed content words of each item's own documents,
   the pairs that could actually meet in one graph. Zero joined means the rule never
   confuses two different words there.
3. **Synthetic claims** of ``bench_engine.py`` (1,000 claims, seed 1000, the same set as
   its ``--quick`` run): the share of paraphrases, negations and renumberings merged into
   their base claim, and how many distinct base claims were merged together (false merges).
4. **Restatement pairs** merged, from a fixed list of wordings of one fact.

The numbers measured when the slot guard was added are in ``docs/engine.md`` (Dedup).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Iterable
from itertools import combinations
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "evals" / "datasets" / "multihop.jsonl"
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
NAME_MIN_CHARS = 7
SYNTHETIC_CLAIMS = 1000

PARAPHRASES = [
    ("Server x9 runs Linux [D2]", "server x9 runs linux."),
    ("The servers run Linux", "the server runs linux"),
    ("Wenna Korick was born in Quelheim", "Wenna Korick was born in the town of Quelheim"),
    ("The cron scheduler runs only on Linux hosts", "only on linux hosts runs the cron scheduler"),
    ("Rookton Foundry was founded in 1818.", "Rookton Foundry was founded in 1818"),
    ("The Faldham Bridge spans the Naren River.", "the faldham bridge spans the naren river"),
]

Pair = Callable[[str, str], Any]


def sentences(item: dict[str, Any]) -> list[list[str]]:
    """Each document of ``item`` as its list of sentences."""
    return [SENTENCE_END.split(document) for document in item["documents"]]


def merged_items(store_cls: type, items: list[dict[str, Any]]) -> tuple[int, int]:
    """(items with an evidence sentence merged into another sentence, merges in all).

    O(total sentences) ingests plus one dedup pass per item.
    """
    bad_items = merges = 0
    for item in items:
        store = store_cls()
        evidence = {e["sentence"] for e in item["meta"]["evidence"]}
        for d, document in enumerate(sentences(item), 1):
            nodes = [
                {"id": f"d{d}s{s}", "claim": sentence, "type": "given"}
                for s, sentence in enumerate(document, 1)
            ]
            store.assert_graph("g", nodes, [], run_id=f"r{d}")
        store.merge_duplicates("g")
        bad = False
        for node in store.get_graph("g").nodes:
            texts = {node.claim, *node.aliases}
            merges += len(node.merged_ids)
            if len(texts) > 1 and texts & evidence:
                bad = True
        bad_items += bad
    return bad_items, merges


def close_pairs(words: Iterable[str], is_variant: Pair, distance: Pair) -> tuple[int, int]:
    """(pairs of distinct ``words`` one edit apart, those ``is_variant`` joins). O(n^2)."""
    close = [(a, b) for a, b in combinations(sorted(set(words)), 2) if distance(a, b) <= 1]
    return len(close), sum(1 for a, b in close if is_variant(a, b))


def typo_rule_pairs(items: list[dict[str, Any]], is_variant: Pair, distance: Pair) -> list[str]:
    """Report lines for figure 2: whole-set names, then each item's own content words."""
    from graph_server.similarity import claim_key

    names = {w.lower() for item in items for d in item["documents"] for w in CAPITALISED.findall(d)}
    names = {n for n in names if len(n) >= NAME_MIN_CHARS}
    close, joined = close_pairs(names, is_variant, distance)
    item_close = item_joined = 0
    for item in items:
        words = {w for doc in sentences(item) for s in doc for w in claim_key(s).content}
        c, j = close_pairs(words, is_variant, distance)
        item_close, item_joined = item_close + c, item_joined + j
    return [
        f"names of {NAME_MIN_CHARS}+ chars in the data set: {len(names)}; pairs one edit "
        f"apart: {close}; joined by the typo rule: {joined}",
        f"content-word pairs within one item's documents one edit apart: {item_close}; "
        f"joined by the typo rule: {item_joined}",
    ]


def synthetic_quality() -> str:
    """Figure 3, with ``bench_engine``'s own claim set and quality summary."""
    from bench_engine import JACCARD, RATIO, claims_graph, dedup_quality
    from synthetic import claims

    from graph_server import dedup

    claim_set = claims(SYNTHETIC_CLAIMS, seed=SYNTHETIC_CLAIMS)
    plan = dedup.plan_merges(claims_graph(claim_set), JACCARD, RATIO)
    return f"{SYNTHETIC_CLAIMS} synthetic claims: " + dedup_quality(claim_set, plan)


def restatements_merged(store_cls: type) -> int:
    """How many PARAPHRASES pairs merge when asserted by two runs."""
    merged = 0
    for a, b in PARAPHRASES:
        store = store_cls()
        store.assert_graph("g", [{"id": "a", "claim": a, "type": "given"}], run_id="r1")
        result = store.assert_graph("g", [{"id": "b", "claim": b, "type": "given"}], run_id="r2")
        merged += bool(result.auto_merged)
    return merged


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine-root", type=Path, default=ROOT)
    args = parser.parse_args()
    # The engine under test goes first; benchmarks/ stays importable after it.
    sys.path.insert(0, str(args.engine_root.resolve()))
    from rapidfuzz.distance import OSA

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
        for line in typo_rule_pairs(items, is_variant, OSA.distance):
            print(line)
    print(synthetic_quality())
    print(f"restatement pairs merged: {restatements_merged(GraphStore)} of {len(PARAPHRASES)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
