"""What one evaluation invocation's options mean: their checks, the fingerprint ``run.json``
keeps of them, and the settings the arms run with. `evals.replay` builds the same
`RunOptions` from a bank and goes through these too, so a replay means what a run means.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evals.arms import ARMS, ArmSettings, prompt_version
from evals.options import RunOptions
from evals.results import EvalError
from orchestrator.api import RunConfig
from orchestrator.llm import MAX_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS


def fingerprint(args: RunOptions, model: str) -> dict[str, Any]:
    """What ``run.json`` records of an invocation and checks on resume: the data set, model,
    endpoint, the settings that change answers, and each arm's prompt version."""
    shape = args.shape or "graph"
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
        "prompts": {str(arm): prompt_version(arm, shape, args.diversity) for arm in args.arms},
    }
    # Recorded only when they differ from the defaults, so runs made before they existed resume.
    if shape != "graph":
        recorded["settings"]["shape"] = shape
    if args.greedy_first:
        recorded["settings"]["greedy_first"] = True
    if args.hops != "off":
        recorded["settings"]["hops"] = args.hops
    if args.adaptive:
        recorded["settings"]["adaptive"] = True
    if args.leave_out:
        recorded["settings"]["leave_out"] = True
    if args.diversity != "sample":
        recorded["settings"]["diversity"] = args.diversity
    if args.prompt_layout != "classic":
        recorded["settings"]["prompt_layout"] = args.prompt_layout
    # The context window (evals.run.run_window): None for every run recorded before it was
    # applied, which replay without it as they were recorded.
    if args.context_tokens is not None:
        recorded["settings"]["context_tokens"] = args.context_tokens
    sample_temp = sample_temperature(args)
    if sample_temp != args.temp:
        recorded["settings"]["sample_temp"] = sample_temp
    return recorded


def sample_temperature(args: RunOptions) -> float:
    """Arm 7's sample temperature: ``--sample-temp``, else ``--temp``."""
    return float(args.temp if args.sample_temp is None else args.sample_temp)


def arm_settings(args: RunOptions, out: Path, structured_default: bool) -> ArmSettings:
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
            interrogation_shape=args.shape or "graph",
            greedy_first=args.greedy_first,
            hops=args.hops,
            adaptive=args.adaptive,
            diversity=args.diversity,
            leave_out=args.leave_out,
            prompt_layout=args.prompt_layout,
            context_tokens=args.context_tokens,
        ),
        artifacts_dir=out,
        sample_temperature=sample_temperature(args),
        sample_diversity=args.diversity,
    )


def check_arms(arms: Iterable[int]) -> tuple[int, ...]:
    """The arms sorted and without repeats; EvalError for an empty list or an unknown arm."""
    chosen = sorted(set(arms))
    unknown = [arm for arm in chosen if arm not in ARMS]
    if unknown:
        raise EvalError(
            f"--arms: {str(unknown[0])!r} is not an arm number (choose from 1-{max(ARMS)})"
        )
    if not chosen:
        raise EvalError("--arms names no arm")
    return tuple(chosen)


def parse_arms(text: str) -> tuple[int, ...]:
    """``"1,2,6"`` -> ``(1, 2, 6)`` (sorted, unique); EvalError naming a bad entry."""
    arms = []
    for part in text.split(","):
        part = part.strip()
        if part and not part.isdigit():
            raise EvalError(f"--arms: {part!r} is not an arm number (choose from 1-{max(ARMS)})")
        if part:
            arms.append(int(part))
    return check_arms(arms)


def check_numbers(args: RunOptions) -> None:
    """Raise :class:`EvalError` naming the first numeric flag out of its range."""
    for name in ("max_tokens", "n", "k", "budget_calls", "jobs"):
        if getattr(args, name) < 1:
            raise EvalError(f"--{name.replace('_', '-')} must be at least 1")
    if not args.max_cost >= 0:
        raise EvalError(f"--max-cost must be >= 0, got {args.max_cost}")
    for name in ("temperature", "temp", "sample_temp"):
        value = getattr(args, name)
        if value is not None and not 0 <= value <= 2:
            raise EvalError(f"--{name.replace('_', '-')} must be in 0..2, got {value}")
    window = args.context_tokens
    if window is not None and not MIN_CONTEXT_TOKENS <= window <= MAX_CONTEXT_TOKENS:
        raise EvalError(
            f"--context-tokens must be in {MIN_CONTEXT_TOKENS}..{MAX_CONTEXT_TOKENS}, got {window}"
        )
