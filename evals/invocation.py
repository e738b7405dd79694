"""What one `evals.run` invocation's arguments mean: their checks, the fingerprint ``run.json``
keeps of them, and the settings the arms run with. `evals.replay` builds the same argument
namespace from a bank and goes through these too, so a replay means what a run means.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from evals.arms import ArmSettings, prompt_version
from evals.results import EvalError
from orchestrator.api import RunConfig
from orchestrator.records import DIVERSITY, HOPS
from orchestrator.reply import LAYOUTS


def add_more_calls_options(parser: argparse.ArgumentParser, *, overrides: bool) -> None:
    """The flags that say how arm 6 spends calls past its first run (issue 32): ``--diversity``,
    ``--leave-out``, ``--adaptive``, ``--hops``; and where its prompts put the evidence
    (issue 37): ``--prompt-layout``. With ``overrides`` (a replay) they default to None / off,
    so that a bank's own settings stand unless a flag is given."""
    parser.add_argument(
        "--diversity",
        choices=DIVERSITY,
        default=None if overrides else "sample",
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
        "--prompt-layout",
        choices=LAYOUTS,
        default=None if overrides else "classic",
        help="arm 6: the evidence after each role's instructions (classic, as every committed "
        "bank was recorded) or first, shared by all of an item's calls (evidence_first)",
    )
    parser.add_argument(
        "--hops",
        choices=HOPS,
        default=None if overrides else "off",
        help="arm 6: ask hop by hop (orchestrator.checks.hops) never, on failure, or always",
    )


def fingerprint(args: argparse.Namespace, model: str, arms: list[int]) -> dict[str, Any]:
    """What ``run.json`` records of an invocation and checks on resume: the data set, model,
    endpoint, the settings that change answers, and each arm's prompt version."""
    recorded: dict[str, Any] = {
        "dataset": args.dataset,
        "format": args.format,
        "model": model,
        "base_url": args.base_url,
        "settings": {
            "max_tokens": args.max_tokens,
            "temperature": args.temperature,
            "seed": args.seed,
            "n": args.n,
            "k": args.k,
            "budget_calls": args.budget_calls,
            "temp": args.temp,
            "structured_output": args.structured_output,
            "think_first": args.think_first,
        },
        "prompts": {str(arm): prompt_version(arm, args.shape) for arm in arms},
    }
    # Recorded only when they differ from the defaults, so runs made before they existed resume.
    if args.shape != "graph":
        recorded["settings"]["shape"] = args.shape
    if args.greedy_first:
        recorded["settings"]["greedy_first"] = True
    if getattr(args, "hops", "off") != "off":
        recorded["settings"]["hops"] = args.hops
    if getattr(args, "adaptive", False):
        recorded["settings"]["adaptive"] = True
    if getattr(args, "leave_out", False):
        recorded["settings"]["leave_out"] = True
    if getattr(args, "diversity", "sample") != "sample":
        recorded["settings"]["diversity"] = args.diversity
    if getattr(args, "prompt_layout", "classic") != "classic":
        recorded["settings"]["prompt_layout"] = args.prompt_layout
    sample_temp = sample_temperature(args)
    if sample_temp != args.temp:
        recorded["settings"]["sample_temp"] = sample_temp
    return recorded


def sample_temperature(args: argparse.Namespace) -> float:
    """Arm 7's sample temperature: ``--sample-temp``, else ``--temp``."""
    chosen = getattr(args, "sample_temp", None)
    return float(args.temp if chosen is None else chosen)


def arm_settings(args: argparse.Namespace, out: Path, structured_default: bool) -> ArmSettings:
    """The arms' settings for an invocation writing to ``out``; ``structured_default`` is what
    ``--structured-output auto`` means for its backend."""
    structured = {"auto": structured_default, "on": True, "off": False}
    return ArmSettings(
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        seed=args.seed,
        run_config=RunConfig(
            n=args.n,
            k=args.k,
            budget_calls=args.budget_calls,
            temperature=args.temp,
            seed=args.seed,
            structured_output=structured[args.structured_output],
            think_first=args.think_first,
            interrogation_shape=args.shape,
            greedy_first=args.greedy_first,
            hops=getattr(args, "hops", "off"),
            adaptive=getattr(args, "adaptive", False),
            diversity=getattr(args, "diversity", "sample"),
            leave_out=getattr(args, "leave_out", False),
            prompt_layout=getattr(args, "prompt_layout", "classic"),
        ),
        artifacts_dir=out,
        sample_temperature=sample_temperature(args),
        sample_diversity=getattr(args, "diversity", "sample"),
    )


def check_numbers(args: argparse.Namespace) -> None:
    """Raise :class:`EvalError` naming the first numeric flag out of its range."""
    for name in ("max_tokens", "n", "k", "budget_calls", "jobs"):
        if getattr(args, name) < 1:
            raise EvalError(f"--{name.replace('_', '-')} must be at least 1")
    if not args.max_cost >= 0:
        raise EvalError(f"--max-cost must be >= 0, got {args.max_cost}")
    for name in ("temperature", "temp", "sample_temp"):
        value = getattr(args, name, None)
        if value is not None and not 0 <= value <= 2:
            raise EvalError(f"--{name.replace('_', '-')} must be in 0..2, got {value}")
