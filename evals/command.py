"""``logic-graph eval``: the evaluation's one command line.

::

    logic-graph eval run --dataset SET [--arms 1,6,7] [--model M] ...   (evals.run)
    logic-graph eval record --model M --sets A,B --items N ...           (evals.record)
    logic-graph eval replay BANK [BANK ...] --out DIR ...                (evals.replay)
    logic-graph eval compare RUN_A RUN_B [--out FILE]                    (evals.compare)
    logic-graph eval goal RUN_DIR[@N] [RUN_DIR[@N] ...] [--json]         (evals.goal)
    logic-graph eval summary RUN_DIR [RUN_DIR ...] [--out FILE]          (evals.summary)

Each subcommand turns its flags into the typed options of a library function (`evals.flags`),
calls it and prints its table (`evals.reporting`). ``python -m evals`` is the same command, and
``python -m evals.run`` (``.record``, ``.replay``, ``.goal``, ``.summary``) the same
subcommand under its old name. The ``logic-graph`` command finds this group through the
``logic_graph.commands`` entry point (`COMMAND`), so the orchestrator never imports the evals.
Exit status: 0 done; 1 a run stopped early, had failed items, or its model was unusable; 2 bad
arguments or an unusable input, said on stderr as ``PROG: message``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from evals import flags
from evals.cli import exit_status
from evals.compare import compare
from evals.goal import COMPARED_ARMS, folder_and_skip, pooled_table
from evals.record import first_failure, record
from evals.replay import ReplayError, replay
from evals.reporting import render_flips, render_goal_table
from evals.results import EvalError
from evals.run import evaluate
from evals.summary import combined_table, write_summary
from orchestrator.llm import BackendUnusableError

Handler = Callable[[argparse.Namespace, str], int]
"""A subcommand: its parsed flags and the name its errors go under -> its exit status."""


def _run(args: argparse.Namespace, prog: str) -> int:
    """``eval run``: evaluate, then print summary.md."""

    def body() -> int:
        outcome = evaluate(flags.run_options(args))
        print(outcome.summary)
        return outcome.status

    try:
        return exit_status(prog, body, (EvalError,))
    except BackendUnusableError as exc:
        # The model cannot serve any call (no key, unreachable, rejected): not an evaluation
        # result, so nothing is scored; what was recorded before stays for a resumed run.
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1


def _replay(args: argparse.Namespace, prog: str) -> int:
    """``eval replay``: replay the banks, then print summary.md."""

    def body() -> int:
        outcome = replay(flags.replay_options(args)).run
        print(outcome.summary)
        return outcome.status

    return exit_status(prog, body, (ReplayError, EvalError))


def _record(args: argparse.Namespace, prog: str) -> int:
    """``eval record``: extend the banks; the first failing evaluation's status."""
    return exit_status(
        prog, lambda: first_failure(record(flags.record_options(args))), (EvalError,)
    )


def _not_runs(runs: Sequence[Path], prog: str) -> bool:
    """Whether some folder is not a run (no ``raw/``), said on stderr."""
    missing = [str(d) for d in runs if not (d / "raw").is_dir()]
    if missing:
        print(f"{prog}: not a run directory: {', '.join(missing)}", file=sys.stderr)
    return bool(missing)


def _print_to(text: str, out: Path | None) -> int:
    """Print ``text``, and write it to ``out`` when given."""
    if out is not None:
        out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


def _compare(args: argparse.Namespace, prog: str) -> int:
    """``eval compare``: the items that flipped between two runs."""
    if _not_runs(args.runs, prog):
        return 2
    run_a, run_b = args.runs
    return _print_to(render_flips(compare(run_a, run_b), str(run_a), str(run_b)), args.out)


def _summary(args: argparse.Namespace, prog: str) -> int:
    """``eval summary``: rebuild one run's summary, or one table across runs."""
    if _not_runs(args.runs, prog):
        return 2
    if args.compare:
        if len(args.runs) != 2:
            print(f"{prog}: --compare takes exactly two runs", file=sys.stderr)
            return 2
        return _compare(args, prog)
    if len(args.runs) == 1 and args.out is None:
        print(write_summary(args.runs[0])["markdown"])
        return 0
    return _print_to(combined_table(args.runs), args.out)


def _goal(args: argparse.Namespace, prog: str) -> int:
    """``eval goal``: the goal table of the folders' items pooled."""
    folders = [folder_and_skip(spec, max(args.skip, 0)) for spec in args.runs]
    missing = [str(d) for d, _ in folders if not (d / "raw").is_dir()]
    if missing:
        print(f"error: no raw/ results in {', '.join(missing)}", file=sys.stderr)
        return 2
    table = pooled_table(folders)
    print(json.dumps(table, indent=2, sort_keys=True) if args.json else render_goal_table(table))
    return 0


def _runs_flags(parser: argparse.ArgumentParser, *, two: bool) -> None:
    """The run folders (exactly two with ``two``) and ``--out``."""
    parser.add_argument("runs", nargs=2 if two else "+", type=Path, help="run directories")
    parser.add_argument("--out", type=Path, help="write the table here too")


def _summary_flags(parser: argparse.ArgumentParser) -> None:
    _runs_flags(parser, two=False)
    parser.add_argument(
        "--compare",
        action="store_true",
        help="with two runs of the same items (e.g. two replays): list the items that flipped",
    )


def _goal_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        nargs="+",
        help="evaluation or replay folders; FOLDER@N leaves out that folder's first N items",
    )
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    parser.add_argument(
        "--skip", type=int, default=0, help="leave out each folder's first N items (held out)"
    )


SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Handler]] = {
    "run": ("run the arms on a data set's items (evals.run)", flags.run_flags, _run),
    "record": ("extend reply banks, one item of each set at a time", flags.record_flags, _record),
    "replay": ("re-run the arms on recorded replies, no model", flags.replay_flags, _replay),
    "compare": (
        "the items that flipped between two runs",
        lambda parser: _runs_flags(parser, two=True),
        _compare,
    ),
    "goal": (f"the goal table of arms {COMPARED_ARMS} over pooled runs", _goal_flags, _goal),
    "summary": ("rebuild a run's summary, or one table across runs", _summary_flags, _summary),
}
"""name -> (what it does, the function that adds its flags, its handler)."""


def build_parser(prog: str = "logic-graph eval") -> argparse.ArgumentParser:
    """The parser of the whole group (argparse exits 2 on bad arguments)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="eval_command", required=True)
    for name, (summary, add_flags, _) in SUBCOMMANDS.items():
        add_flags(commands.add_parser(name, help=summary, description=summary))
    return parser


def main(argv: Sequence[str] | None = None, *, alias: str | None = None) -> int:
    """Run one subcommand; ``alias`` (``evals.run``, ...) is the old module name it runs
    under, which its usage line and error messages keep."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if alias is not None and argv[:1] and argv[0] in SUBCOMMANDS:
        name = argv[0]
        parser = argparse.ArgumentParser(prog=f"python -m {alias}")
        SUBCOMMANDS[name][1](parser)
        return SUBCOMMANDS[name][2](parser.parse_args(argv[1:]), alias)
    args = build_parser().parse_args(argv)
    return SUBCOMMANDS[args.eval_command][2](args, f"logic-graph eval {args.eval_command}")


@dataclass(frozen=True)
class Command:
    """A command group the ``logic-graph`` command lists and hands its arguments to."""

    help: str
    main: Callable[[Sequence[str]], int]


COMMAND = Command(help="evaluate, record, replay and compare (logic-graph eval --help)", main=main)
"""The ``eval`` group, as the ``logic_graph.commands`` entry point names it."""
