"""Build ``outside_docs.jsonl``: two-document questions over documentation nobody here wrote.

Usage (stdlib only; needs the corpus files below, the output is committed)::

    python -m evals.datasets.build_outside_docs [--out PATH]

The corpus is the documentation two Debian packages install on this machine (see
``PROVENANCE.md``): git's release notes (``/usr/share/doc/git/RelNotes/*.txt``) and the
Node.js API pages (``/usr/share/doc/nodejs/api/*.md``). :func:`assemble_corpus` copies them into
one folder, ``git-relnotes/<file>`` and ``nodejs-api/<file>``; those relative paths are the
chunk paths of the ingested index and the items' paragraph ids.

The questions, answers and evidence lines (``outside_docs_questions.toml``, read by
:func:`questions`) were written and checked by hand by this project (issue 36). Every
answerable question needs two files: a *bridge* file that names the thing the question only
describes (the command a release introduced, the class another class extends, the API a
deprecation recommends) and an *answer* file that states the asked fact about it. Each evidence
entry is ``(path, first line, last line, quote)``: the builder reads those lines of the
installed file, checks that the quote (whitespace folded) is among them, and stores the lines
as the item's document, so the items are the gold passages inline and the corpus is the pooled
haystack. An unanswerable look-alike asks the same kind of question about a fact the corpus
does not state (checked with ``grep`` over the whole corpus, recorded in ``meta.missing``); its
documents are the closest passages, its gold answer ``""``.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

from evals.datasets.build_cli import builder_parser, write_built

DEFAULT_OUT = Path(__file__).resolve().parent / "outside_docs.jsonl"
QUESTIONS = Path(__file__).resolve().parent / "outside_docs_questions.toml"
"""The hand-written questions: ``[[answerable]]`` and ``[[unanswerable]]`` tables (the file's
header says what each field holds)."""
DATASET = "outside_docs"
CORPUS = "debian-docs"
"""``meta.corpus`` of every item: the name of the corpus :func:`assemble_corpus` builds."""
SOURCES = {
    "git-relnotes": (Path("/usr/share/doc/git/RelNotes"), "*.txt"),
    "nodejs-api": (Path("/usr/share/doc/nodejs/api"), "*.md"),
}
"""Folder of the corpus -> (installed folder, file pattern)."""
PACKAGES = {"git": "1:2.39.5-0+deb12u3", "nodejs": "20.20.2-1nodesource1+repack1"}
"""The Debian packages (``dpkg -s``) whose files the questions were checked against."""
Evidence = tuple[str, int, int, str]
"""``(corpus path, first line, last line, quote)``, lines counted from 1, inclusive."""


class CorpusMissingError(FileNotFoundError):
    """The installed documentation the set needs is absent; the message says which."""


def _fold(text: str) -> str:
    return " ".join(text.split())


def source_file(path: str) -> Path:
    """The installed file behind a corpus path (``git-relnotes/2.23.0.txt``)."""
    folder, _, name = path.partition("/")
    if folder not in SOURCES or not name:
        raise ValueError(f"corpus path {path!r} is not under {sorted(SOURCES)}")
    return SOURCES[folder][0] / name


def _missing_message(what: str) -> str:
    packages = ", ".join(f"{name} {version}" for name, version in PACKAGES.items())
    return (
        f"{what}; the outside-corpus set needs the documentation of the Debian packages "
        f"{packages} (git's RelNotes and nodejs's api/*.md under /usr/share/doc)"
    )


def excerpt(evidence: Evidence) -> str:
    """The evidence lines of the installed file, after checking that they hold the quote.
    Raises CorpusMissingError when the file is absent and ValueError when the quote is not in
    those lines (the installed version differs from the one the set was checked against)."""
    path, first, last, quote = evidence
    source = source_file(path)
    if not source.is_file():
        raise CorpusMissingError(_missing_message(f"{source} is missing"))
    lines = source.read_text(encoding="utf-8").splitlines()[first - 1 : last]
    text = "\n".join(lines)
    if _fold(quote) not in _fold(text):
        raise ValueError(f"{path} lines {first}-{last} do not contain {quote!r}")
    return text


def check_corpus(items: list[dict[str, Any]]) -> None:
    """Raise CorpusMissingError unless every evidence passage of ``items`` is installed and
    still says what the set quotes (so the gold paths of the index are the right files)."""
    for item in items:
        for evidence in item["meta"]["evidence"]:
            try:
                excerpt((evidence["path"], evidence["first"], evidence["last"], evidence["quote"]))
            except ValueError as exc:
                raise CorpusMissingError(
                    _missing_message(f"the installed documentation differs: {exc}")
                ) from exc


def assemble_corpus(root: Path) -> int:
    """Copy the corpus files into ``root/<corpus folder>/`` (modification times kept, files
    already equal left alone, so a re-ingest skips them). Returns the number of files.
    Raises CorpusMissingError when a source folder is absent or empty."""
    count = 0
    for folder, (source, pattern) in SOURCES.items():
        files = sorted(source.glob(pattern)) if source.is_dir() else []
        if not files:
            raise CorpusMissingError(_missing_message(f"no {pattern} files in {source}"))
        target = root / folder
        target.mkdir(parents=True, exist_ok=True)
        for file in files:
            copy = target / file.name
            if not copy.is_file() or copy.read_bytes() != file.read_bytes():
                shutil.copy2(file, copy)
            count += 1
    return count


def questions(path: Path = QUESTIONS) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The hand-written questions of ``path``: the answerable ones, then the unanswerable
    look-alikes, each a dict of the fields its table names, its ``evidence`` a list of
    :data:`Evidence`."""
    tables = tomllib.loads(path.read_text(encoding="utf-8"))
    for question in (*tables["answerable"], *tables["unanswerable"]):
        question["evidence"] = [
            (corpus_path, first, last, quote)
            for corpus_path, first, last, quote in question["evidence"]
        ]
    return tables["answerable"], tables["unanswerable"]


def _evidence_meta(evidence: list[Evidence]) -> list[dict[str, Any]]:
    return [
        {"path": path, "first": first, "last": last, "quote": quote}
        for path, first, last, quote in evidence
    ]


def build() -> list[dict[str, Any]]:
    """The items: the answerable questions, then the unanswerable look-alikes."""
    checked = (
        "written by this project; both passages read in the installed files (sed -n FIRST,LASTp) "
        "and the quote re-checked by the builder"
    )
    answerable, unanswerable = questions()
    items: list[dict[str, Any]] = []
    for number, fields in enumerate(answerable, 1):
        evidence = fields["evidence"]
        paths = [e[0] for e in evidence]
        items.append(
            {
                "id": f"outside-{number:02d}",
                "dataset": DATASET,
                "kind": "qa",
                "question": fields["question"],
                "documents": [excerpt(e) for e in evidence],
                "paragraph_ids": paths,
                "answer": fields["answer"],
                "answer_aliases": fields["aliases"],
                "supporting_ids": paths,
                "meta": {
                    "corpus": CORPUS,
                    "answerable": True,
                    "bridge": fields["bridge"],
                    "bridge_file": paths[0],
                    "answer_file": paths[1],
                    "evidence": _evidence_meta(evidence),
                    "checked": checked,
                },
            }
        )
    for number, fields in enumerate(unanswerable, len(answerable) + 1):
        evidence = fields["evidence"]
        items.append(
            {
                "id": f"outside-{number:02d}-u",
                "dataset": DATASET,
                "kind": "qa",
                "question": fields["question"],
                "documents": [excerpt(e) for e in evidence],
                "paragraph_ids": [e[0] for e in evidence],
                "answer": "",
                "answer_aliases": [],
                "supporting_ids": [],
                "meta": {
                    "corpus": CORPUS,
                    "answerable": False,
                    "missing": fields["missing"],
                    "evidence": _evidence_meta(evidence),
                    "checked": checked,
                },
            }
        )
    return items


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    args = builder_parser(__doc__, ("--out", Path, DEFAULT_OUT)).parse_args(argv)
    write_built(build(), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
