"""Record reply banks for several data sets, one item of each set at a time, resumably.

`record` is the library function; the command line is ``logic-graph eval record`` (or
``python -m evals.record``)::

    logic-graph eval record --model local-1.5b --sets multihop,logical_deduction,vitaminc \
        --items 40 --root evals/banks [--samples 6] [--budget-calls 9] [--seed 1]

For item i = 1..``--items`` and each set in turn, two evaluations (`evals.run.evaluate`)
extend the set's banks to its first i items:

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
the same command resumes (each evaluation skips what its directory already holds). Exit
status: 0 when every invocation succeeded, else the first failing invocation's status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TextIO

from evals import flags
from evals.cli import exit_status, run_alias
from evals.options import RecordOptions, RunOptions
from evals.results import EvalError
from evals.run import RunOutcome, evaluate
from orchestrator.llm import BackendUnusableError


@dataclass(frozen=True)
class RecordStep:
    """One evaluation of a recording: its options, what it left (None when it was refused or
    the model was unusable) and its exit status (0 done, 1 stopped or failed items, 2
    refused)."""

    options: RunOptions
    outcome: RunOutcome | None
    status: int


def _slug(model: str) -> str:
    return "".join(c if c.isalnum() or c in "-." else "-" for c in model)


def invocations(set_name: str, limit: int, options: RecordOptions) -> list[RunOptions]:
    """The evaluations that extend ``set_name``'s banks to ``limit`` items: two, or one with
    ``greedy``."""
    name = f"{set_name}-{_slug(options.model)}" + (
        "" if options.shape == "graph" else f"-{options.shape}"
    )
    base = RunOptions(
        dataset=set_name,
        model=options.model,
        limit=limit,
        skip=options.skip,
        seed=options.seed,
        k=2,
        max_tokens=options.max_tokens,
        # Always explicit: an evaluation would otherwise take the model's shape from
        # models.json, and a bank must not change shape when that default does.
        shape=options.shape,
        arms=(1, 6, 7),
    )
    greedy = replace(base, n=1, budget_calls=3, temp=0.0)
    if options.greedy and options.hops:
        # Up to 6 calls: the chain, and when it fails the plan and up to four lookups; arm 7
        # takes as many samples as arm 6 made calls.
        out = options.root / f"{name}-greedy-hops"
        return [
            replace(greedy, budget_calls=6, hops="on_failure", sample_temp=options.temp, out=out)
        ]
    if options.greedy:
        out = options.root / f"{name}-greedy"
        return [replace(greedy, sample_temp=options.temp, out=out)]
    sampled = replace(
        base,
        n=options.samples,
        budget_calls=options.budget_calls,
        temp=options.temp,
        out=options.root / name,
    )
    return [sampled, replace(greedy, arms=(6,), out=options.root / f"{name}-t0")]


def check(options: RecordOptions) -> None:
    """EvalError when the recording's numbers cannot make banks."""
    counts = options.items >= 1 and 1 <= options.samples <= options.budget_calls
    if not options.sets or not counts:
        raise EvalError("need sets, --items >= 1, --samples >= 1 and --budget-calls >= --samples")
    if not 0 <= options.skip < options.items:
        raise EvalError("--skip must be >= 0 and below --items")


def _step(options: RunOptions, log: TextIO) -> RecordStep:
    """One evaluation; a refusal or an unusable model is logged and recorded as its status,
    so the recording goes on with the next set."""
    print(
        f"== evaluate {options.dataset}: {options.limit} items into {options.out}",
        file=log,
        flush=True,
    )
    try:
        outcome = evaluate(options)
    except EvalError as exc:
        print(f"evals.run: {exc}", file=log)
        return RecordStep(options, None, 2)
    except BackendUnusableError as exc:
        print(f"evals.run: error: {exc}", file=log)
        return RecordStep(options, None, 1)
    print(outcome.summary)
    return RecordStep(options, outcome, outcome.status)


def record(options: RecordOptions, log: TextIO = sys.stderr) -> list[RecordStep]:
    """Extend every set's banks, one item of each set at a time (see the module docstring).

    Parameters
    ----------
    options : RecordOptions
        The model, the sets, how many items and the recording's settings.
    log : TextIO
        Where each evaluation is announced, and a refused one says why.

    Returns
    -------
    list[RecordStep]
        Every evaluation in the order it ran, with what it left and its status.

    Raises
    ------
    EvalError
        The numbers cannot make banks (no sets, ``items`` < 1, ``budget_calls`` below
        ``samples``, ``skip`` outside 0 .. ``items`` - 1).
    """
    check(options)
    steps = []
    for limit in range(max(1, options.start, options.skip + 1), options.items + 1):
        for set_name in options.sets:
            steps += [_step(one, log) for one in invocations(set_name, limit, options)]
    return steps


def first_failure(steps: list[RecordStep]) -> int:
    """The first non-zero status of a recording's evaluations, else 0."""
    return next((step.status for step in steps if step.status), 0)


def cli(args: argparse.Namespace, prog: str) -> int:
    """``eval record``: extend the banks; the first failing evaluation's status."""
    return exit_status(
        prog, lambda: first_failure(record(flags.record_options(args))), (EvalError,)
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evals.record``: the same as ``logic-graph eval record``."""
    return run_alias("evals.record", flags.record_flags, cli, argv)


if __name__ == "__main__":
    sys.exit(main())
