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
"""

from __future__ import annotations

import itertools
import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from corpus.evidence import split_sentences

CHUNKER_VERSION = 2
"""Bumped whenever the chunking rules change (an index then re-chunks every file)."""

DEFAULT_MAX_CHARS = 1200
"""About 300 tokens: well inside multilingual-e5-small's 512-token window."""

DENSE_CHARS = 200
DENSE_FLOOR = 64
"""Rule 4: a heading opens a chunk only while the page's chunks so far number fewer than
``DENSE_FLOOR`` plus one per ``DENSE_CHARS`` characters before the heading."""
_MIXED_MIN = 64
"""Room needed after a heading past the budget before the lines are taken in one step."""

MIN_MAX_CHARS = 100
MAX_MAX_CHARS = 100_000

_HEADING = re.compile(r"[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_HEADING_RUN = re.compile(
    r"[ \t]{0,3}#{1,6}[ \t]+[^\n]*(?:\n(?:[ \t]*\n[ \t\n]*)?[ \t]{0,3}#{1,6}[ \t]+[^\n]*)*"
)
"""Heading lines one after another, blank lines allowed between them (a blank line's
break takes the next line's indent with it, as rule 1's blocks do)."""
_HEADING_LINE = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$", re.MULTILINE)
"""A heading line found by a scan: it starts after a newline."""
_RUN_HEADINGS = re.compile(r"^[ \t]*(#{1,6})[ \t]+(.*?)[ \t#]*$", re.MULTILINE)
"""The headings of a run that :data:`_HEADING_RUN` matched (any indent: a break took it)."""
_BLANK_RUN = re.compile(r"\n[ \t]*\n[ \t\n]*")


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
    """``(start, end, section)`` of each chunk of ``text`` (rules 1 to 4)."""
    # The chunk being packed is two offsets and a flag, never a list of its blocks: a page
    # of one-line blocks ("a\n\n" or "# h\n" repeated) once kept every block of a chunk
    # and scanned that list for every new block, quadratic in the blocks per chunk.
    levels: list[int] = []  # the heading trail: its levels, rising, and its titles
    titles: list[str] = []
    section = ""
    chunk_start = chunk_end = -1  # -1: no chunk open
    has_body = False  # the open chunk holds a block that is not a heading
    chunk_section = ""
    count = 0  # chunks yielded so far
    position, length = 0, len(text)
    brk: re.Match[str] | None = None
    brk_from = length + 1  # where ``brk`` was searched from; past the end: not yet
    no_run_at = -1  # where a run of headings was looked for and none was taken
    while position <= length:
        if not has_body and position != no_run_at:
            # A run of heading lines that fits the chunk of headings being packed (or
            # opens one) is taken in one step: one regex scan for the run, one for its
            # levels and titles, the trail worked out backwards from the last heading.
            run = _heading_run(text, position, chunk_start, max_chars, levels, titles)
            if run is None:
                no_run_at = position
            else:
                first_start, position = run
                chunk_start = first_start if chunk_start < 0 else chunk_start
                chunk_end = position
                chunk_section = section = " > ".join(titles)
                continue
        if has_body and position != no_run_at:
            step = _mixed_run(text, position, chunk_start, max_chars, count, levels, titles)
            if step is None:
                no_run_at = position
            else:
                chunk_end = _trimmed_end(text, position, step)
                position = step
                section = " > ".join(titles)
                continue
        bound = chunk_start + max_chars
        if chunk_start >= 0 and position < bound:
            # Every block that ends before the size bound joins the open chunk whole, so a
            # run of them (blank-line text: "a\n\n" repeated) is taken in one step: up to
            # the last blank-line break before the bound and before any "#", found at C
            # speed. The scan stops at the next "#", so it costs no more than the blocks.
            heading_at = text.find("#", position, bound)
            last = None
            if heading_at != position:  # a block that starts with "#" goes the usual way
                last = _last_break(text, position, bound if heading_at == -1 else heading_at)
            if last is not None:
                taken = _trim(text, position, last, None)
                if taken is not None:
                    if not has_body:
                        chunk_section = section
                    chunk_end, has_body = taken[1], True
                position = _BLANK_RUN.match(text, last).end()  # type: ignore[union-attr]
                continue
        if brk_from > position or (brk is not None and brk.start() < position):
            # Looked up again only once it is behind: a page without blank lines is
            # scanned once, however often the loop starts again inside it.
            brk, brk_from = _BLANK_RUN.search(text, position), position
        end = brk.start() if brk else length
        blocks: Iterable[tuple[int, int, tuple[int, str] | None]]
        if text.find("#", position, end) == -1:  # no heading line: one paragraph block
            block = _trim(text, position, end, None)
            blocks = (block,) if block is not None else ()
        else:
            blocks = _lines(text, position, end)
        position = brk.end() if brk else length + 1
        for block_start, block_end, heading in blocks:
            if heading is not None:
                # Rule 4: past the budget a heading stays in the chunk it meets, so a page of
                # headings on every other line cannot cost a row, an index entry and an
                # embedding per few bytes.
                if has_body and count < DENSE_FLOOR + block_start // DENSE_CHARS:
                    yield chunk_start, chunk_end, chunk_section
                    count += 1
                    chunk_start, has_body = -1, False
                if not has_body and block_start != no_run_at:
                    position = block_start  # headings may follow: the loop takes the run
                    break
                while levels and levels[-1] >= heading[0]:  # the trail's levels only rise
                    levels.pop()
                    titles.pop()
                levels.append(heading[0])
                titles.append(heading[1])
                section = " > ".join(titles)
            if block_end - block_start <= max_chars:
                pieces: Iterable[tuple[int, int]] = ((block_start, block_end),)
            else:
                pieces = _bounded(text, block_start, block_end, max_chars)
            for start, end in pieces:
                if chunk_start >= 0 and end - chunk_start > max_chars:
                    yield chunk_start, chunk_end, chunk_section
                    count += 1
                    chunk_start, has_body = -1, False
                if not has_body:
                    chunk_section = section
                if chunk_start < 0:
                    chunk_start = start
                chunk_end = end
                if heading is None:
                    has_body = True
            if (
                heading is not None
                and has_body
                and block_end != no_run_at
                and min(chunk_start + max_chars, (count - DENSE_FLOOR + 1) * DENSE_CHARS)
                > block_end + _MIXED_MIN
            ):
                position = block_end  # past the budget, with room: the loop takes the lines
                break
    if chunk_start >= 0:
        yield chunk_start, chunk_end, chunk_section


def _heading_run(
    text: str, position: int, chunk_start: int, max_chars: int, levels: list[int], titles: list[str]
) -> tuple[int, int] | None:
    """The heading lines from ``position`` on (blank lines between them allowed) whose ends
    lie within ``max_chars`` of the chunk's start (``chunk_start``, or the first heading's
    when no chunk is open), with the trail ``levels``/``titles`` brought past them in place.
    Returns (the first heading's start, the last one's end), or None when no heading fits.
    Cost: O(max_chars) in regex scans, plus one step per trail level."""
    first_start = text.find("#", position, position + 4)
    if first_start < 0:
        return None
    bound = (chunk_start if chunk_start >= 0 else first_start) + max_chars
    match = _HEADING_RUN.match(text, position, min(bound + 1, len(text)))
    if match is None:
        return None
    line_start = text.rfind("\n", position, match.end()) + 1 or position
    scan_end = text.find("\n", line_start)
    scan_end = len(text) if scan_end < 0 else scan_end  # whole lines: "# " has a title ""
    end = _trimmed_end(text, line_start, scan_end)
    if end > bound:  # the last line ends past the bound: it opens the next chunk
        if line_start <= position:
            return None
        scan_end = line_start - 1
        end = _trimmed_end(text, position, scan_end)
    _advance_trail(reversed(_RUN_HEADINGS.findall(text[position:scan_end])), levels, titles)
    return first_start, end


def _mixed_run(
    text: str,
    position: int,
    chunk_start: int,
    max_chars: int,
    count: int,
    levels: list[int],
    titles: list[str],
) -> int | None:
    """Past the heading budget (rule 4) every block joins the open chunk while it fits, so
    the lines from ``position`` (a block boundary) up to the last heading line that ends
    before both the size bound and the budget's next step are taken whole, with the trail
    ``levels``/``titles`` brought past their headings in place. Returns the end of that
    heading's line, or None when there is none (or a blank line on the way: the usual
    path takes those). Cost: O(max_chars) in regex scans."""
    limit = min(chunk_start + max_chars, (count - DENSE_FLOOR + 1) * DENSE_CHARS)
    if limit <= position:  # within the budget a heading still opens a chunk
        return None
    newline = text.find("\n", position, limit)
    if newline < 0:
        return None
    first = _HEADING.match(text, position, newline)  # after a break's indent, "^" fails
    backwards = _heading_lines_backwards(text, newline, limit, first)
    last = next(backwards, None)
    if last is not None and last.end() == limit and limit < len(text) and text[limit] != "\n":
        last = next(backwards, None)  # its line goes on past the limit
    if last is None:
        return None
    end = last.end()
    if _BLANK_RUN.search(text, position, end) is not None:
        return None
    marks, title = last.group(1, 2)
    if len(marks) == 1:  # a level-1 heading: the whole trail (what _advance_trail gives)
        levels[:] = [1]
        titles[:] = [" ".join(title.split())]
        return end
    trail = itertools.chain(((marks, title),), (match.group(1, 2) for match in backwards))
    _advance_trail(trail, levels, titles)
    return end


def _heading_lines_backwards(
    text: str, newline: int, limit: int, first: re.Match[str] | None
) -> Iterator[re.Match[str]]:
    """The heading lines after the newline at ``newline`` up to ``limit`` (a line cut by
    ``limit`` ends there), last first, then ``first``: what a forward scan finds, read one
    line at a time from the end, so that a caller that needs only the last few headings
    (a run of level-1 headings needs one) does not match every line."""
    line_end = limit
    while line_end > newline:
        line_start = text.rfind("\n", newline, line_end) + 1  # text[newline] is a newline
        match = _HEADING_LINE.match(text, line_start, limit)
        if match is not None:
            yield match
        line_end = line_start - 1
    if first is not None:
        yield first


def _advance_trail(
    backwards: Iterable[tuple[str, str]] | Iterable[Any], levels: list[int], titles: list[str]
) -> None:
    """Bring the trail ``levels``/``titles`` past the headings ``backwards`` (their marks
    and raw titles, last first), working back from the last one: each heading above it in
    the trail is the latest earlier one of a lower level, so only those are looked at (and
    a lazy ``backwards`` is read no further: a run of level-1 headings costs one)."""
    need = 7  # the trail keeps the headings above it with a lower level than this
    picked: list[tuple[int, str]] = []
    for marks, title in backwards:
        if len(marks) < need:
            need = len(marks)
            picked.append((need, " ".join(title.split())))
            if need == 1:
                break
    kept = 0
    while kept < len(levels) and levels[kept] < need:
        kept += 1
    del levels[kept:], titles[kept:]
    for level, title in reversed(picked):
        levels.append(level)
        titles.append(title)


def _trimmed_end(text: str, start: int, end: int) -> int:
    """``end`` moved back over the whitespace that ends ``text[start:end]``."""
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def _last_break(text: str, start: int, bound: int) -> int | None:
    """Where the last blank-line break that begins in ``text[start:bound]`` begins, or
    None. The scan runs in C (a deque of length one keeps only the last match)."""
    first = _BLANK_RUN.search(text, start, bound)
    if first is None:  # most often: no deque, no iterator
        return None
    last = deque(_BLANK_RUN.finditer(text, first.end(), bound), maxlen=1)
    return last[0].start() if last else first.start()


def _lines(text: str, position: int, end: int) -> Iterator[tuple[int, int, tuple[int, str] | None]]:
    """The blocks of the text between two blank-line breaks: heading lines on their own,
    the runs of other lines between them."""
    line_start = position
    para_start = -1
    while line_start <= end:
        newline = text.find("\n", line_start, end)
        line_end = end if newline == -1 else newline
        match = _HEADING.match(text, line_start, line_end)
        if match is not None:
            if para_start >= 0:
                block = _trim(text, para_start, line_start, None)
                if block is not None:
                    yield block
                para_start = -1
            title = " ".join(match.group(2).split())
            heading_end = line_end
            while text[heading_end - 1].isspace():  # the line holds a "#", so this stops
                heading_end -= 1
            yield match.start(1), heading_end, (len(match.group(1)), title)
        elif para_start < 0:
            para_start = line_start
        line_start = line_end + 1
    if para_start >= 0:
        block = _trim(text, para_start, end, None)
        if block is not None:
            yield block


def _trim(
    text: str, start: int, end: int, heading: tuple[int, str] | None
) -> tuple[int, int, tuple[int, str] | None] | None:
    """``text[start:end]`` without its surrounding whitespace, or None when nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end, heading) if end > start else None


def _bounded(text: str, block_start: int, block_end: int, max_chars: int) -> list[tuple[int, int]]:
    """The block ``text[block_start:block_end]`` as pieces of at most ``max_chars``
    characters (rule 3)."""
    pieces: list[tuple[int, int]] = []
    for start, end in split_sentences(text[block_start:block_end]):
        start, end = start + block_start, end + block_start
        while end - start > max_chars:
            cut = max(text.rfind(sep, start + 1, start + max_chars + 1) for sep in " \n\t")
            cut = cut if cut > start else start + max_chars
            pieces.append((start, cut))
            start = cut
            while start < end and text[start].isspace():
                start += 1
        if end > start:
            pieces.append((start, end))
    return pieces
