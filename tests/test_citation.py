"""The citation check: a given stands only if the span it cites says it."""

from __future__ import annotations

import pytest

from corpus.evidence import build_evidence
from graph_server.citation import (
    CITATION_MISSING,
    CITATION_UNKNOWN,
    NAME_MISMATCH,
    NUMBER_MISMATCH,
    QUOTE_MISMATCH,
    anchor_citation,
    check_citation,
    name_words,
)

EVIDENCE = build_evidence(
    [
        "Rack 7 survey, row 9: server x9; operating system: Linux; owner: platform team.",
        "Scheduling policy: the cron scheduler runs only on Linux hosts. The nightly cron job "
        "may be placed on any server that can run the cron scheduler.",
        "Ferrowell Mill was founded in 1820 by Wenna Korick.",
    ]
)


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("The cron scheduler runs only on Linux hosts.", "D2.1"),
        ("the cron scheduler runs only on linux hosts [D2]", "D2.1"),
        ("Server x9 runs the Linux operating system", "D1.1"),
        ("Wenna Korick's mill was founded in 1820", "D3.1"),
        ("Ferrowell Mill was founded by Wenna Korick", " D3.1 "),
    ],
)
def test_a_faithful_restatement_of_the_cited_span_passes(claim: str, source: str) -> None:
    check = check_citation(claim, source, EVIDENCE)
    assert check.ok and check.span is not None and check.span.id == source.strip()


@pytest.mark.parametrize(
    ("claim", "source", "reason"),
    [
        ("The cron scheduler runs only on Linux hosts.", None, CITATION_MISSING),
        ("The cron scheduler runs only on Linux hosts.", "none", CITATION_MISSING),
        ("The cron scheduler runs only on Linux hosts.", "D9.1", CITATION_UNKNOWN),
        ("Ferrowell Mill was founded in 1821.", "D3.1", NUMBER_MISMATCH),
        ("Ferrowood Mill was founded in 1820.", "D3.1", NAME_MISMATCH),
        ("Can server x9 be used for the nightly cron job?", "D2.2", NAME_MISMATCH),
        ("The cron scheduler does not run on Linux hosts.", "D2.1", QUOTE_MISMATCH),
        (
            "The nightly cron job needs spare power capacity and new hardware.",
            "D2.2",
            QUOTE_MISMATCH,
        ),
    ],
)
def test_a_misquote_is_named_by_the_first_rule_it_breaks(
    claim: str, source: str | None, reason: str
) -> None:
    check = check_citation(claim, source, EVIDENCE)
    assert not check.ok
    assert check.reason == reason
    assert check.detail


def test_name_words_skip_a_capitalised_opening_function_word_but_keep_names() -> None:
    assert name_words("The survey of Rack 7 lists x9 and Linux") == ["Rack", "x9", "Linux"]
    assert name_words("Vidar Tarvard was born in Quelheim") == ["Vidar", "Tarvard", "Quelheim"]


def test_a_faithful_claim_with_a_wrong_span_number_is_anchored_to_its_sentence() -> None:
    check = anchor_citation("Ferrowell Mill was founded in 1820 by Wenna Korick.", "D2.1", EVIDENCE)
    assert check.ok and check.span is not None and check.span.id == "D3.1"
    assert check.corrected_from == "D2.1" and "number_mismatch" in check.detail


def test_no_repair_without_a_source_or_when_no_single_span_passes() -> None:
    assert anchor_citation("Ferrowell Mill was founded in 1820", None, EVIDENCE).reason == (
        CITATION_MISSING
    )
    assert anchor_citation("Ferrowood Mill was founded in 1820", "D3.1", EVIDENCE).reason == (
        NAME_MISMATCH
    )
    twice = build_evidence(["Server x9 runs Linux.", "Server x9 runs Linux.", "Other."])
    assert anchor_citation("Server x9 runs Linux", "D3.1", twice).reason == NAME_MISMATCH


def test_a_given_that_drops_the_negation_of_its_span_says_the_opposite() -> None:
    evidence = build_evidence(["Braskthorpe is not on the coast."])
    check = check_citation("Braskthorpe is on the coast.", "D1.1", evidence)
    assert check.reason == QUOTE_MISMATCH and "missing from the claim" in check.detail
    assert check_citation("Braskthorpe is not on the coast.", "D1.1", evidence).ok


def test_the_repair_ranks_spans_by_the_reading_the_check_reads() -> None:
    # D1.2 says all of the claim once its "It" is read as Harrow Mill; D2.1 only 3 of its 4
    # content words. Ranked by bare text, D1.2 would score 2 of 4 and lose to D2.1.
    evidence = build_evidence(
        [
            "Harrow Mill stands on the Tarn. It was founded in 1790 by monks.",
            "Harrow Mill was founded in 1790 by the Ferrow family.",
            "Harrow Mill closed in 1905.",
        ]
    )
    check = anchor_citation("Harrow Mill was founded in 1790 by monks", "D3.1", evidence)
    assert check.ok and check.span is not None and check.span.id == "D1.2"
