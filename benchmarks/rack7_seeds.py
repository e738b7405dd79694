"""The README main job on several seeds: does the built-in model answer rack-7, and cite?

    python benchmarks/rack7_seeds.py                      # seeds 1-5, --model local
    python benchmarks/rack7_seeds.py --seeds 1,2 --model local-1.5b --out runs/rack7-seeds

Runs ``examples/rack7.json`` with the README's defaults (N=6, k=2, 20 calls) once per seed
on one model server and prints one row per seed: the headline, how many runs gave which
answer, the support width, the givens and the span each cites, the rejected citations by
reason, and the wall clock. The last line says how many seeds answered "yes" and whether every
given in every report cites a span. Each report is written under ``--out/seed<N>/``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orchestrator.backend import open_backend  # noqa: E402
from orchestrator.run import run_task  # noqa: E402
from orchestrator.task import RunConfig, load_task  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--task", type=Path, default=ROOT / "examples" / "rack7.json")
    parser.add_argument("--out", type=Path, default=Path("runs") / "rack7-seeds")
    args = parser.parse_args()
    task = load_task(args.task)
    seeds = [int(s) for s in args.seeds.split(",")]
    print("| seed | outcome | answers by run | width | givens (span) | rejected citations | s |")
    print("|---:|---|---|---:|---|---|---:|")
    yes = 0
    all_cited = True
    with open_backend(args.model) as backend:
        for seed in seeds:
            started = time.perf_counter()
            report = run_task(
                task,
                client=backend.client,
                model=backend.model,
                config=RunConfig(seed=seed, structured_output=backend.response_format_default),
                out_dir=args.out / f"seed{seed}",
            )
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
