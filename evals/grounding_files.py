"""The grounding screen's files: results.jsonl read back and appended durably, and a JSON
file (models.json) replaced atomically.

It imports only :mod:`evals.grounding`, so ``screen.py`` may use it without reaching the
evaluation harness.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.grounding import json_lines


def read_results(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows of results.jsonl plus warnings for lines that are not JSON objects (those lines
    are left in the file untouched and ignored; a crash mid-write can leave one)."""
    if not path.exists():
        return [], []
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for lineno, row in json_lines(handle):
            if isinstance(row, json.JSONDecodeError):
                warnings.append(f"{path} line {lineno} ignored: not valid JSON ({row.msg})")
                continue
            if not isinstance(row, dict) or not isinstance(row.get("model"), str):
                warnings.append(f"{path} line {lineno} ignored: not a result object")
                continue
            rows.append(row)
    return rows, warnings


def append_result(path: Path, row: dict[str, Any]) -> None:
    """Append one row durably (flushed and fsynced), so a crash loses at most the call in
    flight. A torn last line from an earlier crash is closed off first, never merged into."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() > 0:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")
        handle.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())


def answered_keys(rows: Sequence[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """(model, item_id, item_sha) of every successful row: these pairs are not called again."""
    return {
        (r["model"], str(r.get("item_id")), str(r.get("item_sha")))
        for r in rows
        if r.get("error") is None and isinstance(r.get("answer"), str)
    }


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Replace `path` with `data` (indent 2) via a temporary file, so a crash never leaves a
    half-written models.json behind."""
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
