"""The heading trail of :mod:`corpus.chunking` and the runs of lines taken in one step: a
run of heading lines that fits a chunk of headings, and, past rule 4's heading budget, the
lines up to the last heading that fits the open chunk."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from typing import Any

from corpus.chunking_blocks import BLANK_RUN, HEADING, trimmed_end

DENSE_CHARS = 200
DENSE_FLOOR = 64
"""Rule 4: a heading opens a chunk only while the page's chunks so far number fewer than
``DENSE_FLOOR`` plus one per ``DENSE_CHARS`` characters before the heading."""
MIXED_MIN = 64
"""Room needed after a heading past the budget before the lines are taken in one step."""

HEADING_RUN = re.compile(
    r"[ \t]{0,3}#{1,6}[ \t]+[^\n]*(?:\n(?:[ \t]*\n[ \t\n]*)?[ \t]{0,3}#{1,6}[ \t]+[^\n]*)*"
)
"""Heading lines one after another, blank lines allowed between them (a blank line's
break takes the next line's indent with it, as rule 1's blocks do)."""
HEADING_LINE = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$", re.MULTILINE)
"""A heading line found by a scan: it starts after a newline."""
RUN_HEADINGS = re.compile(r"^[ \t]*(#{1,6})[ \t]+(.*?)[ \t#]*$", re.MULTILINE)
"""The headings of a run that :data:`HEADING_RUN` matched (any indent: a break took it)."""


def heading_run(
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
    match = HEADING_RUN.match(text, position, min(bound + 1, len(text)))
    if match is None:
        return None
    line_start = text.rfind("\n", position, match.end()) + 1 or position
    scan_end = text.find("\n", line_start)
    scan_end = len(text) if scan_end < 0 else scan_end  # whole lines: "# " has a title ""
    end = trimmed_end(text, line_start, scan_end)
    if end > bound:  # the last line ends past the bound: it opens the next chunk
        if line_start <= position:
            return None
        scan_end = line_start - 1
        end = trimmed_end(text, position, scan_end)
    advance_trail(reversed(RUN_HEADINGS.findall(text[position:scan_end])), levels, titles)
    return first_start, end


def mixed_run(
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
    first = HEADING.match(text, position, newline)  # after a break's indent, "^" fails
    backwards = _heading_lines_backwards(text, newline, limit, first)
    last = next(backwards, None)
    if last is not None and last.end() == limit and limit < len(text) and text[limit] != "\n":
        last = next(backwards, None)  # its line goes on past the limit
    if last is None:
        return None
    end = last.end()
    if BLANK_RUN.search(text, position, end) is not None:
        return None
    marks, title = last.group(1, 2)
    if len(marks) == 1:  # a level-1 heading: the whole trail (what advance_trail gives)
        levels[:] = [1]
        titles[:] = [" ".join(title.split())]
        return end
    trail = itertools.chain(((marks, title),), (match.group(1, 2) for match in backwards))
    advance_trail(trail, levels, titles)
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
        match = HEADING_LINE.match(text, line_start, limit)
        if match is not None:
            yield match
        line_end = line_start - 1
    if first is not None:
        yield first


def advance_trail(
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
