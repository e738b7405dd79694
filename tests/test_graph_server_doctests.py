"""graph_server is documented in the networkx style: the Examples of every module run here as
doctests, and each public function and class of the algorithm, validation and page modules,
each public method of ``GraphStore`` and each of the store's errors says what it takes, gives
and raises."""

from __future__ import annotations

import doctest
import importlib

import pytest
from docstrings import defined_in, doctests, failures, submodules, undocumented

import graph_server
from graph_server._store_base import StoreBase
from graph_server._store_edits import StoreEdits
from graph_server._store_reads import StoreReads
from graph_server.store import GraphStore

TESTS = doctests(submodules(graph_server))
DOCUMENTED = (
    # the algorithm, validation and page modules
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
    # the store's public surface
    "errors",
    "store",
    "_store_reads",
    "_store_edits",
)
"""The modules whose every public function, class and method needs its sections."""


@pytest.mark.parametrize("test", TESTS, ids=[test.name for test in TESTS])
def test_each_example_gives_what_its_docstring_shows(test: doctest.DocTest) -> None:
    if report := failures(test):
        pytest.fail(report, pytrace=False)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_every_public_name_has_examples_and_says_what_it_takes_gives_and_raises(
    name: str,
) -> None:
    module = importlib.import_module(f"graph_server.{name}")
    assert undocumented(defined_in(module)) == []


def test_every_public_method_of_the_store_has_a_runnable_example() -> None:
    classes = (GraphStore, StoreEdits, StoreReads, StoreBase)
    methods = [v for c in classes for k, v in vars(c).items() if not k.startswith("_")]
    missing = [m.__name__ for m in methods if callable(m) and ">>>" not in (m.__doc__ or "")]
    assert len(methods) >= 16 and missing == []
