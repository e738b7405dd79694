"""``logic-graph``: ask a question, serve a built-in model, build and search corpus indexes.

::

    logic-graph ask "QUESTION" (--doc FILE... | --corpus INDEX) [--model M] [--json] ...
    logic-graph serve --model local [--port N]
    logic-graph ingest DIR --index PATH [--keyword-only] [--max-chars N] [--quiet]
    logic-graph search QUERY... --index PATH [-k N] [--variant TEXT ...] [--json]
        [--dense on|off] [--keyword-only] [--subquestions on|off] [--entity-weight W]
        [--reranker PATH]
    logic-graph info --index PATH
    logic-graph view PATH [--out FILE] [--graph ID] [--open]   (orchestrator/cli/view.py)
    logic-graph eval run|record|replay|compare|goal|summary ...   (evals/command.py)

``ask`` and ``serve`` have their own flags and exit codes (``logic-graph ask --help``:
:mod:`.ask`; ``logic-graph serve --help``: :func:`orchestrator.llm.local.serve_main`).
Exit codes of the index commands: 0 success; 1 some files failed (the rest was ingested and
committed) or the index could not be used; 2 bad arguments (a missing folder, a bad number, an
index path that is a folder). Progress goes to stderr (a redrawn bar on a terminal, a line per
10% otherwise); results go to stdout.

Installed packages add command groups through the ``logic_graph.commands`` entry point
group: the evaluation harness adds ``eval`` (its own flags and exit codes:
``logic-graph eval --help``), so this package lists and runs it without importing it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from importlib.metadata import EntryPoint, entry_points
from typing import ClassVar, TextIO

from corpus.chunking import DEFAULT_MAX_CHARS, MAX_MAX_CHARS, MIN_MAX_CHARS
from corpus.index import CorpusIndexError, IngestReport, index_info, ingest_directory
from corpus.readers import SUPPORTED_SUFFIXES
from corpus.rerank import RerankerUnavailable, load_cross_encoder, pool_size, rerank_hits
from corpus.retrieval import MAX_K, MAX_VARIANTS
from orchestrator.cli.stage_flags import add_stage_flags, stage_settings
from orchestrator.records import RunConfig

COMMAND_GROUP = "logic_graph.commands"
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
BAR_WIDTH = 30


class ProgressBar:
    """Renders ``progress(stage, done, total)`` calls on ``stream``: on a terminal one line
    redrawn at most 10 times a second, elsewhere one line at each further 10% (only when
    ``total`` reaches ``min_total``). Cost: O(1) per call."""

    LABELS: ClassVar[dict[str, str]] = {"read": "files", "embed": "chunks embedded"}

    def __init__(self, stream: TextIO, *, min_total: int = 20) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.min_total = min_total
        self._last_draw = 0.0
        self._last_tenth: dict[str, int] = {}
        self._open_line = False

    def __call__(self, stage: str, done: int, total: int) -> None:
        if total < self.min_total:
            return
        label = self.LABELS.get(stage, stage)
        if self.tty:
            now = time.monotonic()
            if done < total and now - self._last_draw < 0.1:
                return
            self._last_draw = now
            filled = BAR_WIDTH * done // total
            bar = "#" * filled + "." * (BAR_WIDTH - filled)
            self.stream.write(f"\r[{bar}] {done}/{total} {label}")
            self._open_line = done < total
            if done == total:
                self.stream.write("\n")
            self.stream.flush()
            return
        tenth = 10 * done // total
        if tenth > self._last_tenth.get(stage, 0):
            self._last_tenth[stage] = tenth
            self.stream.write(f"{label}: {done}/{total} ({10 * tenth}%)\n")
            self.stream.flush()

    def close(self) -> None:
        """End a half-drawn bar line (after an interruption)."""
        if self._open_line:
            self.stream.write("\n")
            self._open_line = False


def added_commands() -> dict[str, EntryPoint]:
    """Name -> entry point of the command groups installed packages add (``eval``). Each
    loads to an object with ``help`` and ``main(argv) -> int``; nothing is imported here."""
    return {point.name: point for point in entry_points(group=COMMAND_GROUP)}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``logic-graph`` (argparse exits 2 on bad arguments)."""
    parser = argparse.ArgumentParser(
        prog="logic-graph",
        description="Answer questions from documents with argument graphs and mechanical "
        "checks (ask), serve a built-in model over HTTP (serve), and build and search "
        "document-corpus indexes (ingest, search, info).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    # Listed here for --help; their arguments belong to orchestrator.cli.ask.main and
    # orchestrator.llm.local.serve_main, which main() hands them to.
    commands.add_parser(
        "ask",
        help="answer a question from documents or a corpus, or refuse (logic-graph ask --help)",
    )

    _ingest_flags(commands.add_parser("ingest", help="ingest a folder into an index (incremental)"))
    _search_flags(commands.add_parser("search", help="retrieve the top chunks for a query"))
    info = commands.add_parser("info", help="summarise an index")
    info.add_argument("--index", required=True, help="index file")
    commands.add_parser(
        "serve", help="serve a built-in model over HTTP on 127.0.0.1 (logic-graph serve --help)"
    )
    commands.add_parser(
        "view", help="write the HTML page of a report.json, export or state file (view --help)"
    )
    for name in added_commands():
        commands.add_parser(name, help=f"added by an installed package ({name} --help)")
    return parser


def _ingest_flags(ingest: argparse.ArgumentParser) -> None:
    """``logic-graph ingest``'s arguments."""
    ingest.add_argument("directory", help="folder of .txt, .md, .html and .pdf files")
    ingest.add_argument("--index", required=True, help="index file (created if missing)")
    ingest.add_argument(
        "--keyword-only", action="store_true", help="do not compute dense embeddings"
    )
    ingest.add_argument(
        "--max-chars",
        type=int,
        default=DEFAULT_MAX_CHARS,
        help=f"chunk size bound in characters ({MIN_MAX_CHARS}-{MAX_MAX_CHARS}, "
        f"default {DEFAULT_MAX_CHARS})",
    )
    ingest.add_argument("--quiet", action="store_true", help="no progress, no file lists")


def _search_flags(search: argparse.ArgumentParser) -> None:
    """``logic-graph search``'s arguments (the retrieval stages' flags included)."""
    search.add_argument(
        "query", nargs="+", help="the question or search text (quotes optional: words are joined)"
    )
    search.add_argument("--index", required=True, help="index file")
    search.add_argument("-k", type=int, default=5, help=f"how many chunks (1-{MAX_K})")
    search.add_argument(
        "--variant",
        action="append",
        default=[],
        help=f"another phrasing of the query (up to {MAX_VARIANTS})",
    )
    search.add_argument(
        "--keyword-only",
        dest="dense",
        action="store_const",
        const="off",
        default=argparse.SUPPRESS,  # --dense gives the default
        help="the same as --dense off",
    )
    search.add_argument("--json", action="store_true", help="print hits as JSON lines")
    add_stage_flags(search, RunConfig(), model_stages=False)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see the module docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:
        from orchestrator.llm import serve_main  # the model machinery only when serving

        return serve_main(argv[1:])
    if argv[:1] == ["view"]:
        from orchestrator.cli.view import view_main

        return view_main(argv[1:])
    if argv[:1] == ["ask"]:
        from orchestrator.cli.ask import main as ask_main  # the whole loop only when asking

        return ask_main(argv[1:])
    added = added_commands()
    if argv[:1] and argv[0] in added:
        return int(added[argv[0]].load().main(argv[1:]))
    args = build_parser().parse_args(argv)
    try:
        if args.command == "ingest":
            return _ingest(args)
        if args.command == "search":
            return _search(args)
        return _info(args)
    except ValueError as exc:  # TaskError too: a bad stage flag
        print(f"logic-graph {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (CorpusIndexError, RerankerUnavailable) as exc:  # a model that cannot be loaded
        print(f"logic-graph {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_FAILED


def _ingest(args: argparse.Namespace) -> int:
    bar = None if args.quiet else ProgressBar(sys.stderr)
    try:
        report = ingest_directory(
            args.directory,
            args.index,
            progress=bar,
            dense=not args.keyword_only,
            max_chars=args.max_chars,
        )
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        print("logic-graph ingest: interrupted; the index is unchanged", file=sys.stderr)
        return 130
    print(_summary(report, verbose=not args.quiet))
    if report.files_total == 0:
        kinds = sorted(SUPPORTED_SUFFIXES)
        print(
            f"logic-graph ingest: nothing was ingested: no {', '.join(kinds[:-1])} or "
            f"{kinds[-1]} file under {args.directory} (hidden files and folders are skipped)",
            file=sys.stderr,
        )
    for problem in report.failed:
        print(f"failed: {problem.path}: {problem.reason}", file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_FAILED


def _summary(report: IngestReport, *, verbose: bool) -> str:
    lines = [
        f"ingested {report.files_total} files, {report.chunks_total} chunks in "
        f"{report.seconds:.2f} s: {len(report.accepted)} new, {len(report.replaced)} "
        f"replaced, {len(report.skipped)} unchanged, {len(report.removed)} removed, "
        f"{len(report.failed)} failed, {len(report.ignored)} ignored (unsupported type)",
        f"chunks: +{report.chunks_added} -{report.chunks_removed}, "
        f"{report.chunks_embedded} embedded; "
        + ("dense search: on" if report.dense else f"dense search: off ({report.dense_note})"),
    ]
    if report.words_left_out:
        lines.append(
            f"{report.words_left_out} word occurrences left out of dense vectors (their files "
            "used up their word budget; keyword search still finds them)"
        )
    if verbose:
        lines += [f"  empty (no text): {path}" for path in report.empty]
        lines += [f"  ignored: {path}" for path in report.ignored]
    return "\n".join(lines)


def _search(args: argparse.Namespace) -> int:
    from orchestrator.loop import search_question  # the planner only here

    query = " ".join(args.query)
    settings = stage_settings(args)
    scorer = load_cross_encoder(args.reranker) if args.reranker is not None else None
    found = search_question(
        args.index,
        query,
        args.variant,
        pool_size(args.k) if scorer is not None else args.k,
        subquestions=settings["subquestions"],
        dense=settings["dense"],
        entity_weight=settings["entity_weight"],
    )
    hits, fallback = found.pool, None
    if scorer is not None:
        hits, fallback = rerank_hits(query, hits, scorer)
    hits = hits[: args.k]
    if args.json:
        for hit in hits:
            print(json.dumps(asdict(hit), ensure_ascii=False, sort_keys=True))
    else:
        mode = "hybrid" if found.dense_used else f"keyword only ({found.dense_note})"
        count = len(hits)
        stages = [f"{len(found.plan)} sub-questions" if found.plan else ""]
        stages += [f"cross-encoder reranked ({fallback or 'its order used'})" if scorer else ""]
        extra = "".join(f", {stage}" for stage in stages if stage)
        print(f"{count} hit{'' if count == 1 else 's'}, {mode}{extra}")
        for rank, hit in enumerate(hits, 1):
            where = f"{hit.path} p.{hit.page} chars {hit.start}-{hit.end}"
            print(f"{rank}. [{hit.chunk_id}] {where} score {hit.score:.4f}")
            if hit.section:
                print(f"   section: {hit.section}")
            snippet = " ".join(hit.text.split())
            print(f"   {snippet[:200]}{'...' if len(snippet) > 200 else ''}")
    return EXIT_OK


def _info(args: argparse.Namespace) -> int:
    info = index_info(args.index)
    print(json.dumps(asdict(info), indent=2, sort_keys=True))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
