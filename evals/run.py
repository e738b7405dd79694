"""The seven-arm evaluation: `evaluate` runs an invocation and returns its rows.

Command line (`evals.command`; ``python -m evals.run`` is the same)::

    logic-graph eval run --dataset math|multihop|PATH [--format gsm8k|hotpotqa|musique|common]
                        [--arms 1,2,3,4,5,6,7] [--limit N] [--skip N] [--model ID] [--base-url URL]
                        [--max-cost USD] [--allow-unknown-cost] [--out DIR | --resume RUNSTAMP]
                        [--max-tokens 512] [--n 3 --k 2 --budget-calls 12 --temp 0.8]
                        [--jobs K] [--context-tokens N]

Items are processed one at a time (``--jobs K``: K at a time against a server backend); each
item goes through every selected arm in order (arm 7 takes as many samples as arm 6 made calls
on that item), so a run cut short (cost cap, Ctrl-C) leaves the arms with comparable item sets.
Before the first call the run prints an estimate (items x most calls per item x the seconds per
call measured on earlier runs of a local model); each finished item prints a progress line with
the elapsed time and an ETA at the pace so far.
All calls go through one client from `orchestrator.llm.backend.open_backend` (``--model local``
starts the built-in llama.cpp model, cost 0), wrapped in the run's cost cap.

Arm 6 fits each item's documents into the model's context window as ``orchestrator.run``
does (``--context-tokens``, else the backend's; a resumed run keeps the one it recorded), and
an item whose documents cannot fit is refused before any call and recorded with an error.

Output directory (default ``evals/results/<runstamp>/``):

* ``run.json`` - the run's settings (checked on resume; the context window among them) and
  one entry per invocation;
* ``raw/arm<N>.jsonl`` - one line per item (answer, gold, score, tokens, cost, latency, calls);
* ``traces/arm<N>.jsonl`` - every request and reply (arm 6: the orchestrator's report);
* ``bank.jsonl`` - every successful reply keyed by its request, for ``evals.replay``
  (see `evals.bank`);
* ``arm6/<item>/`` - the orchestrator's own report files;
* ``summary.md``, ``summary.json`` and, with matplotlib, ``accuracy_vs_cost.png``.

Resuming: re-running with the same ``--out`` (or ``--resume RUNSTAMP``) skips every
(arm, item) whose latest raw line has no error. Exit status: 0 every selected (arm, item) has a
result; 1 stopped early (cost cap, repeated errors, a backend that cannot be used: no key,
unreachable, key rejected) or some items failed; 2 refused before any
call (bad arguments, unknown price without ``--allow-unknown-cost``, settings that differ from
the run being resumed).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evals import flags
from evals.bank import banking
from evals.cli import exit_status, run_alias
from evals.datasets import (
    FORMATS,
    DatasetFormatError,
    load_dataset,
)
from evals.engine import ORCHESTRATOR, Item, Todo, run_pending
from evals.invocation import arm_settings, check_arms, check_numbers, fingerprint
from evals.metering import CappedClient, CostCap
from evals.options import RunOptions
from evals.progress import Tally, estimate_line, measured_timing, record_timing
from evals.results import (
    ArmRows,
    EvalError,
    ResultRow,
    latest_rows,
    now,
    prepare_run_dir,
    raw_path,
    read_rows,
    run_arms,
    runstamp,
    source_commit,
    write_meta,
)
from evals.summary import write_summary
from orchestrator.api import default_model as api_default_model
from orchestrator.api import model_shape
from orchestrator.llm import (
    Backend,
    BackendUnusableError,
    LedgerTotals,
    LLMError,
    PricingTable,
    is_local_model,
    open_backend,
)

RESULTS_ROOT = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class RunOutcome:
    """What an invocation left: its results folder, why it stopped early (None: it ran to the
    end), how many rows it recorded with an error, every arm's latest rows in the folder
    (earlier invocations' included) and the summary.md it wrote."""

    out: Path
    stopped: str | None
    failed: int
    rows: dict[int, ArmRows]
    summary: str

    @property
    def status(self) -> int:
        """The command's exit status: 0 every pending (arm, item) done, 1 otherwise."""
        return 1 if self.stopped or self.failed else 0


@dataclass(frozen=True)
class _Plan:
    """An invocation checked and resolved, before any call: its options (model and shape
    filled in, and a resumed run's recorded context window), items, prices, folder, whether
    it resumes a run there, run.json contents and the pending work."""

    options: RunOptions
    model: str
    items: list[Item]
    prices: tuple[float, float] | None
    out: Path
    resumed: bool
    meta: dict[str, Any]
    done: dict[int, ArmRows]
    todo: Todo

    @property
    def local(self) -> bool:
        """Whether the model is a built-in one this process serves."""
        return is_local_model(self.model) and self.options.base_url is None


def load_selected(dataset: str, fmt: str | None, limit: int | None) -> list[Item]:
    """The dataset's items (first `limit`), via the shipped sets or a format's loader."""
    if limit is not None and limit < 1:
        raise EvalError(f"--limit must be at least 1, got {limit}")
    try:
        if fmt is None:
            return load_dataset(dataset, limit=limit)
        return FORMATS[fmt](dataset, limit=limit)
    except (DatasetFormatError, FileNotFoundError, ValueError) as exc:
        raise EvalError(f"cannot load dataset {dataset!r}: {exc}") from exc


def default_model(models_file: Path) -> str:
    """``default_model`` of the models file (:func:`orchestrator.api.default_model`)."""
    try:
        return api_default_model(models_file)
    except ValueError as exc:
        raise EvalError(str(exc)) from exc


def model_prices(model: str, models_file: Path) -> tuple[float, float] | None:
    """(prompt, completion) USD per token from the models file; None when not listed there.

    A built-in local model costs nothing, whether or not the file prices it.
    """
    if is_local_model(model):
        return (0.0, 0.0)
    try:
        return PricingTable.from_models_json(models_file).get(model)
    except ValueError as exc:
        raise EvalError(str(exc)) from exc


def _arm6_calls(out: Path) -> dict[str, int]:
    """Item id -> calls of arm 6's recorded (error-free) result in this run directory."""
    rows = latest_rows(read_rows(raw_path(out, ORCHESTRATOR)))
    return {i: int(r.get("n_calls") or 0) for i, r in rows.items() if not r.get("error")}


def _output_dir(args: RunOptions, model: str) -> Path:
    """``--resume``, ``--out`` or a new runstamp folder; EvalError when it cannot hold a run."""
    if args.resume:
        out: Path = RESULTS_ROOT / args.resume
        if not (out / "run.json").is_file():
            raise EvalError(f"--resume {args.resume}: {out} holds no run")
    else:
        out = args.out or RESULTS_ROOT / runstamp(args.dataset, model)
    if out.exists() and not out.is_dir():
        raise EvalError(f"--out {out} exists and is not a directory")
    return out


def _recorded_window(out: Path) -> int | None:
    """The context window ``out/run.json`` records in its settings; None when it records none
    (a run made before windows were recorded, or on a backend that did not say) or cannot
    be read (`evals.results.prepare_run_dir` says why)."""
    try:
        settings = json.loads((out / "run.json").read_text(encoding="utf-8"))["config"]["settings"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    window = settings.get("context_tokens") if isinstance(settings, dict) else None
    return window if isinstance(window, int) else None


def run_window(plan: _Plan, backend: Backend) -> int | None:
    """The context window arm 6 fits each item's documents into: ``context_tokens`` when set,
    else the backend's, as ``orchestrator.run`` takes it. A resumed run keeps the window it
    recorded (none for a run recorded before windows were), so that all its items, and a
    replay of its bank, see one window."""
    if plan.resumed:
        return plan.options.context_tokens
    return plan.options.context_tokens or backend.context_tokens


def _pending(items: list[Item], arms: Sequence[int], done: dict[int, ArmRows]) -> Todo:
    """Each item with the arms that have no error-free result for it yet, in item order."""
    todo = []
    for item in items:
        pending = [a for a in arms if _needs_run(done[a].get(item["id"]))]
        if pending:
            todo.append((item, pending))
    return todo


def _needs_run(row: ResultRow | None) -> bool:
    """Whether an (arm, item) still needs a run: no result yet, or one with an error."""
    return row is None or bool(row.get("error"))


def _announce(plan: _Plan) -> None:
    """What the run is about to do, on stderr, before the first call."""
    print(f"results: {plan.out}", file=sys.stderr)
    skipped = len(plan.items) * len(plan.options.arms) - sum(len(arms) for _, arms in plan.todo)
    if skipped:
        print(f"resuming: {skipped} (arm, item) results already present", file=sys.stderr)
    if plan.prices is None:
        print(
            f"warning: {plan.model!r} has no known price; spending is not capped", file=sys.stderr
        )
    local = plan.local
    estimate = estimate_line(
        len(plan.todo),
        list(plan.options.arms),
        plan.options.budget_calls,
        measured_timing(plan.model) if local else None,
    )
    if local and plan.options.jobs > 1:
        print(
            "note: --jobs ignored: the built-in local model answers one call at a time",
            file=sys.stderr,
        )
    print(estimate, file=sys.stderr)


def _plan(options: RunOptions) -> _Plan:
    """Check ``options`` and resolve everything the run needs before its first call;
    EvalError when it cannot run (bad numbers, no items, an unknown price, another run's
    folder)."""
    options = replace(options, arms=check_arms(options.arms))
    check_numbers(options)
    if options.skip < 0:
        raise EvalError(f"--skip must be >= 0, got {options.skip}")
    items = load_selected(options.dataset, options.format, options.limit)[options.skip :]
    if not items:
        raise EvalError(f"dataset {options.dataset!r} has no items after --skip {options.skip}")
    model = options.model or default_model(options.models_file)
    options = replace(options, shape=options.shape or model_shape(model, options.models_file))
    prices = model_prices(model, options.models_file)
    if prices is None and not options.allow_unknown_cost:
        raise EvalError(
            f"no price known for {model!r} in {options.models_file}, so the worst case of a "
            "call cannot be bounded; add its pricing there or pass --allow-unknown-cost"
        )
    out = _output_dir(options, model)
    resumed = (out / "run.json").is_file()
    if resumed and options.context_tokens is None:
        options = replace(options, context_tokens=_recorded_window(out))
    meta = prepare_run_dir(out, fingerprint(options, model))
    done = {arm: latest_rows(read_rows(raw_path(out, arm), sys.stderr)) for arm in options.arms}
    todo = _pending(items, options.arms, done)
    return _Plan(options, model, items, prices, out, resumed, meta, done, todo)


def _open(stack: ExitStack, plan: _Plan) -> Backend:
    """The model's backend, entered on ``stack``; EvalError when it cannot start (an
    unusable backend, BackendUnusableError, propagates)."""
    options = plan.options
    try:
        return stack.enter_context(
            open_backend(plan.model, base_url=options.base_url, models_path=options.models_file)
        )
    except BackendUnusableError:
        raise
    except (LLMError, RuntimeError, OSError, ValueError) as exc:
        raise EvalError(f"cannot start model {plan.model!r}: {exc}") from exc


def _invoke(plan: _Plan, invocation: dict[str, Any]) -> tuple[str | None, int, LedgerTotals]:
    """Run the pending work against the model: (why it stopped early, rows with an error, the
    ledger's totals). ``invocation`` (run.json's entry, written before the first call) gains
    what ``--structured-output auto`` resolved to, and run.json's settings the context window
    (:func:`run_window`), which a replay needs to fit the documents as the run did."""
    options = plan.options
    cap = CostCap(
        options.max_cost if plan.prices is not None else None,
        plan.prices,
        default_max_tokens=options.max_tokens,
    )
    with ExitStack() as stack:
        backend = _open(stack, plan)
        # What "--structured-output auto" resolved to: a replay needs it to rebuild the
        # requests (the response format is part of a banked reply's key).
        structured = {"auto": backend.response_format_default, "on": True, "off": False}
        invocation["structured_output"] = structured[options.structured_output]
        options = replace(options, context_tokens=run_window(plan, backend))
        if options.context_tokens is not None:
            plan.meta["config"]["settings"]["context_tokens"] = options.context_tokens
            print(f"context window: {options.context_tokens} tokens", file=sys.stderr)
        plan.meta["invocations"].append(invocation)
        write_meta(plan.out, plan.meta)
        stopped, failed = run_pending(
            plan.todo,
            out=plan.out,
            model=backend.model,
            client=CappedClient(banking(backend.client, plan.out), cap),
            settings=arm_settings(options, plan.out, backend.response_format_default),
            tally=Tally(plan.done),
            arm6_calls=_arm6_calls(plan.out),
            jobs=1 if plan.local else options.jobs,
        )
        totals = backend.client.ledger.totals()
        if plan.local:
            records = backend.client.ledger.records()
            record_timing(
                plan.model, [float(r.get("latency_s") or 0.0) for r in records if r["ok"]]
            )
    return stopped, failed, totals


def evaluate(options: RunOptions) -> RunOutcome:
    """Run the selected arms on the selected items, resuming what ``options.out`` holds.

    Parameters
    ----------
    options : RunOptions
        The data set, arms, model and settings of the invocation.

    Returns
    -------
    RunOutcome
        Its folder, why it stopped early, its failed rows, every arm's latest rows and the
        summary.md it wrote (progress goes to stderr as the items finish).

    Raises
    ------
    EvalError
        Refused before any call: bad options, an unknown price without
        ``allow_unknown_cost``, settings that differ from the run being resumed.
    BackendUnusableError
        The model cannot serve any call (no key, unreachable, rejected); what was recorded
        before stays for a resumed run.
    """
    plan = _plan(options)
    _announce(plan)
    invocation: dict[str, Any] = {
        "started": now(),
        "arms": list(plan.options.arms),
        "items": len(plan.items),
        "commit": source_commit(),
    }
    stopped, failed, totals = _invoke(plan, invocation)
    if stopped:
        print(f"stopped: {stopped}", file=sys.stderr)
    invocation.update(
        finished=now(),
        stopped=stopped,
        spent_usd=totals["cost_usd"],
        spent_usd_known=totals["cost_usd_known"],
        calls=totals["calls"],
    )
    write_meta(plan.out, plan.meta)
    summary = write_summary(plan.out)["markdown"]
    return RunOutcome(plan.out, stopped, failed, run_arms(plan.out), summary)


def cli(args: argparse.Namespace, prog: str) -> int:
    """``eval run``: evaluate, then print summary.md."""

    def body() -> int:
        outcome = evaluate(flags.run_options(args))
        print(outcome.summary)
        return outcome.status

    try:
        return exit_status(prog, body, (EvalError,))
    except BackendUnusableError as exc:
        # The model cannot serve any call (no key, unreachable, rejected): not an evaluation
        # result, so nothing is scored; what was recorded before stays for a resumed run.
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evals.run``: the same as ``logic-graph eval run``."""
    return run_alias("evals.run", flags.run_flags, cli, argv)


if __name__ == "__main__":
    sys.exit(main())
