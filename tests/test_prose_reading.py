"""The checks read encyclopedic prose as a person does: a title line is a title, an opening
"It" or "The mill" may stand for the document's subject, and "F.C." is one word (issue 32)."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from corpus.evidence import build_evidence
from corpus.reference import document_subject, looks_like_person, opening_reference, title_line
from graph_server.citation import check_citation
from orchestrator.checks.chain import ARGUMENT_OFF_SUBJECT, LOOK_ALIKE, ChainContext, failed_links
from orchestrator.checks.question import relation_terms, subject_terms

MILL = (
    "Title: Harrow Mill\nThe Harrow Mill is a watermill on the Wend River. "
    "It was founded in 1790 by Jonas Harrow. The mill closed in 1911."
)
TRAP = (
    "Title: Rookcombe Foundry\nRookcombe Foundry is an iron foundry. "
    "It was founded by Vidar Tarvard. The foundry built the Faldcrest Bridge."
)
ROOKTON = "Rookton Foundry is an iron foundry. Rookton Foundry was founded by Vidar Tarvelm."


def verdicts(
    question: str, documents: list[str], chain: list[str], answer: str, read: bool = True
) -> list[Any]:
    """The failed links of a one-run argument: each cited span supports the next, the last
    supports the conclusion, as the store exports them after anchoring. ``read=False``
    checks the sentences word by word, as before the readings."""
    evidence = build_evidence(documents)
    context = ChainContext.of(
        question,
        (span.checked_text if read else span.text for span in evidence.spans),
        {span.id: span.reading for span in evidence.spans if span.reading and read},
    )
    nodes: dict[str, Any] = {  # partial NodeData: what the reading looks at
        span_id: {"claim": evidence.by_id[span_id].text, "type": "given", "source": span_id}
        for span_id in chain
    }
    nodes["answer"] = {"claim": answer, "type": "conclusion", "source": "answer"}
    order = [*chain, "answer"]
    edges = [
        {"src": a, "dst": b, "relation": "supports", "run_ids": ["r1"]} for a, b in pairwise(order)
    ]
    checked = context.read(nodes)
    return failed_links(checked, edges, "answer", context.subject, context.names, context.paired)


def test_a_title_line_is_cut_off_the_sentence_it_runs_into() -> None:
    first = build_evidence([MILL]).spans[0]
    assert first.text.startswith("Title: Harrow Mill The Harrow Mill")  # the prompt's words
    assert first.reading == "The Harrow Mill is a watermill on the Wend River."


def test_an_opening_it_reads_as_the_title_entity() -> None:
    spans = build_evidence([MILL]).spans
    assert spans[1].reading == "It (Harrow Mill) was founded in 1790 by Jonas Harrow."
    assert spans[2].reading == "The mill (Harrow Mill) closed in 1911."


def test_a_title_entity_pronoun_bridges_the_mill_to_its_founder() -> None:
    failed = verdicts(
        "Who founded the Harrow Mill?",
        [MILL],
        ["D1.1", "D1.2"],
        "Jonas Harrow founded the Harrow Mill.",
    )
    assert failed == []


def test_read_word_by_word_the_same_chain_is_refused_as_a_look_alike() -> None:
    """The defect the reading fixes: "title harrow mill the harrow mill" (the title run into
    the first sentence) and "jonas harrow" are two names sharing a word."""
    failed = verdicts(
        "Who founded the Harrow Mill?",
        [MILL],
        ["D1.1", "D1.2"],
        "Jonas Harrow founded the Harrow Mill.",
        read=False,
    )
    assert [(f.src, f.dst, f.reason) for f in failed] == [("D1.1", "D1.2", LOOK_ALIKE)]


def test_a_pronoun_in_a_look_alike_trap_is_still_refused() -> None:
    failed = verdicts(
        "Who founded Rookton Foundry?",
        [TRAP, ROOKTON],
        ["D2.1", "D1.2"],
        "Vidar Tarvard founded Rookton Foundry.",
    )
    assert LOOK_ALIKE in {f.reason for f in failed}


def test_a_comparison_reads_each_documents_it_as_its_option() -> None:
    """ "It was founded in 1812" in two documents names neither option word by word."""
    docs = [
        "Title: Vell Works\nVell Works is a foundry. It was founded in 1812.",
        "Title: Orm Works\nOrm Works is a foundry. It was founded in 1840.",
    ]
    evidence = build_evidence(docs)
    context = ChainContext.of(
        "Which was founded earlier, Vell Works or Orm Works?",
        (span.checked_text for span in evidence.spans),
        {span.id: span.reading for span in evidence.spans if span.reading},
    )
    claims = [context.readings["D1.2"], context.readings["D2.2"]]
    assert context.argument_problem("vell works", claims, claims) is None
    as_written = [evidence.by_id["D1.2"].text, evidence.by_id["D2.2"].text]
    assert context.argument_problem("vell works", as_written, as_written) is not None


def test_a_claim_may_name_what_the_opening_it_stands_for() -> None:
    evidence = build_evidence([MILL])
    ok = check_citation("Harrow Mill was founded in 1790 by Jonas Harrow.", "D1.2", evidence)
    assert ok.ok
    other = check_citation("Kestrel Mill was founded in 1790 by Jonas Harrow.", "D1.2", evidence)
    assert not other.ok


def test_dotted_initials_are_one_word_in_a_question() -> None:
    assert subject_terms("Who founded Harrow F.C.?") == {"harrow", "fc"}


def test_he_and_she_stand_only_for_a_person() -> None:
    assert looks_like_person("Ulla Ellelm")
    assert not looks_like_person("Vantley Works")
    assert opening_reference("She was born in Kelvholt.", "Vantley Works", "") is None
    assert (
        opening_reference("Her year of birth was 1854.", "Ulla Ellelm", "")
        == "Her (Ulla Ellelm's) year of birth was 1854."
    )


def test_a_description_stands_for_the_subject_only_when_the_intro_names_that_kind() -> None:
    assert opening_reference("The river floods.", "Quelheim", "Quelheim is a town.") is None
    assert opening_reference("The town floods.", "Quelheim", "Quelheim is a town.") is not None


def test_a_wrapped_first_line_is_no_title() -> None:
    assert title_line("The mill was built in 1790 by\nJonas Harrow on the river.") is None
    assert title_line("Harrow Mill\n") is None  # nothing follows it
    assert document_subject(None, "It was built in 1790.") is None


def test_prompts_show_the_documents_words_not_the_reading() -> None:
    evidence = build_evidence([MILL])
    assert "(Harrow Mill)" not in evidence.render()


def test_a_given_states_whose_it_it_is_but_keeps_an_opening_description_as_written() -> None:
    spans = build_evidence([MILL]).spans
    assert spans[0].statement == "The Harrow Mill is a watermill on the Wend River."
    assert spans[1].statement == "It (Harrow Mill) was founded in 1790 by Jonas Harrow."
    assert spans[2].statement is None  # "The mill" stays: it could open a longer name


_WORDS = st.sampled_from(["It", "The", "mill", "was", "built", "Harrow", "in", "1790", "yard"])


@settings(max_examples=200, deadline=None)
@given(
    title=st.lists(st.sampled_from(["Harrow", "Mill", "Yard", "of"]), min_size=1, max_size=4),
    sentences=st.lists(st.lists(_WORDS, min_size=1, max_size=8), min_size=1, max_size=4),
)
def test_a_reading_only_adds_the_subject_and_drops_only_the_title(
    title: list[str], sentences: list[list[str]]
) -> None:
    """A reading is its sentence, less the title line, plus at most one bracketed subject
    right after the opening reference."""
    heading = "Title: " + " ".join(title).capitalize()
    document = heading + "\n" + " ".join(" ".join(s) + "." for s in sentences)
    for span in build_evidence([document]).spans:
        if span.reading is None:
            continue
        text = span.text.removeprefix(heading).strip() if span.sentence == 1 else span.text
        assert span.reading.count(" (") <= 1
        assert re.sub(r" \([^)]*\)", "", span.reading, count=1) == text


def test_a_persons_surname_alone_reads_as_the_person_the_article_is_about() -> None:
    text = "Title: Odile Korelm\nOdile Korelm was a craftsman. Korelm was born in Thorvford."
    assert build_evidence([text]).spans[1].reading == (
        "Korelm (Odile Korelm) was born in Thorvford."
    )
    # Not for a company: "Vantley" opening a sentence in the Vantley Works article stays as is.
    works = "Title: Vantley Works\nVantley Works is a foundry. Vantley was its founder's name."
    assert build_evidence([works]).spans[1].reading is None


def test_a_lower_case_title_named_again_by_the_first_sentence_is_a_title() -> None:
    text = "dresselpipe\nThe dresselpipe is a folk instrument. It was invented by Sigrid Quining."
    spans = build_evidence([text]).spans
    assert spans[0].reading == "The dresselpipe is a folk instrument."
    assert spans[1].reading == "It (dresselpipe) was invented by Sigrid Quining."


def test_a_bracket_ends_a_run_of_names_so_a_reading_names_two_mentions_not_one() -> None:
    from orchestrator.checks.chain import evidence_names
    from orchestrator.checks.question import name_runs

    reading = "Korelm (Odile Korelm) was born in Thorvford."
    assert "korelm odile korelm" not in name_runs(reading)
    assert {"korelm", "odile korelm", "thorvford"} <= set(name_runs(reading))
    # The hop chain's step "Odile Korelm" bridges to that reading with no look-alike.
    names = evidence_names([reading, "Odile Korelm was a craftsman."])
    from orchestrator.checks.links import _link_problem

    assert _link_problem("Odile Korelm", reading, names) is None


VELLDRUM = "In which town was the inventor of the velldrum born?"


def test_a_question_naming_its_subject_only_by_a_description_has_that_description_as_subject() -> (
    None
):
    """From prose-0004's replay: without a capitalised name, the subject fell back to the
    question's content words, and "born" let a look-alike's birthplace through."""
    assert subject_terms(VELLDRUM) == {"velldrum"}
    assert relation_terms(VELLDRUM) == {"inventor", "born"}  # what it asks of the velldrum
    assert subject_terms("Who built the ship of the dresselute?") == {"dresselute"}
    comparison = (
        "Who was born earlier: the inventor of the quarzither or the inventor of the silpipe?"
    )
    assert subject_terms(comparison) == {"quarzither", "silpipe"}


def test_a_look_alikes_birthplace_is_no_argument_about_the_described_inventor() -> None:
    documents = [
        "The velldrum is a seven-stringed instrument. It was invented by Odile Ivelane.",
        "Odile Ivelane was born in Wendmere.",
        "Maris Ellane was a potter. Ellane was born in Wendstad.",
    ]
    texts = [span.checked_text for span in build_evidence(documents).spans]
    context = ChainContext.of(VELLDRUM, texts)
    assert context.argument_problem("wendstad", ["Ellane was born in Wendstad."]) == (
        ARGUMENT_OFF_SUBJECT
    )
    inventor = [
        "The velldrum was invented by Odile Ivelane.",
        "Odile Ivelane was born in Wendmere.",
    ]
    assert context.argument_problem("wendmere", inventor) is None
