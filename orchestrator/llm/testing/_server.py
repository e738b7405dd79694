"""The fake OpenAI-compatible HTTP server: real sockets on 127.0.0.1, scripted answers."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from orchestrator.llm.json_object import JsonObject
from orchestrator.llm.testing._replies import (
    FakeReply,
    FakeRequest,
    as_reply,
    as_route_reply,
    default_body,
    generated,
)

Handler = Callable[[JsonObject, dict[str, str]], "FakeReply | JsonObject | str"]


class FakeOpenAIServer:
    """OpenAI-compatible HTTP server on 127.0.0.1 with a free port, started on construction.

    ``handler`` decides each POST ``.../chat/completions`` answer. It is either a callable
    ``(request_json, headers) -> FakeReply | dict | str`` (a dict is a 200 JSON body, a str the
    text of a 200 completion), or a sequence of those values served in order (once it runs out,
    every further request gets a 500 saying so). None answers every request with "OK".
    GET ``.../models`` returns ``catalog`` (default ``{"data": []}``); GET of a path in
    ``routes`` returns its JSON body (``{"/props": {...}}`` imitates llama.cpp); anything else
    is a 404. A ``catalog`` or route given as a :class:`FakeReply` is answered as such (to drip
    or delay a probe).
    A handler that raises produces a 500, and the exception is kept in ``.handler_errors``.

    **Slow mode** (``seconds_per_token > 0``) imitates a model that generates at a fixed rate:
    the text of a 200 completion counts one token per whitespace-separated word, is cut to the
    request's ``max_tokens`` (``finish_reason`` then becomes ``"length"``), and the answer
    waits ``seconds_per_token`` per token sent, on top of any ``delay_s``. ``usage`` reports
    the tokens actually sent. So a bounded request ends sooner, and a client timeout shorter
    than the generation time really fires.

    Use as a context manager (or call :meth:`close`). Each request is served on its own thread;
    ``.requests`` lists what arrived and ``.max_in_flight`` the peak number served at once.
    """

    def __init__(
        self,
        handler: Handler | Sequence[object] | None = None,
        *,
        catalog: JsonObject | FakeReply | None = None,
        routes: JsonObject | None = None,
        seconds_per_token: float = 0.0,
    ) -> None:
        if not seconds_per_token >= 0:
            raise ValueError(f"seconds_per_token must be >= 0, got {seconds_per_token!r}")
        self.seconds_per_token = seconds_per_token
        if handler is not None and not callable(handler):
            for index, item in enumerate(handler):
                if not isinstance(item, FakeReply | dict | str):
                    raise TypeError(
                        f"handler[{index}] is {type(item).__name__}; expected a FakeReply, "
                        "a dict body or a completion text"
                    )
        self._handler = handler
        self._catalog = catalog if catalog is not None else {"data": []}
        self._routes = dict(routes or {})
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._requests: list[FakeRequest] = []
        self._script_pos = 0
        self._in_flight = 0
        self.max_in_flight = 0
        self.handler_errors: list[BaseException] = []
        self._server = _Server(("127.0.0.1", 0), _make_handler(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        """E.g. ``http://127.0.0.1:41234/v1``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def requests(self) -> list[FakeRequest]:
        """A copy of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def chat_requests(self) -> list[JsonObject]:
        """The JSON bodies of the chat-completions requests received so far."""
        return [r.json for r in self.requests if r.path.endswith("/chat/completions")]

    def close(self) -> None:
        """Stop serving; pending delayed replies are cut short."""
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- used by the request handler ---------------------------------------------------------

    def _record(self, request: FakeRequest) -> None:
        with self._lock:
            self._requests.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _reply_for(self, request: FakeRequest) -> FakeReply:
        path = request.path.split("?", 1)[0].rstrip("/")
        if request.method == "GET" and path.endswith("/models"):
            return as_route_reply(self._catalog)
        if request.method == "GET" and path in self._routes:
            return as_route_reply(self._routes[path])
        if request.method != "POST" or not path.endswith("/chat/completions"):
            return FakeReply(status=404, body={"error": {"message": "no such route", "code": 404}})
        if not isinstance(request.json, dict):
            return FakeReply(status=400, body={"error": {"message": "body is not a JSON object"}})
        try:
            reply = as_reply(self._next_answer(request))
            if self.seconds_per_token > 0:
                reply = generated(reply, request.json.get("max_tokens"), self.seconds_per_token)
            return reply
        except Exception as exc:  # a test's handler bug must surface, not hang the client
            with self._lock:
                self.handler_errors.append(exc)
            return FakeReply(status=500, body={"error": {"message": f"handler raised {exc!r}"}})

    def _next_answer(self, request: FakeRequest) -> FakeReply | JsonObject | str:
        handler = self._handler
        if handler is None:
            return "OK"
        if callable(handler):
            return handler(request.json, request.headers)
        with self._lock:
            position = self._script_pos
            self._script_pos += 1
        if position >= len(handler):
            return FakeReply(
                status=500,
                body={"error": {"message": f"fake server script exhausted after {position}"}},
            )
        answer = handler[position]
        assert isinstance(answer, FakeReply | dict | str)  # checked in __init__
        return answer

    def _wait(self, seconds: float) -> None:
        self._closing.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog of 5 makes the kernel drop a burst of connections (the
    # client then retries after ~1 s), which would distort fan-out timings.
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out closes its socket while a delayed reply is pending; the
        # resulting broken pipe is expected and not worth a traceback on stderr.
        return


class _RequestHandler(BaseHTTPRequestHandler):
    """Answers each request from the :class:`FakeOpenAIServer` it is bound to (``owner``)."""

    owner: FakeOpenAIServer

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        try:
            parsed: Any = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        request = FakeRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            json=parsed,
            body=raw,
        )
        self.owner._record(request)
        try:
            reply = self.owner._reply_for(request)
            if reply.delay_s > 0:
                self.owner._wait(reply.delay_s)
        finally:
            # In flight until its answer starts to go out: a client that has read the answer
            # may send its next request at once, and that one must not count as overlapping
            # the few lines this handler runs after the write.
            self.owner._done()
        self._answer(reply)

    def _answer(self, reply: FakeReply) -> None:
        if reply.drop_connection:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        body = reply.body if reply.body is not None else default_body(reply.status)
        if isinstance(body, str):
            data, ctype = body.encode("utf-8"), "text/plain; charset=utf-8"
        else:
            data, ctype = json.dumps(body).encode("utf-8"), "application/json"
        if reply.drip_s > 0:
            self._drip(reply, data, ctype)
            return
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test); nothing left to tell it

    def _drip(self, reply: FakeReply, data: bytes, ctype: str) -> None:
        self.close_connection = True
        phrase = HTTPStatus(reply.status).phrase if reply.status in _STATUSES else "Status"
        lines = [
            f"HTTP/1.1 {reply.status} {phrase}",
            f"Content-Type: {ctype}",
            f"Content-Length: {len(data)}",
            "Connection: close",
            *(f"{name}: {value}" for name, value in reply.headers.items()),
        ]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        try:
            if not reply.drip_headers:
                self.wfile.write(head)
                self.wfile.flush()
            for byte in head + data if reply.drip_headers else data:
                if self.owner._closing.is_set():
                    return
                self.wfile.write(bytes((byte,)))
                self.wfile.flush()
                self.owner._wait(reply.drip_s)
        except OSError:
            pass  # the client hung up, which is what a deadline should make it do


def _make_handler(owner: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    """A :class:`_RequestHandler` class bound to ``owner``."""

    class _Bound(_RequestHandler):
        pass

    _Bound.owner = owner
    return _Bound


_STATUSES = {status.value for status in HTTPStatus}
