"""A reply bank: every model reply of an evaluation run, keyed by what determined it.

Most of what decides a verdict (parsing, anchoring, merging, checks, the decision rule) runs
after the model has replied. Recording the replies once lets that logic be re-run on them as
often as needed at no model cost (`evals.replay`).

A call is keyed by the request that produced it: model, messages (which carry the prompt and
its version), temperature, seed (the orchestrator derives one per role and sample index, arm 7
uses ``seed + i``), ``max_tokens``, ``response_format`` and ``extra_body``. The same key can hold
several replies (a request repeated within one run); a replay serves them in recorded order.

Files: ``bank.jsonl`` in a run directory (``bank.jsonl.gz`` once compressed for committing),
one line per successful call::

    {"key": str, "model": str, "role": str, "temperature": float, "seed": int | null,
     "max_tokens": int | null, "tags": {...}, "text": str, "prompt_tokens": int | null,
     "completion_tokens": int | null, "finish_reason": str | null, "latency_s": float}

Failed calls are not banked: a replay that meets their key treats them as unavailable (or makes
them live), exactly as a new request.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from orchestrator.llm import ChatMiddleware, ChatRequest, ChatResult, ChatSeam, CostLedger, LLMError

BANK_FILE = "bank.jsonl"
BANK_FILE_GZ = "bank.jsonl.gz"
REPLAYED = "replay"
"""The ``cost_source`` of a reply answered from a bank (it cost nothing this time)."""


class BankMissError(LLMError):
    """The bank holds no reply for this request and the replay may not make live calls."""


def request_key(request: ChatRequest) -> str:
    """SHA-256 (hex) of everything in a request that can change its reply.

    ``role``, ``tags`` and ``timeout_s`` are bookkeeping and are left out, so the same request
    made by a different arm or under a different tag still finds its reply. Temperature is
    rounded to 6 places so that 0.8 and 0.8000000001 are one setting.
    """
    canonical = json.dumps(
        {
            "model": request.model,
            "messages": request.messages,
            "temperature": round(float(request.temperature), 6),
            "seed": request.seed,
            "max_tokens": request.max_tokens,
            "response_format": request.response_format,
            "extra_body": request.extra_body,
        },
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def bank_files(directory: Path) -> list[Path]:
    """The bank file(s) of a run directory: plain and compressed, whichever exist."""
    return [p for p in (directory / BANK_FILE_GZ, directory / BANK_FILE) if p.is_file()]


def bank_records(directory: Path) -> Iterator[dict[str, Any]]:
    """Every banked reply of a run directory, compressed file first, each in recorded order."""
    for path in bank_files(directory):
        yield from _read_lines(path)


def _read_lines(path: Path) -> Iterable[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short by a killed run: the rest of the bank is fine
            if isinstance(record, dict) and isinstance(record.get("key"), str):
                yield record


class RecordingClient(ChatMiddleware):
    """A chat client that forwards to ``inner`` and appends every successful reply to a bank.

    Thread-safe (the orchestrator fans out through it). Each line is flushed as it is written,
    so a killed run loses at most the reply in flight.
    """

    def __init__(self, inner: ChatSeam, path: Path) -> None:
        super().__init__(inner)
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def send(self, request: ChatRequest) -> ChatResult:
        """Forward the call; bank the reply under its `request_key` (unless it came from the
        bank already: a resumed run reuses replies, it does not record them twice)."""
        result = self.inner.send(request)
        if result.cost_source == REPLAYED:
            return result
        record = {
            "key": request_key(request),
            "model": request.model,
            "role": request.role,
            "temperature": request.temperature,
            "seed": request.seed,
            "max_tokens": request.max_tokens,
            "tags": dict(request.tags),
            "text": result.text,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "finish_reason": result.finish_reason,
            "latency_s": round(result.latency_s, 3),
        }
        line = json.dumps(record, ensure_ascii=False, sort_keys=True, default=str) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8", newline="\n") as handle:
            handle.write(line)
            handle.flush()
        return result


@dataclass
class ReplayCounts:
    """How the calls of a replay were answered."""

    replayed: int = 0
    live: int = 0
    unavailable: int = 0
    by_role: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, role: str, how: str) -> None:
        setattr(self, how, getattr(self, how) + 1)
        counts = self.by_role.setdefault(role, {"replayed": 0, "live": 0, "unavailable": 0})
        counts[how] += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "replayed": self.replayed,
            "live": self.live,
            "unavailable": self.unavailable,
            "by_role": {role: dict(c) for role, c in sorted(self.by_role.items())},
        }


class Bank:
    """The replies of one or more bank files, by request key (see the module docstring)."""

    def __init__(self, records: Iterable[dict[str, Any]]) -> None:
        self._replies: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            self._replies[record["key"]].append(record)

    @classmethod
    def load(cls, directories: Iterable[Path]) -> Bank:
        """All bank files of the given run directories, in order (earlier first)."""
        records: list[dict[str, Any]] = []
        for directory in directories:
            records.extend(bank_records(directory))
        return cls(records)

    def __len__(self) -> int:
        return sum(len(replies) for replies in self._replies.values())

    def replies(self, key: str) -> list[dict[str, Any]]:
        """The recorded replies for ``key``, in recorded order (empty when none)."""
        return list(self._replies.get(key, ()))


class ReplayClient(ChatSeam):
    """A chat client that answers from a `Bank`; a request it lacks goes to ``live`` or fails.

    The n-th identical request of a replay gets the n-th recorded reply for its key (the last
    one again once they run out). A miss with ``live`` set is forwarded (and counted *live*);
    without it, a `BankMissError` is recorded in the ledger as a failed call and raised
    (counted *unavailable*), which the orchestrator treats like any failed call. Replayed calls
    carry their recorded token counts and latency; their cost is 0 (nothing was spent).
    """

    def __init__(
        self,
        bank: Bank,
        *,
        live: ChatSeam | None = None,
        ledger: CostLedger | None = None,
    ) -> None:
        self.bank = bank
        self.live = live
        self.ledger: CostLedger = (
            ledger if ledger is not None else (live.ledger if live else CostLedger())
        )
        self.counts = ReplayCounts()
        self._served: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    def send(self, request: ChatRequest) -> ChatResult:
        """The banked reply for this request (see the class docstring)."""
        key = request_key(request)
        role, model = request.role, request.model
        replies = self.bank.replies(key)
        fields = dict(request.tags)
        if replies:
            with self._lock:
                index = min(self._served[key], len(replies) - 1)
                self._served[key] += 1
                self.counts.add(role, "replayed")
            reply = replies[index]
            result = ChatResult(
                text=str(reply.get("text") or ""),
                model=model,
                prompt_tokens=reply.get("prompt_tokens"),
                completion_tokens=reply.get("completion_tokens"),
                cost_usd=0.0,
                cost_source=REPLAYED,
                latency_s=float(reply.get("latency_s") or 0.0),
                attempts=1,
                finish_reason=reply.get("finish_reason"),
            )
            call_id = self.ledger.record(role, result, replayed=True, **fields)
            return replace(result, call_id=call_id)
        if self.live is not None:
            with self._lock:
                self.counts.add(role, "live")
            return self.live.send(request)
        with self._lock:
            self.counts.add(role, "unavailable")
        error = BankMissError(f"no banked reply for this {role!r} request (offline replay)")
        started = time.perf_counter()
        error.call_id = self.ledger.record_failure(
            role, model, error, latency_s=time.perf_counter() - started, **fields
        )
        raise error


def banking(client: ChatSeam, out: Path) -> RecordingClient:
    """``client`` for a run in ``out``, banking every new reply there. A request the bank
    already holds (a resumed run redoing an item whose calls finished before it was stopped)
    is answered from the bank instead of the model: same request, same reply, no second
    payment."""
    return RecordingClient(ReplayClient(Bank.load([out]), live=client), out / BANK_FILE)
