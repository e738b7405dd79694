"""Files that cannot be indexed are reported and skipped, never read past a limit, never
followed through a link swapped in after the scan, and never a reason to stop an ingest."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from corpus_fixtures import write_corpus

import corpus
from corpus.readers import MAX_FILE_BYTES
from orchestrator.cli.main import main as cli_main

SECRET = "The vault code is 4417."


def reasons(report: corpus.IngestReport) -> dict[str, str]:
    return {problem.path: problem.reason for problem in report.failed}


def test_a_file_name_that_is_not_utf8_is_reported_and_the_rest_ingested(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    fd = os.open(os.fsencode(root) + b"/bad\xff.txt", os.O_WRONLY | os.O_CREAT)
    os.write(fd, b"Rack 9 is in hall D.")
    os.close(fd)
    report = corpus.ingest(root, tmp_path / "idx.sqlite", dense=False)
    assert reasons(report) == {
        "bad\ufffd.txt": "file name is not valid UTF-8; rename it to index it"
    }
    assert len(report.accepted) == 3


def test_the_cli_names_the_badly_named_file_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_corpus(tmp_path / "docs")
    (Path(os.fsdecode(os.fsencode(root) + b"/caf\xe9"))).mkdir()
    code = cli_main(["ingest", str(root), "--index", str(tmp_path / "idx.sqlite"), "--quiet"])
    assert code == 1
    assert "failed: caf\ufffd: folder name is not valid UTF-8" in capsys.readouterr().err


def test_a_path_too_long_for_the_os_is_reported(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    parent = os.open(root, os.O_RDONLY)
    for _ in range(20):  # 20 x 250 characters: past Linux's 4,096-byte PATH_MAX
        os.mkdir("d" * 250, dir_fd=parent)
        below = os.open("d" * 250, os.O_RDONLY, dir_fd=parent)
        os.close(parent)
        parent = below
    os.close(os.open("deep.txt", os.O_WRONLY | os.O_CREAT, dir_fd=parent))
    os.close(parent)
    report = corpus.ingest(root, tmp_path / "idx.sqlite", dense=False)
    assert len(report.accepted) == 3
    assert [reason for reason in reasons(report).values()] == [
        "cannot list this folder: File name too long"
    ]


def test_a_file_over_the_size_limit_is_refused_without_being_read(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    with (root / "huge.txt").open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk, no time
    started = time.monotonic()
    report = corpus.ingest(root, tmp_path / "idx.sqlite", dense=False)
    assert time.monotonic() - started < 5
    assert reasons(report) == {
        "huge.txt": "file is 209,715,201 bytes, over the limit of 209,715,200 (200 MB); "
        "it was not read"
    }
    assert report.bytes_read < 10_000


def test_a_file_swapped_for_a_symlink_after_the_scan_is_not_followed(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs", {"a.txt": "Rack 1 is here.", "b.txt": "Rack 2."})
    (tmp_path / "secret.txt").write_text(SECRET)
    (root / "sub").mkdir()
    (root / "sub" / "c.txt").write_text("Rack 3.")

    def swap(stage: str, done: int, total: int) -> None:
        if stage == "read" and done == 1:
            (root / "b.txt").unlink()
            (root / "b.txt").symlink_to(tmp_path / "secret.txt")
            (root / "sub" / "c.txt").unlink()
            (root / "sub").rmdir()
            (root / "sub").symlink_to(tmp_path)

    index = tmp_path / "idx.sqlite"
    report = corpus.ingest(root, index, dense=False, progress=swap)
    assert set(reasons(report)) == {"b.txt", "sub/c.txt"}
    assert all(reason.startswith("cannot open") for reason in reasons(report).values())
    assert not corpus.search(index, "vault code", 5, dense=False)
