"""An index file opened once inside the served folders, and SQLite connections checked to be
to that very file (see :func:`corpus.documents.search_evidence`).

Checking a path and then opening it by name again is a race: a folder inside a root swapped
for a symbolic link in between sends the open outside the roots (a fault pass read an
outside index in 99 of 600 searches that way). So the index is opened once, one path
component at a time without following links (:func:`~corpus.index_scan.open_no_follow`),
and kept open; its device and inode are what was checked.

SQLite cannot be handed that descriptor: given ``/proc/self/fd/N`` it reads the link back
into a path and opens the path (measured with SQLite 3.40 and 3.51), and it must open the
file by its name to find the journal a killed ingest left. So every connection is opened by
the checked path and then verified: the regular files that this process has open are listed
before and after the connect, and the one file that appeared must be the checked one. If it
is another file (a swap happened in between), the connection is closed before any query
and the search is refused.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from stat import S_ISREG
from typing import TypeVar

from corpus.index_scan import open_no_follow
from corpus.index_schema import CorpusIndexError

T = TypeVar("T")

CONNECT_TRIES = 3
"""Connects tried before a mismatch is reported (another thread may open a file meanwhile)."""

_FD_FOLDERS = ("/proc/self/fd", "/dev/fd")
_connecting = threading.Lock()
"""One checked connect at a time in this process, so two searches do not see each other's
new file as their own."""


class PinnedIndex:
    """An index file opened inside a root: its real path when it was opened, the open
    descriptor, and its (device, inode). Close it (or use ``with``) when the search is done."""

    def __init__(self, path: Path, fd: int) -> None:
        stat = os.fstat(fd)
        self.path = path
        self.fd = fd
        self.identity = (stat.st_dev, stat.st_ino)

    def connect(self, opener: Callable[[], T], close: Callable[[T], None]) -> T:
        """``opener()``, a connection to :attr:`path`, checked to have opened this very
        file; :class:`~corpus.index_schema.CorpusIndexError` when it opened another one.
        Where the OS cannot list a process's open files, the connection is not checked.
        Cost: two listings of this process's descriptors per try."""
        for _ in range(CONNECT_TRIES):
            with _connecting:
                before = _open_files()
                conn = opener()
                after = _open_files()
            if before is None or after is None:
                return conn
            appeared = {ident for fd, ident in after.items() if before.get(fd) != ident}
            if appeared == {self.identity}:
                return conn
            close(conn)  # another file, or another thread's file beside ours: try again
        raise CorpusIndexError(
            f"index {str(self.path)!r} changed while it was being opened (a folder on its "
            "path was swapped for a link, or this process opened other files at the same "
            "moment); it was not searched"
        )

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> PinnedIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def pin_inside(index: str, roots: Sequence[Path | str]) -> PinnedIndex | None:
    """The index file ``index`` opened inside one of ``roots``, or None. The name is
    resolved to find which root it lies in; the file is then opened from that root one
    component at a time with ``O_NOFOLLOW``, so what is opened is inside the root whatever
    was swapped since. Missing, forbidden, a folder, a link that leaves the roots or an
    unusable path all give None, so a client learns nothing about what exists outside.
    The roots themselves are the operator's and may be links. Cost: O(len(roots)) path
    resolutions and one open per path component."""
    try:
        target = Path(index).expanduser().resolve()
        for root in roots:
            base = Path(root).expanduser().resolve()
            if target == base or not target.is_relative_to(base):
                continue
            fd = open_no_follow(base, target.relative_to(base).as_posix())
            if not S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                return None
            return PinnedIndex(target, fd)
    except (OSError, ValueError, RuntimeError):  # gone, swapped, too long, a NUL byte, a loop
        return None
    return None


def _open_files() -> dict[int, tuple[int, int]] | None:
    """Descriptor -> (device, inode) of every regular file this process has open, or None
    when the OS offers no listing."""
    for folder in _FD_FOLDERS:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        files: dict[int, tuple[int, int]] = {}
        for name in names:
            try:
                stat = os.fstat(int(name))
            except (OSError, ValueError):  # closed meanwhile, or the listing's own descriptor
                continue
            if S_ISREG(stat.st_mode):
                files[int(name)] = (stat.st_dev, stat.st_ino)
        return files
    return None
