"""The README main job on several seeds: does the built-in model answer rack-7, and cite?

    python -m evals.studies.rack7_seeds                      # seeds 1-5, --model local
    python -m evals.studies.rack7_seeds --seeds 1,2 --model local-1.5b --out runs/rack7-seeds
    python -m evals.studies.rack7_seeds --replay runs/rack7-seeds/bank.jsonl  # no model

Runs ``examples/rack7.json`` with the README's defaults (N=6, k=2, 20 calls) once per seed
on one model server and prints one row per seed: the headline, how many runs gave which
answer, the support width, the givens and the span each cites, the rejected citations by
reason, and the wall clock. Every reply is banked in ``--out/bank.jsonl`` (`evals.bank`), so
``--replay`` re-runs the same seeds on today's code without a model (a request the bank lacks
fails as unavailable and is counted).

The last lines check what issue 19 asks of the main job: whenever a seed answers, every
argument its report lists for the answer passes through the survey row D2.1 or another claim
that names server x9, its width is at most the design's 2, and the conclusion sentence shown
names x9. Each report is written under ``--out/seed<N>/``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from evals.bank import Bank, RecordingClient, ReplayClient
from evals.options import REPO
from orchestrator.api import (
    model_greedy_first,
    model_sampling,
    model_shape,
    run_task,
)
from orchestrator.llm import open_backend
from orchestrator.records import RunConfig, RunReport, load_task
from orchestrator.reply import SHAPES

SUBJECT = "x9"
DECISIVE_SPAN = "D2.1"


def acceptance_problems(report: RunReport) -> list[str]:
    """What an answered rack-7 report breaks of issue 19's rule for the main job ([] if none,
    and always [] for a refusal: a refusal is better than a line that does not exist)."""
    chosen = report["chosen"]
    if report["answer"] is None or not chosen["node_id"]:
        return []
    problems = []
    for number, argument in enumerate(chosen["arguments"], start=1):
        if not any(c["id"] == DECISIVE_SPAN or SUBJECT in c["claim"].lower() for c in argument):
            problems.append(f"argument {number} never names {SUBJECT}")
    if not chosen["arguments"]:
        problems.append("the answer lists no argument")
    if chosen["width"] > 2:
        problems.append(f"width {chosen['width']} is above the design's 2")
    if SUBJECT not in (report["conclusion"] or "").lower():
        problems.append(f"the conclusion sentence does not name {SUBJECT}")
    return problems


def build_parser() -> argparse.ArgumentParser:
    """The study's flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--task", type=Path, default=REPO / "examples" / "rack7.json")
    parser.add_argument("--out", type=Path, default=Path("runs") / "rack7-seeds")
    parser.add_argument(
        "--replay", type=Path, help="a bank.jsonl of an earlier run: replay it, no model"
    )
    parser.add_argument(
        "--shape", choices=SHAPES, help="interrogation shape (default: the model's)"
    )
    return parser


def print_rule(failures: dict[int, list[str]]) -> None:
    """The seeds that break the main-job rule, and the rule's reading."""
    broken = {seed: problems for seed, problems in failures.items() if problems}
    for seed, problems in sorted(broken.items()):
        print(f"seed {seed} breaks the main-job rule: {'; '.join(problems)}")
    print(
        "main-job rule (every argument names x9, width <= 2, conclusion names x9): "
        + ("met on every answered seed" if not broken else f"broken on {len(broken)} seed(s)")
    )


def main() -> int:
    """Run (or replay) the seeds and print one row each, then the main-job rule."""
    args = build_parser().parse_args()
    task = load_task(args.task)
    seeds = [int(s) for s in args.seeds.split(",")]
    print("| seed | outcome | answers by run | width | givens (span) | rejected citations | s |")
    print("|---:|---|---|---:|---|---|---:|")
    yes = 0
    all_cited = True
    failures: dict[int, list[str]] = {}
    with contextlib.ExitStack() as stack:
        if args.replay:
            replay = ReplayClient(Bank.load([args.replay.parent]))
            client: Any = replay
            # The built-in models ask for structured output; a bank of one was recorded so.
            model, structured = args.model, True
        else:
            backend = stack.enter_context(open_backend(args.model))
            args.out.mkdir(parents=True, exist_ok=True)
            client = RecordingClient(backend.client, args.out / "bank.jsonl")
            model, structured = backend.model, backend.response_format_default
        for seed in seeds:
            started = time.perf_counter()
            report = run_task(
                task,
                client=client,
                model=model,
                config=RunConfig(
                    **model_sampling(args.model),
                    seed=seed,
                    structured_output=structured,
                    interrogation_shape=args.shape or model_shape(args.model),
                    greedy_first=model_greedy_first(args.model),
                ),
                out_dir=args.out / f"seed{seed}",
            )
            failures[seed] = acceptance_problems(report)
            wall = time.perf_counter() - started
            answers = Counter(run["answer"] for run in report["runs"] if run["answer"])
            rejected = Counter(c["reason"] for c in report["rejected_citations"])
            givens = ", ".join(g["span"] or "NONE" for g in report["givens"]) or "-"
            all_cited &= all(g["span"] for g in report["givens"])
            yes += report["answer"] is not None and report["answer"].strip(" .").lower() == "yes"
            print(
                f"| {seed} | {report['headline']} | {json.dumps(dict(answers))} "
                f"| {report['chosen']['width']} | {givens} | {json.dumps(dict(rejected))} "
                f"| {wall:.0f} |",
                flush=True,
            )
    print(f"\nanswered yes: {yes} of {len(seeds)} seeds; every given cites a span: {all_cited}")
    print_rule(failures)
    if args.replay:
        counts = replay.counts
        print(
            f"replay: {counts.replayed} calls replayed, {counts.unavailable} unavailable "
            "(requests the bank lacks)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
