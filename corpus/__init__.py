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
:mod:`.retrieval` (BM25 + dense, fused by RRF), :mod:`.documents` (hits as task documents),
:mod:`.cli` (``logic-graph ingest`` / ``search`` / ``info``).
"""

from __future__ import annotations

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


ingest = ingest_directory
"""``ingest(directory, index_path, *, progress=None, dense=True, max_chars=1200)``: see
:func:`corpus.index.ingest_directory`."""
