"""Grounding-screen items and grading: does an answer come from the document or from memory?

Pure functions only (no network, no model calls): `screen.py` does the calling and the files.

An item (one line of ``items.jsonl``) carries a document, a question and up to two regexes:

* ``grounded`` - matches the answer the *document* gives (null when the correct behaviour is to
  abstain, i.e. the document does not contain the answer);
* ``memorized`` - matches what world knowledge would say instead (null where world knowledge has
  nothing to say, e.g. invented entities).

Regexes are searched (``re.search``), case-insensitively, over the *normalised* answer (see
`normalise_answer`): digit-group separators are removed, so ``1,250,000`` and ``1 250 000`` both
read ``1250000`` and patterns are written without separators.

Grading precedence (first rule that fires wins; see docs/screen.md for the reasoning):

1. empty answer                      -> ``other``     (reason ``empty``)
2. grounded and memorized both match -> ``other``     (reason ``mixed``: both values named, a
   regex cannot tell which one the model asserts)
3. memorized matches                 -> ``memorized`` (even when hedged with an abstention phrase:
   "not stated, but it is Canberra" still leaks)
4. grounded matches                  -> ``grounded``  (even when hedged: the value was committed to)
5. an abstention phrase matches      -> ``abstain``
6. otherwise                         -> ``other``
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
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

# Abstention phrase set, matched over the normalised lower-cased answer. Each entry is named so
# tests and docs can refer to it. The canonical abstention the screen prompt asks for is
# "NOT IN DOCUMENT"; the rest catch the usual paraphrases.
ABSTAIN_PHRASES: tuple[tuple[str, str], ...] = (
    (
        "not-in-document",
        r"\bnot (?:in|found in|present in|part of) (?:the |this )?"
        r"(?:document|text|passage|context|source|provided)",
    ),
    (
        "not-stated",
        r"\bnot (?:explicitly |directly |clearly |specifically )?"
        r"(?:stated|mentioned|specified|provided|given|included|indicated|listed|described"
        r"|addressed|covered|disclosed|named|identified)\b",
    ),
    (
        "does-not-say",
        r"\b(?:does|do|did)(?: not|n't) (?:explicitly |directly |specifically )?"
        r"(?:say|state|mention|specify|provide|contain|include|indicate|give|list|describe|tell"
        r"|address|cover|discuss|reveal|explain|name|identify)\b",
    ),
    (
        "cannot-determine",
        r"\b(?:cannot|can't|can not|could not|couldn't|unable to|not possible to"
        r"|impossible to|no way to)(?: be)? (?:determine|determined|answer|answered|tell|say|find"
        r"|found|know|known|infer|inferred|deduce|deduced|establish|established"
        r"|confirm|confirmed)\b",
    ),
    (
        "no-information",
        r"\b(?:insufficient|not enough|no|lacks?|lacking|missing) (?:the )?"
        r"(?:relevant |specific |such |sufficient )?"
        r"(?:information|info|details|mention|evidence)\b",
    ),
    ("dont-know", r"\bi (?:do not|don't) know\b"),
    ("unknown", r"\b(?:unknown|unanswerable)\b"),
    ("document-silent", r"\b(?:document|text|passage) is silent\b"),
    (
        "beyond-document",
        r"\b(?:outside|beyond) (?:the scope of )?(?:the |this )?"
        r"(?:document|text|passage)\b",
    ),
)
_ABSTAIN_RES = tuple((name, re.compile(pattern)) for name, pattern in ABSTAIN_PHRASES)

_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u02bc": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
    }
)
# A separator between a digit and exactly three more digits is a digit-group separator.
_GROUP_SEP = re.compile(r"(?<=\d)[, '](?=\d{3}(?!\d))")
_MARKDOWN = re.compile(r"[*_`#]+")
_SPACES = re.compile(r"\s+")


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


@dataclass(frozen=True)
class Grade:
    """A grade (one of GRADES) and the rule that produced it."""

    grade: str
    reason: str


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE | re.DOTALL)


def normalise_answer(text: str) -> str:
    """Canonical form that regexes and abstention phrases are matched against.

    NFKC (folds subscripts, full-width digits, no-break and thin spaces), straight quotes and
    hyphens, markdown emphasis removed, digit-group separators removed (``1,250`` -> ``1250``),
    whitespace collapsed, lower-cased. O(len(text)).
    """
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = _MARKDOWN.sub("", text)
    text = _SPACES.sub(" ", text).strip()
    text = _GROUP_SEP.sub("", text)
    return text.lower()


def abstention_phrase(answer: str) -> str | None:
    """Name of the first abstention phrase found in `answer` (raw text), or None."""
    norm = normalise_answer(answer)
    for name, rx in _ABSTAIN_RES:
        if rx.search(norm):
            return name
    return None


def grade_answer(item: Item, answer: str) -> Grade:
    """Grade one raw answer against one item, by the precedence in the module docstring."""
    norm = normalise_answer(answer)
    if not norm:
        return Grade("other", "empty")
    g_re, m_re = item.grounded_re(), item.memorized_re()
    g = bool(g_re and g_re.search(norm))
    m = bool(m_re and m_re.search(norm))
    if g and m:
        return Grade("other", "mixed")
    if m:
        return Grade("memorized", "memorized-regex")
    if g:
        return Grade("grounded", "grounded-regex")
    phrase = abstention_phrase(answer)
    if phrase is not None:
        return Grade("abstain", f"phrase:{phrase}")
    return Grade("other", "no-match")


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


# --------------------------------------------------------------------------------------------
# The prompt. Bump PROMPT_VERSION whenever the wording changes: it is part of `item_sha`, so
# results obtained with an older prompt are not reused by a resumed run.

PROMPT_VERSION = "screen-v1"
ABSTAIN_REPLY = "NOT IN DOCUMENT"
_SYSTEM_PROMPT = (
    "You answer questions about a document. Use only the information in the document, even "
    "where it disagrees with what you believe to be true; do not add outside knowledge. Reply "
    "with the answer alone, in a few words. If the document does not contain the answer, reply "
    f"exactly: {ABSTAIN_REPLY}"
)


def screen_messages(item: Item) -> list[dict[str, str]]:
    """The chat messages sent for one item (system instruction, then document and question)."""
    user = f"Document:\n{item.document}\n\nQuestion: {item.question}"
    return [{"role": "system", "content": _SYSTEM_PROMPT}, {"role": "user", "content": user}]


def item_sha(item: Item) -> str:
    """Short content hash of what the model sees for `item` (prompt version, document, question).

    A stored answer is reused only while this hash is unchanged; the regexes are not part of it
    because grading is recomputed from the stored answer text.
    """
    payload = json.dumps([PROMPT_VERSION, item.document, item.question], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


# --------------------------------------------------------------------------------------------
# Per-model summary and the default-model rule.


@dataclass(frozen=True)
class ModelSummary:
    """Screen figures for one model over one item selection.

    Percentages are over `graded` items; `leak_rate` and `correct_abstention_rate` are over
    graded unanswerable items (None when there are none); `by_category` holds the grade counts
    per item category. Costs: `cost_usd` is the total of
    every recorded call for these items (retries of failed calls included), None when any of
    them has unknown cost; `cost_usd_known` is the known part (a lower bound).
    """

    model: str
    items: int
    graded: int
    failed: int
    counts: Mapping[str, int]
    unanswerable: int
    leaks: int
    correct_abstentions: int
    cost_usd: float | None
    cost_usd_known: float
    calls_cost_unknown: int
    price_per_token: float | None
    by_category: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def pct(self, grade: str) -> float | None:
        return 100.0 * self.counts.get(grade, 0) / self.graded if self.graded else None

    @property
    def complete(self) -> bool:
        return self.graded == self.items

    @property
    def leak_rate(self) -> float | None:
        return self.leaks / self.unanswerable if self.unanswerable else None

    @property
    def correct_abstention_rate(self) -> float | None:
        return self.correct_abstentions / self.unanswerable if self.unanswerable else None

    @property
    def cost_per_grounded(self) -> float | None:
        grounded = self.counts.get("grounded", 0)
        if self.cost_usd is None or grounded == 0:
            return None
        return self.cost_usd / grounded


def summarise(
    model: str,
    items: Sequence[Item],
    rows: Iterable[Mapping[str, Any]],
    *,
    price_per_token: float | None = None,
) -> ModelSummary:
    """Summarise result rows (dicts as written to results.jsonl) for `model` over `items`.

    Per item, the answer used is the latest successful row whose ``item_sha`` matches the item;
    it is re-graded with the current regexes. Every row for a selected item counts towards cost.
    `price_per_token` (prompt + completion, for the tie-break) is carried through. O(rows).
    """
    wanted = {it.id: item_sha(it) for it in items}
    latest: dict[str, Mapping[str, Any]] = {}
    cost_known, cost_unknown = 0.0, 0
    for row in rows:
        if row.get("model") != model or row.get("item_id") not in wanted:
            continue
        cost = row.get("cost_usd")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            cost_known += float(cost)
        else:
            cost_unknown += 1
        usable = row.get("error") is None and isinstance(row.get("answer"), str)
        if usable and row.get("item_sha") == wanted[row["item_id"]]:
            latest[row["item_id"]] = row
    counts = dict.fromkeys(GRADES, 0)
    by_category = {cat: dict.fromkeys(GRADES, 0) for cat in CATEGORIES}
    unanswerable = leaks = abstentions = 0
    for it in items:
        used = latest.get(it.id)
        if used is None:
            continue
        grade = grade_answer(it, used["answer"]).grade
        counts[grade] += 1
        by_category[it.category][grade] += 1
        if it.expected == "abstain":
            unanswerable += 1
            leaks += grade == "memorized"
            abstentions += grade == "abstain"
    graded = len(latest)
    return ModelSummary(
        model=model,
        items=len(items),
        graded=graded,
        failed=len(items) - graded,
        counts=counts,
        unanswerable=unanswerable,
        leaks=leaks,
        correct_abstentions=abstentions,
        cost_usd=None if cost_unknown else cost_known,
        cost_usd_known=cost_known,
        calls_cost_unknown=cost_unknown,
        price_per_token=price_per_token,
        by_category=by_category,
    )


def choose_default(
    summaries: Sequence[ModelSummary], max_leak_rate: float
) -> tuple[str | None, dict[str, str]]:
    """The default-model rule: highest grounded% among models whose leak rate on unanswerable
    items is strictly below `max_leak_rate`; ties go to the lower prompt+completion price per
    token (unknown price ranks last), then to the model id. Only models graded on every item
    (and with at least one unanswerable item) are eligible.

    Returns (winner or None, {model: why it is not eligible} for the others that are excluded).
    """
    excluded: dict[str, str] = {}
    eligible: list[ModelSummary] = []
    for s in summaries:
        leak = s.leak_rate
        if not s.complete:
            excluded[s.model] = f"graded {s.graded} of {s.items} items"
        elif leak is None:
            excluded[s.model] = "no unanswerable items, so the leak rate is unknown"
        elif leak >= max_leak_rate:
            excluded[s.model] = f"leak rate {leak:.2f} is not below {max_leak_rate:.2f}"
        else:
            eligible.append(s)
    if not eligible:
        return None, excluded
    best = min(
        eligible,
        key=lambda s: (
            -s.counts.get("grounded", 0) / s.items,
            s.price_per_token if s.price_per_token is not None else float("inf"),
            s.model,
        ),
    )
    return best.model, excluded
