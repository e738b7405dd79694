"""A retrieved chunk is read under its heading: the section trail above it, else its file's
title line. A chunk from the middle of a file may not say what it is about ("Two new commands
are introduced" in "Git v2.23 Release Notes"; "Added in: v18.3.0" under
"socket.resetAndDestroy()"), so the model is shown the heading and the checks read it."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_fixtures import corpus_script, write_corpus

import corpus
from corpus import CorpusEvidence, Hit, hits_to_evidence, retrieve, temporary_index
from corpus.evidence import build_evidence
from corpus.reference import title_line
from orchestrator.api import run_task
from orchestrator.llm import ChatMessage
from orchestrator.llm.testing import ScriptedClient, ScriptedKwargs
from orchestrator.loop.context_window import document_tokens
from orchestrator.loop.stages.context import RunInputs
from orchestrator.records import RunConfig, Task

RELEASE_NOTES = (
    "Git v2.23 Release Notes\n"
    "=======================\n\n"
    "Updates since v2.22\n\n"
    "Backward compatibility note: the format-patch base option computes stable patch ids.\n\n"
    "UI, Workflows and Features: two new commands switch and restore are introduced to split "
    "checking out a branch to work on advancing its history.\n\n"
    "Performance: the commit graph is written incrementally in larger repositories now.\n"
)
UNTITLED = (
    "the commit graph was rewritten in many small steps over the year.\n\n"
    "Nobody named this file, and its first line is a sentence that wraps.\n"
)
NET = (
    "# Net\n\nThe net module provides an asynchronous network API.\n\n"
    "## Class: net.Socket\n\nThis class is an abstraction of a TCP socket.\n\n"
    "### socket.resetAndDestroy()\n\nAdded in: v18.3.0. It closes the TCP connection "
    "by sending an RST packet and destroys the stream.\n"
)
SOCKET_TRAIL = "Net > Class: net.Socket > socket.resetAndDestroy()"


def every_hit(texts: dict[str, str]) -> list[Hit]:
    """The chunks of an index of ``texts`` (small chunks) that a few keyword searches find."""
    queries = ["patch ids compatibility", "switch restore commands", "commit graph steps"]
    with temporary_index(texts, dense=False, max_chars=120) as index:
        found = retrieve(index, "socket module class TCP", queries, k=50)
    return list(found.hits)


def hit(text: str, section: str = "", title: str = "", number: int = 1) -> Hit:
    return Hit(
        f"f.txt#p1c{number}",
        "f.txt",
        1,
        0,
        len(text),
        section,
        None,
        text,
        0.01,
        1,
        None,
        title=title,
    )


def test_every_chunk_of_a_file_with_a_title_line_carries_that_title() -> None:
    hits = [h for h in every_hit({"2.23.txt": RELEASE_NOTES}) if h.path == "2.23.txt"]
    # The title line is read from the file's first chunk, found or not.
    assert len(hits) > 2 and "2.23.txt#p1c1" not in {h.chunk_id for h in hits}
    assert {h.title for h in hits} == {"Git v2.23 Release Notes"}
    assert {h.heading for h in hits} == {"Git v2.23 Release Notes"}  # plain text: no sections


def test_an_underlined_first_line_is_a_title_and_its_underline_is_no_text() -> None:
    # "v2.23" is not in title case: only the underline says that this line is a title.
    assert title_line("Git v2.23 Release Notes\nLater text.") is None
    text = "Git v2.23 Release Notes\n=======================\n\nFixes since v2.22."
    assert title_line(text) == ("Git v2.23 Release Notes", text.index("\n\n") + 1)
    assert title_line("Install\n-------\nRun make.") == ("Install", 16)
    assert title_line("some notes\n- a list item\n") is None  # a list, no underline
    title, fixes = build_evidence([text]).spans
    assert title.reading is None and fixes.reading is None


def test_a_file_without_a_title_line_gives_its_chunks_no_title() -> None:
    hits = every_hit({"2.23.txt": RELEASE_NOTES, "notes.txt": UNTITLED})
    untitled = [h for h in hits if h.path == "notes.txt"]
    assert untitled and {h.title for h in untitled} == {""}
    assert {h.heading for h in untitled} == {""}


def test_a_markdown_chunk_stands_under_its_section_trail() -> None:
    hits = {h.section: h for h in every_hit({"net.md": NET})}
    assert hits[SOCKET_TRAIL].heading == SOCKET_TRAIL


def test_every_reading_ends_with_its_documents_heading() -> None:
    evidence = build_evidence(
        ["Two new commands are introduced. They split checkout."], ["Git v2.23 Release Notes"]
    )
    assert [span.checked_text for span in evidence.spans] == [
        "Two new commands are introduced. (Git v2.23 Release Notes)",
        "They split checkout. (Git v2.23 Release Notes)",
    ]
    assert [span.text for span in evidence.spans] == [
        "Two new commands are introduced.",
        "They split checkout.",
    ]


def test_a_chunk_opening_with_it_is_about_the_last_element_of_its_heading() -> None:
    (span,) = build_evidence(["It returns the socket itself."], [SOCKET_TRAIL]).spans
    assert (
        span.checked_text
        == f"It (socket.resetAndDestroy()) returns the socket itself. ({SOCKET_TRAIL})"
    )


def test_a_chunks_own_title_line_stays_its_subject() -> None:
    spans = build_evidence(["Title: Harrow Mill\nIt was founded in 1790."], ["Mills"]).spans
    assert spans[0].checked_text == "It (Harrow Mill) was founded in 1790. (Mills)"


def test_span_ids_texts_and_offsets_do_not_depend_on_headings() -> None:
    documents = [RELEASE_NOTES, NET]
    plain = build_evidence(documents).spans
    headed = build_evidence(documents, ["Git v2.23 Release Notes", "Net"]).spans
    assert [(s.id, s.text, s.start, s.end) for s in plain] == [
        (s.id, s.text, s.start, s.end) for s in headed
    ]


def test_the_model_sees_the_heading_of_a_document_that_has_one() -> None:
    evidence = build_evidence(
        ["Two new commands are introduced.", "Rack 7 is in hall B."],
        ["Git v2.23 Release Notes", ""],
    )
    assert evidence.render() == (
        "(D1 is under the heading: Git v2.23 Release Notes)\n"
        "[D1.1] Two new commands are introduced.\n"
        "\n"
        "[D2.1] Rack 7 is in hall B."
    )
    assert evidence.render(order=[2, 1]) == (
        "[D2.1] Rack 7 is in hall B.\n"
        "\n"
        "(D1 is under the heading: Git v2.23 Release Notes)\n"
        "[D1.1] Two new commands are introduced."
    )


def test_documents_without_headings_render_and_read_as_before() -> None:
    documents = ["Title: Harrow Mill\nIt was founded in 1790.", "Rack 7 is in hall B. It hums."]
    assert build_evidence(documents, ["", ""]) == build_evidence(documents)
    assert "heading" not in build_evidence(documents).render()


def test_corpus_evidence_shows_and_checks_each_hit_under_its_heading() -> None:
    shown = hits_to_evidence(
        [
            hit("Two new commands are introduced.", title="Git v2.23 Release Notes"),
            hit("Added in: v18.3.0.", section=SOCKET_TRAIL, title="# Net", number=2),
        ]
    )
    assert shown.headings == ("Git v2.23 Release Notes", SOCKET_TRAIL)
    rendered = shown.evidence.render()
    assert "(D1 is under the heading: Git v2.23 Release Notes)" in rendered
    assert f"(D2 is under the heading: {SOCKET_TRAIL})" in rendered
    assert CorpusEvidence(shown.hits).evidence == shown.evidence


def test_the_loop_reads_a_corpus_tasks_documents_under_their_headings() -> None:
    shown = hits_to_evidence([hit("It is introduced in this release.", title="Git v2.23")])
    task = Task("When?", shown.documents, headings=shown.headings)
    inputs = RunInputs.of(task, "m", RunConfig())
    assert inputs.evidence == shown.evidence
    assert inputs.evidence.spans[0].checked_text == (
        "It (Git v2.23) is introduced in this release. (Git v2.23)"
    )


def test_the_context_window_counts_the_heading_line() -> None:
    text = "Two new commands are introduced."
    assert document_tokens(text, "Git v2.23 Release Notes") > document_tokens(text)


def test_an_answer_read_in_a_heading_comes_from_the_evidence() -> None:
    # "Git 2.27 Release Notes" for "In which release ...?" is read in the heading the model
    # was shown, not brought in from elsewhere (answer_not_in_evidence).
    chunks = [
        hit("* git restore learned to take HEAD by default.", title="Git 2.27 Release Notes"),
        hit("* A bug fix.", title="Git 2.27 Release Notes", number=2),
    ]
    shown = hits_to_evidence(chunks)
    task = Task("In which release?", shown.documents, headings=shown.headings)
    texts = RunInputs.of(task, "m", RunConfig()).evidence_texts
    assert texts[-1] == "git 2.27 release notes" and len(texts) == len(shown.evidence.spans) + 1
    inline = RunInputs.of(Task("In which release?", shown.documents), "m", RunConfig())
    assert len(inline.evidence_texts) == len(inline.evidence.spans)


@pytest.mark.parametrize("on", [False, True])
def test_a_corpus_run_shows_headings_only_when_asked(tmp_path: Path, on: bool) -> None:
    # Off by default: on the outside documentation set the 1.5B answered no more questions
    # with them (docs/results/outside-corpus.md).
    index = tmp_path / "index.sqlite"
    assert corpus.ingest(write_corpus(tmp_path / "docs"), index, dense=False).ok
    script = corpus_script("rack 7 hall", answer=True)
    prompts: list[str] = []

    def reply(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        if kwargs["role"] == "interrogation":
            prompts.append(messages[-1]["content"])
        return script(model, messages, kwargs)

    task = {"question": "Which hall is rack 7 in?", "corpus": str(index)}
    config = RunConfig(n=1, k=1, budget_calls=6, seed=1, chunk_headings=on)
    run_task(task, client=ScriptedClient(reply), model="m", config=config)
    assert prompts and all(("is under the heading:" in prompt) is on for prompt in prompts)
