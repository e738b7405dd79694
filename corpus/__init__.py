"""Document corpora: ingest a folder into one SQLite index, retrieve evidence chunks from it.

Public API (see docs/corpus.md)::

    import corpus

    report = corpus.ingest("docs/", "docs.sqlite")          # incremental, all-or-nothing
    corpus.ingest_texts({"a.md": text}, "docs/", "docs.sqlite")  # strings as files, then ingest
    with corpus.temporary_index({"a.md": text}) as index:   # the same, removed on exit
        hits = corpus.search(index, "rack 7")
    hits = corpus.search("docs.sqlite", "where is rack 7", k=5)
    found = corpus.retrieve("docs.sqlite", question, ["variant 1", "variant 2"], k=8)
    evidence = corpus.hits_to_evidence(found.hits)
    task_documents = evidence.documents                     # one document per chunk
    evidence.locate("D2.3")                                  # file, page, offsets, chunk id
    corpus.search_evidence("docs.sqlite", "rack 7", k=5)     # JSON-ready hits with span ids

Modules: :mod:`.readers` (files to pages of text), :mod:`.chunking` (pages to chunks),
:mod:`.index` (the SQLite file and the ingest), :mod:`.embed` (optional dense vectors),
:mod:`.retrieval` (BM25 + dense, fused by RRF), :mod:`.hits` (a retrieved chunk and its
file's title, read from the index), :mod:`.entities` (the entity graph),
:mod:`.multihop` (sub-question retrieval), :mod:`.rerank` (reranking a pool),
:mod:`.documents` (hits as task documents), :mod:`.views` (a hit as ``search_evidence``
answers it).
The ``logic-graph ingest`` / ``search`` / ``info`` command is :mod:`orchestrator.cli.main`.

The names above are loaded on first use, so importing one submodule (``corpus.words``,
``corpus.evidence``) does not load the others.
"""

from __future__ import annotations

import ast
import importlib
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The public names, each written once here (for type checkers) and in ``__all__`` (for
# ``import *`` and mypy's re-export rule): tests/test_doctests_corpus.py checks the two agree.
# Nothing is imported at run time: :func:`__getattr__` reads this block to find a name's
# submodule, so ``import corpus.words`` (the stopwords the graph server needs) or
# ``import corpus.evidence`` (citation spans) does not load the index, readers and retrieval.
if TYPE_CHECKING:
    from corpus.chunking import DEFAULT_MAX_CHARS, Chunk, chunk_id, chunk_page
    from corpus.documents import CorpusEvidence, SpanSource, hits_to_evidence, search_evidence
    from corpus.embed import Embedder
    from corpus.hits import Hit
    from corpus.index import CorpusIndexError, IndexInfo, IngestReport, index_info
    from corpus.index import ingest_directory as ingest
    from corpus.index_ingest import Progress
    from corpus.index_scan import FileProblem
    from corpus.index_texts import ingest_texts, temporary_index
    from corpus.multihop import PlanError, PlanRetrieval, check_plan, retrieve_plan
    from corpus.readers import Page, ReadError, read_pages
    from corpus.rerank import RerankerUnavailable, Scorer, load_cross_encoder, rerank_hits
    from corpus.retrieval import Retrieval, retrieve, rrf_fuse, search

__all__ = [
    "DEFAULT_MAX_CHARS",
    "Chunk",
    "CorpusEvidence",
    "CorpusIndexError",
    "Embedder",
    "FileProblem",
    "Hit",
    "IndexInfo",
    "IngestReport",
    "Page",
    "PlanError",
    "PlanRetrieval",
    "Progress",
    "ReadError",
    "RerankerUnavailable",
    "Retrieval",
    "Scorer",
    "SpanSource",
    "check_plan",
    "chunk_id",
    "chunk_page",
    "hits_to_evidence",
    "index_info",
    "ingest",
    "ingest_texts",
    "load_cross_encoder",
    "read_pages",
    "rerank_hits",
    "retrieve",
    "retrieve_plan",
    "rrf_fuse",
    "search",
    "search_evidence",
    "temporary_index",
]


@cache
def _origins() -> dict[str, tuple[str, str]]:
    """Each public name and where it comes from, ``(module, name there)``, read from the
    ``if TYPE_CHECKING:`` imports of this file.

    Returns
    -------
    dict
        ``{public name: (module, name in that module)}``, in the order of the imports.

    Examples
    --------
    >>> import corpus
    >>> corpus._origins()["ingest"]
    ('corpus.index', 'ingest_directory')
    >>> sorted(corpus._origins()) == sorted(corpus.__all__)
    True
    """
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    (block,) = (
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    return {
        alias.asname or alias.name: (node.module or "", alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def __getattr__(name: str) -> Any:
    """Import a public name's submodule on first use (PEP 562)."""
    try:
        module, attr = _origins()[name]
    except KeyError:
        raise AttributeError(f"module 'corpus' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
