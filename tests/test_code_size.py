"""Rooms small enough to read in one sitting, and records that say what they hold.

Issue 33 set these limits for the project's own code (tests, benchmarks and examples aside):
no module over 500 lines, no function over 60, and at most 69 lines that type a value as the
untyped ``dict[str, Any]`` across graph_server, corpus and orchestrator (a third of the 208
counted before the typed store boundary). They are checked here so that they cannot drift
back unseen, as the function limit once did.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("graph_server", "corpus", "orchestrator", "evals")
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MAX_UNTYPED_DICT_LINES = 69


def _sources(packages: tuple[str, ...]) -> Iterator[Path]:
    for package in packages:
        yield from sorted((ROOT / package).rglob("*.py"))


def _own_code() -> list[Path]:
    """Every module the limits apply to: the packages and the grounding screen."""
    return [*_sources(PACKAGES), ROOT / "screen.py"]


def _long_functions(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(root)}:{node.lineno} {node.name} ({lines} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (lines := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES
    ]


def test_no_module_is_over_500_lines() -> None:
    long = [
        f"{path.relative_to(ROOT)} ({count} lines)"
        for path in _own_code()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert long == []


def test_no_function_is_over_60_lines() -> None:
    long = [found for path in _own_code() for found in _long_functions(path)]
    assert long == []


def test_untyped_dicts_stay_at_most_a_third_of_the_count_before_the_store_was_typed() -> None:
    lines = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _sources(("graph_server", "corpus", "orchestrator"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "dict[str, Any]" in line
    ]
    assert len(lines) <= MAX_UNTYPED_DICT_LINES, lines


def test_the_function_rule_finds_a_long_function_and_passes_a_short_one(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    probe = tmp_path / "probe.py"
    probe.write_text(f"def long():\n{body}\n\n\ndef short():\n    return 1\n", encoding="utf-8")
    assert _long_functions(probe, tmp_path) == [f"probe.py:1 long ({MAX_FUNCTION_LINES + 1} lines)"]
