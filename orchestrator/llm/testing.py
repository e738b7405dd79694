"""Test doubles for anything that talks to a model, shipped so every test suite can share them.

* :class:`FakeOpenAIServer` - a real OpenAI-compatible HTTP server on 127.0.0.1 (real sockets,
  real JSON, concurrent requests) whose answers a test scripts with :class:`FakeReply`.
* :func:`completion_body` - a well-formed chat-completions response body.
* :class:`ScriptedClient` - an in-process stand-in for :class:`orchestrator.llm.client.ChatClient`
  (same ``chat`` signature, a real :class:`CostLedger`), no sockets at all.

Example::

    with FakeOpenAIServer(lambda req, headers: FakeReply(body=completion_body("hi"))) as srv:
        client = ChatClient(srv.base_url, backoff_base_s=0.01)
        assert client.chat("m", [{"role": "user", "content": "x"}]).text == "hi"
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from orchestrator.llm._ledger import ChatResult, CostLedger
from orchestrator.llm.chat import ChatRequest, ChatSeam
from orchestrator.llm.errors import LLMError

__all__ = [
    "FakeOpenAIServer",
    "FakeReply",
    "FakeRequest",
    "ScriptExhaustedError",
    "ScriptedClient",
    "completion_body",
]


def completion_body(
    text: str,
    *,
    prompt_tokens: int | None = 10,
    completion_tokens: int | None = 5,
    cost: float | None = None,
    model: str = "fake-model",
    finish_reason: str | None = "stop",
    cached_tokens: int | None = None,
) -> dict[str, Any]:
    """A chat-completions response body whose first choice says ``text``.

    ``usage`` carries only the fields that are not None (and is left out when all are), so a
    test can model servers that report tokens, tokens plus cost, or nothing; ``cached_tokens``
    goes in ``usage.prompt_tokens_details``, as llama.cpp and OpenAI report a prompt-cache hit.
    """
    details = None if cached_tokens is None else {"cached_tokens": cached_tokens}
    usage = {
        key: value
        for key, value in (
            ("prompt_tokens", prompt_tokens),
            ("completion_tokens", completion_tokens),
            ("cost", cost),
            ("prompt_tokens_details", details),
        )
        if value is not None
    }
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
            }
        ],
    }
    if usage:
        body["usage"] = usage
    return body


@dataclass(frozen=True)
class FakeReply:
    """How the fake server answers one request.

    ``body``: a dict/list (sent as JSON) or a str (sent as-is, e.g. to fake a non-JSON answer);
    None means a default: a completion saying "OK" for 2xx, else an OpenAI-style error object.
    ``headers`` are added to the response (e.g. ``{"Retry-After": "2"}``); ``delay_s`` waits
    before answering (interrupted when the server closes); ``drop_connection`` closes the socket
    without any answer, as a crashed proxy would.

    ``drip_s > 0`` sends the body one byte at a time, ``drip_s`` seconds apart (with
    ``drip_headers`` the status line and headers too), as a stalled or hostile backend does: each
    read gets a byte long before any per-read timeout, yet the answer takes ages. Dripping stops
    when the client hangs up or the server closes.
    """

    status: int = 200
    body: dict[str, Any] | list[Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drop_connection: bool = False
    drip_s: float = 0.0
    drip_headers: bool = False


@dataclass(frozen=True)
class FakeRequest:
    """One request as the fake server received it; header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any
    body: str


Handler = Callable[[dict[str, Any], dict[str, str]], "FakeReply | dict[str, Any] | str"]


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
        catalog: dict[str, Any] | FakeReply | None = None,
        routes: dict[str, Any] | None = None,
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

    def chat_requests(self) -> list[dict[str, Any]]:
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
            return _as_route_reply(self._catalog)
        if request.method == "GET" and path in self._routes:
            return _as_route_reply(self._routes[path])
        if request.method != "POST" or not path.endswith("/chat/completions"):
            return FakeReply(status=404, body={"error": {"message": "no such route", "code": 404}})
        if not isinstance(request.json, dict):
            return FakeReply(status=400, body={"error": {"message": "body is not a JSON object"}})
        try:
            reply = _as_reply(self._next_answer(request))
            if self.seconds_per_token > 0:
                reply = _generated(reply, request.json.get("max_tokens"), self.seconds_per_token)
            return reply
        except Exception as exc:  # a test's handler bug must surface, not hang the client
            with self._lock:
                self.handler_errors.append(exc)
            return FakeReply(status=500, body={"error": {"message": f"handler raised {exc!r}"}})

    def _next_answer(self, request: FakeRequest) -> FakeReply | dict[str, Any] | str:
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


def _as_route_reply(answer: Any) -> FakeReply:
    """A GET route's answer: a FakeReply as given, anything else as its JSON body."""
    return answer if isinstance(answer, FakeReply) else FakeReply(body=answer)


def _as_reply(answer: FakeReply | dict[str, Any] | str) -> FakeReply:
    if isinstance(answer, FakeReply):
        return answer
    if isinstance(answer, str):
        return FakeReply(body=completion_body(answer))
    return FakeReply(body=answer)


def _generated(reply: FakeReply, max_tokens: object, seconds_per_token: float) -> FakeReply:
    """``reply`` as a model generating at ``seconds_per_token`` would send it (slow mode)."""
    body = reply.body
    if not (200 <= reply.status < 300 and isinstance(body, dict)):
        return reply
    choices = body.get("choices")
    message = choices[0].get("message") if isinstance(choices, list) and choices else None
    text = message.get("content") if isinstance(message, dict) else None
    if not isinstance(text, str) or not isinstance(message, dict) or not isinstance(choices, list):
        return reply
    words = text.split()
    limit = max_tokens if isinstance(max_tokens, int) and max_tokens >= 1 else None
    cut = limit is not None and len(words) > limit
    sent = words[:limit] if cut else words
    choice = dict(choices[0])
    choice["message"] = {**message, "content": " ".join(sent)}
    if cut:
        choice["finish_reason"] = "length"
    usage = dict(body.get("usage") or {})
    usage["completion_tokens"] = len(sent)
    new_body = {**body, "choices": [choice, *choices[1:]], "usage": usage}
    return replace(reply, body=new_body, delay_s=reply.delay_s + seconds_per_token * len(sent))


def _default_body(status: int) -> dict[str, Any]:
    if 200 <= status < 300:
        return completion_body("OK")
    return {"error": {"message": f"fake error {status}", "code": status}}


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
        body = reply.body if reply.body is not None else _default_body(reply.status)
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


class ScriptExhaustedError(AssertionError):
    """A :class:`ScriptedClient` with a list script received more calls than it had answers.

    An AssertionError on purpose: it is a bug in the test, not a model failure, and code that
    survives failed model calls by catching :class:`LLMError` lets it through. (The control
    loop records any exception from a client as a failed call, so there it shows up in the
    report's ``calls`` instead.)
    """


Script = Callable[[str, list[dict[str, Any]], dict[str, Any]], "str | BaseException"]


class ScriptedClient(ChatSeam):
    """In-process client (a :class:`~.chat.ChatSeam`); nothing goes over the network.

    ``script`` is either a callable ``(model, messages, kwargs) -> str | Exception`` (kwargs
    holds temperature, max_tokens, response_format, seed, role, extra_body, tags) or a list of
    texts/exceptions answered in call order (thread-safe; :class:`ScriptExhaustedError` when it
    runs out). A callable that keys on the messages is the deterministic choice for concurrent
    callers, since call order across threads is not. An :class:`LLMError` answer is recorded in
    the ledger as a failed call and raised; any other exception is raised unrecorded.

    Token counts are rough estimates (characters / 4, at least 1): enough for budget plumbing,
    not for cost studies. ``cost_per_call`` (USD) makes
    every successful call cost that much (``cost_source="usage"``); None leaves cost unknown.
    ``latency_s`` sleeps inside each call, to exercise concurrency. ``.calls`` records every
    call as ``{"model", "messages", "kwargs"}``.
    """

    def __init__(
        self,
        script: Script | Sequence[str | BaseException],
        *,
        ledger: CostLedger | None = None,
        cost_per_call: float | None = None,
        latency_s: float = 0.0,
    ) -> None:
        self._script = script
        self.ledger = ledger if ledger is not None else CostLedger()
        self.cost_per_call = cost_per_call
        self.latency_s = latency_s
        self._lock = threading.Lock()
        self._calls: list[dict[str, Any]] = []

    @property
    def calls(self) -> list[dict[str, Any]]:
        """A copy of every call received so far, in arrival order."""
        with self._lock:
            return list(self._calls)

    def send(self, request: ChatRequest) -> ChatResult:
        """Answer from the script, record the call in ``.ledger`` and return a ChatResult."""
        model, messages, role, tags = request.model, request.messages, request.role, request.tags
        kwargs = {
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "response_format": request.response_format,
            "seed": request.seed,
            "role": role,
            "extra_body": request.extra_body,
            "tags": tags or None,
        }
        with self._lock:
            position = len(self._calls)
            self._calls.append({"model": model, "messages": messages, "kwargs": kwargs})
        start = time.monotonic()
        if self.latency_s > 0:
            time.sleep(self.latency_s)
        answer: str | BaseException
        try:
            answer = self._answer(position, model, messages, kwargs)
        except LLMError as exc:  # a script may raise its failure instead of returning it
            answer = exc
        latency = time.monotonic() - start
        fields = dict(tags)
        if isinstance(answer, LLMError):
            answer.attempts = answer.attempts or 1
            answer.call_id = self.ledger.record_failure(
                role, model, answer, latency_s=latency, **fields
            )
            raise answer
        if isinstance(answer, BaseException):
            raise answer
        prompt_chars = sum(len(str(m.get("content", ""))) for m in messages)
        result = ChatResult(
            text=answer,
            model=model,
            prompt_tokens=max(1, prompt_chars // 4),
            completion_tokens=max(1, len(answer) // 4),
            cost_usd=self.cost_per_call,
            cost_source="usage" if self.cost_per_call is not None else "unknown",
            latency_s=latency,
            attempts=1,
            finish_reason="stop",
        )
        call_id = self.ledger.record(role, result, **fields)
        return replace(result, call_id=call_id)

    def _answer(
        self, position: int, model: str, messages: list[dict[str, Any]], kwargs: dict[str, Any]
    ) -> str | BaseException:
        if callable(self._script):
            return self._script(model, messages, kwargs)
        if position >= len(self._script):
            raise ScriptExhaustedError(
                f"ScriptedClient has {len(self._script)} scripted answers; call {position + 1} "
                f"(role={kwargs['role']!r}) has none"
            )
        return self._script[position]
