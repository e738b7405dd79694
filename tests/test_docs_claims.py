"""The docs state what the code does: their claims are read from the docs and checked.

- The MCP tools: every "<count> tools" in README.md and docs/mcp.md is the number of tools
  the server lists (asked over stdio, as a host asks), the README paragraph that gives the
  count names each of them, and the table of docs/mcp.md ("## The tools") has one row each.
- The package arrows: the table "| package | imports |" of docs/architecture.md lists, for
  each package, exactly the project packages its modules import (read with :mod:`ast` by the
  walker of tests/test_architecture.py, so a subpackage counts as its package).
"""

from __future__ import annotations

import re

import pytest
from raw_server import raw_server
from test_architecture import ROOT, Arrow, project_arrows, top

NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
COUNT_WORDS = {word: number for number, word in enumerate(NUMBER_WORDS.split(" "))}
TOOL_COUNT = re.compile(rf"\b(\d+|{'|'.join(COUNT_WORDS)})\s+(?:[a-z]+\s+)?tools\b", re.IGNORECASE)
"""A count of tools: "sixteen tools", "16 tools", "twelve graph tools"."""
TOOL_NAME = re.compile(r"`([a-z]+(?:_[a-z]+)+)`")
TOOL_ROW = re.compile(r"^\| `([a-z_]+)\(", re.MULTILINE)
TOOL_DOCS = ("README.md", "docs/mcp.md")


def stated_counts(text: str) -> list[tuple[str, int]]:
    """Each count of tools in ``text`` (:data:`TOOL_COUNT`) with the number it says."""
    return [
        (match.group(0), int(word) if word.isdigit() else COUNT_WORDS[word])
        for match in TOOL_COUNT.finditer(text)
        for word in [match.group(1).lower()]
    ]


def paragraphs_stating_a_count(text: str) -> list[str]:
    """The blank-line separated paragraphs of ``text`` that say how many tools there are."""
    return [part for part in re.split(r"\n\s*\n", text) if stated_counts(part)]


def section(text: str, heading: str) -> str:
    """The body of the Markdown section ``heading`` (a whole line), up to the next heading
    of the same or a higher level."""
    level = heading.split(" ")[0]
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    end = re.search(rf"^#{{1,{len(level)}}} ", text[start:], re.MULTILINE)
    return text[start : start + end.start()] if end else text[start:]


def read(relative: str) -> str:
    return (ROOT / relative).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def served_tools(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The names of the tools ``python -m graph_server.server`` lists."""
    with raw_server(tmp_path_factory.mktemp("server")) as server:
        listed = server.request("tools/list", {})["result"]["tools"]
    return {tool["name"] for tool in listed}


def test_the_count_parser_reads_number_words_and_digits_and_nothing_else() -> None:
    text = "with sixteen tools; 16 tools; the twelve graph tools; lists the tools; tools: two"
    assert stated_counts(text) == [
        ("sixteen tools", 16),
        ("16 tools", 16),
        ("twelve graph tools", 12),
    ]


@pytest.mark.parametrize("doc", TOOL_DOCS)
def test_every_tool_count_in_the_docs_is_the_servers(doc: str, served_tools: set[str]) -> None:
    counts = stated_counts(read(doc))
    assert counts, f"{doc} no longer says how many tools the server has"
    assert [(phrase, number) for phrase, number in counts if number != len(served_tools)] == []


def test_the_readme_names_every_tool_where_it_counts_them(served_tools: set[str]) -> None:
    (paragraph,) = paragraphs_stating_a_count(read("README.md"))
    assert set(TOOL_NAME.findall(paragraph)) == served_tools


def test_the_mcp_doc_has_one_table_row_per_tool(served_tools: set[str]) -> None:
    rows = TOOL_ROW.findall(section(read("docs/mcp.md"), "## The tools"))
    assert sorted(rows) == sorted(served_tools)


ARROW_TABLE_HEADER = "| package | imports |"


def stated_arrows(text: str) -> dict[str, set[str]]:
    """The table under :data:`ARROW_TABLE_HEADER` in ``text``: each package (``screen.py`` is
    the unit ``screen``) and the packages it says that package imports ("nothing": none)."""
    lines = text[text.index(ARROW_TABLE_HEADER) :].splitlines()[2:]
    table: dict[str, set[str]] = {}
    for line in lines:
        if not line.startswith("|"):
            break
        package, imports = line.strip("|").split("|")
        table[package.strip().strip("`").removesuffix(".py")] = set(
            re.findall(r"`([a-z_]+)`", imports)
        )
    return table


def actual_arrows(arrows: list[Arrow]) -> dict[str, set[str]]:
    """Each package that imports another, and the packages it imports."""
    table: dict[str, set[str]] = {}
    for src, dst, _ in arrows:
        table.setdefault(top(src), set()).add(top(dst))
    return table


def test_the_arrow_table_parser_reads_each_row_and_nothing_after() -> None:
    text = (
        f"An arrow.\n\n{ARROW_TABLE_HEADER}\n|---|---|\n| `corpus` | nothing |\n"
        "| `screen.py` | `evals`, `orchestrator` |\n\n| `evals` | `corpus` |\n"
    )
    assert stated_arrows(text) == {"corpus": set(), "screen": {"evals", "orchestrator"}}


def test_the_architecture_doc_states_every_package_arrow_and_no_other() -> None:
    stated = stated_arrows(read("docs/architecture.md"))
    actual = actual_arrows(project_arrows(ROOT))
    assert set(stated) >= set(actual), "a package that imports others has no row"
    assert {package: actual.get(package, set()) for package in stated} == stated
