"""Replay the committed reply banks under several arm 6 settings and print one table.

    python -m evals.studies.replay_study [--model local-1.5b] [--shape graph|chain]
        [--sets multihop,logical_deduction,vitaminc] [--out runs/replay-study] [--banks DIR]
        [--goal [--held-out-from I] [--greedy-bank-from J]] [--n-study]

For each set with a bank ``evals/banks/<set>-<model>/`` (and its greedy companion ``-t0``),
`evals.replay.replay` runs arms 1, 6 and 7 offline, once per setting:

* ``recorded``: the bank's own settings (N=6 sampled interrogations): reproduces the recording
  when the code is unchanged, else shows what today's logic makes of the same replies;
* ``n2``: N=2 sampled interrogations, 5 calls (the evaluation's usual setting);
* ``greedy+1``: N=2 with the first interrogation greedy (temperature 0, from the ``-t0`` bank);
* ``greedy``: N=1, greedy, up to 3 calls; arm 7 takes as many samples as arm 6 made calls,
  at the bank's sampling temperature (a greedy arm 7 would repeat one answer).

With ``--shape chain`` the ``<set>-<model>-chain`` banks (and their ``-t0``) are replayed, on
their items, with the graph bank beside for the arms 1 and 7 of their first items.

A set with a ``<set>-<model>-chain-greedy`` bank (``evals.record --greedy``; for the 1.5B the
items recorded after its default became one greedy run) gets one more row, *greedy bank*:
that bank replayed at its own setting (a set may have that bank alone). With ``--goal`` its
items get a goal table of their own (for the 1.5B, the pre-registered test of its default,
docs/results/verdicts-small-models.md), and one more table pools them with the chain banks'
items under the *greedy* setting. ``--greedy-bank-from J`` adds the goal table of each greedy
bank's items from its J-th on (a bank recorded with ``evals.record --skip 18`` starts at the
set's item 19, so J = 23 picks items 41 on: a later pre-registered test).

Each row gives, per arm, right / wrong / abstained over the items, and the calls the banks could
not answer (a verification today's logic asked for and the recording did not, or samples of an
item whose recording failed); such a call fails, as a real failed call would.
Arm 7 takes as many samples as arm 6 made calls on the item, as in the recording. Everything is
read from the banks: no model is started.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals import goal
from evals.options import REPO, ReplayOptions
from evals.replay import ReplayError, replay
from evals.reporting import STUDY_HEADER, render_goal_table, study_cells
from evals.results import EvalError

Setting = tuple[dict[str, Any], tuple[int, ...]]
"""A replay's overrides of the bank's settings (`ReplayOptions` fields), and its arms."""
SETTINGS: dict[str, Setting] = {
    "recorded": ({}, (1, 6, 7)),
    "n2": ({"n": 2, "budget_calls": 5}, (1, 6, 7)),
    "greedy+1": ({"n": 2, "budget_calls": 5, "greedy_first": True}, (1, 6, 7)),
    # Arm 7 at temperature 0 would only repeat one answer: its samples stay at 0.8.
    "greedy": ({"n": 1, "budget_calls": 3, "temp": 0.0, "sample_temp": 0.8}, (1, 6, 7)),
}
"""name -> (the replay's overrides, the arms it replays)."""
N_STUDY: dict[str, Setting] = {
    f"N={n}{' adaptive' if adaptive else ''}": (
        {"n": n, "greedy_first": True, "budget_calls": n + 3, "adaptive": adaptive},
        (1, 6, 7),
    )
    for n in (1, 2, 3, 4, 6)
    for adaptive in (False, True)
    if n > 1 or not adaptive
}
"""``--n-study``: the greedy run first, then N - 1 sampled runs, all at once or only when the
greedy run is not verified (``adaptive``); each with room for one verification round."""
FRESH = "greedy bank"
"""The row of a ``-greedy`` bank: its own items at its own (the greedy) setting. For the 1.5B
these are the items recorded after its default became the greedy chain."""


@dataclass
class Replayed:
    """The replay folders of the study: per setting, and the greedy banks' own."""

    settings: dict[str, list[Path]]
    fresh: list[Path] = field(default_factory=list)


def replay_setting(
    bank: Path, graph_bank: Path, out: Path, setting: Setting, *, chain: bool
) -> str:
    """Replay ``bank`` offline into ``out`` (emptied first) under one setting; the table
    cells of the row: items, the three arms' tallies, the calls unavailable."""
    overrides, arms = setting
    greedy = bank.with_name(bank.name + "-t0")
    banks = [bank] + ([greedy] if greedy.is_dir() else [])
    if chain:
        # Items recorded before the chain banks held arms 1 and 7 (evals.record --skip) find
        # those arms' replies in the graph bank.
        banks += [graph_bank] if graph_bank.is_dir() else []
        overrides = {**overrides, "shape": "chain"}
    shutil.rmtree(out, ignore_errors=True)  # a replay starts from an empty folder
    options = ReplayOptions(banks=tuple(banks), out=out, arms=arms or None, **overrides)
    try:
        outcome = replay(options)
    except (ReplayError, EvalError) as exc:
        print(f"evals.replay: {exc}", file=sys.stderr)
        return "(replay refused, see stderr) | | | | "
    return study_cells(outcome.run.rows, int(outcome.calls["unavailable"]))


def replay_sets(args: argparse.Namespace, settings: dict[str, Setting]) -> Replayed:
    """Print the table's rows, one replay at a time; the folders replayed."""
    replayed = Replayed({name: [] for name in settings})
    chain = args.shape == "chain"
    for set_name in [s for s in args.sets.split(",") if s]:
        graph_bank = args.banks / f"{set_name}-{args.model}"
        bank = graph_bank.with_name(f"{graph_bank.name}-chain") if chain else graph_bank
        fresh_bank = bank.with_name(f"{bank.name}-greedy")
        if not bank.is_dir() and not (chain and fresh_bank.is_dir()):
            print(f"| {set_name} | (no bank at {bank}) | | | | | |")
        for name, setting in settings.items() if bank.is_dir() else ():
            out = args.out / bank.name / name.replace("=", "").replace(" ", "-")
            row = replay_setting(bank, graph_bank, out, setting, chain=chain)
            print(f"| {set_name} | {name} | {row} |", flush=True)
            replayed.settings[name].append(out)
        if chain and fresh_bank.is_dir():
            out = args.out / fresh_bank.name
            row = replay_setting(fresh_bank, graph_bank, out, ({}, ()), chain=True)
            print(f"| {set_name} | {FRESH} | {row} |", flush=True)
            replayed.fresh.append(out)
    return replayed


def _print_goal(args: argparse.Namespace, title: str, table: dict[str, Any]) -> None:
    print(f"\n### {args.model}, {args.shape} shape, {title}\n\n{render_goal_table(table)}")


def goal_tables(args: argparse.Namespace, settings: dict[str, Setting], done: Replayed) -> None:
    """``--goal``: the goal tables of the greedy banks, of the greedy setting over every
    item, and of each setting pooled over the sets (held-out parts with the ``--*-from``
    flags)."""
    fresh = done.fresh
    if fresh:
        _print_goal(args, FRESH, goal.goal_table(goal.pool(fresh)))
        if args.greedy_bank_from > 1:
            later = goal.goal_table(goal.pool(fresh, skip=args.greedy_bank_from - 1))
            _print_goal(args, f"{FRESH}, each bank's items {args.greedy_bank_from} on", later)
    if fresh and done.settings.get("greedy"):
        # The greedy setting over every item: the chain banks' items, then the greedy banks'.
        table = goal.goal_table(goal.pool([*done.settings["greedy"], *fresh]))
        _print_goal(args, "greedy, every item (chain banks and greedy banks)", table)
    for name, outs in [(name, outs) for name, outs in done.settings.items() if outs]:
        arms = settings[name][1]
        _print_goal(args, name, goal.goal_table(goal.pool(outs, arms=arms)))
        if args.held_out_from > 1:
            skip = args.held_out_from - 1
            held = goal.goal_table(goal.pool(outs, arms=arms, skip=skip))
            _print_goal(args, f"{name}, items {args.held_out_from} on (held out)", held)


def build_parser() -> argparse.ArgumentParser:
    """The study's flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local-1.5b")
    parser.add_argument("--sets", default="multihop,logical_deduction,vitaminc")
    parser.add_argument("--out", type=Path, default=Path("runs") / "replay-study")
    parser.add_argument(
        "--banks",
        type=Path,
        default=REPO / "evals" / "banks",
        help="folder of the banks (a copy keeps a comparison still while a recording goes on)",
    )
    parser.add_argument(
        "--shape",
        choices=("graph", "chain"),
        default="graph",
        help="arm 6 shape; chain replays the <set>-<model>-chain banks (evals.record)",
    )
    parser.add_argument(
        "--goal",
        action="store_true",
        help="after the table, the goal table of each setting pooled over the sets (evals.goal)",
    )
    parser.add_argument(
        "--held-out-from",
        type=int,
        default=0,
        metavar="I",
        help="with --goal, also a goal table of each set's items from the I-th on",
    )
    parser.add_argument(
        "--greedy-bank-from",
        type=int,
        default=0,
        metavar="J",
        help="with --goal, also a goal table of each greedy bank's items from its J-th on",
    )
    parser.add_argument(
        "--n-study",
        action="store_true",
        help="instead of the four settings, N = 1..6 with the greedy run first, all at once "
        "and adaptive (issue 32: right answers as N grows)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Print the study's table, then with ``--goal`` its goal tables."""
    args = build_parser().parse_args(argv)
    settings = N_STUDY if args.n_study else SETTINGS
    print(STUDY_HEADER)
    done = replay_sets(args, settings)
    if args.goal:
        goal_tables(args, settings, done)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
