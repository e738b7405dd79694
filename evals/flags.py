"""The flags of ``logic-graph eval``'s subcommands, and the typed options they become.

Each ``*_flags`` function adds one subcommand's flags to its parser; each ``*_options``
function turns the parsed flags into the record the library function takes
(`evals.options`). The defaults are the records' own.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evals.datasets import FORMATS
from evals.invocation import parse_arms
from evals.options import (
    DEFAULT_MODELS_FILE,
    RecordOptions,
    ReplayOptions,
    RunOptions,
    from_flags,
)
from orchestrator.records import DIVERSITY, HOPS
from orchestrator.reply import LAYOUTS, SHAPES

RUN = RunOptions(dataset="")
RECORD = RecordOptions(model="", sets=(), items=0)


def run_flags(parser: argparse.ArgumentParser) -> None:
    """``eval run``'s flags: the data set and arms, then `_model_flags` and `_arm_flags`."""
    parser.add_argument("--dataset", required=True, help="math, multihop, or a path to a file")
    parser.add_argument(
        "--format", choices=sorted(FORMATS), help="format of a --dataset file (default: detect)"
    )
    parser.add_argument(
        "--arms",
        default=",".join(map(str, RUN.arms)),
        help="comma-separated arm numbers (arm 7 matches arm 6's calls per item)",
    )
    parser.add_argument("--limit", type=int, help="use only the first N items")
    parser.add_argument(
        "--skip",
        type=int,
        default=RUN.skip,
        help="leave out the first N of those items (e.g. ones whose arms another run holds)",
    )
    _model_flags(parser)
    _arm_flags(parser)


def _model_flags(parser: argparse.ArgumentParser) -> None:
    """The model, its endpoint and prices, the cost cap and the results folder."""
    parser.add_argument("--model", help="model id (default: default_model of the models file)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint for the model")
    parser.add_argument("--models-file", type=Path, default=RUN.models_file)
    parser.add_argument(
        "--max-cost",
        type=float,
        default=RUN.max_cost,
        help="USD cap for this invocation: no call is sent whose worst case could pass it",
    )
    parser.add_argument(
        "--allow-unknown-cost",
        action="store_true",
        help="run a model with no known price (its spending cannot be capped)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--out", type=Path, help="results directory (re-use it to resume)")
    where.add_argument("--resume", metavar="RUNSTAMP", help="resume evals/results/RUNSTAMP")


def _arm_flags(parser: argparse.ArgumentParser) -> None:
    """The arms' settings: completion cap, temperatures, seed, arm 6's runs and budget, then
    `_interrogation_flags` and `more_calls_flags`."""
    parser.add_argument(
        "--max-tokens", type=int, default=RUN.max_tokens, help="completion cap per call (all arms)"
    )
    parser.add_argument(
        "--temperature", type=float, default=RUN.temperature, help="arms 1-5 temperature"
    )
    parser.add_argument("--seed", type=int, default=RUN.seed)
    parser.add_argument("--n", type=int, default=RUN.n, help="arm 6: interrogation runs")
    parser.add_argument("--k", type=int, default=RUN.k, help="arm 6: target support width")
    parser.add_argument(
        "--budget-calls", type=int, default=RUN.budget_calls, help="arm 6: calls per item"
    )
    parser.add_argument(
        "--temp",
        type=float,
        default=RUN.temp,
        help="arm 6 interrogation and arm 7 sample temperature",
    )
    parser.add_argument(
        "--sample-temp",
        type=float,
        help="arm 7 sample temperature when it differs from --temp (arm 6 greedy at "
        "--temp 0 against samples at 0.8)",
    )
    _interrogation_flags(parser)
    more_calls_flags(parser, overrides=False)


def _interrogation_flags(parser: argparse.ArgumentParser) -> None:
    """How arm 6 asks: output format, shape, first-run and window settings, and item jobs."""
    parser.add_argument(
        "--structured-output",
        choices=("auto", "on", "off"),
        default=RUN.structured_output,
        help="arm 6: ask for JSON-schema output (auto: the backend's default)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=RUN.jobs,
        help="items evaluated at once against a server backend (a built-in local model "
        "always runs one at a time)",
    )
    parser.add_argument(
        "--shape",
        choices=SHAPES,
        help="arm 6 interrogation shape (default: the model's interrogation_shape in the "
        "models file, else graph)",
    )
    parser.add_argument(
        "--greedy-first",
        action="store_true",
        help="arm 6: the first interrogation at temperature 0, the others at --temp",
    )
    parser.add_argument(
        "--think-first",
        action="store_true",
        help="arm 6: each interrogation reasons in plain text first, then writes the graph",
    )
    parser.add_argument(
        "--context-tokens",
        type=int,
        metavar="N",
        help="arm 6: the model's context window per request, that each item's documents are "
        "fitted to (default: the backend's, as orchestrator.run; recorded in run.json)",
    )


def more_calls_flags(parser: argparse.ArgumentParser, *, overrides: bool) -> None:
    """The flags that say how arm 6 spends calls past its first run (issue 32): ``--diversity``,
    ``--leave-out``, ``--adaptive``, ``--hops``; and where its prompts put the evidence
    (issue 37): ``--prompt-layout``. With ``overrides`` (a replay) they default to None / off,
    so that a bank's own settings stand unless a flag is given."""
    parser.add_argument(
        "--diversity",
        choices=DIVERSITY,
        default=None if overrides else RUN.diversity,
        help="what makes arm 6's later runs and arm 7's samples differ: sampling at their "
        "temperature, or greedy calls that see the documents in another order",
    )
    parser.add_argument(
        "--leave-out",
        action="store_true",
        help="arm 6: once an answer is verified, one greedy run without its argument's sentences",
    )
    parser.add_argument(
        "--adaptive",
        action="store_true",
        help="arm 6: the first interrogation alone, the others only when it gives no grounded "
        "answer",
    )
    parser.add_argument(
        "--hops",
        choices=HOPS,
        default=None if overrides else RUN.hops,
        help="arm 6: ask hop by hop (orchestrator.checks.hops): off, on_failure, first, only "
        "(first, and no interrogation after them), always, auto (first when the question "
        "spells out its hops, else off) or auto_only (only when it does, else off)",
    )
    parser.add_argument(
        "--prompt-layout",
        choices=LAYOUTS,
        default=None if overrides else RUN.prompt_layout,
        help="arm 6: the evidence after each role's instructions (classic, as every committed "
        "bank was recorded) or first, shared by all of an item's calls (evidence_first)",
    )


def run_options(args: argparse.Namespace) -> RunOptions:
    """``eval run``'s flags as `RunOptions`; EvalError for a bad ``--arms``."""
    return from_flags(RunOptions, {**vars(args), "arms": parse_arms(args.arms)})


def replay_flags(parser: argparse.ArgumentParser) -> None:
    """``eval replay``'s flags: the banks, the folder, and overrides of the bank's settings."""
    parser.add_argument("banks", nargs="+", type=Path, help="bank (evals.run) directories")
    parser.add_argument("--out", type=Path, required=True, help="results directory")
    parser.add_argument("--arms", help="comma-separated arms (default: the bank's)")
    for name in ("n", "k", "budget-calls", "seed"):
        parser.add_argument(f"--{name}", type=int, help="override the bank's setting")
    parser.add_argument("--temp", type=float, help="override arm 6/7 temperature")
    parser.add_argument(
        "--sample-temp", type=float, help="override arm 7's temperature alone (after --temp)"
    )
    parser.add_argument("--shape", choices=SHAPES, help="override arm 6's interrogation shape")
    parser.add_argument(
        "--greedy-first",
        action="store_true",
        help="arm 6's first interrogation greedy (answered from a temperature-0 bank)",
    )
    more_calls_flags(parser, overrides=True)
    live = parser.add_mutually_exclusive_group()
    live.add_argument(
        "--offline",
        action="store_true",
        help="count requests the bank lacks as unavailable (the default)",
    )
    live.add_argument("--backend", metavar="MODEL", help="make requests the bank lacks live")
    parser.add_argument("--base-url", help="with --backend: its OpenAI-compatible endpoint")
    parser.add_argument("--models-file", type=Path, default=DEFAULT_MODELS_FILE)


def replay_options(args: argparse.Namespace) -> ReplayOptions:
    """``eval replay``'s flags as `ReplayOptions`; EvalError for a bad ``--arms``."""
    arms = parse_arms(args.arms) if args.arms else None
    return from_flags(ReplayOptions, {**vars(args), "banks": tuple(args.banks), "arms": arms})


def record_flags(parser: argparse.ArgumentParser) -> None:
    """``eval record``'s flags: the model, the sets, the items and the recording settings."""
    parser.add_argument("--model", required=True)
    parser.add_argument("--sets", required=True, help="comma-separated data set names")
    parser.add_argument("--items", type=int, required=True, help="items per set")
    parser.add_argument(
        "--root", default=RECORD.root, type=Path, help="folder of the bank directories"
    )
    parser.add_argument(
        "--samples", type=int, default=RECORD.samples, help="arm 6 interrogations per item"
    )
    parser.add_argument("--budget-calls", type=int, default=RECORD.budget_calls)
    parser.add_argument("--temp", type=float, default=RECORD.temp)
    parser.add_argument("--seed", type=int, default=RECORD.seed)
    parser.add_argument("--max-tokens", type=int, default=RECORD.max_tokens)
    parser.add_argument(
        "--start", type=int, default=RECORD.start, help="first item count to extend to"
    )
    parser.add_argument(
        "--skip", type=int, default=RECORD.skip, help="leave out each set's first N items"
    )
    parser.add_argument(
        "--shape",
        choices=SHAPES,
        default=RECORD.shape,
        help="interrogation shape; chain (worked) records into <set>-<model>-chain[-t0] (-worked)",
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


def record_options(args: argparse.Namespace) -> RecordOptions:
    """``eval record``'s flags as `RecordOptions`: the sets split at commas."""
    sets = tuple(s.strip() for s in args.sets.split(",") if s.strip())
    return from_flags(RecordOptions, {**vars(args), "sets": sets})
