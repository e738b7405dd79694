"""JSON-RPC over stdio that answers every request, even one it cannot read.

The SDK's stdio transport drops a line it cannot parse, so a client that sent a
request nested 10,000 levels deep, or a string holding a lone surrogate
(``"\\ud800"``), waits forever. This transport reads the lines itself and hands
the SDK only messages it validated; for every other line it writes a JSON-RPC
error at once:

- ``-32700`` (parse error) when the line is not valid UTF-8, not JSON, nested deeper
  than the protocol parser allows, holds a lone surrogate, or is longer than
  :data:`MAX_LINE_BYTES`;
- ``-32600`` (invalid request) when it is JSON but not a JSON-RPC 2.0 message, and when
  its ``id`` is neither a string nor an integer (a float, boolean, null, object or array:
  the SDK would read such a request as a notification, answer nothing and run nothing;
  this reply has ``id`` null, as the id cannot be echoed).

The error carries the request's ``id`` when one can be found at the top level of
the line (even in a line too deep to parse), else ``null`` as JSON-RPC prescribes. A
line that is clearly a notification (a ``method`` and no ``id``) gets no answer, as
notifications never do.

It also makes cancellation answerable: a ``notifications/cancelled`` for a tool call
still running is not passed to the SDK (which would drop the call's answer) but
recorded in :class:`Cancellations`; the store sees it between batches, undoes the
call, and the reply says so. A cancel that arrives after the commit point changes
nothing, and the normal result is the reply.

Like the SDK's transport, it moves the process's own fd 0 and fd 1 aside while it
serves (fd 0 reads the null device, fd 1 writes to stderr), so a stray ``print``
cannot corrupt the protocol stream.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 128 * 1024 * 1024
"""Longest message read; a longer line is skipped and answered with a parse error."""
_CANCELLED = "notifications/cancelled"
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]', re.DOTALL)
_SPACE = re.compile(r"\s*")

RequestId = str | int


class Cancellations:
    """Tool calls in flight on one connection and the ones their client cancelled."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[RequestId] = set()
        self._cancelled: set[RequestId] = set()

    def started(self, request_id: RequestId) -> None:
        with self._lock:
            self._running.add(request_id)

    def finished(self, request_id: RequestId) -> None:
        with self._lock:
            self._running.discard(request_id)
            self._cancelled.discard(request_id)

    def cancel(self, request_id: Any) -> bool:
        """Record a cancel; True when it concerns a call in flight (then it is ours)."""
        with self._lock:
            if request_id in self._running:
                self._cancelled.add(request_id)
                return True
            return False

    def is_cancelled(self, request_id: Any) -> bool:
        with self._lock:
            return request_id in self._cancelled


def top_level_value(text: str, key: str) -> Any:
    """The value of ``key`` in the outermost object of ``text``, if it is a scalar.

    Works on text that is too deep for a JSON parser, or cut short: the scan only
    tracks nesting and string boundaries. Returns None when not found. O(len(text)).
    """
    depth = 0
    wanted = json.dumps(key)
    previous_key = False
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
        elif token == ":" and previous_key:
            start = _SPACE.match(text, match.end())
            position = start.end() if start else match.end()
            try:
                value, _ = json.JSONDecoder().raw_decode(text, position)
            except (ValueError, RecursionError):
                return None
            return value if isinstance(value, str | int | float | bool) else None
        previous_key = depth == 1 and token == wanted
    return None


def _request_id(value: Any) -> RequestId | None:
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def _lone_surrogate(value: Any, path: str = "") -> str | None:
    """Path of the first string (or key) holding a lone surrogate, else None."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return where or "(top level)"
        elif isinstance(item, dict):
            for key, child in item.items():
                stack.append((key, f"{where}.{key!r} (a key)".lstrip(".")))
                stack.append((child, f"{where}.{key}".lstrip(".")))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(item))
    return None


def error_for_line(line: bytes, problem: str | None = None) -> types.JSONRPCError | None:
    """The JSON-RPC error answering a line the SDK cannot take, or None for a notification.

    ``problem`` is set by the reader for a line it had to cut (too long).
    """
    code = types.PARSE_ERROR
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = line.decode("utf-8", "replace")
        problem = problem or f"Parse error: the line is not valid UTF-8 (byte {exc.start})"
    parsed: Any = None
    if problem is None:
        try:
            parsed = json.loads(text)
        except RecursionError:
            problem = "Parse error: the message is nested too deeply to parse"
        except ValueError as exc:
            problem = f"Parse error: not valid JSON ({exc})"
    if problem is None:
        where = _lone_surrogate(parsed)
        if where is not None:
            problem = (
                f"Parse error: the string at {where} holds a lone surrogate escape "
                "(such as \\ud800), which is not valid Unicode"
            )
        elif _depth_over(parsed, 128):
            problem = (
                "Parse error: the message is nested deeper than the protocol parser allows "
                "(keep arguments under about 100 levels)"
            )
        else:
            code = types.INVALID_REQUEST
            problem = "Invalid Request: not a JSON-RPC 2.0 request, notification or response"
    if isinstance(parsed, dict):
        request_id = _request_id(parsed.get("id"))
        if "id" not in parsed and isinstance(parsed.get("method"), str):
            return None  # a notification: never answered
    else:
        request_id = _request_id(top_level_value(text, "id"))
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=types.ErrorData(code=code, message=problem),
    )


def unusable_id_error(line: bytes) -> types.JSONRPCError | None:
    """The Invalid Request error for a message with an ``id`` that is not a string or an
    integer, or None when the line has no ``id`` key (a true notification).

    JSON-RPC 2.0 ids are strings or integers here; a message carrying any other id is a
    request that cannot be answered by its id, so it is answered with ``id`` null. Called
    only for lines the SDK took as notifications (rare), so the second parse is cheap.
    """
    try:
        parsed = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict) or "id" not in parsed:
        return None
    value = parsed["id"]
    kind = "null" if value is None else _JSON_KINDS.get(type(value), type(value).__name__)
    shown = json.dumps(value)
    shown = shown if len(shown) <= 60 else shown[:60] + "..."
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=types.ErrorData(
            code=types.INVALID_REQUEST,
            message=(
                f"Invalid Request: id must be a string or an integer, got {kind} {shown}; "
                "the request was not run"
            ),
        ),
    )


_JSON_KINDS = {bool: "a boolean", float: "a float", dict: "an object", list: "an array"}


def _depth_over(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _claim_stdio() -> tuple[BinaryIO, BinaryIO, Callable[[], None]]:
    """Private handles on the real stdin/stdout; fd 0 and 1 are pointed elsewhere."""
    try:
        wire_in, wire_out = os.dup(0), os.dup(1)
    except OSError:
        return sys.stdin.buffer, sys.stdout.buffer, lambda: None
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)

    # closefd=False: a reader thread may still block on the descriptor at exit.
    reading = os.fdopen(wire_in, "rb", closefd=False)
    return reading, os.fdopen(wire_out, "wb", closefd=False), restore


def _read_line(stream: BinaryIO) -> tuple[bytes, str | None]:
    """One line (without its newline) and, for an over-long line, the problem."""
    line = stream.readline(MAX_LINE_BYTES + 1)
    if len(line) <= MAX_LINE_BYTES or line.endswith(b"\n"):
        return line, None
    head = line[:65536]
    while line and not line.endswith(b"\n"):
        line = stream.readline(1 << 20)
    return head, f"Parse error: the message is longer than {MAX_LINE_BYTES:,} bytes"


@asynccontextmanager
async def stdio_transport(
    cancellations: Cancellations,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """Streams for ``Server.run`` over stdin/stdout (or the given binary streams)."""
    restore: Callable[[], None] = lambda: None  # noqa: E731
    if stdin is None or stdout is None:
        stdin, stdout, restore = _claim_stdio()
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_client, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    replies = to_client.clone()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_read_lines, stdin, to_server, replies, cancellations)
            group.start_soon(_write_messages, stdout, from_server, cancellations)
            async with to_client:
                yield from_client, to_client
            group.cancel_scope.cancel()
    finally:
        restore()


async def _read_lines(
    wire_in: BinaryIO,
    to_server: MemoryObjectSendStream[SessionMessage | Exception],
    replies: MemoryObjectSendStream[SessionMessage],
    cancellations: Cancellations,
) -> None:
    """Read ``wire_in`` line by line until it ends: each message goes to the server, except
    an unreadable line or a request with a bad id (answered on ``replies`` here) and a
    cancellation of a running tool call (recorded in ``cancellations``)."""
    async with to_server, replies:
        while True:
            line, problem = await anyio.to_thread.run_sync(
                _read_line, wire_in, abandon_on_cancel=True
            )
            if not line:
                return
            if not line.strip():
                continue
            message = None
            if problem is None:
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception:
                    message = None
            if isinstance(message, types.JSONRPCNotification):
                refused = unusable_id_error(line)
                if refused is not None:
                    log.info("answered a request with a bad id: %s", refused.error.message)
                    await replies.send(SessionMessage(refused))
                    continue
            if message is None:
                error = error_for_line(line, problem)
                if error is not None:
                    log.info("answered an unreadable line: %s", error.error.message)
                    await replies.send(SessionMessage(error))
                continue
            if isinstance(message, types.JSONRPCRequest) and message.method == "tools/call":
                cancellations.started(message.id)
            elif isinstance(message, types.JSONRPCNotification) and message.method == _CANCELLED:
                target = (message.params or {}).get("requestId")
                if cancellations.cancel(target):
                    log.info("tool call %r cancelled by the client", target)
                    continue
            await to_server.send(SessionMessage(message))


async def _write_messages(
    wire_out: BinaryIO,
    from_server: MemoryObjectReceiveStream[SessionMessage],
    cancellations: Cancellations,
) -> None:
    """Write each message of the server to ``wire_out``, one line each; a response or error
    ends its request in ``cancellations``."""
    async with from_server:
        async for outgoing in from_server:
            message = outgoing.message
            data = message.model_dump_json(by_alias=True, exclude_unset=True)
            await anyio.to_thread.run_sync(_write, wire_out, data)
            if (
                isinstance(message, types.JSONRPCResponse | types.JSONRPCError)
                and message.id is not None
            ):
                cancellations.finished(message.id)


def _write(stream: BinaryIO, data: str) -> None:
    stream.write(data.encode("utf-8") + b"\n")
    stream.flush()
