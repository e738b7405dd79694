"""graph_server's algorithm, validation and page modules are documented in the networkx style:
each public function and class has Examples, run here as doctests, and says what it takes,
gives and raises. (The store, the server and the tools have their own doctest runner.)"""

from __future__ import annotations

import doctest
import importlib

import pytest
from docstrings import defined_in, doctests, failures, undocumented

NAMES = (
    "arguments",
    "betweenness",
    "candidates",
    "checks",
    "citation",
    "dedup",
    "dedup_apply",
    "dedup_clusters",
    "dedup_rivals",
    "demo",
    "disputes",
    "fixture",
    "graph_page",
    "html_files",
    "html_view",
    "layout",
    "limits",
    "mermaid",
    "packing",
    "semantics",
    "similarity",
    "slot_guard",
    "svg_graph",
    "validation",
    "validation_ids",
    "validation_schema",
    "validation_text",
    "views",
)
MODULES = [importlib.import_module(f"graph_server.{name}") for name in NAMES]
TESTS = doctests(MODULES)


@pytest.mark.parametrize("test", TESTS, ids=[test.name for test in TESTS])
def test_each_example_gives_what_its_docstring_shows(test: doctest.DocTest) -> None:
    if report := failures(test):
        pytest.fail(report, pytrace=False)


@pytest.mark.parametrize("module", MODULES, ids=NAMES)
def test_every_public_function_has_examples_and_says_what_it_takes_gives_and_raises(
    module: object,
) -> None:
    assert undocumented(defined_in(module)) == []
