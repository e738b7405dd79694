"""Prompt layouts side by side on one model server: how much of each prompt is computed.

    python benchmarks/bench_prompt_cache.py                          # local-1.5b, prose 1-4
    python benchmarks/bench_prompt_cache.py --model local-tiny --set multihop --items 2
    python benchmarks/bench_prompt_cache.py --hops off --budget-calls 3 --n 1

Runs arm 6 (``orchestrator.api.run_task``) on the first ``--items`` items of a data set, once
in the ``classic`` layout and once in ``evidence_first`` (issue 37; the order alternates by
item, so neither layout always meets a warm server), on one built-in model server, and prints
per layout:

- calls, prompt tokens sent, prompt tokens the server read from its cache
  (``usage.prompt_tokens_details.cached_tokens``) and those it computed;
- completion tokens and the model's seconds (the sum of call latencies);
- right / wrong / refused answers (``evals.score``): the layouts send the same words, but a
  greedy model may still answer differently, so a layout is only cheaper at the same answers.

The computed prompt tokens do not depend on the machine's load; the seconds do, so compare
them only within one run. The last line gives both ratios, classic over evidence_first.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.datasets.loaders import item_to_task, load_items  # noqa: E402
from evals.score import score  # noqa: E402
from orchestrator.api import run_task  # noqa: E402
from orchestrator.llm import CostLedger, open_backend  # noqa: E402
from orchestrator.records import HOPS, RunConfig  # noqa: E402
from orchestrator.reply import LAYOUTS  # noqa: E402


@dataclass
class Tally:
    """What one layout cost and gave over the items."""

    calls: int = 0
    prompt: int = 0
    cached: int = 0
    unknown: int = 0
    completion: int = 0
    seconds: float = 0.0
    outcomes: Counter[str] = field(default_factory=Counter)

    def add_calls(self, records: list[dict[str, Any]]) -> None:
        for record in records:
            self.calls += 1
            self.prompt += record.get("prompt_tokens") or 0
            self.completion += record.get("completion_tokens") or 0
            self.seconds += record.get("latency_s") or 0.0
            if record.get("cached_tokens") is None:
                self.unknown += 1
            else:
                self.cached += record["cached_tokens"]

    @property
    def computed(self) -> int:
        return self.prompt - self.cached

    def row(self, layout: str) -> str:
        answers = "/".join(str(self.outcomes[k]) for k in ("right", "wrong", "refused"))
        cache = f"{self.cached}" + (f" ({self.unknown} calls unreported)" if self.unknown else "")
        return (
            f"| {layout} | {self.calls} | {self.prompt} | {cache} | {self.computed} | "
            f"{self.completion} | {self.seconds:.1f} | {answers} |"
        )


def outcome(item: dict[str, Any], report: dict[str, Any]) -> str:
    """right, wrong or refused, as the evals score arm 6's answer."""
    if report.get("answer") is None:
        return "refused"
    return "right" if score(item, report["answer"])["correct"] else "wrong"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local-1.5b", help="a built-in model (default 1.5B)")
    parser.add_argument("--set", default="prose", help="a data set of evals/datasets")
    parser.add_argument("--items", type=int, default=4, help="how many items, from the first")
    parser.add_argument("--n", type=int, default=1, help="interrogations per item (default 1)")
    parser.add_argument("--budget-calls", type=int, default=6, help="calls per item (default 6)")
    parser.add_argument("--hops", default="on_failure", choices=HOPS)
    parser.add_argument("--shape", default="chain", choices=("chain", "graph"))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    items = load_items(ROOT / "evals" / "datasets" / f"{args.set}.jsonl", limit=args.items)
    tallies = {layout: Tally() for layout in LAYOUTS}
    ledger = CostLedger()
    with open_backend(args.model, ledger=ledger) as backend:
        for number, item in enumerate(items):
            order = LAYOUTS if number % 2 == 0 else tuple(reversed(LAYOUTS))
            for layout in order:
                config = RunConfig(
                    n=args.n,
                    budget_calls=args.budget_calls,
                    temperature=0.0,
                    seed=1,
                    interrogation_shape=args.shape,
                    hops=args.hops,
                    prompt_layout=layout,
                )
                start = len(ledger.records())
                report = run_task(
                    item_to_task(item), client=backend.client, model=args.model, config=config
                )
                tallies[layout].add_calls(ledger.records()[start:])
                tallies[layout].outcomes[outcome(item, dict(report))] += 1
                print(f"{item['id']} {layout}: {report.get('answer')!r}", flush=True)
    print(
        f"\n{args.model}, {args.set} items 1-{len(items)}, arm 6 ({args.shape}, hops {args.hops})"
    )
    print(
        "| layout | calls | prompt tokens | read from cache | computed | completion | model s "
        "| right/wrong/refused |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for layout, tally in tallies.items():
        print(tally.row(layout))
    classic, first = tallies["classic"], tallies["evidence_first"]
    print(
        f"classic / evidence_first: computed prompt tokens "
        f"{classic.computed / max(first.computed, 1):.2f}x, model seconds "
        f"{classic.seconds / max(first.seconds, 1e-9):.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
