"""Grounding-screen grading: does an answer come from the document or from memory?

Pure functions only (no network, no model calls): `screen.py` does the calling and the files.
The items themselves are read and validated in :mod:`evals.grounding_items`; their names are
importable from here too.

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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evals.grounding_items import (
    CATEGORIES,
    EXAMPLE_KINDS,
    EXPECTED,
    GRADES,
    MAX_DOCUMENT_CHARS,
    MAX_ITEMS,
    MAX_QUESTION_CHARS,
    Item,
    ItemError,
    ItemsFileError,
    json_lines,
    load_items,
    parse_item,
    parse_items,
)

__all__ = [
    "ABSTAIN_PHRASES",
    "ABSTAIN_REPLY",
    "CATEGORIES",
    "EXAMPLE_KINDS",
    "EXPECTED",
    "GRADES",
    "MAX_DOCUMENT_CHARS",
    "MAX_ITEMS",
    "MAX_QUESTION_CHARS",
    "PROMPT_VERSION",
    "Grade",
    "Item",
    "ItemError",
    "ItemsFileError",
    "ModelSummary",
    "abstention_phrase",
    "choose_default",
    "grade_answer",
    "item_sha",
    "json_lines",
    "load_items",
    "normalise_answer",
    "parse_item",
    "parse_items",
    "screen_messages",
    "summarise",
]

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


@dataclass(frozen=True)
class Grade:
    """A grade (one of GRADES) and the rule that produced it."""

    grade: str
    reason: str


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
