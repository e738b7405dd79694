"""The retrieved chunk as ``search_evidence`` answers it: type definitions only.

:func:`corpus.documents.chunk_view` builds these views; the MCP server validates its
``search_evidence`` answer against them and draws the tool's output schema from them
(:class:`graph_server.records.SearchEvidenceAnswer`), so the chunk's JSON is defined once.
Kept in a module of its own that imports nothing from the project, so that the graph server
loads no index, reader or retrieval code to describe it.
"""

# pydantic validates only typing_extensions' TypedDict on Python < 3.12 (typing's lacks
# what it reads); typing_extensions comes with pydantic (through mcp).
from typing_extensions import TypedDict


class SpanView(TypedDict):
    """One sentence of a found chunk: its citable id, its text and its character offsets in
    the chunk's page."""

    id: str
    text: str
    start: int
    end: int


class ChunkView(TypedDict):
    """A retrieved chunk as ``search_evidence`` answers it: the JSON view of
    :class:`corpus.retrieval.Hit` (the one record of a retrieved chunk), with its sentences
    as citable spans. The score is rounded to six places, as in every view of a hit."""

    chunk_id: str
    path: str
    page: int
    section: str
    title: str
    """The title line of the chunk's file (``""``: none); with ``section``, what the chunk is
    about when its own sentences do not say it (:attr:`corpus.retrieval.Hit.heading`)."""
    version: str | None
    score: float
    text: str
    spans: list[SpanView]
