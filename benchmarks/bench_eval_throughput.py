"""Items per hour of the evaluation on this CPU, with today's settings and two alternatives.

    python benchmarks/bench_eval_throughput.py [--model local-1.5b] [--items 2]
        [--dataset multihop] [--configs today,slots4,draft,greedy]

Each configuration runs the same items through arms 1, 6 and 7 (arm 6 at N=2, k=2, 5 calls,
seed 1, unless the configuration says otherwise), in a fresh results folder, and the wall
clock of the whole `evals.run` invocation (model start included) gives items per hour:

* ``today``: ``evals.run --model M``, the built-in server in-process with 2 slots, one item at
  a time (what the recording uses);
* ``slots4``: ``logic-graph serve --model M --slots 4`` and ``evals.run --base-url ... --jobs
  2``: two items at once against one server that decodes four requests together (continuous
  batching);
* ``draft``: ``logic-graph serve --model M --draft local`` (the 0.5B drafts tokens for the
  1.5B: speculative decoding), one item at a time;
* ``greedy``: the built-in server as in ``today``, with arm 6 at the 1.5B's measured default
  (models.json: one chain at temperature 0, 3 calls at most) and arm 7 sampled at 0.8 with the
  same calls, the setting ``evals.record --greedy`` records. It evaluates less work per item,
  not the same work faster: its row says what an evaluation of the default costs.

Prints one row per configuration and its ratio to ``today`` measured in the same run. The
configurations run one after another, so anything else running on the machine skews all of
them; the figures say what this machine did, not what it can do when idle.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
ARM_FLAGS = ["--arms", "1,6,7", "--n", "2", "--k", "2", "--budget-calls", "5", "--seed", "1"]
GREEDY_FLAGS = [
    *("--arms", "1,6,7", "--n", "1", "--k", "2", "--budget-calls", "3", "--seed", "1"),
    *("--temp", "0", "--sample-temp", "0.8"),
]
CONFIGS = ("today", "slots4", "draft", "greedy")


def start_server(model: str, extra: list[str]) -> tuple[subprocess.Popen[str], str]:
    """`logic-graph serve` on a free port; returns the process and its base URL."""
    process = subprocess.Popen(
        [PYTHON, "-m", "orchestrator.cli.main", "serve", "--model", model, "--port", "0", *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http"):
        process.kill()
        raise RuntimeError(f"logic-graph serve did not start (printed {url!r})")
    return process, url


def run_eval(
    model: str, dataset: str, items: int, out: Path, extra: list[str], arms: list[str]
) -> tuple[float, int]:
    """Wall clock of one `evals.run` invocation and the number of calls it made."""
    started = time.perf_counter()
    subprocess.run(
        [
            PYTHON,
            "-m",
            "evals.run",
            "--dataset",
            dataset,
            "--limit",
            str(items),
            "--model",
            model,
            *arms,
            "--out",
            str(out),
            *extra,
        ],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - started
    meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
    calls = sum(int(inv.get("calls") or 0) for inv in meta["invocations"])
    return wall, calls


def arm6_outcome(out: Path) -> str:
    """Arm 6's right / wrong / refused counts from a run's summary.json, or "n/a"."""
    try:
        arm = json.loads((out / "summary.json").read_text(encoding="utf-8"))["arms"]["6"]
    except (OSError, KeyError, ValueError):
        return "n/a"
    return f"{arm['correct_answers']} / {arm['wrong_answers']} / {arm['abstained']}"


def measure(config: str, model: str, dataset: str, items: int, out: Path) -> tuple[float, int]:
    if config in ("today", "greedy"):
        arms = GREEDY_FLAGS if config == "greedy" else ARM_FLAGS
        return run_eval(model, dataset, items, out, [], arms)
    serve_extra = {"slots4": ["--slots", "4"], "draft": ["--draft", "local"]}[config]
    jobs = "2" if config == "slots4" else "1"
    process, url = start_server(model, serve_extra)
    try:
        return run_eval(model, dataset, items, out, ["--base-url", url, "--jobs", jobs], ARM_FLAGS)
    finally:
        process.terminate()
        process.wait(timeout=60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local-1.5b")
    parser.add_argument("--dataset", default="multihop")
    parser.add_argument("--items", type=int, default=2)
    parser.add_argument("--configs", default=",".join(CONFIGS))
    args = parser.parse_args()
    configs = [c for c in args.configs.split(",") if c]
    unknown = sorted(set(configs) - set(CONFIGS))
    if unknown or args.items < 1:
        parser.error(f"unknown configs {unknown} or --items < 1")
    print(
        f"model {args.model}, {args.items} {args.dataset} items, arms 1/6/7 ({' '.join(ARM_FLAGS)};"
        f" greedy: {' '.join(GREEDY_FLAGS)})"
    )
    print("| config | wall s | calls | items/hour | vs today | arm 6 right / wrong / refused |")
    print("|---|---:|---:|---:|---:|---|")
    baseline = None
    with tempfile.TemporaryDirectory() as tmp:
        for config in configs:
            wall, calls = measure(config, args.model, args.dataset, args.items, Path(tmp) / config)
            per_hour = args.items / wall * 3600
            if config == "today":
                baseline = per_hour
            ratio = f"{per_hour / baseline:.2f}x" if baseline else "n/a"
            outcome = arm6_outcome(Path(tmp) / config)
            print(
                f"| {config} | {wall:.0f} | {calls} | {per_hour:.1f} | {ratio} | {outcome} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
