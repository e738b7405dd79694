"""Structure-aware chunking: offsets, size bound, headings, determinism and stable ids."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus.chunking import chunk_id, chunk_page

GUIDE = (
    "# Racks\n\n## Rack 7\n\nRack 7 stands in hall B. Dr. Kell moved it in 2021.\n\n"
    "Each shelf carries 3.5 kg.\n\n## Rack 8\n\nRack 8 is in hall C.\n"
)


def test_every_chunk_is_the_exact_slice_of_the_page_at_its_offsets() -> None:
    chunks = chunk_page(GUIDE, "guide.md")
    assert chunks
    for chunk in chunks:
        assert GUIDE[chunk.start : chunk.end] == chunk.text
        assert chunk.text == chunk.text.strip()


def test_a_heading_opens_a_new_chunk_and_names_its_section_trail() -> None:
    chunks = chunk_page(GUIDE, "guide.md")
    assert [c.section for c in chunks] == ["Racks > Rack 7", "Racks > Rack 8"]
    assert chunks[0].text.startswith("# Racks\n\n## Rack 7")
    assert chunks[1].text == "## Rack 8\n\nRack 8 is in hall C."


def test_chunk_ids_are_path_page_and_number() -> None:
    chunks = chunk_page(GUIDE, "docs/guide.md", 3)
    assert [c.id for c in chunks] == ["docs/guide.md#p3c1", "docs/guide.md#p3c2"]
    assert [(c.page, c.number) for c in chunks] == [(3, 1), (3, 2)]
    assert chunk_id("a/b.txt", 1, 12) == "a/b.txt#p1c12"


def test_paragraphs_without_headings_are_packed_up_to_the_size_bound() -> None:
    paragraphs = [f"Paragraph {i} says something about topic {i}." for i in range(40)]
    text = "\n\n".join(paragraphs)
    chunks = chunk_page(text, "p.txt", max_chars=200)
    assert len(chunks) > 1
    assert all(len(c.text) <= 200 for c in chunks)
    assert " ".join(" ".join(c.text.split()) for c in chunks) == " ".join(text.split())


def test_a_long_paragraph_is_cut_at_sentence_ends_not_inside_abbreviations() -> None:
    sentence = "Dr. Kell weighed 3.5 kg of cable on shelf {i} of the rack."
    text = " ".join(sentence.format(i=i) for i in range(20))
    chunks = chunk_page(text, "long.txt", max_chars=150)
    assert all(len(c.text) <= 150 for c in chunks)
    for chunk in chunks:
        assert chunk.text.startswith("Dr. Kell")
        assert chunk.text.endswith("rack.")


def test_a_sentence_longer_than_the_bound_is_cut_at_whitespace() -> None:
    text = " ".join(f"word{i}" for i in range(200))
    chunks = chunk_page(text, "w.txt", max_chars=100)
    assert all(len(c.text) <= 100 for c in chunks)
    assert all(not c.text.startswith(" ") for c in chunks)
    assert " ".join(c.text for c in chunks) == text


def test_a_page_of_whitespace_has_no_chunks() -> None:
    assert chunk_page(" \n\n\t\n", "empty.md") == []


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab .#\n\tXY1?"), max_size=600),
    st.integers(min_value=100, max_value=400),
)
def test_chunking_is_deterministic_bounded_ordered_and_exact_on_any_text(
    text: str, max_chars: int
) -> None:
    first = chunk_page(text, "any.md", max_chars=max_chars)
    assert first == chunk_page(text, "any.md", max_chars=max_chars)
    previous_end = 0
    for number, chunk in enumerate(first, 1):
        assert chunk.number == number
        assert text[chunk.start : chunk.end] == chunk.text
        assert 0 < len(chunk.text) <= max_chars
        assert chunk.start >= previous_end
        previous_end = chunk.end
    # No visible character is lost between chunks.
    assert "".join(text.split()) == "".join("".join(c.text.split()) for c in first)


def test_editing_a_later_section_keeps_the_ids_and_text_of_earlier_chunks() -> None:
    before = chunk_page(GUIDE, "guide.md")
    after = chunk_page(GUIDE.replace("hall C", "hall D"), "guide.md")
    assert before[0] == after[0]
    assert before[1].id == after[1].id and before[1].text != after[1].text


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"text": None}, "text"),
        ({"relative_path": ""}, "relative_path"),
        ({"page": 0}, "page"),
        ({"page": True}, "page"),
        ({"max_chars": 10}, "max_chars"),
        ({"max_chars": "200"}, "max_chars"),
    ],
)
def test_bad_arguments_raise_a_value_error_naming_the_field(
    kwargs: dict[str, object], field: str
) -> None:
    arguments: dict[str, object] = {"text": "x", "relative_path": "a.md", "page": 1}
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=field):
        chunk_page(**arguments)  # type: ignore[arg-type]
