"""The Examples in graph_server's docstrings run, and say what the code does."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import graph_server

MODULES = sorted(
    info.name
    for info in pkgutil.iter_modules(graph_server.__path__, "graph_server.")
    if not info.name.endswith("__main__")
)


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_each_graph_server_module_pass_as_doctests(name: str) -> None:
    module = importlib.import_module(name)
    failed, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS, raise_on_error=False)
    assert failed == 0, f"{failed} doctest failures in {name}"


def test_every_public_store_method_has_a_runnable_example() -> None:
    from graph_server.store import GraphStore

    public = [name for name in dir(GraphStore) if not name.startswith("_")]
    methods = [name for name in public if callable(getattr(GraphStore, name))]
    missing = [name for name in methods if ">>>" not in (getattr(GraphStore, name).__doc__ or "")]
    assert methods and missing == []
