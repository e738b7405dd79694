"""The shipped screen items and the grading rules (evals.grounding), checked without any model."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from evals.grounding import (
    ABSTAIN_PHRASES,
    ABSTAIN_REPLY,
    CATEGORIES,
    GRADES,
    Item,
    ItemError,
    ItemsFileError,
    abstention_phrase,
    grade_answer,
    item_sha,
    load_items,
    normalise_answer,
    parse_item,
    parse_items,
    screen_messages,
)

ITEMS_PATH = Path(__file__).resolve().parents[1] / "items.jsonl"
ITEMS = load_items(ITEMS_PATH)
BY_ID = {it.id: it for it in ITEMS}


def _valid(**overrides: object) -> dict[str, object]:
    obj: dict[str, object] = {
        "id": "t-01",
        "category": "counterfactual",
        "expected": "answer",
        "question": "What is the capital?",
        "document": "The capital is Perth.",
        "grounded": r"\bperth\b",
        "memorized": r"\bcanberra\b",
    }
    obj.update(overrides)
    return obj


SYNTHETIC = parse_item(_valid())


# ---- the shipped item set -------------------------------------------------------------------


def test_shipped_file_has_fifty_items_roughly_balanced_across_categories() -> None:
    counts = Counter(it.category for it in ITEMS)
    assert len(ITEMS) == 50
    assert set(counts) == set(CATEGORIES)
    assert all(11 <= n <= 14 for n in counts.values()), counts


def test_items_are_interleaved_so_any_limit_of_four_or_more_covers_every_category() -> None:
    for n in range(4, len(ITEMS) + 1):
        assert {it.category for it in ITEMS[:n]} == set(CATEGORIES)


def test_unanswerable_items_expect_abstention_and_the_rest_expect_an_answer() -> None:
    for it in ITEMS:
        assert (it.expected == "abstain") == (it.category == "unanswerable"), it.id


@pytest.mark.parametrize("item", ITEMS, ids=lambda it: it.id)
def test_every_example_answer_gets_the_grade_it_is_labelled_with(item: Item) -> None:
    assert item.examples, "every shipped item carries example answers"
    for kind, answers in item.examples.items():
        for answer in answers:
            assert grade_answer(item, answer).grade == kind, (kind, answer)


@pytest.mark.parametrize("item", ITEMS, ids=lambda it: it.id)
def test_every_regex_has_a_positive_and_a_negative_example(item: Item) -> None:
    all_answers = [a for answers in item.examples.values() for a in answers]
    for name, rx in (("grounded", item.grounded_re()), ("memorized", item.memorized_re())):
        if rx is None:
            assert not item.examples.get(name), f"{name} examples without a {name} regex"
            continue
        hits = [a for a in all_answers if rx.search(normalise_answer(a))]
        misses = [a for a in all_answers if not rx.search(normalise_answer(a))]
        assert item.examples.get(name), f"no {name} examples"
        assert hits and misses, (name, hits, misses)
    assert item.examples.get("abstain") and item.examples.get("other")


@pytest.mark.parametrize("item", ITEMS, ids=lambda it: it.id)
def test_the_canonical_abstention_reply_is_graded_abstain(item: Item) -> None:
    assert grade_answer(item, ABSTAIN_REPLY) == grade_answer(item, ABSTAIN_REPLY.lower())
    assert grade_answer(item, ABSTAIN_REPLY).grade == "abstain"


GENERIC_ABSTENTIONS = (
    "The text does not say.",
    "The document does not mention this.",
    "The passage is silent on this point.",
    "I cannot answer this from the document.",
    "Not stated in the text.",
    "Unknown.",
    "The document doesn't provide that information.",
    "There is not enough information in the text to answer.",
    "I don't know.",
    "The text does not contain the answer to this question.",
)


@pytest.mark.parametrize("item", ITEMS, ids=lambda it: it.id)
def test_common_abstention_wordings_are_graded_abstain_for_every_item(item: Item) -> None:
    # Guards against regexes that fire on words abstentions use ("text", "document", ...).
    for answer in GENERIC_ABSTENTIONS:
        assert grade_answer(item, answer).grade == "abstain", answer


@pytest.mark.parametrize("item", ITEMS, ids=lambda it: it.id)
def test_echoing_the_question_scores_neither_grounded_nor_memorized(item: Item) -> None:
    assert grade_answer(item, item.question).grade in ("abstain", "other")


@pytest.mark.parametrize("item", ITEMS, ids=lambda it: it.id)
def test_quoting_the_document_can_never_be_graded_as_a_leak(item: Item) -> None:
    rx = item.memorized_re()
    assert rx is None or not rx.search(normalise_answer(item.document))


def test_counterfactual_documents_state_the_value_their_grounded_regex_expects() -> None:
    for it in ITEMS:
        rx = it.grounded_re()
        if it.category == "counterfactual":
            assert rx is not None and rx.search(normalise_answer(it.document)), it.id


def test_every_unanswerable_and_counterfactual_item_has_a_memorized_regex() -> None:
    for it in ITEMS:
        if it.category in ("unanswerable", "counterfactual"):
            assert it.memorized is not None, it.id
        if it.category == "fictional":
            assert it.memorized is None, it.id


# ---- grading precedence ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "grade", "reason"),
    [
        ("", "other", "empty"),
        ("  \n\t ", "other", "empty"),
        ("**  **", "other", "empty"),
        ("Perth", "grounded", "grounded-regex"),
        ("Canberra", "memorized", "memorized-regex"),
        ("Perth (in reality it is Canberra)", "other", "mixed"),
        ("The document does not say, but it is Canberra.", "memorized", "memorized-regex"),
        ("I am not sure, the document says Perth but I cannot confirm it.", "grounded", None),
        ("The document does not say.", "abstain", "phrase:does-not-say"),
        ("Sydney", "other", "no-match"),
    ],
)
def test_grading_precedence(answer: str, grade: str, reason: str | None) -> None:
    got = grade_answer(SYNTHETIC, answer)
    assert got.grade == grade
    assert got.grade in GRADES
    if reason is not None:
        assert got.reason == reason


def test_regexes_are_case_insensitive_and_see_through_markdown() -> None:
    assert grade_answer(SYNTHETIC, "**PERTH**").grade == "grounded"
    assert grade_answer(SYNTHETIC, "`canberra`").grade == "memorized"


def test_an_item_without_a_memorized_regex_never_grades_memorized() -> None:
    item = parse_item(_valid(category="fictional", memorized=None))
    assert grade_answer(item, "Canberra").grade == "other"


# ---- normalisation and abstention phrases ----------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("1,250,000 litres", "1250000 litres"),
        ("1\u00a0250\u00a0000", "1250000"),
        ("500\u202f000", "500000"),
        ("1'250", "1250"),
        ("8,4 kg", "8,4 kg"),
        ("3.14", "3.14"),
        ("In 1912, 1500 died", "in 1912, 1500 died"),
        ("H\u2082O", "h2o"),
        ("doesn\u2019t", "doesn't"),
        ("**Bold**  and\n_italic_", "bold and italic"),
        ("twenty\u2013six", "twenty-six"),
    ],
)
def test_normalisation(raw: str, normalised: str) -> None:
    assert normalise_answer(raw) == normalised


ABSTENTION_SAMPLES = {
    "not-in-document": "NOT IN DOCUMENT",
    "not-stated": "That is not explicitly mentioned.",
    "does-not-say": "The passage doesn\u2019t specify it.",
    "cannot-determine": "It can't be determined from this.",
    "no-information": "There is insufficient information.",
    "dont-know": "I don't know.",
    "unknown": "Unknown",
    "document-silent": "The text is silent on this point.",
    "beyond-document": "That is beyond the scope of the document.",
}


def test_every_abstention_phrase_has_a_sample_that_triggers_exactly_it_first() -> None:
    assert set(ABSTENTION_SAMPLES) == {name for name, _ in ABSTAIN_PHRASES}
    for name, sample in ABSTENTION_SAMPLES.items():
        assert abstention_phrase(sample) == name, sample


@pytest.mark.parametrize(
    "answer",
    ["Perth", "The answer is 42 crowns.", "Notably, the ship docked at noon.", "Knowledge"],
)
def test_ordinary_answers_are_not_abstentions(answer: str) -> None:
    assert abstention_phrase(answer) is None


# ---- validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"id": ""}, "'id'"),
        ({"id": "Has Spaces"}, "'id'"),
        ({"category": "trivia"}, "'category'"),
        ({"expected": "maybe"}, "'expected'"),
        ({"expected": "abstain"}, "requires expected"),
        ({"document": ""}, "'document'"),
        ({"document": "x" * 4001}, "limit is 4000"),
        ({"question": 7}, "'question'"),
        ({"grounded": None}, "'grounded' is required"),
        ({"grounded": "("}, "not a valid regex"),
        ({"grounded": "x?"}, "matches the empty string"),
        ({"memorized": None}, "'memorized' is required"),
        ({"category": "fictional"}, "must be null for fictional"),
        ({"examples": []}, "'examples' must be an object"),
        ({"examples": {"maybe": ["x"]}}, "not one of"),
        ({"examples": {"grounded": "Perth"}}, "list of strings"),
    ],
)
def test_invalid_items_are_rejected_naming_the_field(
    overrides: dict[str, object], needle: str
) -> None:
    with pytest.raises(ItemError) as info:
        parse_item(_valid(**overrides))
    assert needle in str(info.value)


def test_unanswerable_items_must_not_carry_a_grounded_regex() -> None:
    with pytest.raises(ItemError, match="must be null when expected is 'abstain'"):
        parse_item(_valid(category="unanswerable", expected="abstain"))


def test_a_non_object_line_is_rejected() -> None:
    with pytest.raises(ItemError, match="JSON object"):
        parse_item(["not", "an", "object"])


def test_parse_errors_carry_line_numbers_and_every_bad_line_is_reported() -> None:
    good = json.dumps(_valid())
    lines = [good, "", "{not json", json.dumps(_valid(id="t-02", category="nope")), good]
    items, errors = parse_items(lines)
    assert [it.id for it in items] == ["t-01"]
    assert [e.line for e in errors] == [3, 4, 5]
    assert "not valid JSON" in str(errors[0])
    assert str(errors[2]) == "line 5: duplicate id 't-01' (first on line 1)"


def test_load_items_refuses_a_file_with_any_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(_valid()) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(ItemsFileError, match=r"line 2: not valid JSON") as info:
        load_items(path)
    assert len(info.value.errors) == 1


def test_load_items_refuses_an_empty_or_missing_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(ItemsFileError, match="no items"):
        load_items(empty)
    with pytest.raises(ItemsFileError, match="cannot read"):
        load_items(tmp_path / "missing.jsonl")


# ---- prompt and content hash ----------------------------------------------------------------


def test_messages_carry_the_document_and_question_and_the_abstention_instruction() -> None:
    system, user = screen_messages(SYNTHETIC)
    assert system["role"] == "system" and ABSTAIN_REPLY in system["content"]
    assert SYNTHETIC.document in user["content"] and SYNTHETIC.question in user["content"]


def test_item_hash_tracks_what_the_model_sees_but_not_the_regexes() -> None:
    base = item_sha(SYNTHETIC)
    assert item_sha(parse_item(_valid(grounded=r"\bperth(?:shire)?\b"))) == base
    assert item_sha(parse_item(_valid(question="Which city?"))) != base
    assert item_sha(parse_item(_valid(document="The capital is Hobart."))) != base
    assert len({item_sha(it) for it in ITEMS}) == len(ITEMS)
