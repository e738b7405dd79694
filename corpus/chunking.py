"""Structure-aware chunking of one page of text into retrieval units with stable ids.

A *chunk* is a contiguous slice ``text[start:end]`` of a page. Chunks follow the structure
of the text:

1. The page is cut into *blocks*: a blank line ends a block, and a Markdown heading line
   (``#`` to ``######`` then a space) is a block of its own.
2. Blocks are packed greedily into chunks of at most ``max_chars`` characters. A heading
   opens a new chunk (unless the chunk so far holds only headings, or rule 4 says no), so a
   section's paragraphs stay with their heading.
3. A block longer than ``max_chars`` is cut at sentence ends (the splitter of
   :mod:`corpus.evidence`, so a chunk never ends inside "Dr. Kell" or "3.5 kg"), and a
   sentence longer than ``max_chars`` at the last whitespace before the bound (or at the
   bound itself when there is none).
4. A page cannot buy a chunk per heading without limit: a heading opens a chunk only while
   the page has made fewer than :data:`DENSE_FLOOR` chunks plus one per :data:`DENSE_CHARS`
   characters before the heading; past that it stays in the chunk it meets. Prose and
   manuals (sections of a few hundred characters) never reach the budget; a page of
   headings on every other line makes at most about one chunk per 200 characters instead
   of one per heading.

Every chunk carries ``section``: the trail of the headings above it (``"Install > Linux"``).
Chunk ids are ``<relative path>#p<page>c<number>`` (page and number 1-based), so the same
file cut with the same settings always gets the same ids; :data:`CHUNKER_VERSION` changes
whenever the rules change, so an index knows when its chunks are stale.

Cost: O(len(text)) per page (each character is looked at a bounded number of times), and
O(max_chars) memory beyond the text when the chunks are taken one at a time
(:func:`iter_chunks`). Runs of small blocks are taken in one regex scan each (paragraphs
that all fit the open chunk, heading lines that fit a chunk of headings, and lines past
the heading budget), so a page of tiny blocks costs about what prose does; every such
step gives the chunks the block-by-block rules give.

Where the rules live: the blocks and the cutting of a long block (rules 1 and 3) in
:mod:`corpus.chunking_blocks`; the heading trail, the budget of rule 4 and the runs taken in
one step in :mod:`corpus.chunking_headings`; the packing of blocks into chunks (rule 2) here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from corpus.chunking_blocks import BLANK_RUN, bounded, last_break, lines, trim, trimmed_end
from corpus.chunking_headings import (
    DENSE_CHARS,
    DENSE_FLOOR,
    MIXED_MIN,
    heading_run,
    mixed_run,
)

CHUNKER_VERSION = 2
"""Bumped whenever the chunking rules change (an index then re-chunks every file)."""

DEFAULT_MAX_CHARS = 1200
"""About 300 tokens: well inside multilingual-e5-small's 512-token window."""

MIN_MAX_CHARS = 100
MAX_MAX_CHARS = 100_000


@dataclass(frozen=True)
class Chunk:
    """One chunk of one page: ``page_text[start:end] == text``.

    Parameters
    ----------
    id : str
        ``<relative path>#p<page>c<number>`` (:func:`chunk_id`).
    page, number : int
        The 1-based page, and the 1-based place of the chunk in it.
    start, end : int
        Character offsets of the chunk in its page's text.
    section : str
        The heading trail above the chunk, ``" > "``-joined; ``""`` when there is none.
    text : str
        The chunk's text.

    See Also
    --------
    chunk_page : cuts a page into chunks.

    Examples
    --------
    >>> from corpus import chunk_page
    >>> page = "# Site\\n\\nRack 7 stands in hall B.\\n"
    >>> (chunk,) = chunk_page(page, "guide.md")
    >>> chunk.id, chunk.section
    ('guide.md#p1c1', 'Site')
    >>> page[chunk.start : chunk.end] == chunk.text
    True
    """

    id: str
    """``<relative path>#p<page>c<number>``."""
    page: int
    """1-based page number (1 for files without pages)."""
    number: int
    """1-based position of the chunk in its page."""
    start: int
    end: int
    """Character offsets of the chunk in its page's text."""
    section: str
    """Heading trail above the chunk, ``" > "``-joined; empty when there is none."""
    text: str


def chunk_id(relative_path: str, page: int, number: int) -> str:
    """The stable id of chunk ``number`` of ``page`` of the file at ``relative_path``.

    Cost: O(len(path)).

    Parameters
    ----------
    relative_path : str
        The file's path relative to the ingested folder, with ``/`` separators whatever the
        platform.
    page, number : int
        The 1-based page, and the 1-based place of the chunk in it.

    Returns
    -------
    str
        ``<relative_path>#p<page>c<number>``.

    Raises
    ------
    ValueError
        When ``relative_path`` is blank or not a string, or ``page`` or ``number`` is not a
        positive integer.

    Examples
    --------
    >>> from corpus import chunk_id
    >>> chunk_id("manuals/guide.md", 2, 3)
    'manuals/guide.md#p2c3'
    >>> chunk_id("guide.md", 0, 1)
    Traceback (most recent call last):
    ...
    ValueError: page must be a positive integer, got 0
    """
    if not isinstance(relative_path, str) or not relative_path.strip():
        raise ValueError("relative_path must be a non-empty string")
    for name, value in (("page", page), ("number", number)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return f"{relative_path}#p{page}c{number}"


def chunk_page(
    text: str, relative_path: str, page: int = 1, *, max_chars: int = DEFAULT_MAX_CHARS
) -> list[Chunk]:
    """Cut one page into chunks (see the module rules), in text order.

    Deterministic: the same arguments always give the same chunks. Cost: O(len(text)).

    Parameters
    ----------
    text : str
        The page's text.
    relative_path : str
        The file's path relative to the ingested folder (for the chunk ids).
    page : int, optional
        The 1-based page number (default 1).
    max_chars : int, optional
        The size bound of a chunk, :data:`MIN_MAX_CHARS` to :data:`MAX_MAX_CHARS`
        (default :data:`DEFAULT_MAX_CHARS`).

    Returns
    -------
    list of Chunk
        The chunks, in text order; none for a page of whitespace only. Each heading starts
        a chunk and names its section.

    Raises
    ------
    ValueError
        When an argument is out of its range (raised by the chunker this wraps).

    Examples
    --------
    >>> from corpus import chunk_page
    >>> page = "# Site\\n\\nRack 7 stands in hall B.\\n\\n## Power\\n\\nHall B has two feeds.\\n"
    >>> [(chunk.id, chunk.section) for chunk in chunk_page(page, "guide.md")]
    [('guide.md#p1c1', 'Site'), ('guide.md#p1c2', 'Site > Power')]
    >>> chunk_page("  \\n", "guide.md")
    []
    """
    return list(iter_chunks(text, relative_path, page, max_chars=max_chars))


def iter_chunks(
    text: str, relative_path: str, page: int = 1, *, max_chars: int = DEFAULT_MAX_CHARS
) -> Iterator[Chunk]:
    """The chunks of :func:`chunk_page`, one at a time: a caller that stores them as they
    come holds one chunk, not the page's list (a page of tiny blocks makes many chunks).
    Arguments are checked before the first chunk. Cost: O(len(text)), O(max_chars) memory
    beyond the text."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    if isinstance(max_chars, bool) or not isinstance(max_chars, int):
        raise ValueError(f"max_chars must be an integer, got {max_chars!r}")
    if not MIN_MAX_CHARS <= max_chars <= MAX_MAX_CHARS:
        raise ValueError(
            f"max_chars must be between {MIN_MAX_CHARS} and {MAX_MAX_CHARS}, got {max_chars}"
        )
    chunk_id(relative_path, page, 1)  # validates the path and page
    return _numbered(text, relative_path, page, max_chars)


ChunkRow = tuple[str, int, int, int, int, str, str]
"""A chunk as an ingest stores it: ``(id, page, number, start, end, section, text)``."""


def iter_chunk_rows(
    text: str, relative_path: str, page: int = 1, *, max_chars: int = DEFAULT_MAX_CHARS
) -> Iterator[ChunkRow]:
    """The chunks of :func:`iter_chunks` as plain tuples (:data:`ChunkRow`), without a
    :class:`Chunk` object each (a page of 21,000 small chunks spent a tenth of its ingest
    building them). Arguments are checked as :func:`iter_chunks` checks them. Cost: as
    :func:`iter_chunks`."""
    iter_chunks(text, relative_path, page, max_chars=max_chars)  # checks the arguments
    prefix = f"{relative_path}#p{page}c"
    return (
        (f"{prefix}{number}", page, number, start, end, section, text[start:end])
        for number, (start, end, section) in enumerate(_spans(text, max_chars), 1)
    )


def _numbered(text: str, relative_path: str, page: int, max_chars: int) -> Iterator[Chunk]:
    for number, (start, end, section) in enumerate(_spans(text, max_chars), 1):
        yield Chunk(
            id=f"{relative_path}#p{page}c{number}",
            page=page,
            number=number,
            start=start,
            end=end,
            section=section,
            text=text[start:end],
        )


def _spans(text: str, max_chars: int) -> Iterator[tuple[int, int, str]]:
    """``(start, end, section)`` of each chunk of ``text`` (rules 1 to 4): each turn of the
    loop takes a run of headings, a run of lines past the heading budget, a run of
    paragraphs that fit the open chunk, or else the blocks up to the next blank line."""
    packer = _Packer(text, max_chars)
    while packer.position <= packer.length:
        if packer.heading_run() or packer.mixed_run() or packer.paragraphs():
            continue
        yield from packer.blocks()
    if packer.chunk_start >= 0:
        yield packer.chunk_start, packer.chunk_end, packer.chunk_section


class _Packer:
    """The state of :func:`_spans` over one page, and its steps.

    The chunk being packed is two offsets and a flag, never a list of its blocks: a page of
    one-line blocks ("a\\n\\n" or "# h\\n" repeated) once kept every block of a chunk and
    scanned that list for every new block, quadratic in the blocks per chunk."""

    __slots__ = (
        "brk",
        "brk_from",
        "chunk_end",
        "chunk_section",
        "chunk_start",
        "count",
        "has_body",
        "length",
        "levels",
        "max_chars",
        "no_run_at",
        "position",
        "section",
        "text",
        "titles",
    )

    def __init__(self, text: str, max_chars: int) -> None:
        self.text, self.max_chars = text, max_chars
        self.levels: list[int] = []  # the heading trail: its levels, rising, and its titles
        self.titles: list[str] = []
        self.section = ""
        self.chunk_start = self.chunk_end = -1  # -1: no chunk open
        self.has_body = False  # the open chunk holds a block that is not a heading
        self.chunk_section = ""
        self.count = 0  # chunks yielded so far
        self.position, self.length = 0, len(text)
        self.brk: re.Match[str] | None = None
        self.brk_from = self.length + 1  # where ``brk`` was searched from; past the end: not yet
        self.no_run_at = -1  # where a run of headings was looked for and none was taken

    def heading_run(self) -> bool:
        """A run of heading lines that fits the chunk of headings being packed (or opens
        one) is taken in one step: one regex scan for the run, one for its levels and
        titles, the trail worked out backwards from the last heading."""
        if self.has_body or self.position == self.no_run_at:
            return False
        run = heading_run(
            self.text, self.position, self.chunk_start, self.max_chars, self.levels, self.titles
        )
        if run is None:
            self.no_run_at = self.position
            return False
        first_start, self.position = run
        if self.chunk_start < 0:
            self.chunk_start = first_start
        self.chunk_end = self.position
        self.chunk_section = self.section = " > ".join(self.titles)
        return True

    def mixed_run(self) -> bool:
        """Past the heading budget, the lines up to the last heading that fits are taken in
        one step (:func:`~corpus.chunking_headings.mixed_run`)."""
        if not self.has_body or self.position == self.no_run_at:
            return False
        text, position = self.text, self.position
        step = mixed_run(
            text, position, self.chunk_start, self.max_chars, self.count, self.levels, self.titles
        )
        if step is None:
            self.no_run_at = position
            return False
        self.chunk_end = trimmed_end(text, position, step)
        self.position = step
        self.section = " > ".join(self.titles)
        return True

    def paragraphs(self) -> bool:
        """Every block that ends before the size bound joins the open chunk whole, so a run
        of them (blank-line text: "a\\n\\n" repeated) is taken in one step: up to the last
        blank-line break before the bound and before any "#", found at C speed. The scan
        stops at the next "#", so it costs no more than the blocks."""
        text, position, chunk_start = self.text, self.position, self.chunk_start
        bound = chunk_start + self.max_chars
        if chunk_start < 0 or position >= bound:
            return False
        heading_at = text.find("#", position, bound)
        if heading_at == position:  # a block that starts with "#" goes the usual way
            return False
        last = last_break(text, position, bound if heading_at == -1 else heading_at)
        if last is None:
            return False
        taken = trim(text, position, last, None)
        if taken is not None:
            if not self.has_body:
                self.chunk_section = self.section
            self.chunk_end, self.has_body = taken[1], True
        self.position = BLANK_RUN.match(text, last).end()  # type: ignore[union-attr]
        return True

    def blocks(self) -> Iterator[tuple[int, int, str]]:
        """The blocks up to the next blank-line break, one at a time (a heading may stop
        them: the loop then takes the run of lines that starts there); yields the chunks
        they close."""
        max_chars = self.max_chars
        for block_start, block_end, heading in self._next_blocks():
            if heading is not None:
                # Rule 4: past the budget a heading stays in the chunk it meets, so a page of
                # headings on every other line cannot cost a row, an index entry and an
                # embedding per few bytes.
                if self.has_body and self.count < DENSE_FLOOR + block_start // DENSE_CHARS:
                    yield self._close()
                if not self.has_body and block_start != self.no_run_at:
                    self.position = block_start  # headings may follow: the loop takes the run
                    return
                self._push_heading(heading)
            if block_end - block_start <= max_chars:
                pieces: Iterable[tuple[int, int]] = ((block_start, block_end),)
            else:
                pieces = bounded(self.text, block_start, block_end, max_chars)
            for start, end in pieces:
                if self.chunk_start >= 0 and end - self.chunk_start > max_chars:
                    yield self._close()
                self._add_piece(start, end, heading is None)
            if heading is not None and self._room_after_heading(block_end):
                self.position = block_end  # past the budget, with room: the loop takes the lines
                return

    def _next_blocks(self) -> Iterable[tuple[int, int, tuple[int, str] | None]]:
        """The blocks from :attr:`position` to the next blank-line break, which
        :attr:`position` moves past."""
        text, position, length, brk = self.text, self.position, self.length, self.brk
        if self.brk_from > position or (brk is not None and brk.start() < position):
            # Looked up again only once it is behind: a page without blank lines is
            # scanned once, however often the loop starts again inside it.
            brk = self.brk = BLANK_RUN.search(text, position)
            self.brk_from = position
        end = brk.start() if brk else length
        self.position = brk.end() if brk else length + 1
        if text.find("#", position, end) != -1:
            return lines(text, position, end)
        block = trim(text, position, end, None)  # no heading line: one paragraph block
        return (block,) if block is not None else ()

    def _close(self) -> tuple[int, int, str]:
        """The open chunk's span, the chunk now closed."""
        span = self.chunk_start, self.chunk_end, self.chunk_section
        self.count += 1
        self.chunk_start, self.has_body = -1, False
        return span

    def _push_heading(self, heading: tuple[int, str]) -> None:
        """Bring the trail past ``heading`` (its level and title): its levels only rise."""
        levels, titles = self.levels, self.titles
        while levels and levels[-1] >= heading[0]:
            levels.pop()
            titles.pop()
        levels.append(heading[0])
        titles.append(heading[1])
        self.section = " > ".join(titles)

    def _add_piece(self, start: int, end: int, body: bool) -> None:
        """Put ``text[start:end]`` in the open chunk (opening one when none is)."""
        if not self.has_body:
            self.chunk_section = self.section
        if self.chunk_start < 0:
            self.chunk_start = start
        self.chunk_end = end
        if body:
            self.has_body = True

    def _room_after_heading(self, block_end: int) -> bool:
        """Whether the open chunk, past the heading budget, has room after the heading
        that ends at ``block_end`` for :meth:`mixed_run` to take the lines that follow."""
        return (
            self.has_body
            and block_end != self.no_run_at
            and min(self.chunk_start + self.max_chars, (self.count - DENSE_FLOOR + 1) * DENSE_CHARS)
            > block_end + MIXED_MIN
        )
