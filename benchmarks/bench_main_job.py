"""The README's main job on two built-in models, side by side: answers, the main-job rule, time.

    python benchmarks/bench_main_job.py                        # local vs local-1.5b, seeds 1-5
    python benchmarks/bench_main_job.py --models local,local-1.5b --seeds 1,2 --out runs/mj

For each seed, runs the README's main-job command (``python -m orchestrator.run --task
examples/rack7.json --model M --seed S``, each model at its own models.json defaults) once per
model, alternating which model goes first so that neither always meets a warm page cache, and
prints one row per run:

- the outcome (the report's headline) and whether it is the expected "Yes";
- the main-job rule of :mod:`evals.studies.rack7_seeds` (every argument of an answer passes
  through server x9, width at most 2, the conclusion names x9);
- the calls, the model's seconds (the sum of the call latencies in report.json: calls that
  run at the same time on a server's slots each count their own latency, so this sum can
  exceed the wall clock) and the command's wall clock, model start-up included.

The last lines total each model and give the ratios of model seconds and of wall seconds, the
first model over each other one. Seconds depend on the machine's load: compare them only
within one run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.studies.rack7_seeds import acceptance_problems  # noqa: E402

EXPECTED = "yes"


@dataclass
class Outcome:
    """One main-job run: what it answered and what it cost."""

    model: str
    seed: int
    headline: str
    answer: str | None
    problems: list[str]
    calls: int
    model_s: float
    wall_s: float
    exit_code: int

    @property
    def right(self) -> bool:
        return (self.answer or "").strip(" .").lower() == EXPECTED

    @property
    def wrong(self) -> bool:
        return self.answer is not None and not self.right

    def row(self) -> str:
        rule = "met" if not self.problems else "; ".join(self.problems)
        return (
            f"| {self.seed} | {self.model} | {self.headline} | {rule} | {self.calls} "
            f"| {self.model_s:.1f} | {self.wall_s:.1f} | {self.exit_code} |"
        )


def run_main_job(model: str, seed: int, task: Path, out: Path) -> Outcome:
    """The README's main-job command for ``model`` and ``seed``, its report read back."""
    command = [
        sys.executable,
        "-m",
        "orchestrator.run",
        "--task",
        str(task),
        "--model",
        model,
        "--seed",
        str(seed),
        "--out",
        str(out),
    ]
    started = time.perf_counter()
    finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    report_file = out / "report.json"
    if not report_file.is_file():
        tail = finished.stderr.strip().splitlines()[-1:] or ["(no output)"]
        code = finished.returncode
        return Outcome(model, seed, f"no report: {tail[0]}", None, [], 0, 0.0, wall, code)
    report = json.loads(report_file.read_text(encoding="utf-8"))
    calls = report["calls"]
    return Outcome(
        model=model,
        seed=seed,
        headline=report["headline"],
        answer=report["answer"],
        problems=acceptance_problems(report),
        calls=len(calls),
        model_s=sum(call["latency_s"] or 0.0 for call in calls),
        wall_s=wall,
        exit_code=finished.returncode,
    )


def summary(outcomes: list[Outcome], models: list[str]) -> list[str]:
    """One line per model (answers, rule, seconds), then the ratios of model seconds."""
    by_model: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_model[outcome.model].append(outcome)
    lines = []
    for model in models:
        runs = by_model[model]
        broken = sum(1 for run in runs if run.problems)
        lines.append(
            f"{model}: {sum(r.right for r in runs)} right, {sum(r.wrong for r in runs)} wrong, "
            f"{sum(r.answer is None for r in runs)} refused of {len(runs)} seeds; rule broken on "
            f"{broken}; model {sum(r.model_s for r in runs):.1f} s, "
            f"wall {sum(r.wall_s for r in runs):.1f} s"
        )
    for label, seconds in (("model seconds", "model_s"), ("wall seconds", "wall_s")):
        first = sum(getattr(r, seconds) for r in by_model[models[0]])
        for model in models[1:]:
            other = sum(getattr(r, seconds) for r in by_model[model])
            ratio = f"{first / other:.2f}x" if other else "n/a (none measured)"
            lines.append(f"{label}, {models[0]} over {model}: {ratio}")
    return lines


def main() -> int:
    """Run every model on every seed, print the rows and the totals."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="local,local-1.5b", help="comma-separated ids")
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--task", type=Path, default=ROOT / "examples" / "rack7.json")
    parser.add_argument("--out", type=Path, default=Path("runs") / "bench-main-job")
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    seeds = [int(s) for s in args.seeds.split(",") if s]
    if not models or not seeds:
        parser.error("--models and --seeds need at least one value each")
    print("| seed | model | outcome | main-job rule | calls | model s | wall s | exit |")
    print("|---:|---|---|---|---:|---:|---:|---:|")
    outcomes = []
    for index, seed in enumerate(seeds):
        # Alternate the order, so that neither model always runs right after the other.
        order = models if index % 2 == 0 else list(reversed(models))
        for model in order:
            outcome = run_main_job(model, seed, args.task, args.out / f"{model}-seed{seed}")
            outcomes.append(outcome)
            print(outcome.row(), flush=True)
    print()
    for line in summary(outcomes, models):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
