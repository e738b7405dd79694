"""Readers: one file in, its pages of plain text out, or a :class:`ReadError` saying why not.

Supported suffixes (case-insensitive): ``.txt``, ``.md``/``.markdown``, ``.html``/``.htm``
and ``.pdf``.

- Text and Markdown are decoded as UTF-8 (a byte-order mark is dropped); the page text is
  the file's text with ``\\r\\n`` and ``\\r`` turned into ``\\n``, so for these files a chunk's
  offsets are offsets into the file as a text editor shows it.
- HTML is reduced to its text with the standard library's :mod:`html.parser`: scripts,
  styles and other non-text elements are dropped, block elements end a paragraph, headings
  become Markdown headings (``## Title``) so the chunker sees the structure, list items
  become ``- item`` lines. Character references are decoded. A heading drops the text of
  its decoration links (a permalink ``#`` or ``¶``, a ``[src]`` link); any other line that
  would read as a Markdown heading (``# comment`` in ``<pre>``) is escaped as ``\\#``.
  A document of text and plain tags only (the common case) is read without html.parser's
  tokenizer, to the same text.
- PDF needs the optional ``pypdf`` package (``pip install 'logic-graph[corpus]'``): one page
  of text per PDF page, numbered from 1, read a page at a time; a page object the page tree
  names more than once is read once, at its first number; pages that expand to more than
  16 times the file's size in content (256 kB at least) make the file a failed one
  (:mod:`corpus.pdf`). Without ``pypdf`` a PDF is a failed file whose reason says how to
  install it.

A file that is not valid UTF-8, holds NUL bytes, or cannot be parsed raises
:class:`ReadError`; the ingest reports it and goes on. Cost: O(file size) per file.
"""

from __future__ import annotations

import html.parser
import re
from pathlib import Path

from corpus.pages import Page as Page
from corpus.pages import ReadError as ReadError
from corpus.pages import one_line
from corpus.pages import pdf_support as pdf_support

TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
PDF_SUFFIXES = frozenset({".pdf"})
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES

MAX_FILE_BYTES = 200 * 1024 * 1024
"""Larger files are refused (reported as failed) rather than read into memory."""


def is_supported(path: Path | str) -> bool:
    """Whether a file with this name has a reader (by suffix, case-insensitive). O(1)."""
    return Path(path).suffix.lower() in SUPPORTED_SUFFIXES


def read_pages(path: Path | str, data: bytes | None = None) -> list[Page]:
    """The pages of a file, read by its suffix. Cost: O(file size).

    Parameters
    ----------
    path : Path or str
        The file: ``.txt``, ``.md``, ``.markdown``, ``.html``, ``.htm`` or ``.pdf`` (PDFs
        need the ``corpus`` extra).
    data : bytes, optional
        The file's bytes, when the caller already read them.

    Returns
    -------
    list of Page
        One page for text and HTML (HTML as its visible text), one per page for a PDF.

    Raises
    ------
    ReadError
        When the file cannot be read (missing, too large, not text), with the reason.
    ValueError
        For an unsupported suffix.

    Examples
    --------
    >>> from corpus import read_pages
    >>> read_pages("hall.html", b"<h1>Site</h1><p>Rack 7 stands in the north hall.</p>")
    [Page(number=1, text='# Site\\n\\nRack 7 stands in the north hall.')]
    >>> read_pages("photo.png", b"")
    Traceback (most recent call last):
    ...
    ValueError: path 'photo.png' has unsupported suffix '.png'; supported: ...
    """
    if not isinstance(path, str | Path):
        raise ValueError(f"path must be a str or Path, got {type(path).__name__}")
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise ValueError(
            f"path {str(path)!r} has unsupported suffix {suffix!r}; "
            f"supported: {', '.join(sorted(SUPPORTED_SUFFIXES))}"
        )
    if data is None:
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                raise ReadError(f"file is {size} bytes, over the limit of {MAX_FILE_BYTES}")
            data = path.read_bytes()
        except OSError as exc:
            raise ReadError(f"cannot read the file: {exc.strerror or exc}") from exc
    if suffix in PDF_SUFFIXES:
        return read_pdf(data)
    text = decode_text(data)
    if suffix in HTML_SUFFIXES:
        text = html_to_text(text)
    return [Page(1, text)]


def decode_text(data: bytes) -> str:
    """``data`` as UTF-8 text with newlines normalised; :class:`ReadError` for binary data
    (a NUL byte) or invalid UTF-8, naming the byte offset. Cost: O(len(data))."""
    nul = data.find(b"\x00")
    if nul != -1:
        raise ReadError(f"binary data (NUL byte at offset {nul}), not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ReadError(f"not UTF-8 text (invalid byte at offset {exc.start})") from exc
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_pdf(data: bytes) -> list[Page]:
    """Per-page text of a PDF given as bytes (needs ``pypdf``); see :mod:`corpus.pdf` for
    the bounds. Raises :class:`ReadError` for a missing ``pypdf``, an encrypted or
    unreadable PDF, or one whose pages expand past the content limit. Cost: O(len(data))
    time and memory."""
    from corpus.pdf import read_pdf as read

    return read(data)


_SKIP = frozenset(
    {"script", "style", "noscript", "template", "svg", "math", "head", "iframe", "object"}
)
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
_BLOCKS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "caption",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "header",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_HEAD_CONTENT = frozenset(
    {"base", "link", "meta", "title", "style", "script", "noscript", "template"}
)
"""What may stand in ``<head>``: any other start tag means the body began (the HTML standard
closes an unclosed head there too)."""
_FOREIGN = frozenset({"svg", "math"})
_BREAKOUT = frozenset(
    {
        "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em",
        "embed", "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing",
        "menu", "meta", "nobr", "ol", "p", "pre", "ruby", "s", "small", "span", "strong",
        "strike", "sub", "sup", "table", "tt", "u", "ul", "var",
    }
)  # fmt: skip
"""HTML start tags that end an unclosed ``<svg>`` or ``<math>`` (the HTML standard's list of
tags that break out of foreign content)."""


_BRACKETED = re.compile(r"\[[^\[\]]{0,20}\]")
"""Link text such as ``[src]`` or ``[edit]``: a decoration of a heading, not its title."""
_MARKDOWN_HEADING = re.compile(r"#{1,6}")
_JOIN_EVERY = 1024
_ATTRIBUTES = (
    r"""(?:\s++[a-zA-Z_:][-a-zA-Z0-9_:.]*+"""
    r"""(?:\s*+=\s*+(?:"[^"<>]*+"|'[^'<>]*+'|[^\s"'<>=`]++))?+)*+\s*+"""
)
"""The attributes of a plain start tag (``class="x"``, ``id=a``, ``hidden``): names and
values, each after a space, no ``<`` or ``>`` inside a value. html.parser ends such a tag at
its ``>`` as this does; the reader uses no attribute, so they are skipped."""
_BARE_TAG = re.compile(
    rf"([^<]*)<(?:([a-zA-Z][a-zA-Z0-9]*){_ATTRIBUTES}>(?:([^<]*)</\2>)?|/([a-zA-Z][a-zA-Z0-9]*)>)"
)
"""A plain tag (a start tag with plain attributes, or a bare end tag) and the text before
it: group 2 names a start tag, group 4 an end tag. A start tag whose element closes right
after its text (``<li>a</li>``) is taken with that text (group 3) and its end tag."""
_BARE_DOCUMENT = re.compile(
    rf"(?:[^<]++|<[a-zA-Z][a-zA-Z0-9]*+{_ATTRIBUTES}>|</[a-zA-Z][a-zA-Z0-9]*+>)*+"
)
"""A document of text and plain tags (``<li>``, ``<li class="x">``, ``</h1>``): no comment
or declaration, and no "<" that is not a tag."""
_RAW_TEXT_TAG = re.compile(
    r"<(?:script|style|textarea|title|xmp|iframe|noembed|noframes|noscript|plaintext)"
    r"(?=[\s/>])",
    re.IGNORECASE,
)
"""Elements whose content html.parser reads as raw text: a document with one goes the
general way."""
_STATEFUL = _SKIP | {"pre", "a"}
"""Tags whose handling keeps state beyond the paragraph (text dropped, ``<pre>`` lines, a
heading's links): until the first of them, a plain document needs no handler call."""
_BARE_START = re.compile(r"<([a-zA-Z][a-zA-Z0-9]*)>")
_BARE_END = re.compile(r"</([a-zA-Z][a-zA-Z0-9]*)>")


class _TextExtractor(html.parser.HTMLParser):
    """Collects the visible text of an HTML document as Markdown-like paragraphs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[str] = []
        """The paragraphs so far, each batch of :data:`_JOIN_EVERY` joined into one string:
        a page of 400,000 one-letter list items would otherwise hold 400,000 small strings
        (about 60 bytes each for 5 bytes of text)."""
        self._batch: list[str] = []
        self._parts: list[str] = []
        self._prefix = ""
        self._skipping: list[str] = []
        """Open elements whose text is dropped, innermost last."""
        self._pre_depth = 0
        self._link_at = -1
        """Where the text of the open ``<a>`` of a heading begins in ``_parts``, or -1."""

    # Tag-dense markup (<li>a</li> repeated) spends most of its time in html.parser's
    # general tag parsing; a bare tag, "<li>" or "</li>" with no attribute and no space,
    # is taken at once (to the same effect), and line counting, which only getpos() reads,
    # is skipped.
    def parse_starttag(self, i: int) -> int:
        match = _BARE_START.match(self.rawdata, i)
        if match is None:
            return int(super().parse_starttag(i))
        self.lasttag = tag = match.group(1).lower()
        self.handle_starttag(tag, [])
        if tag in self.CDATA_CONTENT_ELEMENTS:
            self.set_cdata_mode(tag)
        return match.end()

    def parse_endtag(self, i: int) -> int:
        match = _BARE_END.match(self.rawdata, i)
        if match is None or self.cdata_elem is not None:
            return int(super().parse_endtag(i))
        self.handle_endtag(match.group(1).lower())
        return match.end()

    def updatepos(self, i: int, j: int) -> int:
        return j

    def feed_bare(self, markup: str) -> None:
        """Take a whole document made of text and bare tags only (``_BARE_DOCUMENT``, no
        raw-text element): the calls html.parser would make, without its tokenizer, which
        costs a few microseconds a tag (a page of 400,000 ``<li>a</li>`` took 25 times as
        long as prose)."""
        unescape = html.unescape
        headings, blocks, stateful = _HEADINGS, _BLOCKS, _STATEFUL
        plain = True  # no tag of _STATEFUL yet: a tag only ends a paragraph and sets a prefix
        for match in _BARE_TAG.finditer(markup):  # one match at a time: findall's list
            data, start, inner, end = match.groups()  # of a tuple per tag was 30 times
            tag = (start or end).lower()  # the page
            if plain and tag not in stateful:
                # What the handlers would do, without a method call per tag (<h1>a</h1>
                # repeated cost 3 times prose HTML through them).
                if data:
                    self._parts.append(unescape(data) if "&" in data else data)
                ends = tag in blocks or tag in headings
                if ends or (start is not None and tag == "br"):
                    if self._parts:
                        self._end_paragraph()
                    else:
                        self._prefix = ""
                    if start is not None:
                        if tag in headings:
                            self._prefix = "#" * headings[tag] + " "
                        elif tag == "li":
                            self._prefix = "- "
                if inner is not None:  # the element's text and its end tag
                    if inner:
                        self._parts.append(unescape(inner) if "&" in inner else inner)
                    if ends:
                        if self._parts:
                            self._end_paragraph()
                        else:
                            self._prefix = ""
                continue
            plain = False
            if data:
                self.handle_data(unescape(data))
            if end is not None:
                self.handle_endtag(tag)
                continue
            self.handle_starttag(tag, [])
            if inner is not None:
                if inner:
                    self.handle_data(unescape(inner))
                self.handle_endtag(tag)
        tail = markup.find(">", markup.rfind("<")) + 1 if "<" in markup else 0
        if tail < len(markup):  # every "<" is a tag's: the text after the last one
            self.handle_data(unescape(markup[tail:]))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # An unclosed <head>, <svg> or <math> would otherwise drop every later word.
        if self._skipping and self._skipping[-1] == "head" and tag not in _HEAD_CONTENT:
            self._skipping.pop()
        while self._skipping and self._skipping[-1] in _FOREIGN and tag in _BREAKOUT:
            self._skipping.pop()
        if tag in _SKIP:
            if tag not in _VOID:
                self._skipping.append(tag)
            return
        if tag in _HEADINGS or tag in _BLOCKS or tag == "br":
            self._end_paragraph()
        if tag in _HEADINGS:
            self._prefix = "#" * _HEADINGS[tag] + " "
        elif tag == "a" and self._prefix.startswith("#"):
            self._link_at = len(self._parts)
        elif tag == "li":
            self._prefix = "- "
        elif tag == "pre":
            self._pre_depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            if tag in self._skipping:  # a stray end tag closes nothing
                del self._skipping[len(self._skipping) - 1 - self._skipping[::-1].index(tag) :]
            return
        if tag == "a" and self._link_at >= 0:
            # Documentation sites put a permalink ("#", "¶") and a source link ("[src]") in
            # their headings; kept, they glue onto the title ("Stream#[src]") and become
            # the section trail of every chunk below.
            text = "".join(self._parts[self._link_at :]).strip()
            if not any(char.isalnum() for char in text) or _BRACKETED.fullmatch(text):
                del self._parts[self._link_at :]
            self._link_at = -1
        if tag in _HEADINGS or tag in _BLOCKS:
            self._end_paragraph()
        if tag == "pre":
            self._pre_depth = max(0, self._pre_depth - 1)

    def handle_data(self, data: str) -> None:
        if self._skipping:
            return
        if self._pre_depth:
            for number, line in enumerate(data.split("\n")):
                if number:
                    self._end_paragraph()
                self._parts.append(line)
        else:
            self._parts.append(data)

    def _end_paragraph(self) -> None:
        words = "".join(self._parts).split() if self._parts else None
        if words:
            if not self._prefix and len(words) > 1 and _MARKDOWN_HEADING.fullmatch(words[0]):
                # Only <h1>-<h6> are headings: a line of text that reads as a Markdown
                # heading (a shell comment in <pre>, "# In same folder as ...") is escaped
                # the Markdown way, or the chunker would make it a section of its own.
                words[0] = "\\" + words[0]
            self._batch.append(self._prefix + " ".join(words))
            if len(self._batch) >= _JOIN_EVERY:
                self.paragraphs.append("\n\n".join(self._batch))
                self._batch = []
        self._parts = []
        self._prefix = ""
        self._link_at = -1

    def text(self) -> str:
        self._end_paragraph()
        if self._batch:
            self.paragraphs.append("\n\n".join(self._batch))
            self._batch = []
        return "\n\n".join(self.paragraphs)


def html_to_text(markup: str) -> str:
    """The visible text of an HTML document, one paragraph per block element, headings as
    Markdown headings, list items as ``- `` lines. Never raises on malformed markup (the
    parser is lenient); :class:`ReadError` only if the parser itself fails. O(len(markup))."""
    if not isinstance(markup, str):
        raise ValueError(f"markup must be a string, got {type(markup).__name__}")
    extractor = _TextExtractor()
    try:
        if _BARE_DOCUMENT.fullmatch(markup) and not _RAW_TEXT_TAG.search(markup):
            extractor.feed_bare(markup)
        else:
            extractor.feed(markup)
            extractor.close()
    except Exception as exc:  # defensive: html.parser is lenient, but not bug-free
        raise ReadError(f"unparseable HTML: {one_line(exc)}") from exc
    return extractor.text()
