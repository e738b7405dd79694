"""Issue 35, corpus items: ingest bounded by the work a file makes, not only by its bytes;
a first ingest that dies leaves an index that says so; a search under index roots reads
only the file it checked. Every test asserts on work done or on what was read, never on
wall time (tests/faults_corpus.py prints the time and memory figures)."""

from __future__ import annotations

import sqlite3
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from corpus_fixtures import HAS_PYPDF, ingest_killed_after, make_pdf, write_corpus

import corpus
from corpus import documents, index_ingest, pdf, readers
from corpus.chunking import chunk_page, iter_chunks
from corpus.chunking_headings import DENSE_CHARS, DENSE_FLOOR
from corpus.documents import search_evidence
from corpus.index import CorpusIndexError, open_index
from corpus.index_pin import pin_inside
from corpus.readers import html_to_text


def ingest(root: Path, index: Path) -> corpus.IngestReport:
    return corpus.ingest(root, index, dense=False)


def calls_made(work: Callable[[], object]) -> int:
    """How many Python function calls and generator resumptions ``work`` makes: a measure
    of work that does not depend on the machine's speed or load."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call":
            count += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


def test_chunking_blank_line_text_holds_one_chunk_at_a_time_not_the_page_s_blocks() -> None:
    text = "a\n\n" * 100_000  # 300 kB: 100,000 blocks of one letter
    tracemalloc.start()
    try:
        chunks = sum(1 for _ in iter_chunks(text, "blank.txt"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert chunks == len(chunk_page(text, "blank.txt")) == 250
    # A list of every blank-line match once took about 40 bytes per input byte.
    assert peak < len(text) // 10


def test_a_page_of_headings_costs_the_same_work_per_heading_whatever_the_size_bound() -> None:
    text = "# h\n" * 3_000
    small = calls_made(lambda: chunk_page(text, "h.md", max_chars=100))
    large = calls_made(lambda: chunk_page(text, "h.md", max_chars=10_000))
    # Packing once rescanned every block of the open chunk for each new block: 25 blocks
    # per chunk at 100 characters, 2,500 at 10,000.
    assert large < 1.2 * small


def test_headings_on_every_other_line_make_chunks_by_length_not_by_heading() -> None:
    text = "".join(f"# h{i}\nx\n" for i in range(20_000))
    chunks = chunk_page(text, "dense.md")
    # One per heading would be 20,000; the size bound still closes chunks of its own.
    assert len(chunks) <= DENSE_FLOOR + len(text) // DENSE_CHARS + 2 * len(text) // 1200 + 1
    assert "".join(c.text for c in chunks).replace("\n", "") == text.replace("\n", "")
    assert chunks[0].section == "h0"


def test_a_manual_with_short_sections_still_gets_a_chunk_per_section() -> None:
    text = "".join(f"## Step {i}\n\nTurn the key of rack {i} to the left.\n\n" for i in range(50))
    chunks = chunk_page(text, "manual.md")
    assert [c.section for c in chunks] == [f"Step {i}" for i in range(50)]


def test_html_dense_with_headings_or_list_items_is_chunked_with_bounded_work() -> None:
    for item in ("<h1>a</h1>", "<li>a</li>"):
        text = html_to_text(item * 2_000)

        def small_chunks(text: str = text) -> object:
            return chunk_page(text, "x.html", max_chars=100)

        def large_chunks(text: str = text) -> object:
            return chunk_page(text, "x.html", max_chars=10_000)

        small = calls_made(small_chunks)
        large = calls_made(large_chunks)
        assert large < 1.2 * small, item


def test_a_file_over_the_chunk_limit_fails_and_keeps_its_previous_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_corpus(tmp_path / "docs", {"a.md": "# A\n\nshort", "b.txt": "kept"})
    index = tmp_path / "idx.sqlite"
    ingest(root, index)
    monkeypatch.setattr(index_ingest, "MAX_CHUNKS_PER_FILE", 10)
    (root / "a.md").write_text("".join(f"Paragraph {i}. " * 30 + "\n\n" for i in range(40)))
    (root / "c.txt").write_text("new file")
    report = ingest(root, index)
    assert [(p.path, p.reason) for p in report.failed] == [
        (
            "a.md",
            "would make more than 10 chunks, the limit per file; it was not indexed "
            "(the previously indexed version is kept)",
        )
    ]
    assert report.accepted == ("c.txt",)
    with sqlite3.connect(index) as conn:
        rows = conn.execute(
            "SELECT chunks.text FROM chunks JOIN files ON files.id = file_id WHERE path = 'a.md'"
        ).fetchall()
        counted = conn.execute("SELECT chunks FROM files WHERE path = 'a.md'").fetchone()
    assert rows == [("# A\n\nshort",)] and counted == (1,)


@pytest.mark.skipif(not HAS_PYPDF, reason="needs the corpus extra (pypdf)")
def test_a_pdf_naming_one_page_20000_times_makes_one_chunk(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "loop.pdf").write_bytes(make_pdf(["Rack 7 is in hall B."], order=[0] * 20_000))
    (root / "real.pdf").write_bytes(make_pdf(["one", "two", "three"], order=[0, 1, 0, 2]))
    report = ingest(root, tmp_path / "idx.sqlite")
    assert report.ok
    with sqlite3.connect(tmp_path / "idx.sqlite") as conn:
        rows = conn.execute("SELECT chunk_id, text FROM chunks ORDER BY chunk_id").fetchall()
    assert rows == [
        ("loop.pdf#p1c1", "Rack 7 is in hall B."),
        ("real.pdf#p1c1", "one"),
        ("real.pdf#p2c1", "two"),
        ("real.pdf#p4c1", "three"),
    ]


def test_a_first_ingest_killed_halfway_leaves_an_index_that_says_so_and_the_next_one_recovers(
    tmp_path: Path,
) -> None:
    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    assert ingest_killed_after(root, index, 2)
    with pytest.raises(CorpusIndexError, match="its first ingest has not finished"):
        corpus.search(index, "tape library", dense=False)
    error = search_evidence(str(index), "tape library", 1, roots=[tmp_path])["error"]
    assert "first ingest has not finished" in error
    assert ingest(root, index).ok
    assert corpus.search(index, "tape library", dense=False)


def test_a_folder_swapped_for_a_link_after_the_root_check_is_never_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = tmp_path / "served"
    (served / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    ingest(write_corpus(tmp_path / "inside-docs", {"a.md": "inside words"}), served / "sub" / "i")
    ingest(write_corpus(tmp_path / "outside-docs", {"a.md": "secret words"}), outside / "i")
    real_pin = pin_inside

    def pin_then_swap(index: str, roots: Any) -> Any:
        pinned = real_pin(index, roots)  # the check passes on the real folder ...
        (served / "sub").rename(served / "old")  # ... which is then swapped for a link
        (served / "sub").symlink_to(outside)
        return pinned

    monkeypatch.setattr(documents, "pin_inside", pin_then_swap)
    found = search_evidence(str(served / "sub" / "i"), "secret words", 5, roots=[served])
    assert "hits" not in found
    assert "changed while it was being opened" in found["error"]


def test_a_pinned_index_refuses_a_connection_to_a_file_put_in_its_place(tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    ingest(write_corpus(tmp_path / "a", {"a.md": "first"}), served / "i")
    ingest(write_corpus(tmp_path / "b", {"b.md": "second"}), tmp_path / "other")
    pinned = pin_inside(str(served / "i"), [served])
    assert pinned is not None
    with pinned:
        with open_index(pinned) as conn:
            assert conn.execute("SELECT COUNT(*) FROM files").fetchone() == (1,)
        (tmp_path / "other").replace(served / "i")
        with (
            pytest.raises(CorpusIndexError, match="changed while it was being opened"),
            open_index(pinned),
        ):
            pass


def test_a_link_or_a_folder_below_a_root_is_not_pinned(tmp_path: Path) -> None:
    served = tmp_path / "served"
    (served / "dir").mkdir(parents=True)
    ingest(write_corpus(tmp_path / "a", {"a.md": "words"}), tmp_path / "outside")
    (served / "link").symlink_to(tmp_path / "outside")
    assert pin_inside(str(served / "link"), [served]) is None
    assert pin_inside(str(served / "dir"), [served]) is None
    assert pin_inside(str(served), [served]) is None


def test_a_shell_comment_in_pre_is_text_not_a_section_heading() -> None:
    markup = (
        "<h2>Install</h2><pre>npm install\n# In same folder as preceding package.json\n"
        "node app.js</pre><h2>Run</h2><p>Start it.</p>"
    )
    text = html_to_text(markup)
    assert "\\# In same folder as preceding package.json" in text
    chunks = chunk_page(text, "x.html", max_chars=100)
    assert [c.section for c in chunks] == ["Install", "Run"]


def test_permalinks_and_source_links_stay_out_of_headings() -> None:
    markup = (
        '<h2>Stream<span><a class="mark" href="#stream">#</a></span>'
        '<a class="srclink" href="https://example.org/stream.js">[src]</a></h2>'
        '<h4>Buffering<a href="#buffering">#</a></h4><h3>Pilcrow<a href="#p">\u00b6</a></h3>'
        '<h2><a href="#install">Install</a> it</h2><p>See <a href="#x">#</a> here.</p>'
    )
    assert html_to_text(markup).split("\n\n") == [
        "## Stream",
        "#### Buffering",
        "### Pilcrow",
        "## Install it",
        "See # here.",
    ]


def _pdf_read_peak(data: bytes) -> tuple[int, list[readers.Page]]:
    """The traced peak memory of reading ``data`` as a PDF (after a warm-up read, so that
    modules pypdf imports on first use do not count), and its pages."""
    readers.read_pdf(make_pdf(["warm up"]))
    tracemalloc.start()
    try:
        pages = readers.read_pdf(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, pages


@pytest.mark.skipif(not HAS_PYPDF, reason="needs the corpus extra (pypdf)")
def test_a_page_tree_naming_one_page_20000_times_is_read_in_memory_of_the_file_s_order() -> None:
    data = make_pdf(["Rack 7 is in hall B."], order=[0] * 20_000)
    peak, pages = _pdf_read_peak(data)
    assert pages == [readers.Page(1, "Rack 7 is in hall B.")]
    # pypdf makes an object of about 120 bytes for each 6-byte reference: the repeats of a
    # /Kids array once cost 2.3 MB, 19 times this 120 kB file.
    assert peak < 3 * len(data)


@pytest.mark.skipif(not HAS_PYPDF, reason="needs the corpus extra (pypdf)")
def test_repeated_pages_keep_the_page_numbers_they_had() -> None:
    texts = ["one", "two", "three", "four"]
    for order, numbers in (
        ([0, 1, 0, 2], [1, 2, 4]),
        ([0, 1, 0, 0, 0, 2], [1, 2, 6]),
        ([0, 1, 0, 1, 0, 1, 0, 1, 2, 2, 2, 3], [1, 2, 9, 12]),
        ([0] * 500 + [1] + [1, 0] * 300 + [2], [1, 501, 1102]),
    ):
        data = make_pdf(texts[: max(order) + 1], order=order)
        assert len(pdf._collapse_repeated_kids(data)) == len(data)  # offsets still hold
        pages = readers.read_pdf(data)
        assert [page.number for page in pages] == numbers, order
        assert [page.text for page in pages] == texts[: len(numbers)]


@pytest.mark.skipif(not HAS_PYPDF, reason="needs the corpus extra (pypdf)")
def test_a_40_page_pdf_is_read_one_page_at_a_time() -> None:
    texts = [
        f"Page {n} of the manual. " + "Rack seven holds the tape library. " * 80 for n in range(40)
    ]
    data = make_pdf(texts)
    peak, pages = _pdf_read_peak(data)
    assert [page.text for page in pages] == texts
    # Each page's content stream and its parse were once kept until the whole file was read
    # (7 times the file); now a page is let go once its text is out.
    assert peak < 5 * len(data)


@pytest.mark.skipif(not HAS_PYPDF, reason="needs the corpus extra (pypdf)")
def test_a_pdf_whose_pages_expand_past_the_content_limit_is_a_read_error() -> None:
    data = make_pdf(["rack seven hall b"], repeat=60_000)  # 4 kB that expand to 1.4 MB
    limit = pdf.pdf_content_limit(len(data))
    assert limit == pdf.PDF_CONTENT_FLOOR
    with pytest.raises(readers.ReadError) as caught:
        readers.read_pdf(data)
    assert str(caught.value) == (
        f"its pages expand to more than {limit:,} bytes of content "
        f"(the limit for a {len(data):,}-byte PDF: {pdf.PDF_CONTENT_PER_BYTE} times its "
        f"size, at least {pdf.PDF_CONTENT_FLOOR:,}); it was not indexed"
    )
    # Under the limit the same kind of file is read whole.
    pages = readers.read_pdf(make_pdf(["rack seven hall b"], repeat=2_000))
    assert pages[0].text.count("rack seven hall b") == 2_000


def _parsed_by_html_parser(markup: str) -> str:
    extractor = readers._TextExtractor()
    extractor.feed(markup)
    extractor.close()
    return extractor.text()


def test_tags_with_plain_attributes_cost_what_bare_tags_do_and_read_the_same() -> None:
    bare = "<li>a</li>" * 2_000
    with_class = '<li class="x">a</li>' * 2_000
    # Tags with attributes went through html.parser's general tag parsing: 4.4 times prose
    # HTML for a page of <li class="x"> items, against 2.6 for bare <li>.
    assert calls_made(lambda: html_to_text(with_class)) <= calls_made(lambda: html_to_text(bare))
    for markup in (
        with_class,
        "<h1 id=top>Title</h1><p class='a' hidden>x &amp; y</p><br><div data-x=\"1\">t</div>",
        "<h2>T <a href='#t'>#</a></h2><p>x</p><pre class=c># cmd\nx</pre><p>after</p>",
        '<p class="a" >x</p><script type="t">dropped</script>y<svg><text>q</text></svg>z',
    ):
        assert html_to_text(markup) == _parsed_by_html_parser(markup), markup


def test_a_page_of_headings_in_html_costs_few_calls_per_tag() -> None:
    markup = "<h1>a</h1>" * 2_000
    # One handler call per tag and a paragraph's work per heading were 3 times prose HTML.
    assert calls_made(lambda: html_to_text(markup)) < 2 * 2_000
    assert html_to_text(markup) == _parsed_by_html_parser(markup)


def test_chunk_rows_are_the_chunks_an_ingest_stores() -> None:
    from corpus.chunking import iter_chunk_rows

    for text in ("# Rack\nhall\n" * 3_000, "a\n\n" * 500, "## A\n\nRack 7. " * 300, ""):
        rows = list(iter_chunk_rows(text, "d/x.md", 3, max_chars=300))
        chunks = iter_chunks(text, "d/x.md", 3, max_chars=300)
        assert rows == [(c.id, c.page, c.number, c.start, c.end, c.section, c.text) for c in chunks]
    with pytest.raises(ValueError, match="max_chars"):
        iter_chunk_rows("x", "x.md", max_chars=5)
