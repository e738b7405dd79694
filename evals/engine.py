"""The evaluation loop: each pending (item, arm) run, scored and appended as it finishes.

`run_pending` is what `evals.run.evaluate` and `evals.replay.replay` share: items run one at a
time or ``jobs`` at a time, each item's arms in order (arm 7 takes as many samples as arm 6
made calls on the item), every result line flushed as it arrives, and the run stopped when the
cost cap refuses a call or the model fails too many items in a row.
"""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evals.arms import ARMS, ArmResult, ArmSettings
from evals.metering import CappedClient, CostCapReached
from evals.progress import Tally
from evals.results import ResultRow, append_jsonl, raw_path, result_row
from orchestrator.api import RunConfig, TaskError
from orchestrator.llm import BackendUnusableError, LLMError

ORCHESTRATOR, SELF_CONSISTENCY = 6, 7
# A server that fails this many (arm, item) pairs in a row is down; stop instead of burning on.
MAX_CONSECUTIVE_ERRORS = 5
Item = dict[str, Any]
"""One data set item (`evals.datasets`): id, kind, question, documents, answer, meta."""
Todo = list[tuple[Item, list[int]]]
"""Each item with the arms still to run on it, in item order."""


def run_one(
    arm: int,
    item: Item,
    model: str,
    client: CappedClient,
    settings: ArmSettings,
) -> tuple[ResultRow, ArmResult | None]:
    """Run one arm on one item; a model failure, or arm 6 refusing an item whose documents do
    not fit the context window (before any call), becomes a row with ``error`` set.

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
        raise  # no item can succeed: the whole run stops (exit 1)
    except (LLMError, TaskError) as exc:
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
    config = settings.run_config or RunConfig()
    sent = (config.interrogation_shape, config.diversity)
    return result_row(arm, item, result, calls, latency, error, *sent), result


@dataclass
class _Evaluation:
    """The shared state of one `evaluate` call; every method holding ``lock`` where it says."""

    todo: Todo
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

    def record(self, arm: int, item: Item, row: ResultRow, result: ArmResult | None) -> None:
        """Append the row (and the arm's trace); count failures in a row. Under ``lock``."""
        append_jsonl(raw_path(self.out, arm), row)
        if result is not None:
            trace = {"id": item["id"], "arm": arm, "trace": result.trace}
            append_jsonl(self.out / "traces" / f"arm{arm}.jsonl", trace)
        self.tally.add(arm, row)
        if not row.get("error"):
            self.consecutive = 0
            return
        self.failed += 1
        self.consecutive += 1
        print(f"  arm {arm} {item['id']}: {row.get('error')}", file=sys.stderr)
        if self.consecutive >= MAX_CONSECUTIVE_ERRORS:
            # Say what the last failure was: a server that is down and items that cannot be
            # run (documents that do not fit the window) read very differently.
            self.stopped = f"{self.consecutive} items failed in a row; the last: {row['error']}"

    def run_arm(self, arm: int, item: Item) -> bool:
        """One arm on one item, recorded; False when the run must stop starting work."""
        with self.lock:
            if self.stopped:
                return False
            arm_settings, matched = self.settings, None
            if arm == SELF_CONSISTENCY:
                arm_settings, matched = _matched_samples(
                    self.settings, self.arm6_calls.get(item["id"])
                )
        row: ResultRow | None
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
                row.setdefault("extra", {})["calls_matched_to"] = matched
            if arm == ORCHESTRATOR and not row.get("error"):
                self.arm6_calls[item["id"]] = int(row.get("n_calls") or 0)
            self.record(arm, item, row, result)
        return True

    def run_item(self, item: Item, pending: list[int]) -> None:
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


def run_pending(
    todo: Todo,
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
