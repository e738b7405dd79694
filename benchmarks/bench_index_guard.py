"""How long a hostile query can hold a corpus index reader, and what the guard costs.

    python benchmarks/bench_index_guard.py            # about half a minute
    python benchmarks/bench_index_guard.py --quick    # 0.5 s limit only, 200 files: a smoke run

Issue 22 item 4: an index whose tables were views with a recursive query made
``search_evidence`` run forever. Prints:

- the time a crafted index (``meta`` a recursive view) takes to be refused on open;
- for a runaway query under a :class:`QueryGuard` of 0.5 s, 2 s and the default limit
  (:data:`QUERY_TIME_LIMIT_S`), the time until it is stopped and the overshoot past the limit
  (goal: under 0.1 s);
- the time until a cancelled query stops, cancellation set 0.2 s after it starts;
- the median time of a guarded keyword search on a 2,000-file index.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import corpus
from corpus import CorpusIndexError
from corpus.index import QUERY_TIME_LIMIT_S, QueryGuard, open_index
from corpus.retrieval import retrieve

RUNAWAY = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT COUNT(*) FROM r"
GOAL_OVERSHOOT_S = 0.1


def build(folder: Path, files: int = 2000) -> Path:
    docs = folder / "docs"
    docs.mkdir()
    for i in range(files):
        (docs / f"f{i:04d}.md").write_text(
            f"# Log {i}\n\nRack {i % 97} stands in hall {chr(65 + i % 8)}. It was checked on "
            f"day {i} by technician {i % 13}.\n"
        )
    index = folder / "idx.sqlite"
    corpus.ingest(docs, index, dense=False)
    return index


def stopped_after(index: Path, guard: QueryGuard) -> float:
    started = time.monotonic()
    try:
        with open_index(index, guard) as conn:
            conn.execute(RUNAWAY).fetchone()
    except CorpusIndexError:
        return time.monotonic() - started
    raise AssertionError("the runaway query finished")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="one limit (0.5 s), 200 files, 20 searches"
    )
    quick = parser.parse_args().quick
    limits = (0.5,) if quick else (0.5, 2.0, QUERY_TIME_LIMIT_S)
    searches = 20 if quick else 200
    missed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        index = build(Path(tmp), files=200 if quick else 2000)

        crafted = Path(tmp) / "crafted.sqlite"
        crafted.write_bytes(index.read_bytes())
        with sqlite3.connect(crafted) as conn:
            conn.execute("DROP TABLE meta")
            conn.execute(f"CREATE VIEW meta(key, value) AS {RUNAWAY.replace('COUNT(*)', 'n, n')}")
        started = time.monotonic()
        error = corpus.search_evidence(str(crafted), "rack", 5)["error"]
        print(f"crafted index refused in {1000 * (time.monotonic() - started):.1f} ms: {error}")

        for limit in limits:
            took = stopped_after(index, QueryGuard(limit))
            over = took - limit
            print(
                f"runaway query, limit {limit:4.1f} s: stopped after {took:6.3f} s "
                f"(overshoot {1000 * over:5.1f} ms, goal < {1000 * GOAL_OVERSHOOT_S:.0f} ms)"
            )
            if over > GOAL_OVERSHOOT_S:
                missed.append(f"overshoot at {limit} s")

        cancel = threading.Event()
        threading.Timer(0.2, cancel.set).start()
        took = stopped_after(index, QueryGuard(cancel=cancel.is_set))
        print(f"runaway query, cancelled at 0.2 s: stopped after {took:.3f} s")

        times = []
        for i in range(searches):
            started = time.perf_counter()
            retrieve(index, f"rack {i % 97} hall", k=5, dense=False)
            times.append(time.perf_counter() - started)
        p50 = 1000 * statistics.median(times)
        print(f"guarded keyword search, p50 of {searches}: {p50:.2f} ms")
    print("goals missed: " + (", ".join(missed) if missed else "none"))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
