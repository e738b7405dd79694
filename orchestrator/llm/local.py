"""Built-in local models served with llama.cpp, and ``logic-graph serve``.

Three small instruct models ship as plain PyPI packages; :mod:`orchestrator.llm._local_file`
assembles and verifies a model's file once, and this module

* starts llama.cpp's OpenAI-compatible server in-process (``xllamacpp.Server``) on 127.0.0.1
  with a free port (or a chosen one), and stops it on exit (:class:`LocalModelServer`, its
  thread count from :mod:`orchestrator.llm._local_threads`);
* ``logic-graph serve --model ALIAS`` (:func:`serve_main`) keeps such a server running for
  other tools, until Ctrl-C or SIGTERM;
* ``python -m orchestrator.llm.local prepare ALIAS`` (:func:`main`) assembles a file ahead.

Calls to the server are bounded like any other backend's: the client gives every request a
wall-clock deadline for its whole answer (:mod:`orchestrator.llm.client`), and when it hangs up at
that deadline llama.cpp drops the request instead of generating on for nobody.

Anything missing or corrupt raises :class:`LocalModelError` whose message names the exact
command that fixes it. Starting the server says what it is doing through a ``progress``
callback; :class:`LocalModelServer` prints those lines to stderr by default.
"""

from __future__ import annotations

import argparse
import atexit
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

import requests

from orchestrator.llm._local_file import (
    Progress,
    chunk_paths,
    ensure_model_file,
    stderr_progress,
)
from orchestrator.llm._local_threads import busy_cores, default_threads
from orchestrator.llm.local_models import LOCAL_MODELS, LocalModelError, get_spec

__all__ = [
    "LOCAL_MODELS",
    "STOP_GRACE_S",
    "XLLAMACPP_VERSION",
    "LocalModelError",
    "LocalModelServer",
    "Progress",
    "busy_cores",
    "chunk_paths",
    "default_threads",
    "ensure_model_file",
    "get_spec",
    "main",
    "serve_main",
    "stderr_progress",
]

XLLAMACPP_VERSION = "2026.10.11549"
"""The xllamacpp release these defaults were measured with (prebuilt CPU wheel, no compile)."""


def _import_xllamacpp() -> ModuleType:
    try:
        import xllamacpp
    except ImportError as exc:
        raise LocalModelError(
            "the built-in local models need the optional llama.cpp runtime, which is not "
            f"installed. Fix: pip install -e '.[local]' (or pip install "
            f"xllamacpp=={XLLAMACPP_VERSION})"
        ) from exc
    module: ModuleType = xllamacpp  # untyped outside; the caller knows what it gets
    return module


class LocalModelServer:
    """llama.cpp's OpenAI-compatible server for one built-in model, on 127.0.0.1.

    Use as a context manager (or call :meth:`start` / :meth:`close`); an atexit hook closes it
    if the caller forgets. ``base_url`` ends in ``/v1``; ``model`` is the alias to send.

    Server-side defaults (used when a request does not set them): ``repeat_penalty`` 1.1,
    because these small models otherwise tend to repeat list items until the token limit, and
    ``max_tokens`` so that a request without its own limit cannot run to the end of the
    context (a request's ``max_tokens`` overrides it). ``slots`` requests decode in parallel,
    each with ``ctx_per_slot`` tokens of context. ``draft`` names a smaller built-in model of
    the same family (same vocabulary: ``local`` for ``local-1.5b``) that drafts tokens for
    speculative decoding; the output is the big model's either way.
    """

    def __init__(
        self,
        alias: str,
        *,
        n_threads: int | None = None,
        slots: int = 2,
        ctx_per_slot: int = 4096,
        max_tokens: int = 1024,
        repeat_penalty: float = 1.1,
        cache_dir: Path | None = None,
        startup_timeout_s: float = 120.0,
        progress: Progress | None = stderr_progress,
        port: int = 0,
        draft: str | None = None,
    ) -> None:
        self.spec = get_spec(alias)
        self.draft_spec = get_spec(draft) if draft is not None else None
        if draft == alias:
            raise ValueError(f"draft must be a smaller model than {alias!r}, not the same one")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(
                f"port must be an integer in 0..65535 (0: any free port), got {port!r}"
            )
        self.port = port
        self.progress = progress
        for name, value in (
            ("slots", slots),
            ("ctx_per_slot", ctx_per_slot),
            ("max_tokens", max_tokens),
        ):
            if value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
        if n_threads is not None and n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        if repeat_penalty <= 0:
            raise ValueError(f"repeat_penalty must be > 0, got {repeat_penalty}")
        self.model = alias
        self.n_threads = n_threads if n_threads is not None else default_threads()
        self.slots = slots
        self.ctx_per_slot = ctx_per_slot
        self.max_tokens = max_tokens
        self.repeat_penalty = repeat_penalty
        self.cache_dir = cache_dir
        self.startup_timeout_s = startup_timeout_s
        self.model_path: Path | None = None
        self.startup_s: float | None = None
        self._server: Any = None
        self._root: str | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``; raises LocalModelError before :meth:`start`."""
        if self._root is None:
            raise LocalModelError(f"local model server {self.model!r} is not running")
        return self._root + "/v1"

    def start(self) -> LocalModelServer:
        """Assemble/verify the model, start the server and wait until it answers /health."""
        if self._server is not None:
            return self
        xllamacpp = _import_xllamacpp()
        if self.port:
            _check_port_free(self.port)
        started = time.monotonic()
        self.model_path = ensure_model_file(
            self.spec, cache_dir=self.cache_dir, progress=self.progress
        )
        self._say(
            f"starting llama.cpp for {self.model!r} ({self.spec.title}, {self.n_threads} "
            f"thread(s)) ..."
        )
        params = xllamacpp.CommonParams()
        params.model.path = str(self.model_path)
        params.model_alias = {self.model}
        params.hostnames = ["127.0.0.1"]
        params.port = self.port  # 0: the OS picks a free port
        params.n_parallel = self.slots
        params.n_ctx = self.ctx_per_slot * self.slots  # llama.cpp splits n_ctx across slots
        params.n_predict = self.max_tokens
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_threads
        # Sleep instead of spinning while waiting for work: spinning threads steal the core
        # from the very process they wait for when the machine is busy.
        params.cpuparams.poll = 0
        params.cpuparams_batch.poll = 0
        params.sampling.penalty_repeat = self.repeat_penalty
        params.verbosity = -1
        if self.draft_spec is not None:
            speculative = params.speculative
            speculative.types = [
                xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE
            ]
            speculative.draft.mparams.path = str(
                ensure_model_file(self.draft_spec, cache_dir=self.cache_dir, progress=self.progress)
            )
            speculative.draft.cpuparams.n_threads = self.n_threads
            speculative.draft.cpuparams_batch.n_threads = self.n_threads
        try:
            server = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise LocalModelError(
                f"llama.cpp could not load {self.model_path} ({exc}). Re-check the file with: "
                f"python -m orchestrator.llm.local prepare {self.model} --verify"
            ) from exc
        self._server = server
        self._root = str(server.listening_address).rstrip("/")
        atexit.register(self.close)
        try:
            self._wait_healthy()
        except BaseException:
            self.close()
            raise
        self.startup_s = time.monotonic() - started
        self._say(f"{self.model!r} is ready at {self._root} ({self.startup_s:.1f} s)")
        return self

    def _say(self, text: str) -> None:
        if self.progress is not None:
            self.progress(f"[logic-graph] {text}")

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        last = "no answer"
        while time.monotonic() < deadline:
            try:
                reply = requests.get(f"{self._root}/health", timeout=5)
                if reply.status_code == 200:
                    return
                last = f"HTTP {reply.status_code}"
            except requests.RequestException as exc:
                last = type(exc).__name__
            time.sleep(0.2)
        raise LocalModelError(
            f"local model server {self.model!r} at {self._root} did not become healthy within "
            f"{self.startup_timeout_s:.0f} s (last: {last})"
        )

    def close(self) -> None:
        """Stop the server (idempotent). Dropping the last reference runs its C++ destructor,
        which stops the HTTP listener and joins the inference thread."""
        server, self._server, self._root = self._server, None, None
        if server is not None:
            atexit.unregister(self.close)
            del server

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _check_port_free(port: int) -> None:
    """Raise LocalModelError when 127.0.0.1:``port`` cannot be bound (llama.cpp would fail
    later with a message that does not say so)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As the servers bind it: without SO_REUSEADDR, the TIME_WAIT connections of a server
        # that just stopped would make a free port look taken for a minute or more.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise LocalModelError(
                f"port {port} on 127.0.0.1 is not free ({exc.strerror}). Fix: pick another "
                "with --port, or stop what listens there"
            ) from None


STOP_GRACE_S = 5.0
"""How long ``logic-graph serve`` waits, once stopped, for llama.cpp to shut down before the
process ends anyway (a generation in progress may hold it)."""


def serve_main(argv: list[str] | None = None) -> int:
    """``logic-graph serve --model ALIAS [--port N]``: serve a built-in model over HTTP.

    An OpenAI-compatible server (``/v1/chat/completions``, ``/v1/models``, ``/health``) on
    127.0.0.1 only, so nothing off this machine can reach it. llama.cpp listens on a private
    port behind :class:`orchestrator.llm.serve_front.ServeFront`, which owns the public one and
    bounds every request (body size, read deadlines, a thread per connection). Prints the
    base URL once ready, runs until Ctrl-C or SIGTERM (within :data:`STOP_GRACE_S` seconds
    even while clients hold connections), and returns 0; 1 when the model cannot be served.
    """
    from orchestrator.llm.serve_front import ServeFront

    parser = argparse.ArgumentParser(
        prog="logic-graph serve",
        description="Serve a built-in model as an OpenAI-compatible HTTP server on 127.0.0.1.",
    )
    parser.add_argument("--model", default="local", choices=sorted(LOCAL_MODELS))
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080; 0: any)")
    parser.add_argument("--slots", type=int, default=2, help="requests decoded at once (default 2)")
    parser.add_argument(
        "--draft",
        choices=sorted(LOCAL_MODELS),
        help="a smaller built-in model of the same family that drafts tokens (speculative "
        "decoding), e.g. --model local-1.5b --draft local",
    )
    args = parser.parse_args(argv)
    stop = threading.Event()
    # SIGTERM (a service manager, CI's kill) ends the server as cleanly as Ctrl-C does.
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    server = LocalModelServer(args.model, port=0, slots=args.slots, draft=args.draft)
    try:
        if args.port:
            _check_port_free(args.port)  # before minutes of assembling and loading the model
        server.start()
        try:
            front = ServeFront(server.base_url.removesuffix("/v1"), port=args.port)
        except OSError as exc:
            raise LocalModelError(
                f"port {args.port} on 127.0.0.1 is not free ({exc.strerror}). Fix: pick another "
                "with --port, or stop what listens there"
            ) from None
        with front:
            base_url = front.root + "/v1"
            print(
                f"[logic-graph] serving {args.model!r} at {base_url} (OpenAI-compatible; "
                "Ctrl-C stops)",
                file=sys.stderr,
                flush=True,
            )
            print(base_url, flush=True)
            stop.wait()
    except (LocalModelError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        _close_within(server, STOP_GRACE_S)
    return 0


def _close_within(server: LocalModelServer, seconds: float) -> None:
    """Close ``server``; when llama.cpp has not shut down after ``seconds`` (a generation in
    progress can hold its destructor), end the process: a stop must stop."""
    closer = threading.Thread(target=server.close, name="logic-graph-serve-close", daemon=True)
    closer.start()
    closer.join(seconds)
    if closer.is_alive():
        print(
            f"[logic-graph] llama.cpp did not stop within {seconds:g} s; exiting anyway",
            file=sys.stderr,
            flush=True,
        )
        os._exit(0)


def main(argv: list[str] | None = None) -> int:
    """``python -m orchestrator.llm.local prepare ALIAS [--verify]``: assemble, print the path."""
    parser = argparse.ArgumentParser(prog="python -m orchestrator.llm.local", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    prepare = sub.add_parser("prepare", help="assemble and verify a built-in model file")
    prepare.add_argument("alias", choices=sorted(LOCAL_MODELS))
    prepare.add_argument("--verify", action="store_true", help="re-hash even a vouched file")
    args = parser.parse_args(argv)
    spec = get_spec(args.alias)
    started = time.monotonic()
    try:
        path = ensure_model_file(spec, verify=args.verify, progress=stderr_progress)
    except LocalModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(
        f"{spec.alias}: {path} ({spec.size} bytes, sha256 {spec.sha256}) "
        f"ready in {time.monotonic() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
