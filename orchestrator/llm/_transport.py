"""The HTTP transport of :class:`~.client.ChatClient`: sessions, the watchdog, one POST.

Each HTTP attempt has a wall-clock deadline for the whole exchange (connect, headers and body).
A per-read socket timeout alone would not do: a server that sends one byte every few seconds
never lets a read time out, so a watchdog shuts the attempt's socket down when its deadline
passes (:class:`Watchdog`). The connection pools of a session made by :func:`new_session` put
every socket they send a request on under the current thread's watchdog.

Key handling: ``requests`` exceptions hold the prepared request, Authorization header included,
so :func:`post` turns them into the project's own errors (their text passed through the
caller's ``redact``) and raises those outside the ``except`` blocks: neither ``__cause__`` nor
``__context__`` then keeps them, and the key, reachable.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable
from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.poolmanager import PoolManager

from orchestrator.llm.errors import (
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    ResponseTooLargeError,
)
from orchestrator.llm.json_object import JsonObject

_watching = threading.local()
"""The :class:`Watchdog` of the HTTP attempt running on this thread, if any."""


class Watchdog:
    """Shuts down the socket of one HTTP attempt when its deadline passes.

    Used as a context manager around the attempt; a connection that sends a request on this
    thread meanwhile enlists its socket (:class:`_EnlistingConnection`). The socket itself is
    kept, not the connection: http.client drops the connection's reference as soon as the
    headers say the server will close, while the body is still being read from it.
    ``shutdown`` (not ``close``) is what wakes a thread blocked in ``recv`` on the socket; the
    blocked read then fails, and ``fired`` tells the caller that the deadline, not the server,
    ended it.
    """

    def __init__(self, seconds: float, group: WatchGroup | None = None) -> None:
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True
        self._group = group

    def enlist(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            late = self.fired
        if late:
            _shut(sock)

    def fire(self) -> None:
        """End the attempt now, as if its deadline had passed (an interrupted run)."""
        self._fire()

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def __enter__(self) -> Watchdog:
        _watching.dog = self
        self._timer.start()
        if self._group is not None:
            self._group.join(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        _watching.dog = None
        if self._group is not None:
            self._group.leave(self)


class WatchGroup:
    """The watchdogs of one client's attempts in flight, so that all of them can be ended at
    once (:meth:`fire_all`, when a run is interrupted). After ``fire_all`` the group stays
    fired: an attempt that starts later is ended as soon as it joins."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dogs: set[Watchdog] = set()
        self._fired = threading.Event()

    @property
    def fired(self) -> bool:
        return self._fired.is_set()

    def pause(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when the group is fired meanwhile (a back-off between
        retries must not outlast an interrupt)."""
        self._fired.wait(seconds)

    def join(self, dog: Watchdog) -> None:
        with self._lock:
            self._dogs.add(dog)
            late = self._fired.is_set()
        if late:
            dog.fire()

    def leave(self, dog: Watchdog) -> None:
        with self._lock:
            self._dogs.discard(dog)

    def fire_all(self) -> None:
        with self._lock:
            self._fired.set()
            dogs = list(self._dogs)
        for dog in dogs:
            dog.fire()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed: nothing left to stop
        sock.shutdown(socket.SHUT_RDWR)


class _EnlistingConnection(HTTPConnection):
    """An HTTP connection that puts its socket under the current thread's watchdog on every
    request (a pooled connection serves several attempts, so connecting is not enough). The
    request is sent first, so the socket exists; connecting and sending have their own
    socket timeouts."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        super().request(*args, **kwargs)
        dog: Watchdog | None = getattr(_watching, "dog", None)
        if dog is not None and self.sock is not None:
            dog.enlist(self.sock)


class _EnlistingHTTPSConnection(_EnlistingConnection, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _EnlistingConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _EnlistingHTTPSConnection


_POOLS = {"http": _HTTPPool, "https": _HTTPSPool}


class _WatchedAdapter(HTTPAdapter):
    """requests' adapter whose pools (direct and through a proxy) use enlisting connections."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> PoolManager:
        manager: PoolManager = super().proxy_manager_for(proxy, **proxy_kwargs)
        manager.pool_classes_by_scheme = _POOLS
        return manager


def new_session() -> requests.Session:
    """A ``requests`` session whose connections (http and https) enlist under the watchdog."""
    session = requests.Session()
    adapter = _WatchedAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def post(
    session: requests.Session,
    url: str,
    payload: JsonObject,
    headers: dict[str, str],
    limit_s: float,
    redact: Callable[[str], str],
    *,
    group: WatchGroup | None = None,
    max_bytes: int | None = None,
) -> requests.Response:
    """POST ``payload`` as JSON to ``url``, the whole answer within ``limit_s`` seconds.

    ``group`` (optional) lets the caller end the attempt early (:class:`WatchGroup`). With
    ``max_bytes`` the body is read as it arrives and the attempt fails with
    :class:`ResponseTooLargeError` once it passes that size, so an oversized answer costs
    neither the memory nor the time to read it all.

    Returns the response, whatever its status. Raises :class:`LLMTimeoutError` (no complete
    answer in time), :class:`LLMConnectionError` (with ``kind`` ``"dns"`` or
    ``"connection_refused"`` when the cause says so) or :class:`LLMError`; their text goes
    through ``redact``, and none keeps the ``requests`` exception reachable.
    """
    failure: LLMError | None = None
    response: requests.Response | None = None
    with Watchdog(limit_s, group) as dog:
        try:
            response = session.post(
                url,
                json=payload,
                headers=headers,
                timeout=(min(10.0, limit_s), limit_s),
                stream=max_bytes is not None,
            )
            if max_bytes is not None:
                _read_capped(response, url, max_bytes)
        except ResponseTooLargeError as exc:
            failure = exc
        except requests.Timeout:
            failure = LLMTimeoutError(f"no answer from {url} within {limit_s:.3g}s")
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
            failure = LLMConnectionError(
                redact(f"connection to {url} failed: {exc}"), kind=connection_kind(exc)
            )
        except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
            failure = LLMError(redact(f"request to {url} failed: {exc}"))
    # A shut-down socket can also look like a short but complete answer (the headers
    # dripped to the end of a status line): whatever came back, a fired watchdog means the
    # answer did not arrive in time.
    if dog.fired and not isinstance(failure, ResponseTooLargeError):
        failure = LLMTimeoutError(
            f"no complete answer from {url} within {limit_s:.3g}s (the deadline covers "
            "connecting, the headers and the whole body)"
        )
    if failure is not None or response is None:
        raise failure or LLMError(f"request to {url} produced no response")
    return response


def get_json(
    url: str,
    *,
    limit_s: float,
    max_bytes: int,
    headers: dict[str, str] | None = None,
    session: requests.Session | None = None,
    redact: Callable[[str], str] = str,
) -> tuple[Any, str | None]:
    """``(body, None)``: the JSON body of a 200 answer to ``GET url``, the whole exchange
    within ``limit_s`` seconds (the watchdog, so a server that drips bytes cannot stretch it)
    and at most ``max_bytes``; ``(None, why)`` for anything else (another status, a slow,
    broken, oversized or unreadable answer). Never raises: its callers only probe."""
    if limit_s <= 0:
        return None, "no time left"
    failure: str | None = None
    raw = b""
    # Only a session of new_session() puts its sockets under the watchdog.
    own = session is None
    session = session if session is not None else new_session()
    with Watchdog(limit_s) as dog:
        try:
            with session.get(
                url,
                headers=headers,
                timeout=(min(limit_s, 10.0), limit_s),
                stream=True,
            ) as response:
                if response.status_code != 200:
                    failure = f"HTTP {response.status_code}"
                else:
                    raw = response.raw.read(max_bytes + 1, decode_content=True) or b""
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            failure = redact(f"{type(exc).__name__}: {exc}")
    if own:
        session.close()
    if dog.fired:
        failure = f"no complete answer within {limit_s:.3g} s"
    elif failure is None and len(raw) > max_bytes:
        failure = f"the answer passed {max_bytes} bytes"
    if failure is not None:
        return None, failure
    try:
        return json.loads(raw), None
    except ValueError as exc:
        return None, f"not JSON: {exc}"


def _read_capped(response: requests.Response, url: str, max_bytes: int) -> None:
    """Read the streamed body of ``response`` into it, at most ``max_bytes`` (decoded);
    raises :class:`ResponseTooLargeError` beyond that (the Content-Length, when it says so
    already, is believed without reading)."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        response.close()
        raise ResponseTooLargeError(
            f"the answer from {url} is {int(declared)} bytes, over the limit of {max_bytes}"
        )
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(chunk_size=65536):
        size += len(chunk)
        if size > max_bytes:
            response.close()
            raise ResponseTooLargeError(
                f"the answer from {url} passed {max_bytes} bytes; reading stopped there"
            )
        chunks.append(chunk)
    # requests keeps a streamed body here once read; .text and .json() then use it.
    response._content = b"".join(chunks)
    response._content_consumed = True


def connection_kind(exc: BaseException) -> str | None:
    """``"dns"`` or ``"connection_refused"`` when the chain under a requests error says so."""
    seen: set[int] = set()
    stack: list[object] = [exc]
    while stack:
        item = stack.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, socket.gaierror) or type(item).__name__ == "NameResolutionError":
            return "dns"
        if isinstance(item, ConnectionRefusedError):
            return "connection_refused"
        stack += [getattr(item, "reason", None), item.__cause__, item.__context__, *item.args]
    return None
