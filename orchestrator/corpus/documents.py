"""Retrieved chunks as a task's documents, and evidence spans traced back to their files.

Each hit becomes one document of the task, in hit order, so the evidence-span ids of
:mod:`orchestrator.evidence` apply unchanged: ``D2.3`` is the third sentence of the second
retrieved chunk. :meth:`CorpusEvidence.locate` turns such an id into what a person needs to
follow the citation: the chunk id, the file, its page, the sentence's character offsets in the
page's text, the section and the quoted sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from orchestrator.corpus.retrieval import Hit
from orchestrator.evidence import Evidence, build_evidence


@dataclass(frozen=True)
class SpanSource:
    """Where one evidence span of a corpus task comes from."""

    span_id: str
    """``D<document>.<sentence>`` as the prompts and the report use it."""
    chunk_id: str
    path: str
    page: int
    start: int
    end: int
    """Offsets of the sentence in its page's text (chunk offset + offset in the chunk)."""
    section: str
    version: str | None
    text: str
    """The sentence, whitespace collapsed (as the report quotes it)."""

    def citation(self) -> str:
        """A one-line human citation: ``guide.md p.1, chars 120-188 [guide.md#p1c2]``."""
        return f"{self.path} p.{self.page}, chars {self.start}-{self.end} [{self.chunk_id}]"


@dataclass(frozen=True)
class CorpusEvidence:
    """Hits turned into task documents (one per chunk, in hit order)."""

    hits: tuple[Hit, ...]

    @property
    def documents(self) -> tuple[str, ...]:
        """The chunk texts: pass these as the task's ``documents``."""
        return tuple(hit.text for hit in self.hits)

    @property
    def labels(self) -> tuple[str, ...]:
        """The chunk id of each document, in order (document ``D<i>`` is ``labels[i-1]``)."""
        return tuple(hit.chunk_id for hit in self.hits)

    @cached_property
    def evidence(self) -> Evidence:
        """The spans of the documents, exactly as :func:`orchestrator.evidence.build_evidence`
        numbers them for the prompts."""
        return build_evidence(self.documents)

    def locate(self, span_id: object) -> SpanSource | None:
        """The source of span ``span_id`` (``"D2.3"``), or None for an id that is not a span
        of these documents (also for non-string input). Cost: O(1) after the first call."""
        span = self.evidence.get(span_id)
        if span is None:
            return None
        hit = self.hits[span.document - 1]
        return SpanSource(
            span_id=span.id,
            chunk_id=hit.chunk_id,
            path=hit.path,
            page=hit.page,
            start=hit.start + span.start,
            end=hit.start + span.end,
            section=hit.section,
            version=hit.version,
            text=span.text,
        )


def hits_to_evidence(hits: Sequence[Hit]) -> CorpusEvidence:
    """Wrap retrieved ``hits`` (best first) as task documents; duplicate chunk ids keep their
    first place. Raises ValueError when ``hits`` is not a sequence of :class:`Hit`.
    Cost: O(len(hits))."""
    if isinstance(hits, str) or not isinstance(hits, Sequence):
        raise ValueError(f"hits must be a sequence of Hit, got {type(hits).__name__}")
    unique: dict[str, Hit] = {}
    for index, hit in enumerate(hits):
        if not isinstance(hit, Hit):
            raise ValueError(f"hits[{index}] must be a Hit, got {type(hit).__name__}")
        unique.setdefault(hit.chunk_id, hit)
    return CorpusEvidence(tuple(unique.values()))
