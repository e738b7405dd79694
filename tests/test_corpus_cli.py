"""The logic-graph CLI: ingest, search and info with their exit codes and messages."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from corpus_fixtures import write_corpus

import corpus
from orchestrator.cli.main import ProgressBar, _summary, main


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_ingest_exits_0_and_summarises_what_it_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_corpus(tmp_path / "docs")
    index = str(tmp_path / "idx.sqlite")
    code, out, _ = run(["ingest", str(root), "--index", index, "--keyword-only"], capsys)
    assert code == 0
    assert "ingested 3 files" in out and "3 new" in out
    assert "dense search: off (dense embeddings were turned off" in out
    code, out, _ = run(["ingest", str(root), "--index", index, "--keyword-only"], capsys)
    assert code == 0 and "3 unchanged" in out


def test_ingest_exits_1_and_names_each_failed_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_corpus(tmp_path / "docs")
    (root / "broken.md").write_bytes(b"\xc3\x28 invalid")
    code, out, err = run(
        ["ingest", str(root), "--index", str(tmp_path / "i.sqlite"), "--keyword-only"], capsys
    )
    assert code == 1
    assert "1 failed" in out
    assert "failed: broken.md: not UTF-8 text (invalid byte at offset 0)" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ingest", "{tmp}/missing", "--index", "{tmp}/i.sqlite"], "is not a folder"),
        (["ingest", "{tmp}/docs", "--index", "{tmp}/docs"], "is a directory"),
        (["ingest", "{tmp}/docs", "--index", "{tmp}/i.sqlite", "--max-chars", "3"], "max_chars"),
        (["ingest", "{tmp}/docs"], "--index"),
        (["search", "q", "--index", "{tmp}/none.sqlite"], "does not exist"),
        (["search", "q", "--index", "{tmp}/i.sqlite", "-k", "0"], "k must"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    root = write_corpus(tmp_path / "docs")
    run(["ingest", str(root), "--index", str(tmp_path / "i.sqlite"), "--keyword-only"], capsys)
    code, _, err = run([a.format(tmp=tmp_path) for a in args], capsys)
    assert code == 2
    assert message in err


def test_an_index_that_is_not_ours_exits_1_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x.sqlite").write_bytes(b"not a database" * 200)
    code, _, err = run(["info", "--index", str(tmp_path / "x.sqlite")], capsys)
    assert code == 1 and "logic-graph info: error:" in err


def test_search_prints_ranked_hits_and_json_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_corpus(tmp_path / "docs")
    index = str(tmp_path / "idx.sqlite")
    run(["ingest", str(root), "--index", index, "--keyword-only", "--quiet"], capsys)
    code, out, _ = run(["search", "hall tape library", "--index", index, "-k", "2"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("2 hits, keyword only")
    assert lines[1].startswith("1. [racks/rack7-v1.2.md#p1c2] racks/rack7-v1.2.md p.1 chars")
    code, out, _ = run(["search", "tape library", "--index", index, "--json", "-k", "1"], capsys)
    hit = json.loads(out)
    assert hit["chunk_id"] == "racks/rack7-v1.2.md#p1c2" and hit["keyword_rank"] == 1
    code, out, _ = run(["info", "--index", index], capsys)
    assert code == 0 and json.loads(out)["files"] == 3


def test_the_progress_bar_prints_tenths_off_a_terminal_and_nothing_for_small_jobs() -> None:
    stream = io.StringIO()
    bar = ProgressBar(stream)
    for done in range(1, 101):
        bar("read", done, 100)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "files: 10/100 (10%)" and lines[-1] == "files: 100/100 (100%)"
    assert len(lines) == 10
    small = io.StringIO()
    ProgressBar(small)("read", 1, 3)
    assert small.getvalue() == ""


def test_the_progress_bar_redraws_one_line_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    bar = ProgressBar(stream)
    bar("embed", 1, 40)
    bar("embed", 40, 40)
    text = stream.getvalue()
    assert text.startswith("\r[") and "1/40 chunks embedded" in text
    assert text.endswith("] 40/40 chunks embedded\n")


def test_search_takes_an_unquoted_multi_word_query(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_corpus(tmp_path / "docs")
    index = str(tmp_path / "idx.sqlite")
    run(["ingest", str(root), "--index", index, "--keyword-only"], capsys)
    code, out, err = run(["search", "--index", index, "tape", "library", "--json"], capsys)
    assert (code, err) == (0, "")
    assert json.loads(out.splitlines()[0])["chunk_id"] == "racks/rack7-v1.2.md#p1c2"


def test_search_with_an_over_long_index_path_exits_2_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["search", "rack", "--index", "/" + "a" * 300], capsys)
    assert code == 2 and out == ""
    assert "Traceback" not in err and "File name too long" in err


def test_ingesting_a_folder_with_no_readable_files_says_nothing_was_ingested(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "photo.jpg").write_bytes(b"\xff\xd8")
    index = str(tmp_path / "idx.sqlite")
    code, out, err = run(["ingest", str(tmp_path / "empty"), "--index", index], capsys)
    assert code == 0 and "()" not in out
    assert "nothing was ingested: no .htm, .html, .markdown, .md, .pdf or .txt file" in err
    assert "dense search: off (the index holds no text to embed)" in out


def test_the_ingest_summary_says_how_many_words_the_dense_vectors_left_out(tmp_path: Path) -> None:
    report = corpus.ingest(write_corpus(tmp_path / "docs"), tmp_path / "i.sqlite", dense=False)
    assert "left out of dense vectors" not in _summary(report, verbose=False)
    lines = _summary(replace(report, words_left_out=7), verbose=False)
    assert "7 word occurrences left out of dense vectors" in lines
