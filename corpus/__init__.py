"""Document corpora: ingest a folder into one SQLite index, retrieve evidence chunks from it.

Public API (see docs/corpus.md)::

    import corpus

    report = corpus.ingest("docs/", "docs.sqlite")          # incremental, all-or-nothing
    hits = corpus.search("docs.sqlite", "where is rack 7", k=5)
    found = corpus.retrieve("docs.sqlite", question, ["variant 1", "variant 2"], k=8)
    evidence = corpus.hits_to_evidence(found.hits)
    task_documents = evidence.documents                     # one document per chunk
    evidence.locate("D2.3")                                  # file, page, offsets, chunk id
    corpus.search_evidence("docs.sqlite", "rack 7", k=5)     # JSON-ready hits with span ids

Modules: :mod:`.readers` (files to pages of text), :mod:`.chunking` (pages to chunks),
:mod:`.index` (the SQLite file and the ingest), :mod:`.embed` (optional dense vectors),
:mod:`.retrieval` (BM25 + dense, fused by RRF), :mod:`.documents` (hits as task documents).
The ``logic-graph ingest`` / ``search`` / ``info`` command is :mod:`orchestrator.cli.main`.

The names above are loaded on first use, so importing one submodule (``corpus.words``,
``corpus.evidence``) does not load the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from corpus.chunking import DEFAULT_MAX_CHARS, Chunk, chunk_id, chunk_page
    from corpus.documents import (
        CorpusEvidence,
        SpanSource,
        hits_to_evidence,
        search_evidence,
    )
    from corpus.embed import Embedder
    from corpus.index import (
        CorpusIndexError,
        FileProblem,
        IndexInfo,
        IngestReport,
        Progress,
        index_info,
        ingest_directory,
    )
    from corpus.readers import Page, ReadError, read_pages
    from corpus.retrieval import Hit, Retrieval, retrieve, rrf_fuse, search

    ingest = ingest_directory

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
    "Progress",
    "ReadError",
    "Retrieval",
    "SpanSource",
    "chunk_id",
    "chunk_page",
    "hits_to_evidence",
    "index_info",
    "ingest",
    "read_pages",
    "retrieve",
    "rrf_fuse",
    "search",
    "search_evidence",
]

# Each public name and the submodule (and name there) it comes from. Nothing is imported
# up front: ``import corpus.words`` (the stopwords the graph server needs) or
# ``import corpus.evidence`` (citation spans) must not load the index, readers and retrieval.
_LAZY: dict[str, tuple[str, str]] = {
    "DEFAULT_MAX_CHARS": ("chunking", "DEFAULT_MAX_CHARS"),
    "Chunk": ("chunking", "Chunk"),
    "chunk_id": ("chunking", "chunk_id"),
    "chunk_page": ("chunking", "chunk_page"),
    "CorpusEvidence": ("documents", "CorpusEvidence"),
    "SpanSource": ("documents", "SpanSource"),
    "hits_to_evidence": ("documents", "hits_to_evidence"),
    "search_evidence": ("documents", "search_evidence"),
    "Embedder": ("embed", "Embedder"),
    "CorpusIndexError": ("index", "CorpusIndexError"),
    "FileProblem": ("index", "FileProblem"),
    "IndexInfo": ("index", "IndexInfo"),
    "IngestReport": ("index", "IngestReport"),
    "Progress": ("index", "Progress"),
    "index_info": ("index", "index_info"),
    "ingest": ("index", "ingest_directory"),
    "ingest_directory": ("index", "ingest_directory"),
    "Page": ("readers", "Page"),
    "ReadError": ("readers", "ReadError"),
    "read_pages": ("readers", "read_pages"),
    "Hit": ("retrieval", "Hit"),
    "Retrieval": ("retrieval", "Retrieval"),
    "retrieve": ("retrieval", "retrieve"),
    "rrf_fuse": ("retrieval", "rrf_fuse"),
    "search": ("retrieval", "search"),
}


def __getattr__(name: str) -> Any:
    """Import a public name's submodule on first use (PEP 562)."""
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'corpus' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"corpus.{module}"), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
