"""The files an ingest takes from a folder: scanning it without following links, opening a
file without following one, and the problems met on the way (see :mod:`corpus.index`).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from corpus.readers import MAX_FILE_BYTES, is_supported


@dataclass(frozen=True)
class FileProblem:
    """A file the ingest could not take, with the reason in one line.

    Parameters
    ----------
    path : str
        The file, relative to the ingested folder.
    reason : str
        Why it was not taken.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from corpus import ingest_texts
    >>> latin1 = {"latin1.txt": "caf\\xe9".encode("latin-1")}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     report = ingest_texts(latin1, Path(tmp, "docs"), Path(tmp, "docs.sqlite"), dense=False)
    >>> report.failed
    (FileProblem(path='latin1.txt', reason='...'),)
    """

    path: str
    reason: str


@dataclass(frozen=True)
class Scan:
    """What :func:`scan_directory` found under a folder (relative posix paths, sorted)."""

    files: dict[str, Path]
    """Supported files: relative path -> path."""
    ignored: list[str]
    """Files with no reader."""
    problems: list[FileProblem]
    """Names that cannot be indexed (not UTF-8) and folders or files that cannot be listed."""


def scan_directory(directory: Path) -> Scan:
    """The files under ``directory``. Hidden files and folders (name starting with ``.``)
    and symbolic links are left out; a name that is not valid UTF-8 (the index stores text)
    and a folder the OS cannot list (a path too long, no permission) are problems to report,
    never a reason to stop. Cost: O(entries)."""
    found: dict[str, Path] = {}
    ignored: list[str] = []
    problems: list[FileProblem] = []

    def unlistable(exc: OSError) -> None:
        where = _relative_text(Path(exc.filename or directory), directory)
        problems.append(FileProblem(where, f"cannot list this folder: {exc.strerror or exc}"))

    for root, dirs, names in os.walk(directory, onerror=unlistable):
        kept = []
        for name in sorted(dirs):
            if not name.startswith("."):
                if _utf8(name):
                    kept.append(name)
                else:
                    problems.append(_bad_name(Path(root) / name, directory, "folder"))
        dirs[:] = kept
        for name in sorted(names):
            full = Path(root) / name
            if name.startswith("."):
                continue
            if not _utf8(name):
                problems.append(_bad_name(full, directory, "file"))
                continue
            try:
                if full.is_symlink() or not full.is_file():
                    continue
            except OSError as exc:  # e.g. a path longer than the OS allows
                where = _relative_text(full, directory)
                problems.append(FileProblem(where, f"cannot stat: {exc.strerror or exc}"))
                continue
            relative = full.relative_to(directory).as_posix()
            if is_supported(name):
                found[relative] = full
            else:
                ignored.append(relative)
    return Scan(dict(sorted(found.items())), sorted(ignored), sorted(problems, key=by_path))


def open_no_follow(root: Path, relative: str) -> int:
    """A read-only file descriptor for ``root / relative`` that follows no symbolic link
    below ``root``: each folder and the file itself is opened with ``O_NOFOLLOW`` relative to
    the one before, so a file or folder swapped for a link after the scan fails to open
    (``OSError``, ELOOP or ENOTDIR) instead of letting the ingest read what the link points
    at. ``O_NONBLOCK`` keeps a swapped-in FIFO from blocking the open. Where the OS lacks
    ``dir_fd`` or ``O_NOFOLLOW`` the path is opened and then checked to be no link.
    Cost: one open per path component."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not nofollow or os.open not in os.supports_dir_fd:
        full = root / relative
        fd = os.open(full, flags)
        if full.is_symlink():
            os.close(fd)
            raise OSError(errno.ELOOP, "is a symbolic link", str(full))
        return fd
    parent = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        *folders, name = relative.split("/")
        for folder in folders:
            below = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | nofollow, dir_fd=parent)
            os.close(parent)
            parent = below
        return os.open(name, flags | nofollow, dir_fd=parent)
    finally:
        os.close(parent)


def too_big(size: int) -> str:
    return (
        f"file is {size:,} bytes, over the limit of {MAX_FILE_BYTES:,} "
        f"({MAX_FILE_BYTES // 2**20} MB); it was not read"
    )


def _utf8(name: str) -> bool:
    """Whether a name from the file system is valid UTF-8 (Python keeps invalid bytes as
    lone surrogates, which SQLite cannot store)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _relative_text(path: Path, directory: Path) -> str:
    """``path`` relative to ``directory`` for a report, invalid bytes shown as U+FFFD."""
    try:
        relative = path.relative_to(directory).as_posix()
    except ValueError:
        relative = path.as_posix()
    return relative.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _bad_name(path: Path, directory: Path, kind: str) -> FileProblem:
    return FileProblem(
        _relative_text(path, directory),
        f"{kind} name is not valid UTF-8; rename it to index it",
    )


def by_path(problem: FileProblem) -> str:
    return problem.path
