"""Re-run the arms' logic on a reply bank: every change to the verdict logic, at no model cost.

`replay` is the library function; the command line is ``logic-graph eval replay`` (or
``python -m evals.replay``)::

    logic-graph eval replay BANK_DIR [BANK_DIR ...] --out DIR [--arms 1,6,7] [--n 2] [--k 2]
                            [--budget-calls 5] [--temp 0.8] [--offline | --backend MODEL
                            [--base-url URL]]

The first bank directory's ``run.json`` supplies the data set, model and settings; the options
above override them (``--n 2`` on a bank recorded with 6 interrogations takes the first two).
Further bank directories only add replies (e.g. a greedy temperature-0 bank beside a sampled
one). The items are those the first bank has a result for.

A request the banks hold is answered from them. A request they lack (a verification of a
claim that today's logic chose and the recorded run did not) is made live with ``--backend``,
or, with ``--offline`` (the default), fails as *unavailable*, which the orchestrator treats
like any failed call. A reply made live is banked in ``DIR/bank.jsonl``, so the same replay with
``DIR`` added to the banks makes no call: a figure that needed live calls stays reproducible
offline. ``DIR/replay.json`` and the summary say how many calls were replayed,
made live and unavailable. Writes the same files as an evaluation (raw/, traces/, summary.md).
Exit status: 0 done, 2 bad arguments or an unusable bank.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals import flags
from evals.bank import BANK_FILE, Bank, RecordingClient, ReplayClient
from evals.cli import exit_status, run_alias
from evals.engine import run_pending
from evals.invocation import arm_settings, check_arms, check_numbers, fingerprint
from evals.metering import CappedClient, CostCap
from evals.options import ReplayOptions, RunOptions
from evals.progress import Tally
from evals.results import EvalError, latest_rows, now, read_rows, run_arms, write_meta
from evals.run import RunOutcome, load_selected
from evals.summary import write_summary
from orchestrator.llm import ChatSeam, is_local_model, open_backend

REPLAY_FILE = "replay.json"


class ReplayError(Exception):
    """The replay cannot start; the message says why."""


@dataclass(frozen=True)
class ReplayOutcome:
    """What a replay left: the evaluation it made (its folder, rows and summary.md), the
    calls replayed, made live and unavailable, and the items replayed."""

    run: RunOutcome
    calls: dict[str, Any]
    items: int


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


def replay_run_options(config: dict[str, Any], options: ReplayOptions) -> RunOptions:
    """The evaluation a replay makes: the bank's settings with this replay's overrides."""
    settings = dict(config["settings"])
    recorded_arms = tuple(int(arm) for arm in config.get("prompts", {}))
    overrides = {
        "n": options.n,
        "k": options.k,
        "budget_calls": options.budget_calls,
        "seed": options.seed,
        "temp": options.temp,
    }
    settings.update({key: value for key, value in overrides.items() if value is not None})
    return RunOptions(
        dataset=config["dataset"],
        format=config.get("format"),
        base_url=config.get("base_url"),
        arms=check_arms(options.arms or recorded_arms or (1, 6, 7)),
        max_tokens=settings.get("max_tokens", 512),
        temperature=settings.get("temperature", 0.0),
        seed=settings.get("seed", 0),
        n=settings.get("n", 3),
        k=settings.get("k", 2),
        budget_calls=settings.get("budget_calls", 12),
        temp=settings.get("temp", 0.8),
        # None: arm 7 samples at ``temp`` (evals.invocation.sample_temperature).
        sample_temp=settings.get("sample_temp")
        if options.sample_temp is None
        else options.sample_temp,
        structured_output=settings.get("structured_output", "auto"),
        think_first=bool(settings.get("think_first", False)),
        shape=options.shape or settings.get("shape", "graph"),
        greedy_first=options.greedy_first or bool(settings.get("greedy_first", False)),
        hops=options.hops or settings.get("hops", "off"),
        adaptive=options.adaptive or bool(settings.get("adaptive", False)),
        diversity=options.diversity or settings.get("diversity", "sample"),
        leave_out=options.leave_out or bool(settings.get("leave_out", False)),
        prompt_layout=options.prompt_layout or settings.get("prompt_layout", "classic"),
        # The window the bank's prompts were fitted to; a bank recorded before the window was
        # applied has none and replays unfitted, as it was recorded.
        context_tokens=settings.get("context_tokens"),
        jobs=1,
        max_cost=0.0,
    )


def _checked(options: ReplayOptions) -> tuple[dict[str, Any], RunOptions, list[dict[str, Any]]]:
    """The first bank's config, the evaluation to make and its items; ReplayError (or
    EvalError for bad numbers) when the replay cannot start."""
    for bank in options.banks:
        if not bank.is_dir():
            raise ReplayError(f"bank {bank} is not a directory")
    config = bank_config(options.banks[0])
    run = replay_run_options(config, options)
    check_numbers(run)
    wanted = recorded_item_ids(options.banks[0])
    items = [item for item in load_selected(run.dataset, run.format, None) if item["id"] in wanted]
    if not items:
        raise ReplayError(f"{options.banks[0]} holds no recorded item of {run.dataset!r}")
    if options.out.exists() and any(options.out.iterdir()):
        raise ReplayError(f"--out {options.out} is not empty; a replay starts from nothing")
    return config, run, items


def _live(stack: ExitStack, options: ReplayOptions) -> ChatSeam | None:
    """The client that makes the requests the banks lack, banking its replies in the replay's
    folder, or None (``--offline``)."""
    if not options.backend:
        return None
    backend = stack.enter_context(
        open_backend(options.backend, base_url=options.base_url, models_path=options.models_file)
    )
    return RecordingClient(backend.client, options.out / BANK_FILE)


def replay(options: ReplayOptions) -> ReplayOutcome:
    """Re-run the arms on the replies the banks hold (see the module docstring).

    Parameters
    ----------
    options : ReplayOptions
        The banks, the (empty or new) folder to write and the settings to override.

    Returns
    -------
    ReplayOutcome
        The calls replayed, made live and unavailable, every arm's rows and the summary.

    Raises
    ------
    ReplayError
        A bank is missing or holds nothing to replay, or the folder is not empty.
    EvalError
        An override is out of range.
    """
    config, run, items = _checked(options)
    bank = Bank.load(list(options.banks))
    if not len(bank):
        raise ReplayError(f"{', '.join(map(str, options.banks))} hold no banked reply")
    model, out = str(config["model"]), options.out
    settings = arm_settings(run, out, recorded_structured_output(options.banks[0], config))
    meta = {
        "config": {**fingerprint(run, model), "replay_of": config},
        "created": now(),
        "invocations": [{"started": now(), "arms": list(run.arms), "items": len(items)}],
        "banks": [str(b) for b in options.banks],
    }
    with ExitStack() as stack:
        client = ReplayClient(bank, live=_live(stack, options))
        write_meta(out, meta)
        stopped, failed = run_pending(
            [(item, list(run.arms)) for item in items],
            out=out,
            model=model,
            client=CappedClient(client, CostCap(None, None, default_max_tokens=run.max_tokens)),
            settings=settings,
            tally=Tally({arm: {} for arm in run.arms}),
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
    summary = write_summary(out)["markdown"]
    return ReplayOutcome(
        RunOutcome(out, stopped, failed, run_arms(out), summary), counts, len(items)
    )


def cli(args: argparse.Namespace, prog: str) -> int:
    """``eval replay``: replay the banks, then print summary.md."""

    def body() -> int:
        outcome = replay(flags.replay_options(args)).run
        print(outcome.summary)
        return outcome.status

    return exit_status(prog, body, (ReplayError, EvalError))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evals.replay``: the same as ``logic-graph eval replay``."""
    return run_alias("evals.replay", flags.replay_flags, cli, argv)


if __name__ == "__main__":
    sys.exit(main())
