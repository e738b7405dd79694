"""Grounding screen: does a model answer from the supplied document, or from memory?

Usage::

    python screen.py --models local,meta-llama/llama-3.1-8b-instruct [--base-url URL]
                     [--limit N] [--max-cost 1.00] [--dry-run] [--out DIR] [--set-default]
                     [--items PATH] [--models-file PATH] [--max-tokens 128]
                     [--allow-unknown-cost]

One call per item per model, temperature 0, through the project's own client and backends
(:func:`orchestrator.llm.backend.open_backend`), so ``--models local`` runs the built-in llama.cpp
model by the same path as an OpenRouter model. Grading and the default-model rule live in
:mod:`evals.grounding`, the models screened and their prices in :mod:`evals.grounding_models`,
the files' reading and writing in :mod:`evals.grounding_files`; this module does the command
line, the cost guard, the calls and the summary. Details: docs/screen.md.

Files under ``--out`` (default ``runs/screen``):

* ``results.jsonl`` - append-only, one line per call (answer or error, grade, tokens, cost,
  latency). A re-run skips every (model, item) already answered with the same prompt.
* ``summary.md`` - the per-model table, rewritten from results.jsonl after each run.

Exit status: 0 done; 1 some calls failed or ``--set-default`` found no eligible model;
2 refused before any call (bad arguments or items, unknown model or price, cost cap).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals.cli import exit_status
from evals.grounding import (
    PROMPT_VERSION,
    Item,
    ItemsFileError,
    ModelSummary,
    choose_default,
    grade_answer,
    item_sha,
    load_items,
    screen_messages,
    summarise,
)
from evals.grounding_files import answered_keys, append_result, read_results, write_json_atomic
from evals.grounding_models import (
    Budget,
    ModelSpec,
    ScreenError,
    load_models_config,
    resolve_models,
    worst_case_call_cost,
)
from evals.grounding_tables import summary_markdown, summary_table, usd
from orchestrator.llm import (
    CHARS_PER_TOKEN,
    MESSAGE_OVERHEAD_TOKENS,
    ChatMessage,
    CostLedger,
    LLMError,
    ModelsFile,
    SupportsChat,
    open_backend,
    prompt_tokens,
)

REPO = Path(__file__).resolve().parent
DEFAULT_ITEMS = REPO / "items.jsonl"
DEFAULT_MODELS_FILE = REPO / "models.json"
DEFAULT_OUT = Path("runs") / "screen"
RESULTS_NAME = "results.jsonl"
SUMMARY_NAME = "summary.md"

MAX_TOKENS_LIMIT = 4096
# The client already retries each call; this many failed calls in a row means the model (or
# its server) is not answering at all, and further calls would only burn time and budget.
MAX_CONSECUTIVE_FAILURES = 3


# ---- calling --------------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _call_cost_of_failure(ledger: CostLedger, error: LLMError) -> float | None:
    if error.call_id is None:
        return None
    records = ledger.records()
    cost = records[error.call_id].get("cost_usd") if error.call_id < len(records) else None
    return cost if isinstance(cost, float) else None


def _row_start(spec: ModelSpec, item: Item) -> dict[str, Any]:
    """The fields of a results row known before the call: model, item and prompt version."""
    return {
        "model": spec.id,
        "item_id": item.id,
        "category": item.category,
        "item_sha": item_sha(item),
        "prompt_version": PROMPT_VERSION,
        "at": _now(),
    }


def screen_model(
    spec: ModelSpec,
    items: Sequence[Item],
    *,
    results_path: Path,
    models_path: Path,
    max_tokens: int,
    budget: Budget,
) -> int:
    """Call `spec` once per item in `items`, appending a row per call. Returns how many items
    were left unanswered (failed calls, or not called because of the budget or a dead model)."""
    answered = consecutive = 0
    with ExitStack() as stack:
        try:
            backend = stack.enter_context(
                open_backend(spec.id, base_url=spec.base_url, models_path=models_path)
            )
        except (LLMError, RuntimeError, OSError, ValueError) as exc:
            print(f"[{spec.id}] cannot start the model: {exc}", file=sys.stderr)
            return len(items)
        for item in items:
            worst = worst_case_call_cost(spec, item, max_tokens)
            if not budget.allows(worst):
                print(f"[{spec.id}] stopping: the --max-cost budget is used up", file=sys.stderr)
                break
            if _screen_item(
                backend.client,
                backend.model,
                spec,
                item,
                max_tokens=max_tokens,
                worst=worst,
                budget=budget,
                results_path=results_path,
            ):
                consecutive = 0
                answered += 1
                continue
            consecutive += 1
            if consecutive >= MAX_CONSECUTIVE_FAILURES:
                print(
                    f"[{spec.id}] giving up after {consecutive} failed calls in a row",
                    file=sys.stderr,
                )
                break
    return len(items) - answered


def _screen_item(
    client: SupportsChat,
    model: str,
    spec: ModelSpec,
    item: Item,
    *,
    max_tokens: int,
    worst: float | None,
    budget: Budget,
    results_path: Path,
) -> bool:
    """One call of `model` (served for `spec`) on `item`: charge `budget` (`worst`, the call's
    worst case, when its cost is unreported), grade the answer, append the row and say how it
    went. True when the call answered."""
    row = _row_start(spec, item)
    try:
        messages = [
            ChatMessage(role=m["role"], content=m["content"]) for m in screen_messages(item)
        ]
        result = client.chat(
            model,
            messages,
            temperature=0.0,
            max_tokens=max_tokens,
            role="screen",
            tags={"item_id": item.id},
        )
    except LLMError as exc:
        cost = _call_cost_of_failure(client.ledger, exc)
        budget.spend(cost, worst)
        row.update(
            answer=None,
            grade=None,
            reason=None,
            error=f"{type(exc).__name__}: {exc}",
            cost_usd=cost,
            attempts=exc.attempts,
        )
        append_result(results_path, row)
        print(f"[{spec.id}] {item.id}: call failed: {exc}", file=sys.stderr)
        return False
    budget.spend(result.cost_usd, worst)
    grade = grade_answer(item, result.text)
    row.update(
        answer=result.text,
        grade=grade.grade,
        reason=grade.reason,
        error=None,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        cost_usd=result.cost_usd,
        cost_source=result.cost_source,
        latency_s=round(result.latency_s, 3),
        attempts=result.attempts,
        finish_reason=result.finish_reason,
    )
    append_result(results_path, row)
    print(f"[{spec.id}] {item.id}: {grade.grade} ({result.latency_s:.1f}s)")
    return True


# ---- default model --------------------------------------------------------------------------


def set_default(
    summaries: Sequence[ModelSummary],
    config: ModelsFile,
    specs: Sequence[ModelSpec],
    models_path: Path,
) -> bool:
    """Apply the rule of models.json to `summaries`; record the winner there. False (and the
    file untouched) when no model is eligible or the winner is not listed in models.json."""
    max_leak = config.max_leak_rate or 0.0  # load_models_config refuses a file without one
    winner, excluded = choose_default(summaries, max_leak)
    for model, why in excluded.items():
        print(f"not eligible as default: {model}: {why}")
    if winner is None:
        print(f"--set-default: no eligible model; {models_path} left unchanged", file=sys.stderr)
        return False
    if not next(s for s in specs if s.id == winner).listed:
        print(
            f"--set-default: the winner {winner!r} is not listed in {models_path}; add an entry "
            "for it (with base_url and pricing) and re-run, nothing was changed",
            file=sys.stderr,
        )
        return False
    best = next(s for s in summaries if s.model == winner)
    document = dict(config.raw)
    document["default_model"] = winner
    document["default_evidence"] = {
        "chosen_at": _now(),
        "rule": document.get("default_rule"),
        "max_leak_rate": max_leak,
        "items": best.items,
        "prompt_version": PROMPT_VERSION,
        "candidates": [
            {
                "model": s.model,
                "grounded_pct": s.pct("grounded"),
                "leak_rate": s.leak_rate,
                "eligible": s.model not in excluded,
            }
            for s in summaries
        ],
    }
    write_json_atomic(models_path, document)
    print(f"default model set to {winner!r} in {models_path}")
    return True


# ---- command line ---------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _usd_arg(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite amount >= 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="screen.py",
        description="Grounding screen: grade whether models answer from the document or from "
        "memory. See docs/screen.md.",
    )
    parser.add_argument("--models", required=True, help="comma-separated model ids")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint for every model listed")
    parser.add_argument("--limit", type=_positive_int, help="use only the first N items")
    parser.add_argument(
        "--max-cost",
        type=_usd_arg,
        default=1.00,
        help="refuse to start when the worst-case cost (USD) exceeds this, and stop a run that "
        "reaches it (default 1.00)",
    )
    parser.add_argument(
        "--max-tokens",
        type=_positive_int,
        default=128,
        help=f"completion cap per call (default 128, at most {MAX_TOKENS_LIMIT})",
    )
    parser.add_argument("--dry-run", action="store_true", help="estimate only; no calls, no files")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    parser.add_argument(
        "--set-default", action="store_true", help="record the rule's winner in models.json"
    )
    parser.add_argument("--items", type=Path, default=DEFAULT_ITEMS, help="items JSONL file")
    parser.add_argument(
        "--models-file", type=Path, default=DEFAULT_MODELS_FILE, help="models.json to use"
    )
    parser.add_argument(
        "--allow-unknown-cost",
        action="store_true",
        help="run models without a known price (their cost is not capped)",
    )
    return parser


def print_estimate(
    specs: Sequence[ModelSpec], pending: dict[str, list[Item]], max_tokens: int
) -> tuple[float, list[str]]:
    """Print the worst-case estimate; return (total for priced models, ids with no price)."""
    print(
        f"Worst-case cost before any call (prompt tokens ~ characters/{CHARS_PER_TOKEN} + "
        f"{MESSAGE_OVERHEAD_TOKENS} per message; every answer {max_tokens} tokens):"
    )
    total = 0.0
    unpriced: list[str] = []
    for spec in specs:
        todo = pending[spec.id]
        prompt = sum(prompt_tokens(screen_messages(it)) for it in todo)
        costs = [worst_case_call_cost(spec, it, max_tokens) for it in todo]
        if todo and any(c is None for c in costs):
            unpriced.append(spec.id)
            shown = "unknown (no price in the models file)"
        else:
            amount = sum(c for c in costs if c is not None)
            total += amount
            shown = usd(amount) + (" (local)" if spec.is_local else "")
        print(f"  {spec.id:<40} {len(todo):>4} calls {prompt:>8} prompt tokens  {shown}")
    print(f"  {'total':<40} {usd(total)}" + (" + unknown" if unpriced else ""))
    return total, unpriced


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return exit_status("screen", lambda: _run(args), (ScreenError, ItemsFileError))


def _run(args: argparse.Namespace) -> int:
    if args.max_tokens > MAX_TOKENS_LIMIT:
        raise ScreenError(f"--max-tokens {args.max_tokens} exceeds the limit {MAX_TOKENS_LIMIT}")
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    if not names:
        raise ScreenError("--models names no model")
    config = load_models_config(args.models_file)
    items = load_items(args.items)[: args.limit]
    specs = resolve_models(names, config, args.base_url, args.models_file)

    if args.out.exists() and not args.out.is_dir():
        raise ScreenError(f"--out {args.out} exists and is not a directory")
    results_path = args.out / RESULTS_NAME
    pending = _pending(specs, items, results_path)
    _refuse_over_cost(specs, pending, args)
    if args.dry_run:
        print("dry run: no calls made, no files written")
        return 0

    budget = Budget(remaining=args.max_cost)
    unanswered = 0
    for spec in specs:
        if pending[spec.id]:
            unanswered += screen_model(
                spec,
                pending[spec.id],
                results_path=results_path,
                models_path=args.models_file,
                max_tokens=args.max_tokens,
                budget=budget,
            )

    summaries = _write_summary(specs, items, results_path, args)
    if unanswered:
        print(f"{unanswered} item calls are still unanswered; re-run to retry them")
    ok = unanswered == 0
    if args.set_default:
        ok = set_default(summaries, config, specs, args.models_file) and ok
    return 0 if ok else 1


def _pending(
    specs: Sequence[ModelSpec], items: Sequence[Item], results_path: Path
) -> dict[str, list[Item]]:
    """The items each model still has to answer: those without a successful row in
    `results_path` for the same item text (a re-run resumes; it says how many it skips)."""
    rows, warnings = read_results(results_path)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    done = answered_keys(rows)
    pending = {s.id: [it for it in items if (s.id, it.id, item_sha(it)) not in done] for s in specs}
    skipped = sum(len(items) - len(todo) for todo in pending.values())
    if skipped:
        print(f"resuming: {skipped} (model, item) pairs already answered in {results_path}")
    return pending


def _refuse_over_cost(
    specs: Sequence[ModelSpec], pending: dict[str, list[Item]], args: argparse.Namespace
) -> None:
    """Print the worst-case estimate; ScreenError when a model has no price (unless
    --allow-unknown-cost) or the priced total exceeds --max-cost."""
    total, unpriced = print_estimate(specs, pending, args.max_tokens)
    if unpriced and not args.allow_unknown_cost:
        raise ScreenError(
            f"no price known for {', '.join(unpriced)}, so the worst case cannot be bounded; "
            "add pricing to the models file or pass --allow-unknown-cost"
        )
    if total > args.max_cost:
        raise ScreenError(
            f"refusing to start: worst-case cost {usd(total)} exceeds --max-cost "
            f"{usd(args.max_cost)} (lower --limit or --max-tokens, or raise --max-cost)"
        )


def _write_summary(
    specs: Sequence[ModelSpec], items: Sequence[Item], results_path: Path, args: argparse.Namespace
) -> list[ModelSummary]:
    """Each model's summary over every row of `results_path`: printed as a table and written
    to summary.md under --out."""
    rows, _ = read_results(results_path)
    summaries = [summarise(s.id, items, rows, price_per_token=s.price_per_token) for s in specs]
    print(summary_table(summaries))
    args.out.mkdir(parents=True, exist_ok=True)
    summary_path = args.out / SUMMARY_NAME
    summary_path.write_text(
        summary_markdown(
            summaries, items_path=args.items, n_items=len(items), results_path=results_path
        ),
        encoding="utf-8",
    )
    print(f"wrote {summary_path}")
    return summaries


if __name__ == "__main__":
    sys.exit(main())
