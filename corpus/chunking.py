"""Structure-aware chunking of one page of text into retrieval units with stable ids.

A *chunk* is a contiguous slice ``text[start:end]`` of a page. Chunks follow the structure
of the text:

1. The page is cut into *blocks*: a blank line ends a block, and a Markdown heading line
   (``#`` to ``######`` then a space) is a block of its own.
2. Blocks are packed greedily into chunks of at most ``max_chars`` characters. A heading
   always opens a new chunk (unless the chunk so far holds only headings), so a section's
   paragraphs stay with their heading.
3. A block longer than ``max_chars`` is cut at sentence ends (the splitter of
   :mod:`corpus.evidence`, so a chunk never ends inside "Dr. Kell" or "3.5 kg"), and a
   sentence longer than ``max_chars`` at the last whitespace before the bound (or at the
   bound itself when there is none).

Every chunk carries ``section``: the trail of the headings above it (``"Install > Linux"``).
Chunk ids are ``<relative path>#p<page>c<number>`` (page and number 1-based), so the same
file cut with the same settings always gets the same ids; :data:`CHUNKER_VERSION` changes
whenever the rules change, so an index knows when its chunks are stale.

Cost: O(len(text)) per page (each character is looked at a bounded number of times).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from corpus.evidence import split_sentences

CHUNKER_VERSION = 1
"""Bumped whenever the chunking rules change (an index then re-chunks every file)."""

DEFAULT_MAX_CHARS = 1200
"""About 300 tokens: well inside multilingual-e5-small's 512-token window."""

MIN_MAX_CHARS = 100
MAX_MAX_CHARS = 100_000

_HEADING = re.compile(r"[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_BLANK_RUN = re.compile(r"\n[ \t]*\n[ \t\n]*")


@dataclass(frozen=True)
class Chunk:
    """One chunk of one page: ``page_text[start:end] == text``."""

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


@dataclass(frozen=True)
class _Block:
    start: int
    end: int
    heading: tuple[int, str] | None
    """``(level, title)`` for a heading line, else None."""


def chunk_id(relative_path: str, page: int, number: int) -> str:
    """The stable id of chunk ``number`` of ``page`` of the file at ``relative_path``.

    ``relative_path`` uses ``/`` separators whatever the platform. Cost: O(len(path)).
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

    Inputs: the page's ``text``, the file's ``relative_path`` (for the ids), its 1-based
    ``page`` and the size bound ``max_chars`` (:data:`MIN_MAX_CHARS` to
    :data:`MAX_MAX_CHARS`). Output: the chunks; none for a page of whitespace only.
    Deterministic: the same arguments always give the same chunks. Cost: O(len(text)).
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    if isinstance(max_chars, bool) or not isinstance(max_chars, int):
        raise ValueError(f"max_chars must be an integer, got {max_chars!r}")
    if not MIN_MAX_CHARS <= max_chars <= MAX_MAX_CHARS:
        raise ValueError(
            f"max_chars must be between {MIN_MAX_CHARS} and {MAX_MAX_CHARS}, got {max_chars}"
        )
    chunk_id(relative_path, page, 1)  # validates the path and page
    pieces: list[tuple[int, int, str]] = []  # (start, end, section)
    trail: list[tuple[int, str]] = []
    current: list[_Block] = []
    current_section = ""

    def flush() -> None:
        if current:
            pieces.append((current[0].start, current[-1].end, current_section))
            current.clear()

    for block in _blocks(text):
        if block.heading is not None:
            if any(b.heading is None for b in current):
                flush()
            level, title = block.heading
            trail[:] = [entry for entry in trail if entry[0] < level]
            trail.append((level, title))
        section = " > ".join(title for _, title in trail)
        for start, end in _bounded(text, block, max_chars):
            if current and end - current[0].start > max_chars:
                flush()
            if all(b.heading is not None for b in current):
                current_section = section
            current.append(_Block(start, end, block.heading))
    flush()
    return [
        Chunk(
            id=chunk_id(relative_path, page, number),
            page=page,
            number=number,
            start=start,
            end=end,
            section=section,
            text=text[start:end],
        )
        for number, (start, end, section) in enumerate(pieces, 1)
    ]


def _blocks(text: str) -> list[_Block]:
    """Blocks of ``text`` (rule 1), trimmed of surrounding whitespace, in order."""
    blocks: list[_Block] = []
    position = 0
    for brk in [*_BLANK_RUN.finditer(text), None]:
        end = brk.start() if brk else len(text)
        line_start = position
        para_start: int | None = None
        while line_start <= end:
            newline = text.find("\n", line_start, end)
            line_end = end if newline == -1 else newline
            match = _HEADING.match(text, line_start, line_end)
            if match is not None:
                if para_start is not None:
                    blocks.append(_trimmed(text, para_start, line_start, None))
                    para_start = None
                title = " ".join(match.group(2).split())
                blocks.append(_trimmed(text, line_start, line_end, (len(match.group(1)), title)))
            elif para_start is None:
                para_start = line_start
            line_start = line_end + 1
        if para_start is not None:
            blocks.append(_trimmed(text, para_start, end, None))
        position = brk.end() if brk else len(text)
    return [block for block in blocks if block.end > block.start]


def _trimmed(text: str, start: int, end: int, heading: tuple[int, str] | None) -> _Block:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return _Block(start, start, heading)
    offset = start + len(piece) - len(piece.lstrip())
    return _Block(offset, offset + len(stripped), heading)


def _bounded(text: str, block: _Block, max_chars: int) -> list[tuple[int, int]]:
    """``block`` as pieces of at most ``max_chars`` characters (rule 3)."""
    if block.end - block.start <= max_chars:
        return [(block.start, block.end)]
    pieces: list[tuple[int, int]] = []
    for start, end in split_sentences(text[block.start : block.end]):
        start, end = start + block.start, end + block.start
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
