"""Re-run the arms' logic on a reply bank: every change to the verdict logic, at no model cost.

Usage::

    python -m evals.replay BANK_DIR [BANK_DIR ...] --out DIR [--arms 1,6,7] [--n 2] [--k 2]
                           [--budget-calls 5] [--temp 0.8] [--offline | --backend MODEL
                           [--base-url URL]]

The first bank directory's ``run.json`` supplies the data set, model and settings; the options
above override them (``--n 2`` on a bank recorded with 6 interrogations takes the first two).
Further bank directories only add replies (e.g. a greedy temperature-0 bank beside a sampled
one). The items are those the first bank has a result for.

A request the banks hold is answered from them. A request they lack (a verification of a
claim that today's logic chose and the recorded run did not) is made live with ``--backend``,
or, with ``--offline`` (the default), fails as *unavailable*, which the orchestrator treats
like any failed call. ``DIR/replay.json`` and the summary say how many calls were replayed,
made live and unavailable. Writes the same files as `evals.run` (raw/, traces/, summary.md).
Exit status: 0 done, 2 bad arguments or an unusable bank.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from evals import run as eval_run
from evals.bank import Bank, ReplayClient
from evals.cli import exit_status
from evals.invocation import add_more_calls_options, arm_settings, check_numbers, fingerprint
from evals.metering import CappedClient, CostCap
from evals.progress import Tally
from evals.results import EvalError, latest_rows, now, read_rows, write_meta
from evals.summary import write_summary
from orchestrator.llm import is_local_model, open_backend

REPLAY_FILE = "replay.json"


class ReplayError(Exception):
    """The replay cannot start; the message says why."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evals.replay", description=__doc__)
    parser.add_argument("banks", nargs="+", type=Path, help="bank (evals.run) directories")
    parser.add_argument("--out", type=Path, required=True, help="results directory")
    parser.add_argument("--arms", help="comma-separated arms (default: the bank's)")
    for name in ("n", "k", "budget-calls", "seed"):
        parser.add_argument(f"--{name}", type=int, help="override the bank's setting")
    parser.add_argument("--temp", type=float, help="override arm 6/7 temperature")
    parser.add_argument(
        "--sample-temp", type=float, help="override arm 7's temperature alone (after --temp)"
    )
    parser.add_argument(
        "--shape", choices=("graph", "chain"), help="override arm 6's interrogation shape"
    )
    parser.add_argument(
        "--greedy-first",
        action="store_true",
        help="arm 6's first interrogation greedy (answered from a temperature-0 bank)",
    )
    add_more_calls_options(parser, overrides=True)
    live = parser.add_mutually_exclusive_group()
    live.add_argument(
        "--offline",
        action="store_true",
        help="count requests the bank lacks as unavailable (the default)",
    )
    live.add_argument("--backend", metavar="MODEL", help="make requests the bank lacks live")
    parser.add_argument("--base-url", help="with --backend: its OpenAI-compatible endpoint")
    parser.add_argument("--models-file", type=Path, default=eval_run.DEFAULT_MODELS_FILE)
    return parser


def bank_config(bank: Path) -> dict[str, Any]:
    """``config`` of a bank's run.json; ReplayError when it is missing or malformed."""
    path = bank / "run.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReplayError(f"{bank} is not a bank: cannot read {path}: {exc}") from exc
    config = meta.get("config") if isinstance(meta, dict) else None
    if not isinstance(config, dict) or not isinstance(config.get("settings"), dict):
        raise ReplayError(f"{path} has no 'config' with 'settings'")
    return config


def recorded_structured_output(bank: Path, config: dict[str, Any]) -> bool:
    """What arm 6's ``--structured-output auto`` resolved to when the bank was recorded.

    It matters because the request key includes the response format. Recorded in run.json's
    invocations since banks began; older banks fall back to the rule `open_backend` applies
    (on for the built-in local models, off for other servers).
    """
    meta = json.loads((bank / "run.json").read_text(encoding="utf-8"))
    for invocation in reversed(meta.get("invocations") or []):
        if isinstance(invocation, dict) and "structured_output" in invocation:
            return bool(invocation["structured_output"])
    return config.get("base_url") is None and is_local_model(str(config["model"]))


def recorded_item_ids(bank: Path) -> set[str]:
    """Ids of the items the bank has an error-free result for, in any arm."""
    ids: set[str] = set()
    for path in sorted((bank / "raw").glob("arm*.jsonl")):
        ids.update(i for i, row in latest_rows(read_rows(path)).items() if not row.get("error"))
    return ids


def replay_namespace(config: dict[str, Any], args: argparse.Namespace) -> argparse.Namespace:
    """An `evals.run` argument namespace: the bank's settings with this replay's overrides."""
    settings = dict(config["settings"])
    arms = args.arms or ",".join(sorted(config.get("prompts", {}), key=int)) or "1,6,7"
    overrides = {
        "n": args.n,
        "k": args.k,
        "budget_calls": args.budget_calls,
        "seed": args.seed,
        "temp": args.temp,
    }
    settings.update({key: value for key, value in overrides.items() if value is not None})
    return argparse.Namespace(
        dataset=config["dataset"],
        format=config.get("format"),
        base_url=config.get("base_url"),
        arms=arms,
        max_tokens=settings.get("max_tokens", 512),
        temperature=settings.get("temperature", 0.0),
        seed=settings.get("seed", 0),
        n=settings.get("n", 3),
        k=settings.get("k", 2),
        budget_calls=settings.get("budget_calls", 12),
        temp=settings.get("temp", 0.8),
        # None: arm 7 samples at ``temp`` (evals.invocation.sample_temperature).
        sample_temp=settings.get("sample_temp") if args.sample_temp is None else args.sample_temp,
        structured_output=settings.get("structured_output", "auto"),
        think_first=bool(settings.get("think_first", False)),
        shape=args.shape or settings.get("shape", "graph"),
        greedy_first=args.greedy_first or bool(settings.get("greedy_first", False)),
        hops=args.hops or settings.get("hops", "off"),
        adaptive=args.adaptive or bool(settings.get("adaptive", False)),
        diversity=args.diversity or settings.get("diversity", "sample"),
        leave_out=args.leave_out or bool(settings.get("leave_out", False)),
        prompt_layout=args.prompt_layout or settings.get("prompt_layout", "classic"),
        jobs=1,
        max_cost=0.0,
    )


def _replay(args: argparse.Namespace) -> int:
    for bank in args.banks:
        if not bank.is_dir():
            raise ReplayError(f"bank {bank} is not a directory")
    config = bank_config(args.banks[0])
    run_args = replay_namespace(config, args)
    arms = eval_run.parse_arms(run_args.arms)
    check_numbers(run_args)
    wanted = recorded_item_ids(args.banks[0])
    items = [
        item
        for item in eval_run.load_selected(run_args.dataset, run_args.format, None)
        if item["id"] in wanted
    ]
    if not items:
        raise ReplayError(f"{args.banks[0]} holds no recorded item of {run_args.dataset!r}")
    bank = Bank.load(args.banks)
    if not len(bank):
        raise ReplayError(f"{', '.join(map(str, args.banks))} hold no banked reply")
    model = str(config["model"])
    out: Path = args.out
    if out.exists() and any(out.iterdir()):
        raise ReplayError(f"--out {out} is not empty; a replay starts from nothing")
    structured_default = recorded_structured_output(args.banks[0], config)
    settings = arm_settings(run_args, out, structured_default)
    with ExitStack() as stack:
        live = None
        if args.backend:
            backend = stack.enter_context(
                open_backend(args.backend, base_url=args.base_url, models_path=args.models_file)
            )
            live = backend.client
        client = ReplayClient(bank, live=live)
        meta = {
            "config": {**fingerprint(run_args, model, arms), "replay_of": config},
            "created": now(),
            "invocations": [{"started": now(), "arms": arms, "items": len(items)}],
            "banks": [str(b) for b in args.banks],
        }
        write_meta(out, meta)
        stopped, failed = eval_run.evaluate(
            [(item, arms) for item in items],
            out=out,
            model=model,
            client=CappedClient(
                client, CostCap(None, None, default_max_tokens=run_args.max_tokens)
            ),
            settings=settings,
            tally=Tally({arm: {} for arm in arms}),
            arm6_calls={},
        )
    counts = client.counts.as_dict()
    (out / REPLAY_FILE).write_text(
        json.dumps({"banks": meta["banks"], "calls": counts, "items": len(items)}, indent=2) + "\n",
        encoding="utf-8",
    )
    print(
        f"replay: {counts['replayed']} calls replayed, {counts['live']} made live, "
        f"{counts['unavailable']} unavailable",
        file=sys.stderr,
    )
    print(write_summary(out)["markdown"])
    return 1 if stopped or failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return exit_status("evals.replay", lambda: _replay(args), (ReplayError, EvalError))


if __name__ == "__main__":
    sys.exit(main())
