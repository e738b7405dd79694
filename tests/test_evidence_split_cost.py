"""The sentence split stays linear on text built to make it re-read what it has seen."""

from __future__ import annotations

import time

import pytest

from corpus.evidence import split_sentences

ADVERSARIAL = {
    # every stop follows an initial, so no stop ends a sentence and the piece keeps growing
    "initials": "Zebrafish live in hall D. ",
    # one long run of punctuation that never ends a sentence
    "punctuation": ".",
    # one long word of letters and dots
    "dotted word": "a.",
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_splitting_60_kb_of_adversarial_text_takes_well_under_a_second(name: str) -> None:
    # Today's main took about 5 s on the "initials" text (quadratic); linear code takes ms.
    unit = ADVERSARIAL[name]
    text = unit * (60_000 // len(unit))
    started = time.perf_counter()
    spans = split_sentences(text)
    elapsed = time.perf_counter() - started
    assert spans, name
    assert elapsed < 1.0, f"{name}: {elapsed:.2f} s for {len(text)} characters"


def test_a_sentence_running_past_many_initials_is_one_span() -> None:
    text = "Zebrafish live in hall D. " * 1000
    assert split_sentences(text) == [(0, len(text) - 1)]
