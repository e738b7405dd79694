"""The front of ``logic-graph serve``: a bounded HTTP relay between clients and llama.cpp.

llama.cpp's own HTTP server has a small fixed pool of connection threads and no cap on a
request body, so over it (issue 35, #11) a 60 MB body got no reply within 120 s, 64 half-open
connections left no thread for ``/health``, a client holding a connection kept SIGTERM from
stopping the server, and a restart on the same port was refused for a minute. The built-in
model now listens on a private port, and :class:`ServeFront` owns the public one:

* a request body over :data:`MAX_BODY_BYTES` is answered 413 at once, unread; a POST without
  ``Content-Length`` (a chunked upload) 411;
* every connection has its own thread (at most :data:`MAX_CONNECTIONS`; beyond that a new
  one is answered 503 and closed) and its own deadlines: :data:`IDLE_READ_S` for any read and
  :data:`REQUEST_READ_S` for the whole request, head and body, so a client that connects and
  sends nothing, or drips, costs one thread for a bounded time and never blocks ``/health``;
* :meth:`ServeFront.close` stops accepting, then shuts every client connection down, so a
  client holding one cannot delay a stop;
* the listening socket is bound with ``SO_REUSEADDR``, so a restart does not wait for the
  old connections' TIME_WAIT.

Everything else is relayed unchanged, streamed answers included, to the upstream server.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

MAX_BODY_BYTES = 8_000_000
"""The largest request body relayed: a prompt that fills a 32k-token context is about 130 kB
of JSON, so this is room for any real request and none for a flood."""
MAX_CONNECTIONS = 256
"""Client connections open at once; each holds one thread."""
IDLE_READ_S = 10.0
"""The longest wait for any one read from a client."""
REQUEST_READ_S = 30.0
"""The longest a client may take to send a whole request (head and body)."""
DISCARD_S = 3.0
"""How long a refused body is read and dropped before the connection closes."""
UPSTREAM_TIMEOUT_S = 3600.0
"""How long a relayed request may wait on the model (one long generation on a busy CPU takes
minutes; the client's own deadline is what bounds a call)."""
_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailers",
    "transfer-encoding",
    "upgrade",
}


class ServeFront:
    """Listens on 127.0.0.1:``port`` (0: any free port) and relays to ``upstream`` (a root
    URL, ``http://127.0.0.1:PORT``) within the bounds of the module docstring. Starts on
    construction; use as a context manager or call :meth:`close`. ``root`` is its own root
    URL. Raises OSError when the port cannot be bound."""

    def __init__(
        self,
        upstream: str,
        *,
        port: int = 0,
        max_body_bytes: int = MAX_BODY_BYTES,
        max_connections: int = MAX_CONNECTIONS,
        idle_read_s: float = IDLE_READ_S,
        request_read_s: float = REQUEST_READ_S,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname or parts.port is None:
            raise ValueError(f"upstream must be http://HOST:PORT, got {upstream!r}")
        self.upstream_host, self.upstream_port = parts.hostname, parts.port
        self.max_body_bytes = max_body_bytes
        self.idle_read_s = idle_read_s
        self.request_read_s = request_read_s
        self._slots = threading.BoundedSemaphore(max_connections)
        self._lock = threading.Lock()
        self._clients: set[socket.socket] = set()
        self._closing = threading.Event()
        self._server = _Server(("127.0.0.1", port), _handler_for(self), self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="logic-graph-serve-front",
            daemon=True,
        )
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        """Stop accepting, cut every client connection, release the port (idempotent)."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            clients = list(self._clients)
        for sock in clients:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)

    def __enter__(self) -> ServeFront:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- used by the server and its handler ---------------------------------------------------

    def _admit(self, sock: socket.socket) -> bool:
        if self._closing.is_set() or not self._slots.acquire(blocking=False):
            return False
        with self._lock:
            self._clients.add(sock)
        return True

    def _release(self, sock: socket.socket) -> None:
        with self._lock:
            self._clients.discard(sock)
        self._slots.release()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True  # SO_REUSEADDR: a restart need not wait out TIME_WAIT
    request_queue_size = 128

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], front: ServeFront
    ) -> None:
        self.front = front
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.front._admit(request):
            # Over the connection cap (or closing): a short answer, not a silent hang.
            with contextlib.suppress(OSError):
                request.sendall(
                    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                    b"Connection: close\r\n\r\n"
                )
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.front._release(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that went away mid-answer is not worth a traceback


class _RelayHandler(BaseHTTPRequestHandler):
    """One client connection: read a bounded request, relay it, copy the answer back."""

    front: ServeFront
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()  # sets ``timeout`` (idle_read_s, see _handler_for) on every read
        self._arrived: threading.Timer | None = None

    def handle_one_request(self) -> None:
        # The whole request (head and body) must arrive within request_read_s, however it
        # trickles: the timer shuts the connection down when it does not.
        timer = threading.Timer(self.front.request_read_s, self._too_slow)
        timer.daemon = True
        self._arrived = timer
        timer.start()
        try:
            super().handle_one_request()
        finally:
            timer.cancel()

    def _too_slow(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._relay(b"")

    def do_POST(self) -> None:
        body = self._read_body()
        if body is not None:
            self._relay(body)

    def _read_body(self) -> bytes | None:
        """The request body, or None after answering a request whose body is refused."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self._refuse(411, "send the body with a Content-Length, not chunked")
            return None
        declared = self.headers.get("Content-Length")
        if declared is None or not declared.strip().isdigit():
            self._refuse(411, "a POST needs a Content-Length")
            return None
        length = int(declared)
        if length > self.front.max_body_bytes:
            self._refuse(
                413, f"the body is {length} bytes, over the limit of {self.front.max_body_bytes}"
            )
            self._discard(length)
            return None
        data = self.rfile.read(length)
        if len(data) < length:  # the client hung up, or the request deadline cut it
            self.close_connection = True
            return None
        if self._arrived is not None:
            self._arrived.cancel()  # the request is in: the model may take its time
        return data

    def _discard(self, length: int) -> None:
        """Read and drop what a refused body sends, for at most :data:`DISCARD_S`: closing
        with unread data would reset the connection, and the client, still sending, might
        never read the answer it was given."""
        until = time.monotonic() + DISCARD_S
        left = length
        with contextlib.suppress(OSError):
            self.connection.settimeout(DISCARD_S)
            while left > 0 and time.monotonic() < until:
                chunk = self.connection.recv(min(left, 1 << 20))
                if not chunk:
                    break
                left -= len(chunk)

    def _refuse(self, status: int, message: str) -> None:
        """Answer ``status`` with an OpenAI-style error and close the connection (its unread
        body must not be taken for the next request)."""
        data = (
            '{"error": {"message": "' + message.replace('"', "'") + f'", "code": {status}' + "}}"
        ).encode()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

    def _relay(self, body: bytes) -> None:
        front = self.front
        upstream = http.client.HTTPConnection(
            front.upstream_host, front.upstream_port, timeout=UPSTREAM_TIMEOUT_S
        )
        headers = {
            name: value
            for name, value in self.headers.items()
            if name.lower() not in _HOP_BY_HOP and name.lower() not in ("host", "content-length")
        }
        try:
            upstream.request(self.command, self.path, body=body or None, headers=headers)
            answer = upstream.getresponse()
        except OSError as exc:
            self._refuse(502, f"the model server did not answer: {exc}")
            upstream.close()
            return
        try:
            self._copy(answer)
        except OSError:
            self.close_connection = True  # the client went away
        finally:
            upstream.close()

    def _copy(self, answer: http.client.HTTPResponse) -> None:
        """Send ``answer`` on, streamed as it comes; without a length, the connection's end
        marks the answer's end."""
        length = answer.getheader("Content-Length")
        self.send_response_only(answer.status, answer.reason)
        for name, value in answer.getheaders():
            if name.lower() not in _HOP_BY_HOP:
                self.send_header(name, value)
        if length is None:
            self.close_connection = True
            self.send_header("Connection", "close")
        self.end_headers()
        while True:
            chunk = answer.read1(65536)
            if not chunk:
                break
            self.wfile.write(chunk)
            self.wfile.flush()


def _handler_for(front: ServeFront) -> type[BaseHTTPRequestHandler]:
    class _Bound(_RelayHandler):
        pass

    _Bound.front = front
    _Bound.timeout = front.idle_read_s
    return _Bound
