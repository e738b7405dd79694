"""Evidence spans: a deterministic sentence split with short, stable ids."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpus.evidence import build_evidence, is_span_id, split_sentences


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


SPLITS: dict[str, tuple[str, list[str]]] = {
    "plain_sentences_end_at_full_stops_question_and_exclamation_marks": (
        "One fact. Another fact! A question? Last.",
        ["One fact.", "Another fact!", "A question?", "Last."],
    ),
    "abbreviations_initials_and_decimals_do_not_end_a_sentence": (
        "Dr. Kell weighed 3.5 kg on Jan. 4 with J. Marsh, e.g. at noon. Then it ended.",
        ["Dr. Kell weighed 3.5 kg on Jan. 4 with J. Marsh, e.g. at noon.", "Then it ended."],
    ),
    "quotes_stay_with_their_sentence": (
        '"Is it safe?" she asked. "Yes." He left.',
        ['"Is it safe?" she asked.', '"Yes."', "He left."],
    ),
    "blank_lines_headings_and_list_items_end_a_sentence_without_punctuation": (
        "# Policy\n- cron runs on Linux\n- x9 runs Linux\n\nA paragraph without a stop",
        ["# Policy", "- cron runs on Linux", "- x9 runs Linux", "A paragraph without a stop"],
    ),
    "lower_case_after_a_full_stop_does_not_start_a_sentence": (
        "It weighs approx. two tons... maybe more.",
        ["It weighs approx. two tons... maybe more."],
    ),
}
"""What each case shows -> (text, its sentences)."""


@pytest.mark.parametrize(("text", "expected"), SPLITS.values(), ids=SPLITS.keys())
def test_sentences_end_where_a_reader_ends_them(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_span_ids_number_documents_and_sentences_from_one() -> None:
    evidence = build_evidence(["First. Second.", "Third."])
    assert evidence.ids == ("D1.1", "D1.2", "D2.1")
    span = evidence.get("D1.2")
    assert span is not None and span.text == "Second." and (span.document, span.sentence) == (1, 2)
    assert evidence.get("D3.1") is None and evidence.get(None) is None


def test_span_offsets_point_into_the_document_and_whitespace_is_collapsed() -> None:
    document = "  First   sentence.\n Second one.  "
    for span in build_evidence([document]).spans:
        assert " ".join(document[span.start : span.end].split()) == span.text
    assert build_evidence([document]).spans[0].text == "First sentence."


def test_rendered_evidence_numbers_every_span_and_separates_documents() -> None:
    rendered = build_evidence(["A one. A two.", "B one."]).render()
    assert rendered == "[D1.1] A one.\n[D1.2] A two.\n\n[D2.1] B one."
    assert build_evidence([]).render() == "(no documents)"


def test_span_id_shape() -> None:
    assert is_span_id("D2.3") and is_span_id(" D10.12 ")
    assert not is_span_id("D2") and not is_span_id("d2.3") and not is_span_id(3)


def test_non_text_is_rejected_with_a_clear_error() -> None:
    with pytest.raises(ValueError, match="text must be a string"):
        split_sentences(None)  # type: ignore[arg-type]


@given(st.text(alphabet="ab .!?\n\"'D3", max_size=80))
def test_spans_are_deterministic_ordered_disjoint_and_cover_every_word(text: str) -> None:
    spans = split_sentences(text)
    assert spans == split_sentences(text)
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= len(text)
        assert text[start:end] == text[start:end].strip()
        previous_end = end
    # Nothing but whitespace falls between spans: every word is in exactly one span.
    assert " ".join(text[a:b] for a, b in spans).split() == text.split()
