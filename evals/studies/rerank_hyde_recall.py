"""Round-1 recall of corpus mode with the model-made retrieval stages (issue 36): the LLM
reranker and HyDE, against the same round without them, on the pooled multihop corpus.

    python -m evals.corpus_eval --dataset multihop --out DIR --retrieval-only   # builds DIR
    python -m evals.studies.rerank_hyde_recall --out DIR --model local-1.5b --limit 10

Each of the first ``--limit`` multihop questions is retrieved as corpus mode's round 1 does
(:func:`orchestrator.loop.corpus_search.first_round`, ``--retrieval-k`` chunks, sub-questions
and dense rankings on, as when it was measured, no rewrite) in three configurations:
``default`` (no model call), ``rerank-llm`` (one ``rerank/v1`` call over the pool of twice
the chunks) and ``hyde`` (one ``hyde/v1`` call whose passage joins the dense rankings). Rows
go to ``DIR/rerank_hyde.jsonl`` as they finish (a rerun skips those there, so a stopped run
resumes); the table of recall@k, all-gold@k, fallbacks and seconds per call is printed at
the end from every row there.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from corpus.retrieval import Hit
from evals.corpus_recall import recall
from evals.datasets.loaders import load_dataset
from evals.reporting.cells import grouped
from evals.reporting.cells import table as markdown_table
from orchestrator.api import RunConfig
from orchestrator.llm import SupportsChat, open_backend
from orchestrator.loop import Reranker, first_round, hypothetical_passage, rerank_by_model
from orchestrator.records import CallRecord

CONFIGS = ("default", "rerank-llm", "hyde")


def measure(
    item: dict[str, Any], index: str, name: str, client: SupportsChat, model: str, config: RunConfig
) -> dict[str, Any]:
    """One row: the item's round-1 recall in configuration ``name``, and what its call did."""
    question = item["question"]
    started = time.perf_counter()
    fallback: str | None = None
    reranker = None
    passage = None
    if name == "rerank-llm":

        def reorder(q: str, pool: Sequence[Hit]) -> tuple[list[Hit], str | None, CallRecord]:
            return rerank_by_model(client, model, q, pool, config)

        reranker = Reranker("llm", reorder)
    if name == "hyde":
        hyde, _ = hypothetical_passage(client, model, question, config, calls_left=2)
        passage, fallback = hyde["passage"], hyde["fallback"]
    found = first_round(index, question, [], config, reranker=reranker, hyde=passage)
    if reranker is not None:
        fallback = found.record["rerank"]["fallback"]
    paths = [hit.path for hit in found.new]
    return {
        "id": item["id"],
        "config": name,
        "recall": recall(item, paths),
        "fallback": fallback,
        "dense_used": found.record["dense_used"],
        "seconds": round(time.perf_counter() - started, 1),
    }


def table(rows: list[dict[str, Any]], k: int) -> str:
    """Per configuration: questions, mean recall@k, all-gold@k, fallbacks, mean seconds."""
    header = f"configuration | questions | recall@{k} | all-gold@{k} | fallbacks | s per question"
    body = [
        (
            name,
            len(mine),
            f"{sum(r['recall'] for r in mine) / len(mine):.1%}",
            f"{sum(r['recall'] == 1.0 for r in mine) / len(mine):.1%}",
            sum(r["fallback"] is not None for r in mine),
            f"{sum(r['seconds'] for r in mine) / len(mine):.1f}",
        )
        for name, mine in grouped(rows, "config", CONFIGS)
    ]
    return "\n".join(markdown_table(header, body))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder of a corpus_eval run (its index)")
    parser.add_argument("--model", default="local-1.5b")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--retrieval-k", type=int, default=8)
    args = parser.parse_args(argv)
    out = Path(args.out)
    index = out / "corpus.sqlite"
    if not index.is_file():
        print(f"error: {index} is missing: run evals.corpus_eval first", file=sys.stderr)
        return 2
    results = out / "rerank_hyde.jsonl"
    rows = (
        [json.loads(line) for line in results.read_text().splitlines()] if results.is_file() else []
    )
    done = {(r["id"], r["config"]) for r in rows}
    items = load_dataset("multihop")[: args.limit]
    with open_backend(args.model) as backend, results.open("a") as sink:
        config = RunConfig(
            retrieval_k=args.retrieval_k,
            dense=True,
            seed=1,
            structured_output=backend.response_format_default,
        )
        for item in items:
            for name in CONFIGS:
                if (item["id"], name) in done:
                    continue
                row = measure(item, str(index), name, backend.client, backend.model, config)
                rows.append(row)
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                print(json.dumps(row), file=sys.stderr)
    print(table(rows, args.retrieval_k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
