"""One run per output folder: the lock that keeps two runs from writing into the same ``--out``.

Two runs sharing a folder would truncate each other's trace.jsonl, interleave its lines and
leave whichever report was written last. :func:`locked_out_dir` takes an exclusive advisory
lock (``flock``) on the folder itself for the whole run; a second run on the same folder is
refused at once with :class:`OutDirInUseError`, before any model call. The lock needs no file
of its own, so nothing is left behind, and the kernel drops it when the process ends however
it ends (``kill -9`` included), so a crashed run never blocks the next one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from orchestrator.records import TaskError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no advisory locks to take
    fcntl = None  # type: ignore[assignment]


class OutDirInUseError(TaskError):
    """Another run is writing into this output folder."""


@contextmanager
def locked_out_dir(out_dir: Path) -> Iterator[Path]:
    """Create ``out_dir`` (with its parents) and hold an exclusive lock on it while the block
    runs. Raises :class:`OutDirInUseError` when another process (or another run in this one)
    holds it, and :class:`TaskError` when the folder cannot be made or opened."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(out_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise TaskError(f"output folder {str(out_dir)!r} cannot be used: {exc}") from exc
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise OutDirInUseError(
                    f"output folder {str(out_dir)!r} is in use by another run; give this run "
                    "its own --out (or wait for the other to finish)"
                ) from None
        yield out_dir
    finally:
        os.close(fd)  # closing the descriptor releases the lock
