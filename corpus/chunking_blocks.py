"""The blocks of a page and the cutting of a block (rules 1 and 3 of :mod:`corpus.chunking`):
blank-line breaks, heading lines, whitespace trims, and pieces of at most ``max_chars``
characters cut at sentence ends."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator

from corpus.evidence import split_sentences

HEADING = re.compile(r"[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
"""A Markdown heading line (matched from the line's start): its marks and its title."""
BLANK_RUN = re.compile(r"\n[ \t]*\n[ \t\n]*")
"""A blank-line break: it ends a block (rule 1)."""


def trimmed_end(text: str, start: int, end: int) -> int:
    """``end`` moved back over the whitespace that ends ``text[start:end]``."""
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def last_break(text: str, start: int, bound: int) -> int | None:
    """Where the last blank-line break that begins in ``text[start:bound]`` begins, or
    None. The scan runs in C (a deque of length one keeps only the last match)."""
    first = BLANK_RUN.search(text, start, bound)
    if first is None:  # most often: no deque, no iterator
        return None
    last = deque(BLANK_RUN.finditer(text, first.end(), bound), maxlen=1)
    return last[0].start() if last else first.start()


def lines(text: str, position: int, end: int) -> Iterator[tuple[int, int, tuple[int, str] | None]]:
    """The blocks of the text between two blank-line breaks: heading lines on their own,
    the runs of other lines between them."""
    line_start = position
    para_start = -1
    while line_start <= end:
        newline = text.find("\n", line_start, end)
        line_end = end if newline == -1 else newline
        match = HEADING.match(text, line_start, line_end)
        if match is not None:
            if para_start >= 0:
                block = trim(text, para_start, line_start, None)
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
        block = trim(text, para_start, end, None)
        if block is not None:
            yield block


def trim(
    text: str, start: int, end: int, heading: tuple[int, str] | None
) -> tuple[int, int, tuple[int, str] | None] | None:
    """``text[start:end]`` without its surrounding whitespace, or None when nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end, heading) if end > start else None


def bounded(text: str, block_start: int, block_end: int, max_chars: int) -> list[tuple[int, int]]:
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
