"""The grounding screen's items: one line of ``items.jsonl`` read and validated.

An item carries a document, a question and up to two regexes (:mod:`evals.grounding` says what
they mean and grades answers with them). :func:`load_items` reads a whole file and refuses it
when any line is invalid, listing every bad line; :func:`json_lines` is the JSONL reader the
screen's results file (:mod:`evals.grounding_files`) uses too.

Pure functions only, importing nothing from the project: ``screen.py`` may use them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CATEGORIES = ("counterfactual", "fictional", "unanswerable", "numeric")
GRADES = ("grounded", "memorized", "abstain", "other")
EXPECTED = ("answer", "abstain")
EXAMPLE_KINDS = GRADES

MAX_DOCUMENT_CHARS = 4000
MAX_QUESTION_CHARS = 500
MAX_ITEMS = 1000
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


class ItemError(ValueError):
    """One item is invalid. `line` is the 1-based line number in the items file, if known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class ItemsFileError(ValueError):
    """The items file as a whole is unusable; `errors` lists every bad line (not just the first)."""

    def __init__(self, path: Path, errors: Sequence[ItemError]) -> None:
        self.path = path
        self.errors = list(errors)
        lines = "\n".join(f"  {e}" for e in self.errors)
        super().__init__(
            f"{path}: {len(self.errors)} invalid item line(s); nothing was run:\n{lines}"
        )


@dataclass(frozen=True)
class Item:
    """One screen item, validated. Regex fields hold the source pattern (or None)."""

    id: str
    category: str
    document: str
    question: str
    expected: str
    grounded: str | None
    memorized: str | None
    examples: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def grounded_re(self) -> re.Pattern[str] | None:
        return _compile(self.grounded) if self.grounded is not None else None

    def memorized_re(self) -> re.Pattern[str] | None:
        return _compile(self.memorized) if self.memorized is not None else None


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE | re.DOTALL)


def _need_str(obj: Mapping[str, Any], key: str, *, max_chars: int | None = None) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ItemError(f"field {key!r} must be a non-empty string, got {value!r:.60}")
    if max_chars is not None and len(value) > max_chars:
        raise ItemError(f"field {key!r} has {len(value)} characters; the limit is {max_chars}")
    return value


def _regex_field(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ItemError(f"field {key!r} must be a regex string or null, got {value!r:.60}")
    try:
        rx = _compile(value)
    except re.error as exc:
        raise ItemError(f"field {key!r} is not a valid regex ({exc}): {value!r:.80}") from exc
    if rx.search(""):
        raise ItemError(f"field {key!r} matches the empty string, so it would match any answer")
    return value


def _examples_field(obj: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    raw = obj.get("examples", {})
    if not isinstance(raw, dict):
        raise ItemError(f"field 'examples' must be an object, got {type(raw).__name__}")
    out: dict[str, tuple[str, ...]] = {}
    for kind, answers in sorted(raw.items()):
        if kind not in EXAMPLE_KINDS:
            raise ItemError(f"examples key {kind!r} is not one of {list(EXAMPLE_KINDS)}")
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise ItemError(f"examples[{kind!r}] must be a list of strings")
        out[kind] = tuple(answers)
    return out


def parse_item(obj: Any) -> Item:
    """Validate one decoded JSON object as an Item; raise ItemError naming the field and rule."""
    if not isinstance(obj, dict):
        raise ItemError(f"an item must be a JSON object, got {type(obj).__name__}")
    item_id = _need_str(obj, "id")
    if not _ID_RE.match(item_id):
        raise ItemError(f"field 'id' {item_id!r} must match {_ID_RE.pattern}")
    category = _need_str(obj, "category")
    if category not in CATEGORIES:
        raise ItemError(f"field 'category' {category!r} must be one of {list(CATEGORIES)}")
    expected = _need_str(obj, "expected")
    if expected not in EXPECTED:
        raise ItemError(f"field 'expected' {expected!r} must be one of {list(EXPECTED)}")
    if (category == "unanswerable") != (expected == "abstain"):
        raise ItemError(
            f"category {category!r} requires expected "
            f"{'abstain' if category == 'unanswerable' else 'answer'!r}"
        )
    grounded = _regex_field(obj, "grounded")
    memorized = _regex_field(obj, "memorized")
    if expected == "answer" and grounded is None:
        raise ItemError("field 'grounded' is required when expected is 'answer'")
    if expected == "abstain" and grounded is not None:
        raise ItemError(
            "field 'grounded' must be null when expected is 'abstain' "
            "(abstaining is the grounded behaviour)"
        )
    if category in ("counterfactual", "unanswerable") and memorized is None:
        raise ItemError(f"field 'memorized' is required for category {category!r}")
    if category == "fictional" and memorized is not None:
        raise ItemError(
            "field 'memorized' must be null for fictional items "
            "(world knowledge has no answer to invented entities)"
        )
    return Item(
        id=item_id,
        category=category,
        document=_need_str(obj, "document", max_chars=MAX_DOCUMENT_CHARS),
        question=_need_str(obj, "question", max_chars=MAX_QUESTION_CHARS),
        expected=expected,
        grounded=grounded,
        memorized=memorized,
        examples=_examples_field(obj),
    )


def json_lines(lines: Iterable[str]) -> Iterator[tuple[int, Any]]:
    """``(1-based line number, value)`` for each non-blank JSONL line; a line that is not
    JSON gives its :class:`json.JSONDecodeError` as the value, so the reader decides whether
    that is an error (an items file) or a line to skip (a torn results line)."""
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value: Any = json.loads(line)
        except json.JSONDecodeError as exc:
            value = exc
        yield lineno, value


def parse_items(lines: Iterable[str]) -> tuple[list[Item], list[ItemError]]:
    """Parse JSONL lines. Blank lines are skipped. Returns (items, errors), errors carrying the
    1-based line number; duplicate ids are errors on the later line. O(total characters)."""
    items: list[Item] = []
    errors: list[ItemError] = []
    seen: dict[str, int] = {}
    for lineno, obj in json_lines(lines):
        if isinstance(obj, json.JSONDecodeError):
            errors.append(ItemError(f"not valid JSON ({obj.msg} at column {obj.colno})", lineno))
            continue
        try:
            item = parse_item(obj)
        except ItemError as exc:
            errors.append(ItemError(str(exc), lineno))
            continue
        if item.id in seen:
            errors.append(
                ItemError(f"duplicate id {item.id!r} (first on line {seen[item.id]})", lineno)
            )
            continue
        seen[item.id] = lineno
        items.append(item)
    if len(items) > MAX_ITEMS:
        errors.append(ItemError(f"{len(items)} items; the limit is {MAX_ITEMS}"))
    return items, errors


def load_items(path: Path) -> list[Item]:
    """Read and validate an items file. Any invalid line makes the whole file unusable: raises
    ItemsFileError listing every bad line, so one run fixes them all (a skipped item would change
    the denominator between models and make their scores incomparable)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ItemsFileError(path, [ItemError(f"cannot read file: {exc}")]) from exc
    items, errors = parse_items(text.splitlines())
    if errors:
        raise ItemsFileError(path, errors)
    if not items:
        raise ItemsFileError(path, [ItemError("the file holds no items")])
    return items
