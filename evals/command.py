"""``logic-graph eval``: the evaluation's one command line.

::

    logic-graph eval run --dataset SET [--arms 1,6,7] [--model M] ...   (evals.run)
    logic-graph eval record --model M --sets A,B --items N ...           (evals.record)
    logic-graph eval replay BANK [BANK ...] --out DIR ...                (evals.replay)
    logic-graph eval compare RUN_A RUN_B [--out FILE]                    (evals.compare)
    logic-graph eval goal RUN_DIR[@N] [RUN_DIR[@N] ...] [--json]         (evals.goal)
    logic-graph eval summary RUN_DIR [RUN_DIR ...] [--out FILE]          (evals.summary)

Each subcommand lives with its library function (``cli`` in `evals.run`, `evals.record`, ...):
it turns its flags into the typed options of that function (`evals.flags`), calls it and
prints its table (`evals.reporting`); this module only dispatches, and nothing imports it.
``python -m evals`` is the same command, and ``python -m evals.run`` (``.record``,
``.replay``, ``.goal``, ``.summary``) the same subcommand under its old name. The
``logic-graph`` command finds this group through the ``logic_graph.commands`` entry point
(`COMMAND`), so the orchestrator never imports the evals.
Exit status: 0 done; 1 a run stopped early, had failed items, or its model was unusable; 2 bad
arguments or an unusable input, said on stderr as ``PROG: message``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evals import flags, goal, record, replay, run, summary
from evals.cli import Handler

SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Handler]] = {
    "run": ("run the arms on a data set's items (evals.run)", flags.run_flags, run.cli),
    "record": (
        "extend reply banks, one item of each set at a time",
        flags.record_flags,
        record.cli,
    ),
    "replay": ("re-run the arms on recorded replies, no model", flags.replay_flags, replay.cli),
    "compare": (
        "the items that flipped between two runs",
        summary.compare_flags,
        summary.compare_cli,
    ),
    "goal": (
        f"the goal table of arms {goal.COMPARED_ARMS} over pooled runs",
        goal.add_flags,
        goal.cli,
    ),
    "summary": (
        "rebuild a run's summary, or one table across runs",
        summary.add_flags,
        summary.cli,
    ),
}
"""name -> (what it does, the function that adds its flags, its handler)."""


def build_parser(prog: str = "logic-graph eval") -> argparse.ArgumentParser:
    """The parser of the whole group (argparse exits 2 on bad arguments)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="eval_command", required=True)
    for name, (what, add_flags, _) in SUBCOMMANDS.items():
        add_flags(commands.add_parser(name, help=what, description=what))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand (``argv``: None for the process's own arguments)."""
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    return SUBCOMMANDS[args.eval_command][2](args, f"logic-graph eval {args.eval_command}")


@dataclass(frozen=True)
class Command:
    """A command group the ``logic-graph`` command lists and hands its arguments to."""

    help: str
    main: Callable[[Sequence[str]], int]


COMMAND = Command(help="evaluate, record, replay and compare (logic-graph eval --help)", main=main)
"""The ``eval`` group, as the ``logic_graph.commands`` entry point names it."""
