"""Build ``outside_docs.jsonl``: two-document questions over documentation nobody here wrote.

Usage (stdlib only; needs the corpus files below, the output is committed)::

    python -m evals.datasets.build_outside_docs [--out PATH]

The corpus is the documentation two Debian packages install on this machine (see
``PROVENANCE.md``): git's release notes (``/usr/share/doc/git/RelNotes/*.txt``) and the
Node.js API pages (``/usr/share/doc/nodejs/api/*.md``). :func:`assemble_corpus` copies them into
one folder, ``git-relnotes/<file>`` and ``nodejs-api/<file>``; those relative paths are the
chunk paths of the ingested index and the items' paragraph ids.

The questions, answers and evidence lines below were written and checked by hand by this
project (issue 36). Every answerable question needs two files: a *bridge* file that names the
thing the question only describes (the command a release introduced, the class another class
extends, the API a deprecation recommends) and an *answer* file that states the asked fact
about it. Each evidence entry is ``(path, first line, last line, quote)``: the builder reads
those lines of the installed file, checks that the quote (whitespace folded) is among them,
and stores the lines as the item's document, so the items are the gold passages inline and
the corpus is the pooled haystack. An unanswerable look-alike asks the same kind of question
about a fact the corpus does not state (checked with ``grep`` over the whole corpus, recorded
in ``meta.missing``); its documents are the closest passages, its gold answer ``""``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from evals.datasets.build_cli import builder_parser, write_built

DEFAULT_OUT = Path(__file__).resolve().parent / "outside_docs.jsonl"
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

ANSWERABLE: tuple[tuple[str, str, tuple[str, ...], str, tuple[Evidence, ...]], ...] = (
    # (question, answer, aliases, bridge, (bridge evidence, answer evidence))
    (
        "Git 2.25 gave the management of sparsely checked-out working trees a dedicated "
        "command. In which Git release did that command learn an 'add' subcommand?",
        "2.26.0",
        ("2.26", "Git 2.26"),
        "git sparse-checkout",
        (
            ("git-relnotes/2.25.0.txt", 67, 68, 'gained a dedicated "sparse-checkout" command'),
            ("git-relnotes/2.26.0.txt", 54, 54, '"git sparse-checkout" learned a new "add"'),
        ),
    ),
    (
        "Git 2.23 split 'git checkout' into two new commands. In which release did the one "
        "for checking out paths start to take the contents out of HEAD by default when given "
        "both --staged and --worktree?",
        "2.27.0",
        ("2.27", "Git 2.27"),
        "git restore",
        (
            ("git-relnotes/2.23.0.txt", 61, 65, 'Two new commands "git switch" and "git restore"'),
            ("git-relnotes/2.27.0.txt", 112, 113, '"git restore --staged --worktree" now defaults'),
        ),
    ),
    (
        "In which Git release was the non-cone mode deprecated for the feature that got a "
        "dedicated command in Git 2.25?",
        "2.37.0",
        ("2.37", "Git 2.37"),
        "sparse-checkout",
        (
            ("git-relnotes/2.25.0.txt", 67, 68, 'gained a dedicated "sparse-checkout" command'),
            ("git-relnotes/2.37.0.txt", 41, 41, "Deprecate non-cone mode of the sparse-checkout"),
        ),
    ),
    (
        "Git 2.29 introduced a 'big brother' of 'git gc'. In which release did that command's "
        "scheduler learn to use systemd timers?",
        "2.34.0",
        ("2.34", "Git 2.34"),
        "git maintenance",
        (
            ("git-relnotes/2.29.0.txt", 83, 85, '"git maintenance", a "git gc"\'s big brother'),
            ("git-relnotes/2.34.0.txt", 43, 44, "scheduler learned to use systemd timers"),
        ),
    ),
    (
        "In which Git release did the 'git gc' big brother introduced in Git 2.29 gain a task "
        "that packs refs?",
        "2.31.0",
        ("2.31", "Git 2.31"),
        "git maintenance",
        (
            ("git-relnotes/2.29.0.txt", 83, 85, '"git maintenance", a "git gc"\'s big brother'),
            ("git-relnotes/2.31.0.txt", 85, 85, 'learned a new "pack-refs" maintenance task'),
        ),
    ),
    (
        "Git 2.19 added a reimplementation of 'git tbdiff'. In which release did "
        "'git format-patch' learn an option named after that new command?",
        "2.20.0",
        ("2.20", "Git 2.20"),
        "git range-diff",
        (
            ("git-relnotes/2.19.0.txt", 80, 81, '"git range-diff" is a reimplementation of'),
            ("git-relnotes/2.20.0.txt", 57, 59, 'learned new "--interdiff" and "--range-diff"'),
        ),
    ),
    (
        "Git 2.27 added a tool for reporting bugs. In which release did that tool learn to "
        "report which shell is in use?",
        "2.28.0",
        ("2.28", "Git 2.28"),
        "git bugreport",
        (
            ("git-relnotes/2.27.0.txt", 173, 173, 'The "bugreport" tool has been added.'),
            ("git-relnotes/2.28.0.txt", 68, 68, '"git bugreport" learns to report what shell'),
        ),
    ),
    (
        "Git 2.27 demoted a transport protocol version from being the default. In which "
        "release did that protocol version become the default again?",
        "2.29.0",
        ("2.29", "Git 2.29"),
        "transport protocol version 2",
        (
            ("git-relnotes/2.27.0.txt", 27, 29, "has been demoted from the default"),
            ("git-relnotes/2.29.0.txt", 99, 99, "The transport protocol v2 has become the default"),
        ),
    ),
    (
        "Git 1.5.5 taught a command 'pop' and 'drop'. In which release did that command's "
        "'push' subcommand start taking a pathspec to save local changes only partially?",
        "2.13.0",
        ("2.13", "Git 2.13"),
        "git stash",
        (
            ("git-relnotes/1.5.5.txt", 161, 163, '"git stash" learned "pop" command'),
            ("git-relnotes/2.13.0.txt", 95, 96, '"git stash push" takes a pathspec'),
        ),
    ),
    (
        "Git 2.38 moved a 'diagnose' feature into 'git bugreport' from another tool. In which "
        "release was that tool's 'reconfigure -a' taught to remove entries for repositories "
        "that no longer exist?",
        "2.39.0",
        ("2.39", "Git 2.39"),
        "scalar",
        (
            ("git-relnotes/2.38.0.txt", 57, 59, 'has been lifted from "scalar"'),
            ("git-relnotes/2.39.0.txt", 38, 39, "'scalar reconfigure -a' is taught"),
        ),
    ),
    (
        "Git 2.34 replaced 'recursive' as the default merge strategy. In which release was the "
        "test framework first taught to optionally make the replacement strategy the default "
        "throughout the system?",
        "2.32.0",
        ("2.32", "Git 2.32"),
        "the ort merge strategy",
        (
            ("git-relnotes/2.34.0.txt", 18, 19, "The `ort` strategy is used instead of"),
            ("git-relnotes/2.32.0.txt", 176, 180, 'merge strategy to "ort" throughout the system'),
        ),
    ),
    (
        "The stream class that Node.js's fs.createReadStream() returns extends a class of "
        "another module. In which Node.js version was that parent class's toArray() method "
        "added?",
        "v17.5.0",
        ("17.5.0", "v16.15.0"),
        "stream.Readable",
        (
            ("nodejs-api/fs.md", 6807, 6816, "returned using the [`fs.createReadStream()`][]"),
            ("nodejs-api/stream.md", 2234, 2240, "added: - v17.5.0 - v16.15.0"),
        ),
    ),
    (
        "The Node.js class that represents the readable side of a TTY extends a class of "
        "another module. In which version was that class's resetAndDestroy() method added?",
        "v18.3.0",
        ("18.3.0", "v16.17.0"),
        "net.Socket",
        (
            ("nodejs-api/tty.md", 33, 45, "Represents the readable side of a TTY"),
            ("nodejs-api/net.md", 1238, 1244, "added: - v18.3.0 - v16.17.0"),
        ),
    ),
    (
        "tls.TLSSocket extends a class of another Node.js module. In which version was that "
        "class's autoSelectFamilyAttemptedAddresses property added?",
        "v19.4.0",
        ("19.4.0",),
        "net.Socket",
        (
            ("nodejs-api/tls.md", 839, 845, "* Extends: {net.Socket}"),
            ("nodejs-api/net.md", 867, 871, "added: v19.4.0"),
        ),
    ),
    (
        "http.Server extends a class of another Node.js module. In which version was the "
        "'drop' event added to that class?",
        "v18.6.0",
        ("18.6.0", "v16.17.0"),
        "net.Server",
        (
            ("nodejs-api/http.md", 1416, 1422, "* Extends: {net.Server}"),
            ("nodejs-api/net.md", 299, 305, "added: - v18.6.0 - v16.17.0"),
        ),
    ),
    (
        "repl.REPLServer extends a class of another Node.js module. In which version was that "
        "class's getPrompt() method added?",
        "v15.3.0",
        ("15.3.0", "v14.17.0"),
        "readline.Interface",
        (
            ("nodejs-api/repl.md", 442, 449, "* Extends: {readline.Interface}"),
            ("nodejs-api/readline.md", 325, 331, "added: - v15.3.0 - v14.17.0"),
        ),
    ),
    (
        "The server class of Node.js's https module extends a class of another module. In "
        "which version was that class's getTicketKeys() method added?",
        "v3.0.0",
        ("3.0.0",),
        "tls.Server",
        (
            ("nodejs-api/https.md", 115, 121, "* Extends: {tls.Server}"),
            ("nodejs-api/tls.md", 793, 797, "added: v3.0.0"),
        ),
    ),
    (
        "Http2SecureServer extends a class of another Node.js module. In which version was "
        "that class's setSecureContext() method added?",
        "v11.0.0",
        ("11.0.0",),
        "tls.Server",
        (
            ("nodejs-api/http2.md", 2513, 2519, "* Extends: {tls.Server}"),
            ("nodejs-api/tls.md", 810, 814, "added: v11.0.0"),
        ),
    ),
    (
        "Node.js deprecation DEP0147 tells users of recursive fs.rmdir() to call another fs "
        "function instead. In which version was that callback function added?",
        "v14.14.0",
        ("14.14.0",),
        "fs.rm",
        (
            ("nodejs-api/deprecations.md", 2847, 2869, "Use `fs.rm(path, { recursive: true"),
            ("nodejs-api/fs.md", 4159, 4162, "added: v14.14.0"),
        ),
    ),
    (
        "Node.js deprecation DEP0022 names the function to use instead of the removed "
        "os.tmpDir(). In which version was that replacement added?",
        "v0.9.9",
        ("0.9.9",),
        "os.tmpdir()",
        (
            ("nodejs-api/deprecations.md", 537, 552, "Please use [`os.tmpdir()`][] instead."),
            ("nodejs-api/os.md", 403, 406, "added: v0.9.9"),
        ),
    ),
    (
        "Node.js deprecation DEP0116 recommends another URL API instead of the legacy one. In "
        "which version did that API's URL class get its static canParse() method?",
        "v19.9.0",
        ("19.9.0",),
        "the WHATWG URL API",
        (
            ("nodejs-api/deprecations.md", 2302, 2325, "use the [WHATWG URL API][] instead."),
            ("nodejs-api/url.md", 675, 678, "added: v19.9.0"),
        ),
    ),
    (
        "Node.js deprecation DEP0005 lists the methods to use instead of the Buffer() "
        "constructor. In which version was the first of them, the one that creates a Buffer "
        "with initialized memory, added?",
        "v5.10.0",
        ("5.10.0",),
        "Buffer.alloc()",
        (
            (
                "nodejs-api/deprecations.md",
                136,
                160,
                "[alloc]: Create a `Buffer` with _initialized_ memory.",
            ),
            ("nodejs-api/buffer.md", 658, 661, "added: v5.10.0"),
        ),
    ),
)

UNANSWERABLE: tuple[tuple[str, str, tuple[Evidence, ...]], ...] = (
    # (question, what the corpus does not say and how that was checked, nearest passages)
    (
        "Git 2.23 introduced a new command for switching branches. In which release did that "
        "command stop being marked experimental?",
        "no release note up to 2.39.5 says 'git switch' or 'git restore' stopped being "
        "experimental (grep -i experimental over RelNotes: no line names either command)",
        (
            ("git-relnotes/2.23.0.txt", 61, 65, 'Two new commands "git switch" and "git restore"'),
            ("git-relnotes/2.36.0.txt", 67, 67, 'The error message given by "git switch HEAD~4"'),
        ),
    ),
    (
        "The non-cone mode of the feature that got a dedicated command in Git 2.25 was "
        "deprecated in 2.37. In which release was that mode removed?",
        "no release note says non-cone mode was removed (grep -i non-cone over RelNotes: only "
        "2.35.0 and 2.37.0 mention it)",
        (
            ("git-relnotes/2.25.0.txt", 67, 68, 'gained a dedicated "sparse-checkout" command'),
            ("git-relnotes/2.37.0.txt", 41, 41, "Deprecate non-cone mode of the sparse-checkout"),
        ),
    ),
    (
        "Git 2.27 added a tool for reporting bugs. In which release did that tool learn to "
        "report which terminal emulator is in use?",
        "no release note says git bugreport reports a terminal (grep -i bugreport over RelNotes: "
        "2.27.0, 2.28.0 (the shell), 2.32.0 (fixes), 2.38.0 (diagnose) only)",
        (
            ("git-relnotes/2.27.0.txt", 173, 173, 'The "bugreport" tool has been added.'),
            ("git-relnotes/2.28.0.txt", 68, 68, '"git bugreport" learns to report what shell'),
        ),
    ),
    (
        "The stream class that Node.js's fs.createReadStream() returns extends a class of "
        "another module. In which version was that parent class's toArray() method marked "
        "stable?",
        "stream.md marks readable.toArray() 'Stability: 1 - Experimental' and its YAML block "
        "records no change of stability",
        (
            ("nodejs-api/fs.md", 6807, 6816, "returned using the [`fs.createReadStream()`][]"),
            ("nodejs-api/stream.md", 2234, 2242, "Stability: 1 - Experimental"),
        ),
    ),
    (
        "Node.js deprecation DEP0147 covers fs.rmdir() with the recursive option. In which "
        "version did that deprecation reach End-of-Life?",
        "DEP0147 is 'Type: Runtime'; its changes are v14.14.0 (documentation-only), v15.0.0 and "
        "v16.0.0 (runtime); no End-of-Life version",
        (
            ("nodejs-api/deprecations.md", 2847, 2869, "Type: Runtime"),
            ("nodejs-api/fs.md", 4159, 4162, "added: v14.14.0"),
        ),
    ),
)


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


def _evidence_meta(evidence: tuple[Evidence, ...]) -> list[dict[str, Any]]:
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
    items: list[dict[str, Any]] = []
    for number, (question, answer, aliases, bridge, evidence) in enumerate(ANSWERABLE, 1):
        paths = [e[0] for e in evidence]
        items.append(
            {
                "id": f"outside-{number:02d}",
                "dataset": DATASET,
                "kind": "qa",
                "question": question,
                "documents": [excerpt(e) for e in evidence],
                "paragraph_ids": paths,
                "answer": answer,
                "answer_aliases": list(aliases),
                "supporting_ids": paths,
                "meta": {
                    "corpus": CORPUS,
                    "answerable": True,
                    "bridge": bridge,
                    "bridge_file": paths[0],
                    "answer_file": paths[1],
                    "evidence": _evidence_meta(evidence),
                    "checked": checked,
                },
            }
        )
    for number, (question, missing, evidence) in enumerate(UNANSWERABLE, len(ANSWERABLE) + 1):
        items.append(
            {
                "id": f"outside-{number:02d}-u",
                "dataset": DATASET,
                "kind": "qa",
                "question": question,
                "documents": [excerpt(e) for e in evidence],
                "paragraph_ids": [e[0] for e in evidence],
                "answer": "",
                "answer_aliases": [],
                "supporting_ids": [],
                "meta": {
                    "corpus": CORPUS,
                    "answerable": False,
                    "missing": missing,
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
