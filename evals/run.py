"""Command line for the seven-arm evaluation.

Usage::

    python -m evals.run --dataset math|multihop|PATH [--format gsm8k|hotpotqa|musique|common]
                        [--arms 1,2,3,4,5,6,7] [--limit N] [--skip N] [--model ID] [--base-url URL]
                        [--max-cost USD] [--allow-unknown-cost] [--out DIR | --resume RUNSTAMP]
                        [--max-tokens 512] [--n 3 --k 2 --budget-calls 12 --temp 0.8]
                        [--jobs K]

Items are processed one at a time (``--jobs K``: K at a time against a server backend); each
item goes through every selected arm in order (arm 7 takes as many samples as arm 6 made calls
on that item), so a run cut short (cost cap, Ctrl-C) leaves the arms with comparable item sets.
Before the first call the run prints an estimate (items x most calls per item x the seconds per
call measured on earlier runs of a local model); each finished item prints a progress line with
the elapsed time and an ETA at the pace so far.
All calls go through one client from `orchestrator.llm.backend.open_backend` (``--model local``
starts the built-in llama.cpp model, cost 0), wrapped in the run's cost cap.

Output directory (default ``evals/results/<runstamp>/``):

* ``run.json`` - the run's settings (checked on resume) and one entry per invocation;
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
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evals.arms import ARMS, ArmResult, ArmSettings
from evals.bank import banking
from evals.cli import exit_status
from evals.datasets import (
    DatasetFormatError,
    load_dataset,
    load_gsm8k,
    load_hotpotqa,
    load_items,
    load_musique,
)
from evals.invocation import add_more_calls_options, arm_settings, check_numbers, fingerprint
from evals.metering import CappedClient, CostCap, CostCapReached
from evals.progress import Tally, estimate_line, measured_timing, record_timing
from evals.results import (
    REPO,
    EvalError,
    append_jsonl,
    latest_rows,
    now,
    prepare_run_dir,
    raw_path,
    read_rows,
    result_row,
    runstamp,
    source_commit,
    write_meta,
)
from evals.summary import write_summary
from orchestrator.api import RunConfig, model_shape
from orchestrator.api import default_model as api_default_model
from orchestrator.llm import (
    BackendUnusableError,
    LLMError,
    PricingTable,
    is_local_model,
    open_backend,
)

RESULTS_ROOT = Path(__file__).resolve().parent / "results"
DEFAULT_MODELS_FILE = REPO / "models.json"
ORCHESTRATOR, SELF_CONSISTENCY = 6, 7
# A server that fails this many (arm, item) pairs in a row is down; stop instead of burning on.
MAX_CONSECUTIVE_ERRORS = 5
FORMATS: dict[str, Callable[..., list[dict[str, Any]]]] = {
    "common": load_items,
    "gsm8k": load_gsm8k,
    "hotpotqa": load_hotpotqa,
    "musique": load_musique,
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evals.run", description="Seven-arm evaluation of logic-graph."
    )
    parser.add_argument("--dataset", required=True, help="math, multihop, or a path to a file")
    parser.add_argument(
        "--format", choices=sorted(FORMATS), help="format of a --dataset file (default: detect)"
    )
    parser.add_argument(
        "--arms",
        default="1,2,3,4,5,6,7",
        help="comma-separated arm numbers (arm 7 matches arm 6's calls per item)",
    )
    parser.add_argument("--limit", type=int, help="use only the first N items")
    parser.add_argument(
        "--skip",
        type=int,
        default=0,
        help="leave out the first N of those items (e.g. ones whose arms another run holds)",
    )
    parser.add_argument("--model", help="model id (default: default_model of the models file)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint for the model")
    parser.add_argument("--models-file", type=Path, default=DEFAULT_MODELS_FILE)
    parser.add_argument(
        "--max-cost",
        type=float,
        default=1.0,
        help="USD cap for this invocation: no call is sent whose worst case could pass it",
    )
    parser.add_argument(
        "--allow-unknown-cost",
        action="store_true",
        help="run a model with no known price (its spending cannot be capped)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--out", type=Path, help="results directory (re-use it to resume)")
    where.add_argument("--resume", metavar="RUNSTAMP", help="resume evals/results/RUNSTAMP")
    parser.add_argument(
        "--max-tokens", type=int, default=512, help="completion cap per call (all arms)"
    )
    parser.add_argument("--temperature", type=float, default=0.0, help="arms 1-5 temperature")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n", type=int, default=3, help="arm 6: interrogation runs")
    parser.add_argument("--k", type=int, default=2, help="arm 6: target support width")
    parser.add_argument("--budget-calls", type=int, default=12, help="arm 6: calls per item")
    parser.add_argument(
        "--temp", type=float, default=0.8, help="arm 6 interrogation and arm 7 sample temperature"
    )
    parser.add_argument(
        "--sample-temp",
        type=float,
        help="arm 7 sample temperature when it differs from --temp (arm 6 greedy at "
        "--temp 0 against samples at 0.8)",
    )
    parser.add_argument(
        "--structured-output",
        choices=("auto", "on", "off"),
        default="auto",
        help="arm 6: ask for JSON-schema output (auto: the backend's default)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="items evaluated at once against a server backend (a built-in local model "
        "always runs one at a time)",
    )
    parser.add_argument(
        "--shape",
        choices=("graph", "chain"),
        help="arm 6 interrogation shape (default: the model's interrogation_shape in the "
        "models file, else graph)",
    )
    parser.add_argument(
        "--greedy-first",
        action="store_true",
        help="arm 6: the first interrogation at temperature 0, the others at --temp",
    )
    parser.add_argument(
        "--think-first",
        action="store_true",
        help="arm 6: each interrogation reasons in plain text first, then writes the graph",
    )
    add_more_calls_options(parser, overrides=False)
    return parser


def parse_arms(text: str) -> list[int]:
    """``"1,2,6"`` -> ``[1, 2, 6]`` (sorted, unique); EvalError naming a bad entry."""
    arms: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or int(part) not in ARMS:
            raise EvalError(f"--arms: {part!r} is not an arm number (choose from 1-{max(ARMS)})")
        arms.add(int(part))
    if not arms:
        raise EvalError("--arms names no arm")
    return sorted(arms)


def load_selected(dataset: str, fmt: str | None, limit: int | None) -> list[dict[str, Any]]:
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


def run_one(
    arm: int,
    item: dict[str, Any],
    model: str,
    client: CappedClient,
    settings: ArmSettings,
) -> tuple[dict[str, Any], ArmResult | None]:
    """Run one arm on one item; a model failure becomes a row with ``error`` set.

    `CostCapReached` propagates (the item is then left unrecorded, to be redone on resume).
    """
    ledger = client.ledger
    start_id = len(ledger.records())
    started = time.perf_counter()
    result: ArmResult | None = None
    error = None
    try:
        result = ARMS[arm][1](item, model, client, settings=settings)
    except BackendUnusableError:
        raise  # no item can succeed: the whole run stops (exit 1), see `main`
    except LLMError as exc:
        error = f"{type(exc).__name__}: {exc}"
    latency = time.perf_counter() - started
    if result is not None:
        calls = result.calls
    else:  # the arm raised: find its calls by the tags its recorder put on them
        calls = [
            r
            for r in ledger.records()[start_id:]
            if r.get("eval_arm") == arm and r.get("eval_item") == item["id"]
        ]
    shape = (settings.run_config or RunConfig()).interrogation_shape
    return result_row(arm, item, result, calls, latency, error, shape), result


# --- the run -------------------------------------------------------------------------------


@dataclass
class _Evaluation:
    """The shared state of one `evaluate` call; every method holding ``lock`` where it says."""

    todo: list[tuple[dict[str, Any], list[int]]]
    out: Path
    model: str
    client: CappedClient
    settings: ArmSettings
    tally: Tally
    arm6_calls: dict[str, int]
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopped: str | None = None
    failed: int = 0
    consecutive: int = 0
    finished: int = 0
    started: float = field(default_factory=time.monotonic)

    def record(
        self, arm: int, item: dict[str, Any], row: dict[str, Any], result: ArmResult | None
    ) -> None:
        """Append the row (and the arm's trace); count failures in a row. Under ``lock``."""
        append_jsonl(raw_path(self.out, arm), row)
        if result is not None:
            trace = {"id": item["id"], "arm": arm, "trace": result.trace}
            append_jsonl(self.out / "traces" / f"arm{arm}.jsonl", trace)
        self.tally.add(arm, row)
        if not row["error"]:
            self.consecutive = 0
            return
        self.failed += 1
        self.consecutive += 1
        print(f"  arm {arm} {item['id']}: {row['error']}", file=sys.stderr)
        if self.consecutive >= MAX_CONSECUTIVE_ERRORS:
            self.stopped = f"{self.consecutive} items failed in a row; is the model server up?"

    def run_arm(self, arm: int, item: dict[str, Any]) -> bool:
        """One arm on one item, recorded; False when the run must stop starting work."""
        with self.lock:
            if self.stopped:
                return False
            arm_settings, matched = self.settings, None
            if arm == SELF_CONSISTENCY:
                arm_settings, matched = _matched_samples(
                    self.settings, self.arm6_calls.get(item["id"])
                )
        row: dict[str, Any] | None
        result: ArmResult | None
        try:
            row, result = run_one(arm, item, self.model, self.client, arm_settings)
        except CostCapReached:
            row = result = None
        except BaseException as exc:  # e.g. an unusable backend: no other item may start
            with self.lock:
                self.stopped = self.stopped or f"{type(exc).__name__}: {exc}"
            raise
        with self.lock:
            if row is None or self.client.cap.stopped:
                # The cap refused a call of this item (perhaps inside the orchestrator, which
                # may have carried on without it): the result is incomplete, so it is not
                # recorded, and a resumed run with a larger cap does it again.
                self.stopped = self.stopped or self.client.cap.stopped or "cost cap reached"
                return False
            if matched is not None:
                row["extra"]["calls_matched_to"] = matched
            if arm == ORCHESTRATOR and not row["error"]:
                self.arm6_calls[item["id"]] = int(row["n_calls"])
            self.record(arm, item, row, result)
        return True

    def run_item(self, item: dict[str, Any], pending: list[int]) -> None:
        """The item's pending arms in order, then one progress line."""
        for arm in pending:
            if not self.run_arm(arm, item):
                return
        with self.lock:
            self.finished += 1
            line = self.tally.line(
                self.finished,
                len(self.todo),
                item["id"],
                self.client.cap.spent_usd,
                time.monotonic() - self.started,
            )
            print(line, file=sys.stderr)


def evaluate(
    todo: list[tuple[dict[str, Any], list[int]]],
    *,
    out: Path,
    model: str,
    client: CappedClient,
    settings: ArmSettings,
    tally: Tally,
    arm6_calls: dict[str, int],
    jobs: int = 1,
) -> tuple[str | None, int]:
    """Run each pending (item, arm), appending raw and trace lines as results arrive.

    Items run `jobs` at a time (each item's arms in order, since arm 7 needs arm 6's count);
    with one job, in list order. `arm6_calls` maps item id -> calls arm 6 spent on it (filled
    in as arm 6 runs); arm 7 takes that many samples, so the two arms are compared at the same
    number of calls. Returns (why the run stopped early or None, rows recorded with an error).
    """
    run = _Evaluation(todo, out, model, client, settings, tally, arm6_calls)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(run.run_item, item, pending) for item, pending in todo]
    for future in futures:
        future.result()  # the first exception a worker raised surfaces here
    return run.stopped, run.failed


def _matched_samples(
    settings: ArmSettings, arm6_calls: int | None
) -> tuple[ArmSettings, dict[str, Any]]:
    """Arm 7's settings for one item: as many samples as arm 6 made calls on it; without an
    arm 6 result for the item, arm 6's call budget (its most), and the record says which."""
    if arm6_calls is not None:
        samples, source = max(1, arm6_calls), "arm 6 calls on this item"
    else:
        samples = (settings.run_config or RunConfig()).budget_calls
        source = "arm 6 call budget (no arm 6 result for this item)"
    return replace(settings, samples=samples), {"samples": samples, "source": source}


def _arm6_calls(out: Path) -> dict[str, int]:
    """Item id -> calls of arm 6's recorded (error-free) result in this run directory."""
    rows = latest_rows(read_rows(raw_path(out, ORCHESTRATOR)))
    return {i: int(r.get("n_calls") or 0) for i, r in rows.items() if not r.get("error")}


def _output_dir(args: argparse.Namespace, model: str) -> Path:
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


def _pending(
    items: list[dict[str, Any]], arms: list[int], done: dict[int, dict[str, dict[str, Any]]]
) -> list[tuple[dict[str, Any], list[int]]]:
    """Each item with the arms that have no error-free result for it yet, in item order."""
    todo = []
    for item in items:
        pending = [a for a in arms if done[a].get(item["id"], {"error": "new"}).get("error")]
        if pending:
            todo.append((item, pending))
    return todo


def _announce(
    args: argparse.Namespace,
    out: Path,
    model: str,
    skipped: int,
    priced: bool,
    local: bool,
    estimate: str,
) -> None:
    """What the run is about to do, on stderr, before the first call."""
    print(f"results: {out}", file=sys.stderr)
    if skipped:
        print(f"resuming: {skipped} (arm, item) results already present", file=sys.stderr)
    if not priced:
        print(f"warning: {model!r} has no known price; spending is not capped", file=sys.stderr)
    if local and args.jobs > 1:
        print(
            "note: --jobs ignored: the built-in local model answers one call at a time",
            file=sys.stderr,
        )
    print(estimate, file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    arms = parse_arms(args.arms)
    check_numbers(args)
    if args.skip < 0:
        raise EvalError(f"--skip must be >= 0, got {args.skip}")
    items = load_selected(args.dataset, args.format, args.limit)[args.skip :]
    if not items:
        raise EvalError(f"dataset {args.dataset!r} has no items after --skip {args.skip}")
    model = args.model or default_model(args.models_file)
    args.shape = args.shape or model_shape(model, args.models_file)
    prices = model_prices(model, args.models_file)
    if prices is None and not args.allow_unknown_cost:
        raise EvalError(
            f"no price known for {model!r} in {args.models_file}, so the worst case of a call "
            "cannot be bounded; add its pricing there or pass --allow-unknown-cost"
        )
    out = _output_dir(args, model)
    meta = prepare_run_dir(out, fingerprint(args, model, arms))
    done = {arm: latest_rows(read_rows(raw_path(out, arm), sys.stderr)) for arm in arms}
    todo = _pending(items, arms, done)
    local = is_local_model(model) and args.base_url is None
    estimate = estimate_line(
        len(todo), arms, args.budget_calls, measured_timing(model) if local else None
    )
    skipped = len(items) * len(arms) - sum(len(pending) for _, pending in todo)
    _announce(args, out, model, skipped, prices is not None, local, estimate)
    cap = CostCap(
        args.max_cost if prices is not None else None, prices, default_max_tokens=args.max_tokens
    )
    invocation: dict[str, Any] = {
        "started": now(),
        "arms": arms,
        "items": len(items),
        "commit": source_commit(),
    }
    with ExitStack() as stack:
        try:
            backend = stack.enter_context(
                open_backend(model, base_url=args.base_url, models_path=args.models_file)
            )
        except BackendUnusableError:
            raise
        except (LLMError, RuntimeError, OSError, ValueError) as exc:
            raise EvalError(f"cannot start model {model!r}: {exc}") from exc
        # What "--structured-output auto" resolved to: a replay needs it to rebuild the
        # requests (the response format is part of a banked reply's key).
        structured = {"auto": backend.response_format_default, "on": True, "off": False}
        invocation["structured_output"] = structured[args.structured_output]
        meta["invocations"].append(invocation)
        write_meta(out, meta)
        stopped, failed = evaluate(
            todo,
            out=out,
            model=backend.model,
            client=CappedClient(banking(backend.client, out), cap),
            settings=arm_settings(args, out, backend.response_format_default),
            tally=Tally(done),
            arm6_calls=_arm6_calls(out),
            jobs=1 if local else args.jobs,
        )
        totals = backend.client.ledger.totals()
        if local:
            records = backend.client.ledger.records()
            record_timing(model, [float(r.get("latency_s") or 0.0) for r in records if r["ok"]])
    if stopped:
        print(f"stopped: {stopped}", file=sys.stderr)
    invocation.update(
        finished=now(),
        stopped=stopped,
        spent_usd=totals["cost_usd"],
        spent_usd_known=totals["cost_usd_known"],
        calls=totals["calls"],
    )
    write_meta(out, meta)
    print(write_summary(out)["markdown"])
    return 1 if stopped or failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return exit_status("evals.run", lambda: _run(args), (EvalError,))
    except BackendUnusableError as exc:
        # The model cannot serve any call (no key, unreachable, rejected): not an evaluation
        # result, so nothing is scored; what was recorded before stays for a resumed run.
        print(f"evals.run: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
