"""PDF reading for :mod:`corpus.readers`: one page of text per PDF page, with ``pypdf`` (the
optional ``corpus`` extra), within bounds a hostile file cannot move (issue 35):

- pages are read one at a time: a page's content streams and the objects of its text
  extraction are let go before the next page, so memory follows the largest page, not the
  file (a 40-page PDF peaked at 8 times its size, now 4);
- a page tree that names one page object many times is read once, at the page's first
  number; a ``/Kids`` array written out in the file has its runs of repeats collapsed in the
  bytes before pypdf parses it (pypdf builds an object of about 120 bytes per 6-byte
  reference: a 120 kB file naming one page 20,000 times cost 20 times its size, now 2);
- the pages may expand to at most :func:`pdf_content_limit` bytes of decoded content (16
  times the file's size, 256 kB at least): past it the file is a :class:`ReadError` (a 12 kB
  file of one compressed page that expanded to 4.6 MB took 72 MB and 30 s).

The public entry is :func:`corpus.readers.read_pdf` (it calls :func:`read_pdf` here).
"""

from __future__ import annotations

import contextlib
import gc
import io
import re
from typing import Any

from corpus import pages
from corpus.pages import Page, ReadError, one_line

PDF_CONTENT_FLOOR = 256 * 1024
PDF_CONTENT_PER_BYTE = 16
"""A PDF's pages may expand (Flate and the other filters) to at most 16 times the file's
size in content, and to 256 kB whatever its size (:func:`pdf_content_limit`). Real PDFs
hold about 1 byte of page content per byte of file (0.6 to 1.1 in the ones measured); a
4 kB file of one compressed page can hold 4 MB, which pypdf parses at some 15 bytes of
memory and 6 microseconds a byte."""
_PYPDF_STREAM_LIMIT = 75_000_000
"""pypdf's own limit on the decoded size of one stream (its default)."""


def pdf_content_limit(size: int) -> int:
    """The most page content (bytes, decoded) a PDF of ``size`` bytes may have. O(1)."""
    return max(PDF_CONTENT_FLOOR, PDF_CONTENT_PER_BYTE * size)


def read_pdf(data: bytes) -> list[Page]:
    """Per-page text of a PDF given as bytes (needs ``pypdf``). Raises :class:`ReadError`
    for a missing ``pypdf``, an encrypted or unreadable PDF, or one whose pages expand to
    more content than :func:`pdf_content_limit` allows. Pages are read one at a time: a
    page's content streams are let go once its text is out. Cost: O(len(data)) time and
    memory."""
    missing = pages.pdf_support()  # looked up on the module: a test may replace it
    if missing is not None:
        raise ReadError(missing)
    import pypdf

    limit = pdf_content_limit(len(data))
    # Each stream stops decoding just past the file's limit (pypdf raises there), so a
    # bomb is not expanded in full before the count in _read_pages sees it.
    stream_limit = min(limit, _PYPDF_STREAM_LIMIT) + 1
    configure = getattr(pypdf, "apply_configuration", None)
    settings = (
        configure(
            zlib_maximum_output_length=stream_limit,
            lzw_maximum_output_length=stream_limit,
            run_length_maximum_output_length=stream_limit,
            array_based_stream_maximum_output_length=stream_limit,
        )
        if configure is not None
        else contextlib.nullcontext()
    )
    reader = None
    try:
        with settings:
            reader = pypdf.PdfReader(io.BytesIO(_collapse_repeated_kids(data)), strict=False)
            if reader.is_encrypted:
                raise ReadError("encrypted PDF: decrypt it first")
            return _read_pages(reader, limit, len(data))
    except ReadError:
        raise
    except Exception as exc:  # pypdf raises many types for broken files
        if _past_decoding_limit(exc):
            raise ReadError(_over_content_limit(limit, len(data))) from exc
        raise ReadError(f"unreadable PDF: {type(exc).__name__}: {one_line(exc)}") from exc
    finally:
        if reader is not None:  # pypdf's objects point at their reader: break the cycles
            reader.resolved_objects.clear()  # now, not at the next garbage collection


def _past_decoding_limit(exc: BaseException) -> bool:
    """Whether ``exc`` is pypdf stopping a stream at the output limit read_pdf set."""
    return type(exc).__name__ == "LimitReachedError" and str(exc).startswith(
        "Limit reached while decompressing"
    )


def _over_content_limit(limit: int, size: int) -> str:
    return (
        f"its pages expand to more than {limit:,} bytes of content (the limit for a "
        f"{size:,}-byte PDF: {PDF_CONTENT_PER_BYTE} times its size, at least "
        f"{PDF_CONTENT_FLOOR:,}); it was not indexed"
    )


def _read_pages(reader: Any, limit: int, size: int) -> list[Page]:
    """The text of each page of an open ``reader``, one page at a time, counting the
    decoded content against ``limit``. Cost: O(the pages' content)."""
    # A page tree may name one page object many times (a 140 kB file naming one page
    # 20,000 times once made 20,000 chunks, and pypdf builds a page object per name): the
    # repeats are taken out of the tree before pypdf reads it, and the page is read once,
    # at its first page number. The repeats add no text.
    numbers = _prune_repeated_pages(reader)
    listed = reader.pages
    if len(numbers) != len(listed):  # pypdf saw the tree otherwise: number as it does
        numbers = list(range(1, len(listed) + 1))
    pages = []
    seen: set[tuple[int, int]] = set()
    spent = 0
    for number, page in zip(numbers, listed, strict=True):
        ref = page.indirect_reference
        if ref is not None:
            if (ref.idnum, ref.generation) in seen:
                continue
            seen.add((ref.idnum, ref.generation))
        streams = _content_streams(page)
        try:
            spent += sum(len(stream.get_data()) for _, stream in streams)
        except Exception as exc:  # a stream pypdf cannot decode: its text extraction decides,
            if _past_decoding_limit(exc):  # as it did before this count (a page with no
                raise  # resources is read as empty without decoding its content)
        if spent > limit:
            raise ReadError(_over_content_limit(limit, size))
        text = page.extract_text() or ""
        pages.append(Page(number, text.replace("\r\n", "\n").replace("\r", "\n")))
        for key, stream in streams:  # let the page's decoded content go
            if key is not None:
                reader.resolved_objects.pop(key, None)
            if getattr(stream, "decoded_self", None) is not None:
                stream.decoded_self = None
        # A page's fonts and text state are cycles of objects: collected young, they do
        # not pile up across pages (a 40-page file peaked at 8 times its size, now 4).
        gc.collect(1)
    return pages


def _content_streams(page: Any) -> list[tuple[tuple[int, int] | None, Any]]:
    """The content streams of ``page`` (its ``/Contents``: one stream or an array of
    them), each with the (generation, number) key pypdf caches it under, if any."""
    from pypdf.generic import ArrayObject, IndirectObject, StreamObject

    found: list[tuple[tuple[int, int] | None, Any]] = []
    contents = page.get("/Contents")
    items = contents.get_object() if isinstance(contents, IndirectObject) else contents
    if not isinstance(items, ArrayObject):
        items = [contents]
    for item in items:
        key = (item.generation, item.idnum) if isinstance(item, IndirectObject) else None
        stream = item.get_object() if item is not None else None
        if isinstance(stream, StreamObject):
            found.append((key, stream))
    return found


_KIDS_ARRAY = re.compile(rb"/Kids\s*\[([0-9\s]*+(?:R[0-9\s]*+)*+)\]")
"""A ``/Kids`` array written out in the file, made of object references only."""
_REFERENCE = re.compile(rb"(\d+)\s+(\d+)\s+R")
_FEW_KIDS = 64


def _collapse_repeated_kids(data: bytes) -> bytes:
    """``data`` with each run of repeated references in a ``/Kids`` array written out in the
    file (not in a compressed object stream) replaced, in the same number of bytes, by one
    reference to each object of the run followed by ``-N``, N more times: pypdf then builds
    a few objects where it would build one of about 120 bytes per 6-byte reference, and
    :func:`_prune_repeated_pages` still counts every repeat of a page. A reference is a
    repeat when the same array named it before. Arrays of 64 references or fewer are left
    as they are. Cost: O(len(data))."""
    parts: list[bytes | memoryview] = []
    view = memoryview(data)
    done = 0
    for match in _KIDS_ARRAY.finditer(data):
        begin, end = match.span(1)
        if data.count(b"R", begin, end) <= _FEW_KIDS:
            continue
        written, repeats = _collapse(data, begin, end)
        if repeats and len(written) <= end - begin:
            parts += [view[done:begin], written, b" " * (end - begin - len(written))]
            done = end
    if not parts:
        return data
    parts.append(view[done:])
    return b"".join(parts)


def _collapse(data: bytes, begin: int, end: int) -> tuple[bytes, int]:
    """The references of the ``/Kids`` array in ``data[begin:end]`` with its runs of
    repeats collapsed (see :func:`_collapse_repeated_kids`), and how many repeats there
    were."""
    seen: set[tuple[int, int]] = set()
    out: list[bytes] = []
    run: dict[tuple[int, int], int] = {}
    repeats = 0
    for ref in _REFERENCE.finditer(data, begin, end):
        key = (int(ref.group(1)), int(ref.group(2)))
        if key in seen:
            run[key] = run.get(key, 0) + 1
            repeats += 1
            continue
        _close_run(run, out)
        seen.add(key)
        out.append(b"%d %d R" % key)
    _close_run(run, out)
    return b" ".join(out), repeats


def _close_run(run: dict[tuple[int, int], int], out: list[bytes]) -> None:
    for (number, generation), count in run.items():
        out.append(b"%d %d R" % (number, generation))
        if count > 1:
            out.append(b"-%d" % (count - 1))
    run.clear()


_PAGE_TREE_DEPTH = 64
"""Deeper page-tree nodes are left out (real page trees are a few levels deep)."""


def _prune_repeated_pages(reader: Any) -> list[int]:
    """Take out of ``reader``'s page tree (in place, in memory) every page object or page
    node named a second time; return the original page number of each page left, in order.
    Cost: O(entries of the page tree)."""
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, NumberObject

    numbers: list[int] = []
    seen_pages: set[tuple[int, int]] = set()
    seen_nodes: set[tuple[int, int]] = set()
    position = 0

    def walk(node: Any, depth: int) -> None:
        nonlocal position
        kids = node.get("/Kids")
        kids = kids.get_object() if isinstance(kids, IndirectObject) else kids
        if not isinstance(kids, ArrayObject) or depth > _PAGE_TREE_DEPTH:
            return
        kept = ArrayObject()
        last_was_page = False
        for kid in kids:
            if isinstance(kid, NumberObject) and kid < 0:
                # _collapse_repeated_kids: the reference before, named -kid more times
                position += -int(kid) if last_was_page else 0
                continue
            last_was_page = False
            key = (kid.idnum, kid.generation) if isinstance(kid, IndirectObject) else None
            target = kid.get_object() if key is not None else kid
            if isinstance(target, DictionaryObject) and "/Kids" in target:
                if key is not None and key in seen_nodes:
                    continue  # a node named twice (or a cycle): its pages are listed already
                if key is not None:
                    seen_nodes.add(key)
                kept.append(kid)
                walk(target, depth + 1)
                continue
            position += 1
            last_was_page = True
            if key is not None:
                if key in seen_pages:
                    continue
                seen_pages.add(key)
            kept.append(kid)
            numbers.append(position)
        kids[:] = kept

    try:
        root = reader.trailer["/Root"].get_object()["/Pages"].get_object()
        walk(root, 0)
    except Exception:  # an odd tree: pypdf's own reading decides, numbered as it does
        return []
    return numbers
