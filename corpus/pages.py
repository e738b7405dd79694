"""What a reader gives and how it fails: the :class:`Page` of a file's text, the
:class:`ReadError` whose message is the reason, and whether PDFs can be read at all.

Shared by the readers (:mod:`corpus.readers`) and the PDF reader (:mod:`corpus.pdf`), which
both import it and nothing else of each other's.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass


class ReadError(Exception):
    """A file could not be turned into text; the message is the reason, in one line.

    Examples
    --------
    >>> from corpus import ReadError, read_pages
    >>> try:
    ...     read_pages("no/such/file.txt")
    ... except ReadError as error:
    ...     print(error)
    cannot read the file: No such file or directory
    """


@dataclass(frozen=True)
class Page:
    """One page of a file's text.

    Parameters
    ----------
    number : int
        The 1-based page number; files without pages have page 1.
    text : str
        The page's text.

    Examples
    --------
    >>> from corpus import read_pages
    >>> read_pages("guide.md", b"Rack 7 stands in the north hall.")
    [Page(number=1, text='Rack 7 stands in the north hall.')]
    """

    number: int
    text: str


def pdf_support() -> str | None:
    """None when PDFs can be read, else the reason they cannot (with the fix). O(1)."""
    if importlib.util.find_spec("pypdf") is None:
        return "PDF support needs the optional package pypdf: pip install 'logic-graph[corpus]'"
    return None


def one_line(exc: BaseException) -> str:
    """An exception's message on one line, cut to 300 characters (its type when empty)."""
    return " ".join(str(exc).split())[:300] or type(exc).__name__
