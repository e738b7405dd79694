"""The store, its errors, records and tool table are documented in the networkx style: each
public method of ``GraphStore`` and each public function or class of these modules has
Examples, run here as doctests, and says what it takes, gives and raises. (The algorithm,
validation and page modules have theirs in tests/test_doctests_graph_algorithms.py.)"""

from __future__ import annotations

import doctest
import importlib

import pytest
from docstrings import defined_in, doctests, failures, undocumented

from graph_server._store_base import StoreBase
from graph_server._store_edits import StoreEdits
from graph_server._store_reads import StoreReads
from graph_server.store import GraphStore

NAMES = (
    "_store_base",
    "_store_edits",
    "_store_ingest",
    "_store_payloads",
    "_store_persist",
    "_store_reads",
    "_store_state",
    "errors",
    "export",
    "record_data",
    "records",
    "server",
    "state",
    "store",
    "tool_spec",
    "tools",
    "transport",
)
MODULES = [importlib.import_module(f"graph_server.{name}") for name in NAMES]
TESTS = doctests(MODULES)
DOCUMENTED = ("errors", "store", "_store_reads", "_store_edits")
"""The public surface: every name these modules define needs its sections."""


@pytest.mark.parametrize("test", TESTS, ids=[test.name for test in TESTS])
def test_each_store_example_gives_what_its_docstring_shows(test: doctest.DocTest) -> None:
    if report := failures(test):
        pytest.fail(report, pytrace=False)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_every_public_store_method_and_error_says_what_it_takes_gives_and_raises(
    name: str,
) -> None:
    module = importlib.import_module(f"graph_server.{name}")
    assert undocumented(defined_in(module)) == []


def test_every_public_method_of_the_store_has_a_runnable_example() -> None:
    classes = (GraphStore, StoreEdits, StoreReads, StoreBase)
    methods = [v for c in classes for k, v in vars(c).items() if not k.startswith("_")]
    missing = [m.__name__ for m in methods if callable(m) and ">>>" not in (m.__doc__ or "")]
    assert len(methods) >= 16 and missing == []
