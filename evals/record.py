"""Record reply banks for several data sets, one item of each set at a time, resumably.

Usage::

    python -m evals.record --model local-1.5b --sets multihop,logical_deduction,vitaminc \
        --items 40 --root evals/banks [--samples 6] [--budget-calls 9] [--seed 1]

For item i = 1..``--items`` and each set in turn, two `evals.run` invocations extend the
set's banks to its first i items:

* ``<root>/<set>-<model>/``: arms 1, 6 and 7 with ``--n <samples>`` interrogations at
  ``--temp`` (arm 7 then takes as many samples as arm 6 made calls), so a replay can take
  the first N = 1..samples runs;
* ``<root>/<set>-<model>-t0/``: arm 6 with one greedy interrogation (temperature 0); more
  greedy samples would repeat it.

With ``--shape chain`` the same two invocations record arm 6 in the chain shape, into
``<set>-<model>-chain/`` (with arms 1 and 7, arm 7 matching the chain's calls) and
``<set>-<model>-chain-t0/``. ``--skip N`` leaves out each set's first N items, for example
those whose arms 1 and 7 a graph bank already holds (a replay with ``--shape chain`` reads
replies from the graph bank named beside as well, so both halves replay together).

``--greedy`` records, instead of those two, the setting a model runs as one greedy run
(`local-1.5b`: n 1, temperature 0, 3 calls) at three calls per item, into
``<set>-<model>[-chain]-greedy/``: arms 1, 6 and 7, arm 6 greedy within 3 calls, arm 7
taking as many samples as arm 6 made calls at ``--temp`` (``evals.run --sample-temp``). It
is how the items after a decision are recorded cheaply enough to test it. ``--greedy --hops``
records that setting with hop-by-hop interrogation when the chain fails
(:mod:`orchestrator.checks.hops`: a plan and up to four lookups, 6 calls at most) into
``<set>-<model>[-chain]-greedy-hops/``; replayed with ``--hops off --budget-calls 3`` it gives
the greedy setting back.

Interleaving the sets keeps them equally far along whenever the recording stops; re-running
the same command resumes (each `evals.run` skips what its directory already holds). Exit
status: 0 when every invocation succeeded, else the first failing invocation's status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from evals import run as eval_run


def _slug(model: str) -> str:
    return "".join(c if c.isalnum() or c in "-." else "-" for c in model)


def invocations(set_name: str, limit: int, args: argparse.Namespace) -> list[list[str]]:
    """The `evals.run` argument lists that extend ``set_name``'s banks to ``limit`` items: two,
    or one with ``--greedy``."""
    base = [
        "--dataset",
        set_name,
        "--model",
        args.model,
        "--limit",
        str(limit),
        "--skip",
        str(args.skip),
        "--seed",
        str(args.seed),
        "--k",
        "2",
        "--max-tokens",
        str(args.max_tokens),
    ]
    root = Path(args.root)
    name = f"{set_name}-{_slug(args.model)}" + ("-chain" if args.shape == "chain" else "")
    # Always explicit: evals.run would otherwise take the model's shape from models.json, and
    # a bank must not change shape when that default does.
    base += ["--shape", args.shape]
    sampled = [
        *base,
        "--arms",
        "1,6,7",
        "--n",
        str(args.samples),
        "--budget-calls",
        str(args.budget_calls),
        "--temp",
        str(args.temp),
        "--out",
        str(root / name),
    ]
    if args.greedy and args.hops:
        # Up to 6 calls: the chain, and when it fails the plan and up to four lookups; arm 7
        # takes as many samples as arm 6 made calls.
        return [
            [
                *base,
                *("--arms", "1,6,7", "--n", "1", "--budget-calls", "6", "--temp", "0"),
                *("--hops", "on_failure", "--sample-temp", str(args.temp)),
                *("--out", str(root / f"{name}-greedy-hops")),
            ]
        ]
    if args.greedy:
        return [
            [
                *base,
                *("--arms", "1,6,7", "--n", "1", "--budget-calls", "3", "--temp", "0"),
                *("--sample-temp", str(args.temp), "--out", str(root / f"{name}-greedy")),
            ]
        ]
    greedy = [
        *base,
        "--arms",
        "6",
        "--n",
        "1",
        "--budget-calls",
        "3",
        "--temp",
        "0",
        "--out",
        str(root / f"{name}-t0"),
    ]
    return [sampled, greedy]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.record", description=__doc__)
    parser.add_argument("--model", required=True)
    parser.add_argument("--sets", required=True, help="comma-separated data set names")
    parser.add_argument("--items", type=int, required=True, help="items per set")
    parser.add_argument("--root", default="evals/banks", help="folder of the bank directories")
    parser.add_argument("--samples", type=int, default=6, help="arm 6 interrogations per item")
    parser.add_argument("--budget-calls", type=int, default=9)
    parser.add_argument("--temp", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--start", type=int, default=1, help="first item count to extend to")
    parser.add_argument("--skip", type=int, default=0, help="leave out each set's first N items")
    parser.add_argument(
        "--shape",
        choices=("graph", "chain"),
        default="graph",
        help="interrogation shape; chain records into <set>-<model>-chain[-t0]",
    )
    parser.add_argument(
        "--greedy",
        action="store_true",
        help="only arms 1, 6 and 7 with arm 6 greedy within 3 calls, into "
        "<set>-<model>[-chain]-greedy",
    )
    parser.add_argument(
        "--hops",
        action="store_true",
        help="with --greedy: arm 6 also asks hop by hop when its chain fails (up to 6 calls), "
        "into <set>-<model>[-chain]-greedy-hops",
    )
    args = parser.parse_args(argv)
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    if not sets or args.items < 1 or args.samples < 1 or args.budget_calls < args.samples:
        parser.error("need sets, --items >= 1, --samples >= 1 and --budget-calls >= --samples")
    if not 0 <= args.skip < args.items:
        parser.error("--skip must be >= 0 and below --items")
    first_failure = 0
    for limit in range(max(1, args.start, args.skip + 1), args.items + 1):
        for set_name in sets:
            for argv_one in invocations(set_name, limit, args):
                print(f"== evals.run {' '.join(argv_one)}", file=sys.stderr, flush=True)
                status = eval_run.main(argv_one)
                first_failure = first_failure or status
    return first_failure


if __name__ == "__main__":
    sys.exit(main())
