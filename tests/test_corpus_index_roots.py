"""search_evidence opens only indexes inside the server's index roots, and its refusal says
nothing about what exists elsewhere on the disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from corpus_fixtures import write_corpus

import corpus
from corpus import documents
from corpus.documents import INDEX_ROOTS_ENV, search_evidence
from corpus.index import QueryGuard
from corpus.retrieval import retrieve
from graph_server.server import _arguments, dispatch
from graph_server.store import GraphStore


@pytest.fixture
def served(tmp_path: Path) -> Path:
    root = tmp_path / "served"
    root.mkdir()
    corpus.ingest(write_corpus(tmp_path / "docs"), root / "idx.sqlite", dense=False)
    return root


def refusal(index: str, roots: list[Path]) -> str:
    error = search_evidence(index, "rack", 1, roots=roots)["error"]
    assert isinstance(error, str)
    return error.replace(repr(index), "<index>")


def test_an_index_inside_a_root_is_searched_by_its_real_path(served: Path) -> None:
    found = search_evidence(str(served / "sub" / ".." / "idx.sqlite"), "tape", 1, roots=[served])
    assert found["hits"][0]["chunk_id"] == "racks/rack7-v1.2.md#p1c2"


def test_missing_forbidden_folder_and_escaping_paths_get_one_and_the_same_refusal(
    served: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.sqlite"
    corpus.ingest(tmp_path / "docs", outside, dense=False)
    (served / "link.sqlite").symlink_to(outside)
    (tmp_path / "secret.txt").write_text("not an index")
    paths = [
        served / "missing.sqlite",
        outside,
        tmp_path / "secret.txt",
        tmp_path / "nowhere.sqlite",
        served / ".." / "outside.sqlite",
        served / "link.sqlite",
        tmp_path,
        served,
        Path("/" + "a" * 300),
        Path("a\x00b"),
    ]
    errors = {refusal(str(path), [served]) for path in paths}
    assert errors == {
        "index <index> is not an index file inside the folders this server serves "
        "(see --index-root)"
    }


def test_with_no_roots_every_index_is_refused_with_how_to_serve_one(served: Path) -> None:
    error = search_evidence(str(served / "idx.sqlite"), "rack", 1, roots=[])["error"]
    assert "--index-root DIR" in error and INDEX_ROOTS_ENV in error


def test_an_over_long_index_path_is_a_tool_error_naming_the_argument() -> None:
    error = search_evidence("/" + "a" * 5000, "rack", 1)["error"]
    assert error == "index: the path has 5001 characters, over the limit of 4096"
    error = search_evidence("/" + "a" * 300, "rack", 1)["error"]
    assert error.startswith("index: index_path") and "File name too long" in error


def test_the_server_takes_roots_from_repeated_flags_and_the_environment(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _arguments(["--index-root", "a", "--index-root", "b"]).index_root == [
        Path("a"),
        Path("b"),
    ]
    arguments = {"index": str(served / "idx.sqlite"), "query": "tape library", "k": 1}
    monkeypatch.delenv(INDEX_ROOTS_ENV, raising=False)
    error = dispatch(GraphStore(), "search_evidence", arguments)["error"]
    assert isinstance(error, str) and "--index-root DIR" in error
    monkeypatch.setenv(INDEX_ROOTS_ENV, f"/nonexistent:{served}")
    assert dispatch(GraphStore(), "search_evidence", arguments)["hits"]


def test_the_mcp_cancellation_check_reaches_the_index_queries(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[QueryGuard] = []
    real = retrieve  # what documents.retrieve is until the spy replaces it

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["guard"])
        return real(*args, **kwargs)

    def cancel() -> bool:
        return False

    monkeypatch.setattr(documents, "retrieve", spy)
    monkeypatch.setenv(INDEX_ROOTS_ENV, str(served))
    arguments = {"index": str(served / "idx.sqlite"), "query": "rack"}
    assert "hits" in dispatch(GraphStore(), "search_evidence", arguments, cancel)
    assert seen[0].cancel is cancel
