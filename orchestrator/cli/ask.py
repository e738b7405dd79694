"""``logic-graph ask "QUESTION" [--doc FILE... | --corpus INDEX]``: a question in one line.

The same run as ``python -m orchestrator.run --task FILE`` (every one of its flags, from the
same definitions: :func:`orchestrator.cli.run.add_run_options`), without writing a task file
first. Without ``--doc`` or ``--corpus`` the question is a word problem, its own statement the
only evidence (the task file's ``"documents": [question]``). It prints the answer, or the
refusal and its reason in one sentence, the support the answer rests on, and the path of the
report; ``--json`` prints report.json instead. ``-`` as a document reads standard input. Exit
codes are ``orchestrator.cli.run``'s: 0 answered, 3 refused on the evidence, 1 backend or
budget failure, 2 bad input, 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from orchestrator.checks import readable_latex
from orchestrator.cli.run import (
    EXIT_USAGE,
    add_run_options,
    default_out,
    execute,
    fail,
    print_report_json,
)
from orchestrator.records import (
    MAX_DOCUMENTS,
    MAX_TASK_CHARS,
    RunReport,
    Task,
    TaskError,
    validate_task,
)

__all__ = ["build_parser", "main"]

SHOWN_ARGUMENTS = 3
"""Lines of support printed under an answer; report.md lists them all."""
SHOWN_CLAIM_CHARS = 160


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``logic-graph ask``."""
    parser = argparse.ArgumentParser(
        prog="logic-graph ask",
        description="Answer a question from documents (or a corpus index) in one command, or "
        "refuse when they do not carry an answer. Exit codes: 0 answered, 3 refused on the "
        "evidence, 1 backend or budget failure, 2 bad input, 130 interrupted.",
    )
    parser.add_argument("question", help="the question, in quotes")
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--doc",
        nargs="+",
        action="extend",
        metavar="FILE",
        help="document(s) to answer from, as UTF-8 text; '-' reads standard input (without "
        "--doc or --corpus the question is a word problem: its statement is the evidence, "
        "and it must write a number in digits)",
    )
    source.add_argument("--corpus", metavar="INDEX", help="an index made by logic-graph ingest")
    add_run_options(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``logic-graph ask``; returns the exit code."""
    started = time.monotonic()
    args = build_parser().parse_args(argv)
    try:
        task = _task(args)
    except TaskError as exc:
        return fail(EXIT_USAGE, str(exc))
    out_dir = Path(args.out) if args.out else default_out("ask")
    show = print_report_json if args.json else _print_outcome
    return execute(args, task, out_dir, started=started, task_file=None, show=show)


def _task(args: argparse.Namespace) -> Task:
    """The task the flags describe; raises TaskError naming the file or field at fault."""
    if args.corpus is not None:
        return validate_task({"question": args.question, "corpus": args.corpus})
    if args.doc is None:
        return _word_problem(args.question)
    if len(args.doc) > MAX_DOCUMENTS:
        raise TaskError(f"--doc names {len(args.doc)} files, over the limit of {MAX_DOCUMENTS}")
    if args.doc.count("-") > 1:
        raise TaskError("--doc names standard input ('-') more than once")
    documents = [_read_document(name) for name in args.doc]
    return validate_task({"question": args.question, "documents": documents})


def _word_problem(question: str) -> Task:
    """A question asked without documents, as a word problem: its statement is its one
    document (:attr:`Task.is_word_problem`). Raises TaskError for a question that writes no
    number in digits: it has nothing to work from, and the system cannot answer it from no
    evidence."""
    task = validate_task({"question": question, "documents": [question]})
    if not task.is_numeric_word_problem:
        raise TaskError(
            "give --doc FILE or --corpus INDEX: without them the question is read as a word "
            "problem, whose statement is the evidence, and this one writes no number in digits"
        )
    return task


def _read_document(name: str) -> str:
    """The text of ``--doc name`` (``-``: standard input), at most :data:`MAX_TASK_CHARS`."""
    where = "standard input" if name == "-" else f"--doc {name!r}"
    try:
        if name == "-":
            text = sys.stdin.read(MAX_TASK_CHARS + 1)
        else:
            with open(name, encoding="utf-8") as handle:
                text = handle.read(MAX_TASK_CHARS + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"{where} cannot be read as UTF-8 text: {exc}") from exc
    if len(text) > MAX_TASK_CHARS:
        raise TaskError(f"{where} is longer than the limit of {MAX_TASK_CHARS} characters")
    if not text.strip():
        raise TaskError(f"{where} is empty: there is nothing to answer from")
    return text


def _print_outcome(report: RunReport, out_dir: Path) -> None:
    """The answer or the refusal, the support, and where the report is."""
    if report["refused"]:
        print(f"Refused ({report['refusal_reason']}): {_first_sentence(report['statement'])}")
    else:
        print(f"Answer: {report['answer']}")
        chosen = report["chosen"]
        lines = chosen["arguments"]
        weak = "" if chosen["meets_k"] else f", below the {report['config']['k']} asked for"
        print(f"Support: {chosen['width']} independent line(s) of evidence{weak}")
        for number, argument in enumerate(lines[:SHOWN_ARGUMENTS], 1):
            claims = "; ".join(_claim(ref["id"], ref["claim"]) for ref in argument)
            print(f"  {number}. {claims}")
        if len(lines) > SHOWN_ARGUMENTS:
            print(f"  ... and {len(lines) - SHOWN_ARGUMENTS} more in report.md")
    print(f"Report: {out_dir / 'report.json'}")


def _claim(node_id: str, claim: str) -> str:
    """``[id] claim`` on one line, its LaTeX as plain text, cut at :data:`SHOWN_CLAIM_CHARS`."""
    text = readable_latex(" ".join(claim.split()))
    if len(text) > SHOWN_CLAIM_CHARS:
        text = text[: SHOWN_CLAIM_CHARS - 3] + "..."
    return f"[{node_id}] {text}"


def _first_sentence(statement: str) -> str:
    """The statement's first sentence (the reason), whole when it has no clear end."""
    text = " ".join(statement.split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


if __name__ == "__main__":
    sys.exit(main())
