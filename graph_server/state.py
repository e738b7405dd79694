"""Opt-in persistence for the MCP server: ``logic-graph-server --state-file PATH``.

The rule: the state file reloads whatever the server wrote, and nothing else loads.

**Writing.** After every tool call that changes something, the whole store is written
before the reply goes out: to a new temporary file ``.NAME.PID.RANDOM.tmp`` beside PATH,
created with ``O_EXCL | O_NOFOLLOW`` (so a file or link planted at that name is never
opened, let alone written through), flushed and fsync'd, then moved over PATH with
``os.replace`` (atomic on POSIX; it replaces a directory entry and never follows a link),
and the directory fsync'd. A process killed at any instant (kill -9 included) leaves
either the old file or the new one, and a change the client saw acknowledged is on disk.
The file holds a format name, a version and the SHA-256 of the graphs' exact bytes::

    {"format":"logic-graph-state","version":2,"sha256":"<64 hex>","graphs":[...]}

A store whose file would be larger than :data:`MAX_STATE_BYTES` is not written (the call
says the change is only in memory), so no file the loader would refuse for size is made.

**Loading**, at start: the directory must exist and belong to the server's user (the
temporary files live there); leftover temporary files of dead processes are removed; PATH
is opened with ``O_NOFOLLOW | O_NONBLOCK`` and must be a regular file (a symbolic link,
FIFO or device is refused at once, never read or waited on); it is read to at most
:data:`MAX_STATE_BYTES`; the checksum must match; nesting deeper than
:data:`MAX_STATE_DEPTH` is refused; and the graphs go back through the store's own
validation, so the memory limits apply as to any client. Version 1 files (no checksum,
written before version 2) still load. Every refusal is one line naming the path and what
to do, and the file is never overwritten.

Cost: each write rewrites the whole store (O(total size)); meant for agent-sized graphs,
not for bulk loads.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import stat
import threading
from pathlib import Path
from typing import Any

from graph_server.errors import StoreError
from graph_server.store import GraphStore

STATE_FORMAT = "logic-graph-state"
STATE_VERSION = 2
"""What this server writes; it also reads :data:`LEGACY_VERSION`."""
LEGACY_VERSION = 1
"""Files of the first server: no checksum."""
MAX_STATE_BYTES = 1 << 30
"""Largest state file written or read (1 GiB)."""
MAX_STATE_DEPTH = 32
"""Deepest nesting of arrays and objects a state file may hold (the server writes 6)."""
_HEAD = re.compile(
    rb'\{"format":"logic-graph-state","version":2,"sha256":"([0-9a-f]{64})","graphs":'
)
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)(?:\.[0-9a-f]+)?\.tmp")
_CREATE_TRIES = 8


class StateFileError(Exception):
    """The state file cannot be used; the message names the path and what to do."""


class StateFile:
    """Where one server keeps its graphs between runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        """One write at a time: a later snapshot can never be overwritten by an older one."""

    def load_into(self, store: GraphStore) -> int:
        """Restore the saved graphs into (empty) ``store``; returns how many it now holds.

        Raises :class:`StateFileError` (one line) for a directory the server does not own, a
        link, FIFO or device at the path, a file over the size or depth limit, a checksum
        that does not match, or graphs the store refuses.
        """
        self._check_directory()
        self.remove_stale_temporaries()
        data = self._read()
        if data is None:
            return 0
        graphs = self._parse(data)
        try:
            store.restore_state(graphs)
        except StoreError as exc:
            raise StateFileError(f"state file {self.path} was refused: {exc}") from None
        return len(store.list_graphs().graphs)  # empty graphs of older files are skipped

    def save(self, store: GraphStore) -> None:
        """Write the whole store to the file atomically and durably.

        Raises OSError when the disk refuses, and :class:`StateFileError` when the file
        would pass :data:`MAX_STATE_BYTES` (nothing is written then).
        """
        with self._lock:
            data = encode([graph.model_dump() for graph in store.dump_state()])
            if len(data) > MAX_STATE_BYTES:
                raise StateFileError(
                    f"the store would take {len(data):,} bytes in state file {self.path}, "
                    f"over the limit of {MAX_STATE_BYTES:,}; delete_graph graphs you no longer need"
                )
            temporary, handle = self._create_temporary()
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temporary, self.path)
            finally:
                temporary.unlink(missing_ok=True)
            # The rename itself is only durable once the directory entry is on disk.
            directory = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)

    def remove_stale_temporaries(self) -> list[Path]:
        """Delete the temporary files this path's writers left when killed; returns them.

        A temporary file is named after its writer's process id; one whose process is gone
        (or is this process, which has not written yet) is removed, links included (the
        link, never its target). A live writer's file is left alone. O(files in the folder).
        """
        removed: list[Path] = []
        try:
            entries = list(self.path.parent.iterdir())
        except OSError:
            return removed
        for entry in entries:
            match = _TEMPORARY.fullmatch(entry.name)
            if match is None or match["name"] != self.path.name:
                continue
            pid = int(match["pid"])
            if pid != os.getpid() and _alive(pid):
                continue
            try:
                entry.unlink()
            except FileNotFoundError:
                continue
            removed.append(entry)
        return removed

    def _check_directory(self) -> None:
        folder = self.path.parent
        try:
            info = folder.stat()
        except OSError:
            info = None
        if info is None or not stat.S_ISDIR(info.st_mode):
            raise StateFileError(f"state file {self.path}: directory {folder} does not exist")
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise StateFileError(
                f"state file {self.path}: directory {folder} belongs to user id {info.st_uid}, "
                "not to this server's user; keep the state file in a directory the server owns"
            )

    def _create_temporary(self) -> tuple[Path, int]:
        """A new, empty temporary file beside the state file, made by this call alone."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        for _ in range(_CREATE_TRIES):
            name = f".{self.path.name}.{os.getpid()}.{secrets.token_hex(8)}.tmp"
            temporary = self.path.with_name(name)
            try:
                return temporary, os.open(temporary, flags, 0o600)
            except FileExistsError:
                continue  # something is already there (planted?): never touch it
        raise FileExistsError(
            errno.EEXIST,
            f"no free temporary name beside {self.path} after {_CREATE_TRIES} tries",
        )

    def _read(self) -> bytes | None:
        """The file's bytes, or None when there is none; refuses what is not a plain file."""
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            handle = os.open(self.path, flags)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise StateFileError(
                    f"state file {self.path} is a symbolic link{_target(self.path)}; the server "
                    "never reads or writes through a link: pass the file's own path"
                ) from None
            raise StateFileError(f"state file {self.path} cannot be read: {exc}") from None
        try:
            info = os.fstat(handle)
            if not stat.S_ISREG(info.st_mode):
                raise StateFileError(
                    f"state file {self.path} is not a regular file ({_kind(info.st_mode)}); "
                    "pass the path of a file the server wrote"
                )
            if info.st_size > MAX_STATE_BYTES:
                raise StateFileError(_too_large(self.path))
            chunks: list[bytes] = []
            size = 0
            while chunk := os.read(handle, 1 << 20):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_STATE_BYTES:  # it grew while we read
                    raise StateFileError(_too_large(self.path))
            return b"".join(chunks)
        except OSError as exc:
            raise StateFileError(f"state file {self.path} cannot be read: {exc}") from None
        finally:
            os.close(handle)

    def _parse(self, data: bytes) -> list[Any]:
        """The graphs of a version 2 file whose checksum matches, or of a version 1 file."""
        what = f"state file {self.path}"
        head = _HEAD.match(data)
        if head is not None and data.endswith(b"}"):
            body = data[head.end() : -1]
            if hashlib.sha256(body).hexdigest() != head[1].decode("ascii"):
                raise StateFileError(
                    f"{what} is damaged: its checksum does not match its contents; it is left "
                    "untouched. Restore a backup or move it away to start empty"
                )
            return _graph_list(_decode(body, what), what)
        saved = _decode(data, what)
        if not isinstance(saved, dict) or saved.get("format") != STATE_FORMAT:
            raise StateFileError(
                f"{what} was not written by logic-graph-server (no format {STATE_FORMAT!r}); "
                "it is left untouched. Pass a new path or an earlier state file"
            )
        version = saved.get("version")
        if version == STATE_VERSION:
            raise StateFileError(
                f"{what} is damaged: it is not laid out as the server writes version "
                f"{STATE_VERSION} (format, version, sha256, graphs), so its checksum cannot be "
                "checked; it is left untouched"
            )
        if version != LEGACY_VERSION:
            raise StateFileError(
                f"{what} has version {version!r}; this server reads versions "
                f"{LEGACY_VERSION} and {STATE_VERSION} only"
            )
        if sorted(saved) != ["format", "graphs", "version"]:
            raise StateFileError(
                f"{what} is damaged: a version {LEGACY_VERSION} file holds format, version and "
                f"graphs only, this one also {sorted(set(saved) - {'format', 'graphs', 'version'})}"
            )
        return _graph_list(saved["graphs"], what)


def encode(graphs: list[Any]) -> bytes:
    """The bytes of a version 2 state file holding ``graphs`` (with their checksum). O(size)."""
    body = json.dumps(graphs, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    digest = hashlib.sha256(body).hexdigest()
    head = (
        f'{{"format":"{STATE_FORMAT}","version":{STATE_VERSION},"sha256":"{digest}","graphs":'
    ).encode("ascii")
    return head + body + b"}"


def _decode(data: bytes, what: str) -> Any:
    """JSON from ``data``, refusing bad UTF-8, bad JSON and nesting over the depth limit."""
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise StateFileError(
            f"{what} is not UTF-8 text (byte {exc.start}); it is damaged"
        ) from None
    except RecursionError:
        raise StateFileError(_too_deep(what)) from None
    except json.JSONDecodeError as exc:
        raise StateFileError(
            f"{what} is not valid JSON ({exc}); it is damaged or not a state file. "
            "Move it away or pass another --state-file"
        ) from None
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_STATE_DEPTH:
                raise StateFileError(_too_deep(what))
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return value


def _graph_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise StateFileError(f"{what} has no list of graphs")
    return value


def _too_deep(what: str) -> str:
    return (
        f"{what} is nested deeper than {MAX_STATE_DEPTH} levels; the server never writes "
        "that, so it is damaged or not a state file"
    )


def _too_large(path: Path) -> str:
    return (
        f"state file {path} is larger than the limit of {MAX_STATE_BYTES:,} bytes; the server "
        "never writes one that large, so it is not a state file"
    )


def _target(link: Path) -> str:
    try:
        return f" (to {os.readlink(link)!r})"
    except OSError:
        return ""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True
