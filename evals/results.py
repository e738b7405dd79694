"""The result files of an evaluation run directory: one JSON line per (arm, item).

``raw/arm<N>.jsonl`` holds one line per item and attempt (`result_row`); a resumed run appends,
and the latest line of an item counts (`latest_rows`). Writers flush every line, so a killed
run loses at most the line in flight; readers skip torn or foreign lines.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Required, TextIO, TypedDict, cast

from evals.arms import ARMS, ArmResult, prompt_version
from evals.metering import usage_of
from evals.score import ABSTAINED, CORRECT, is_answerable, outcome, score

REPO = Path(__file__).resolve().parents[1]
# Settings that must match when a run is resumed: changing any of them changes the answers.
FINGERPRINT_KEYS = ("dataset", "format", "model", "base_url", "settings", "prompts")


class CallSummary(TypedDict, total=False):
    """The ledger fields of one call that a result line keeps (`compact_call`)."""

    role: str
    ok: bool
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    cost_source: str | None
    latency_s: float
    error: str


class ResultRow(TypedDict, total=False):
    """One line of ``raw/arm<N>.jsonl``: an arm's answer to an item, scored, with its usage.

    Written whole by `result_row`; read back by `read_rows`, which only requires ``id``, since
    lines written before a field existed lack it (`evals.score.row_outcome` recomputes a
    missing ``outcome``). ``extra`` holds arm-specific facts (arm 6's refusal and stop
    reasons, arm 7's vote, ``calls_matched_to``). ``cost_usd`` is None when any call's cost
    is unknown; ``width`` and ``confidence`` belong to the arms that score their confidence.
    """

    id: Required[str]
    arm: int
    arm_name: str
    kind: str
    question: str
    answer: str | None
    gold: Any
    answerable: bool
    correct: bool
    outcome: str
    em: bool
    f1: float
    extracted: str | None
    refused: bool
    answer_format: str | None
    width: int | None
    confidence: float | None
    error: str | None
    tokens: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    cost_usd_known: float
    latency_s: float
    n_calls: int
    failed_calls: int
    calls: list[CallSummary]
    extra: dict[str, Any]
    prompt_version: str
    at: str


ArmRows = dict[str, ResultRow]
"""Item id -> the latest result row of one arm."""


class EvalError(Exception):
    """The run was refused before any call; the message says why."""


def now() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def raw_path(out: Path, arm: int) -> Path:
    """``out/raw/arm<N>.jsonl``, the result lines of one arm."""
    return out / "raw" / f"arm{arm}.jsonl"


def append_jsonl(path: Path, record: Mapping[str, Any]) -> None:
    """Append one JSON line and flush it, so an interrupted run loses at most the line in flight."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8", newline="\n") as handle:
        handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True, default=str) + "\n")
        handle.flush()


def compact_call(record: Mapping[str, Any]) -> CallSummary:
    """The ledger fields of a call worth keeping per result line."""
    keys = ("role", "ok", "prompt_tokens", "completion_tokens", "cost_usd", "cost_source")
    compact: dict[str, Any] = {key: record.get(key) for key in keys}
    compact["latency_s"] = round(float(record.get("latency_s") or 0.0), 3)
    if record.get("error"):
        compact["error"] = record["error"]
    return cast(CallSummary, compact)


def result_row(
    arm: int,
    item: dict[str, Any],
    result: ArmResult | None,
    calls: list[dict[str, Any]],
    latency_s: float,
    error: str | None,
    shape: str = "graph",
    diversity: str = "sample",
) -> ResultRow:
    """One raw line: the arm's answer scored against the item, with its usage (``shape``
    and ``diversity``: arm 6's interrogation shape and what varies its runs, for the prompt
    version)."""
    answer = result.answer if result else None
    refused = bool(result.refused) if result else False
    answerable = is_answerable(item)
    scored = score(item, answer if answerable else None)
    usage = usage_of(calls)
    extra = dict(result.extra) if result else {}
    result_outcome = outcome(
        answerable=answerable,
        answer=answer,
        refused=refused,
        correct=bool(scored["correct"]),
        error=error is not None,
    )
    return {
        "id": item["id"],
        "arm": arm,
        "arm_name": ARMS[arm][0],
        "kind": item["kind"],
        "question": item["question"],
        "answer": answer,
        "gold": item["answer"],
        "answerable": answerable,
        # Correct: the right answer, or an abstention on an item the evidence does not settle.
        "correct": result_outcome == CORRECT or (result_outcome == ABSTAINED and not answerable),
        "outcome": result_outcome,
        "em": scored["em"],
        "f1": scored["f1"],
        "extracted": scored["extracted"],
        "refused": refused,
        "answer_format": extra.pop("answer_format", None),
        "width": extra.pop("width", None),
        "confidence": extra.pop("confidence", None),
        "error": error,
        "tokens": usage["tokens"],
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "cost_usd": usage["cost_usd"],
        "cost_usd_known": usage["cost_usd_known"],
        "latency_s": round(latency_s, 3),
        "n_calls": usage["calls"],
        "failed_calls": usage["failed_calls"],
        "calls": [compact_call(c) for c in calls],
        "extra": extra,
        "prompt_version": prompt_version(arm, shape, diversity),
        "at": now(),
    }


def read_rows(path: Path, warn: TextIO | None = None) -> list[ResultRow]:
    """Every parseable result line of a raw JSONL file; torn or foreign lines are skipped
    (with a warning on `warn` when given). Linear in the file size."""
    if not path.is_file():
        return []
    rows: list[ResultRow] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                row = None
            if not isinstance(row, dict) or not isinstance(row.get("id"), str):
                if warn is not None:
                    print(f"warning: {path}:{number} is not a result line; ignored", file=warn)
                continue
            rows.append(cast(ResultRow, row))
    return rows


def latest_rows(rows: Iterable[ResultRow]) -> ArmRows:
    """Item id -> its last line (a retried item's newer line replaces the failed one)."""
    return {row["id"]: row for row in rows}


def run_arms(run_dir: Path) -> dict[int, ArmRows]:
    """Arm number -> (item id -> latest row) for every ``raw/arm<N>.jsonl`` in `run_dir`."""
    arms: dict[int, ArmRows] = {}
    for path in sorted((run_dir / "raw").glob("arm*.jsonl")):
        suffix = path.stem[len("arm") :]
        if suffix.isdigit():
            arms[int(suffix)] = latest_rows(read_rows(path))
    return dict(sorted(arms.items()))


def source_commit() -> str | None:
    """The git commit of this checkout (with ``+dirty`` when it has changes), or None."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10
        )
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+dirty" if status.stdout.strip() else "")


def prepare_run_dir(out: Path, fingerprint: dict[str, Any]) -> dict[str, Any]:
    """Load or create ``run.json``; EvalError when resuming a run with other settings."""
    path = out / "run.json"
    if path.is_file():
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise EvalError(f"{path} is not valid JSON: {exc}") from exc
        if not isinstance(meta, dict) or not isinstance(meta.get("config"), dict):
            raise EvalError(f"{path} is not a run file (no 'config' object)")
        meta.setdefault("invocations", [])
        old = meta["config"]
        differing = [
            key for key in FINGERPRINT_KEYS if key != "prompts" and old.get(key) != fingerprint[key]
        ]
        # Arms may be added on resume; an arm already run must keep its prompts.
        differing += [
            f"prompts of arm {arm}"
            for arm, version in fingerprint["prompts"].items()
            if arm in old.get("prompts", {}) and old["prompts"][arm] != version
        ]
        if differing:
            raise EvalError(
                f"{out} holds a run with different {', '.join(differing)}; "
                "use a new --out to start a separate run"
            )
        meta["config"]["prompts"] = {**old.get("prompts", {}), **fingerprint["prompts"]}
        return dict(meta)
    return {"config": fingerprint, "created": now(), "invocations": []}


def write_meta(out: Path, meta: dict[str, Any]) -> None:
    """Write ``out/run.json`` (the run's settings and invocations)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "run.json").write_text(
        json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8"
    )


def runstamp(dataset: str, model: str) -> str:
    """A directory name like ``20260101-120000Z-multihop-local``."""
    name = Path(dataset).stem if dataset not in ("math", "multihop") else dataset
    slug = "".join(c if c.isalnum() or c in "-." else "-" for c in f"{name}-{model}")
    return f"{datetime.now(UTC):%Y%m%d-%H%M%SZ}-{slug}"[:100]
