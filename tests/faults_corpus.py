"""Issue 35, corpus items: what hostile inputs cost an ingest, and whether a search under
index roots can be sent outside them.

    python tests/faults_corpus.py [--mb 4] [--trials 300]

Prints, for each kind of input (normal prose as the baseline; text of blank lines;
Markdown of headings, and of headings on every other line; text of words that are all
different, which costs the dense embedder a segmentation per word (up to its per-file word
budget); HTML of ``<h1>`` and of ``<li>`` items (bare, and each with a ``class``
attribute), with prose HTML as a second baseline; a PDF whose page tree names one page
20,000 times, and a PDF of one Flate-compressed page that expands to the text size (a failed
file: past the content limit), with a prose PDF as a third baseline): the input size, the
chunks made, the ingest's peak RSS, that peak over the input size (and the growth over the
process's size before the ingest, over the input size), and the ingest's CPU time and wall
time against prose. Each kind is ingested in processes of its own (the fastest of
``--repeats``, the repeats going round the kinds), with the default (dense) settings and
keyword-only.
Goals: peak RSS growth within 10 times the input, time (CPU time: the machine is shared)
within 3 times prose.

Then the index-roots race: searches of an index inside a root while another process swaps
the folder holding it for a link to a folder outside, counting the searches that read the
outside index, with today's ``search_evidence`` and with the earlier check (resolve the path,
then open it by name).

``main(argv)`` returns 0 when every goal is met, else 1 (figures are printed either way).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

GOAL_RSS_RATIO = 10.0
GOAL_TIME_RATIO = 3.0
PDF_REPEATS = 20_000
WORDS = [
    "the",
    "rack",
    "holds",
    "a",
    "tape",
    "library",
    "in",
    "hall",
    "seven",
    "and",
    "power",
    "feeds",
    "run",
    "under",
    "the",
    "floor",
    "to",
    "each",
    "cabinet",
    "while",
    "the",
    "cooling",
    "loop",
    "keeps",
    "every",
    "aisle",
    "below",
    "twenty",
    "seven",
    "degrees",
]


def prose(size: int, seed: int = 1) -> str:
    """Sentences of common words in paragraphs of one to ten sentences, ``size`` characters."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20)))
        parts.append(sentence.capitalize() + (". " if rng.random() > 0.15 else ".\n\n"))
        total += len(parts[-1])
    return "".join(parts)[:size]


def inputs(size: int) -> dict[str, tuple[str, bytes]]:
    """Kind -> (baseline kind, file bytes). The file name's suffix picks the reader."""
    from corpus_fixtures import make_pdf

    text = prose(size)
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    html = "".join(f"<p>{p}</p>\n" for p in paragraphs)
    pages = [prose(3_000, seed) for seed in range(40)]
    return {
        "prose.txt": ("prose.txt", text.encode()),
        "blank-lines.txt": ("prose.txt", b"a\n\n" * (size // 3)),
        "headings.md": ("prose.txt", b"# h\n" * (size // 4)),
        "heading-per-line.md": ("prose.txt", b"# Rack\nhall\n" * (size // 12)),
        "unique-words.txt": ("prose.txt", b" ".join(b"w%d" % i for i in range(size // 8))),
        "prose.html": ("prose.html", html.encode()),
        "h1.html": ("prose.html", b"<h1>a</h1>" * (size // 10)),
        "li.html": ("prose.html", b"<li>a</li>" * (size // 10)),
        "li-class.html": ("prose.html", b'<li class="x">a</li>' * (size // 20)),
        "prose.pdf": ("prose.pdf", make_pdf([p.replace("\n", " ") for p in pages])),
        "page-repeat.pdf": (
            "prose.pdf",
            make_pdf(["Rack 7 is in hall B."], order=[0] * PDF_REPEATS),
        ),
        "compressed-page.pdf": (
            "prose.pdf",
            make_pdf(["Rack 7 is in hall B."], repeat=size // len("(Rack 7 is in hall B.) Tj ")),
        ),
    }


def memory_kb(field: str) -> int:
    """A figure of /proc/self/status in kB (``VmRSS``, ``VmHWM``), or 0 off Linux."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def ingest_one(folder: str, dense: bool) -> None:
    """Child process: ingest ``folder``; print seconds, chunks and RSS figures as JSON.

    A tiny file of the same kind is ingested first, so the libraries the reader and the
    embedder load (pypdf, numpy, the static table) are in the "before" figure; then the
    peak is reset (``/proc/self/clear_refs``), so it is this ingest's own. ``ru_maxrss``
    would not do: Linux carries the parent's peak across ``exec``."""
    import corpus

    docs = Path(folder) / "docs"
    warm = Path(folder) / "warm"
    warm.mkdir()
    name = next(docs.iterdir()).name
    sample = (docs / name).read_bytes()[:4096] if not name.endswith(".pdf") else b""
    if name.endswith(".pdf"):
        from corpus_fixtures import make_pdf

        sample = make_pdf(["warm up"])
    (warm / name).write_bytes(sample)
    corpus.ingest(warm, Path(folder) / "warm.sqlite", dense=dense)
    with contextlib.suppress(OSError):  # not Linux, or not allowed: the peak since start
        Path("/proc/self/clear_refs").write_text("5")
    before = memory_kb("VmRSS")
    started, cpu_started = time.perf_counter(), time.process_time()
    report = corpus.ingest(docs, Path(folder) / "index.sqlite", dense=dense)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    peak = memory_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu": cpu,
                "chunks": report.chunks_added,
                "failed": [p.reason for p in report.failed],
                "words_left_out": getattr(report, "words_left_out", 0),
                "before_kb": before,
                "peak_kb": peak,
                "dense": report.dense,
            }
        )
    )


def run_child(name: str, data: bytes, dense: bool) -> dict[str, Any]:
    """One ingest of ``data`` (as file ``name``) in a fresh process: its figures."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "docs").mkdir()
        (Path(folder) / "docs" / name).write_bytes(data)
        mode = "dense" if dense else "keyword"
        result = subprocess.run(
            [sys.executable, __file__, "--child", folder, mode],
            capture_output=True,
            text=True,
            check=True,
        )
    figures: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return figures


def measure_all(
    kinds: dict[str, tuple[str, bytes]], dense: bool, repeats: int
) -> dict[str, dict[str, Any]]:
    """Per kind, the figures of the fastest of ``repeats`` ingests (by CPU time, and the
    fastest wall time apart), each in a fresh process, with the highest peak memory of
    them all. The repeats go round the kinds (every kind once, then again), so a burst of
    load from the machine's other jobs falls on several kinds, not on one kind's every
    repeat."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in kinds}
    for _ in range(repeats):
        for name, (_, data) in kinds.items():
            runs[name].append(run_child(name, data, dense))
    results = {}
    for name, found in runs.items():
        figures = dict(min(found, key=lambda run: run["cpu"]))
        figures["seconds"] = min(run["seconds"] for run in found)
        worst = max(found, key=lambda run: run["peak_kb"] - run["before_kb"])
        figures["peak_kb"], figures["before_kb"] = worst["peak_kb"], worst["before_kb"]
        results[name] = figures
    return results


def ingest_table(size: int, repeats: int) -> bool:
    kinds = inputs(size)
    met = True
    for dense in (True, False):
        print(f"\ningest, {'default settings (dense when installed)' if dense else 'keyword-only'}")
        print(
            f"{'kind':<20} {'input':>10} {'chunks':>7} {'peak RSS':>9} {'RSS/input':>9} "
            f"{'growth/input':>12} {'cpu s':>6} {'x baseline':>10} {'x prose':>8} "
            f"{'wall s':>6} {'x baseline':>10}"
        )
        results = measure_all(kinds, dense, repeats)
        for name, (baseline, data) in kinds.items():
            figures = results[name]
            peak = figures["peak_kb"] * 1024
            growth = (figures["peak_kb"] - figures["before_kb"]) * 1024
            ratio = figures["cpu"] / results[baseline]["cpu"]
            to_prose = figures["cpu"] / results["prose.txt"]["cpu"]
            wall_ratio = figures["seconds"] / results[baseline]["seconds"]
            rss_ratio = peak / len(data)
            flags = ""
            if growth / len(data) > GOAL_RSS_RATIO:
                flags += " RSS over goal"
            if name != baseline and ratio > GOAL_TIME_RATIO:
                flags += " time over goal"
            met = met and not flags
            print(
                f"{name:<20} {len(data):>10,} {figures['chunks']:>7,} "
                f"{peak / 2**20:>7.1f}MB {rss_ratio:>9.1f} {growth / len(data):>12.2f} "
                f"{figures['cpu']:>6.2f} {ratio:>10.2f} {to_prose:>8.2f} "
                f"{figures['seconds']:>6.2f} {wall_ratio:>10.2f}{flags}"
            )
            if figures["failed"]:
                print(f"{'':<20} failed: {figures['failed']}")
            if figures.get("words_left_out"):
                print(
                    f"{'':<20} {figures['words_left_out']:,} words left out of dense vectors "
                    "(the file's word budget)"
                )
    print(
        f"goals: growth/input <= {GOAL_RSS_RATIO:g} (peak RSS is the interpreter and its "
        f"libraries plus the growth), time <= {GOAL_TIME_RATIO:g} x baseline (the prose of "
        "the same format), by the ingest's CPU time (the machine is shared: wall time also "
        "measures the other jobs; the wall-time ratio is printed beside it)"
    )
    return met


SWAPPER = """
import os, sys, time
sub, parked, outside, stop = sys.argv[1:5]
while not os.path.exists(stop):
    os.rename(sub, parked)
    os.symlink(outside, sub)
    time.sleep(0.0005)  # each state lasts about as long as a step of a search
    os.unlink(sub)
    os.rename(parked, sub)
    time.sleep(0.0005)
"""


def earlier_check(index: str, roots: list[Path], query: str) -> dict[str, Any]:
    """The check this code replaced: resolve the path, test it is inside a root, then open
    the index by that name again."""
    from corpus.retrieval import retrieve

    try:
        target = Path(index).resolve()
        inside = any(target.is_relative_to(root.resolve()) for root in roots)
        if not inside or not target.is_file():
            return {"error": "refused"}
        found = retrieve(target, query, (), 5)
    except Exception as exc:  # the folder was mid-swap: the search failed, nothing was read
        return {"error": str(exc)}
    return {"hits": [{"text": hit.text} for hit in found.hits]}


def race(trials: int) -> bool:
    import corpus
    from corpus.documents import search_evidence

    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        served, outside = base / "served", base / "outside"
        (served / "sub").mkdir(parents=True)
        outside.mkdir()
        for docs, words, target in (
            (base / "in-docs", "inside words about racks", served / "sub" / "idx.sqlite"),
            (base / "out-docs", "secret words about racks", outside / "idx.sqlite"),
        ):
            docs.mkdir()
            (docs / "a.md").write_text(words)
            corpus.ingest(docs, target, dense=False)
        index = str(served / "sub" / "idx.sqlite")
        print(f"\nindex-roots race: {trials} searches while another process swaps the folder")
        clean = True
        searches: tuple[tuple[str, Callable[[], dict[str, Any]]], ...] = (
            ("search_evidence", lambda: search_evidence(index, "words", 5, roots=[served])),
            ("earlier check", lambda: earlier_check(index, [served], "words")),
        )
        for label, search in searches:
            stop = base / "stop"
            stop.unlink(missing_ok=True)
            swapper = subprocess.Popen(
                [sys.executable, "-c", SWAPPER, str(served / "sub"), str(base / "parked"),
                 str(outside), str(stop)]
            )  # fmt: skip
            counts = {"outside": 0, "inside": 0, "refused": 0}
            try:
                for _ in range(trials):
                    found = search()
                    texts = " ".join(hit["text"] for hit in found.get("hits", []))
                    if "secret" in texts:
                        counts["outside"] += 1
                    elif "inside" in texts:
                        counts["inside"] += 1
                    else:
                        counts["refused"] += 1
            finally:
                stop.touch()
                swapper.wait()
            if not (served / "sub").is_dir() or (served / "sub").is_symlink():
                (served / "sub").unlink(missing_ok=True)
                (base / "parked").rename(served / "sub")
            print(
                f"{label:<16} read outside the roots: {counts['outside']} of {trials} "
                f"(inside: {counts['inside']}, refused: {counts['refused']})"
            )
            if label == "search_evidence":
                clean = counts["outside"] == 0
    return clean


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=4.0, help="size of each text input, MB")
    parser.add_argument("--trials", type=int, default=300, help="searches in the race")
    parser.add_argument("--repeats", type=int, default=3, help="ingests per kind (fastest)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        ingest_one(args.child[0], args.child[1] == "dense")
        return 0
    met = ingest_table(int(args.mb * 2**20), args.repeats)
    clean = race(args.trials)
    return 0 if met and clean else 1


if __name__ == "__main__":
    sys.exit(main())
