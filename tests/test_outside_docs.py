"""The outside-corpus set: its items, its rebuild and the eval's skip without the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals import corpus_eval, corpus_recall
from evals.datasets import build_outside_docs as outside
from evals.datasets.loaders import BUILTIN, load_dataset

ITEMS = load_dataset("outside_docs")
INSTALLED = all(source.is_dir() for source, _ in outside.SOURCES.values())


def test_the_set_has_twenty_two_document_questions_and_unanswerable_look_alikes() -> None:
    answerable = [i for i in ITEMS if i["meta"]["answerable"]]
    look_alikes = [i for i in ITEMS if not i["meta"]["answerable"]]
    assert len(answerable) >= 20 and len(look_alikes) >= 4
    for item in answerable:
        bridge, answer = item["supporting_ids"]
        assert bridge != answer and item["paragraph_ids"] == [bridge, answer]
        assert (item["meta"]["bridge_file"], item["meta"]["answer_file"]) == (bridge, answer)
        assert item["answer"] and item["meta"]["corpus"] == outside.CORPUS
    for item in look_alikes:
        assert item["answer"] == "" and item["supporting_ids"] == [] and item["meta"]["missing"]
    for item in ITEMS:
        for path in item["paragraph_ids"]:
            assert path.split("/", 1)[0] in outside.SOURCES
            assert outside.source_file(path).name == path.split("/", 1)[1]


def test_an_outside_item_is_scored_on_its_corpus_files() -> None:
    item = ITEMS[0]
    assert corpus_recall.outside(item)
    assert corpus_recall.corpus_path(item, "git-relnotes/2.26.0.txt") == "git-relnotes/2.26.0.txt"
    found = ["nodejs-api/fs.md", "git-relnotes/2.26.0.txt", *item["paragraph_ids"][:1]]
    assert corpus_recall.recall(item, found) == 1.0
    assert corpus_recall.recall(item, found[:2]) == 0.5


@pytest.mark.skipif(not INSTALLED, reason="git and nodejs documentation not installed")
def test_the_builder_reproduces_the_committed_file_from_the_installed_docs(
    tmp_path: Path,
) -> None:
    out = tmp_path / "outside_docs.jsonl"
    assert outside.main(["--out", str(out)]) == 0
    assert out.read_bytes() == BUILTIN["outside_docs"].read_bytes()


def test_a_quote_missing_from_its_lines_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "2.0.0.txt").write_text("one\nGit learned a trick.\nthree\n")
    monkeypatch.setitem(outside.SOURCES, "git-relnotes", (tmp_path, "*.txt"))
    assert outside.excerpt(("git-relnotes/2.0.0.txt", 2, 3, "learned a  trick")) == (
        "Git learned a trick.\nthree"
    )
    with pytest.raises(ValueError, match="lines 1-1 do not contain"):
        outside.excerpt(("git-relnotes/2.0.0.txt", 1, 1, "learned a trick"))
    with pytest.raises(outside.CorpusMissingError, match="Debian packages git"):
        outside.excerpt(("git-relnotes/9.9.9.txt", 1, 1, "anything"))


def test_the_eval_skips_with_a_message_when_the_docs_are_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for folder in outside.SOURCES:
        monkeypatch.setitem(outside.SOURCES, folder, (tmp_path / "absent" / folder, "*"))
    out = tmp_path / "out"
    args = ["--dataset", "outside_docs", "--out", str(out), "--retrieval-only"]
    assert corpus_eval.main(args) == 0
    err = capsys.readouterr().err
    assert "[corpus_eval] skipped:" in err and "is missing" in err
    assert not (out / "corpus.sqlite").exists()
