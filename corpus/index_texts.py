"""An index made from strings rather than a folder: the passages that come with a question, a
test's corpus, a docstring's example. The texts are written as files and ingested by
:func:`corpus.index.ingest_directory`, so such an index is the same as any other."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath

from corpus.chunking import DEFAULT_MAX_CHARS
from corpus.embed import Embedder
from corpus.index import check_ingest_arguments, ingest_directory
from corpus.index_records import IngestReport

__all__ = ["ingest_texts", "temporary_index"]


def ingest_texts(
    texts: Mapping[str, str | bytes],
    directory: Path | str,
    index_path: Path | str,
    *,
    dense: bool | Embedder = True,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> IngestReport:
    """Write ``texts`` as files under ``directory`` (made if missing), then ingest that folder
    into ``index_path`` as :func:`ingest_directory` does: an index made from strings (the
    passages of a data set, a test's corpus, an example) in one call. Cost: the ingest's.

    Parameters
    ----------
    texts : mapping of str to str or bytes
        Each file's path, relative to ``directory`` with ``/`` separators (its folders are
        made as needed), and its content (a str is written as UTF-8).
    directory : Path or str
        The folder written to and ingested; files already in it are ingested too.
    index_path : Path or str
        The index file.
    dense, max_chars : optional
        As for :func:`ingest_directory`.

    Returns
    -------
    IngestReport
        What the ingest did.

    Raises
    ------
    ValueError
        For a path of ``texts`` not relative or leaving ``directory``, a content neither str
        nor bytes, or an argument :func:`ingest_directory` refuses (no file is written then).
    OSError, CorpusIndexError
        For a file that cannot be written; for an index file that cannot be used.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from corpus import ingest_texts
    >>> tmp = tempfile.TemporaryDirectory()
    >>> docs, index = Path(tmp.name, "docs"), Path(tmp.name, "docs.sqlite")
    >>> texts = {"guide.md": "Rack 7 stands in hall B.", "racks/rack8.txt": "Rack 8 holds tapes."}
    >>> ingest_texts(texts, docs, index, dense=False).accepted
    ('guide.md', 'racks/rack8.txt')
    >>> ingest_texts({"../guide.md": "Rack 7 stands in hall C."}, docs, index)
    Traceback (most recent call last):
    ...
    ValueError: texts path '../guide.md' is not a relative path inside the directory
    >>> tmp.cleanup()
    """
    files = _text_files(texts)
    _make_folder(directory)
    root, _ = check_ingest_arguments(directory, index_path, None, dense, max_chars)
    for relative, content in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(content)
    return ingest_directory(root, index_path, dense=dense, max_chars=max_chars)


@contextmanager
def temporary_index(
    texts: Mapping[str, str | bytes],
    *,
    dense: bool | Embedder = True,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Iterator[Path]:
    """An index of ``texts`` in a temporary folder that is removed on exit: for a search over a
    few given texts (the passages given with a question, a test's corpus, an example).

    Cost: the ingest's (:func:`ingest_texts`).

    Parameters
    ----------
    texts : mapping of str to str or bytes
        Each file's relative path and its content, as for :func:`ingest_texts`.
    dense, max_chars : optional
        As for :func:`ingest_directory`.

    Yields
    ------
    Path
        The index file; a text that cannot be read is left out of it, as an ingest leaves
        out such a file.

    Raises
    ------
    ValueError, CorpusIndexError
        As :func:`ingest_texts` raises them.

    Examples
    --------
    >>> from corpus import search, temporary_index
    >>> texts = {"guide.md": "Rack 7 stands in hall B.", "notes.txt": "Hall C is cooled at night."}
    >>> with temporary_index(texts, dense=False) as index:
    ...     [hit.path for hit in search(index, "rack 7", k=1, dense=False)]
    ['guide.md']
    >>> index.exists()
    False
    """
    with tempfile.TemporaryDirectory(prefix="corpus-") as folder:
        index = Path(folder, "index.sqlite")
        ingest_texts(texts, Path(folder, "texts"), index, dense=dense, max_chars=max_chars)
        yield index


def _make_folder(directory: object) -> None:
    """Make the folder ``directory`` names (and its parents) if it is missing. A bad name, or
    a folder that cannot be made, is left for :func:`check_ingest_arguments` to refuse."""
    if isinstance(directory, str | Path) and str(directory).strip():
        with suppress(OSError):
            Path(directory).mkdir(parents=True, exist_ok=True)


def _text_files(texts: object) -> dict[PurePosixPath, bytes]:
    """``texts`` (see :func:`ingest_texts`) as relative paths and the bytes to write, or
    ValueError naming the first bad entry."""
    if not isinstance(texts, Mapping):
        raise ValueError(
            f"texts must be a mapping of relative paths to str or bytes, got {type(texts).__name__}"
        )
    files: dict[PurePosixPath, bytes] = {}
    for name, content in texts.items():
        relative = PurePosixPath(name) if isinstance(name, str) else None
        if (
            relative is None
            or not relative.parts
            or relative.is_absolute()
            or ".." in relative.parts
        ):
            raise ValueError(f"texts path {name!r} is not a relative path inside the directory")
        if not isinstance(content, str | bytes):
            raise ValueError(f"texts[{name!r}] must be str or bytes, got {type(content).__name__}")
        files[relative] = content.encode("utf-8") if isinstance(content, str) else content
    return files
