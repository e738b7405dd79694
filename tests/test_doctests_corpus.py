"""The public surface of :mod:`corpus` (its ``__all__``) is documented in the networkx style,
and the Examples of every corpus module run as doctests: no optional extra needed."""

from __future__ import annotations

import doctest

import pytest
from docstrings import doctests, failures, submodules, undocumented

import corpus

TESTS = doctests([corpus, *submodules(corpus)])


@pytest.mark.parametrize("test", TESTS, ids=[test.name for test in TESTS])
def test_each_example_gives_what_its_docstring_shows(test: doctest.DocTest) -> None:
    if report := failures(test):
        pytest.fail(report, pytrace=False)


def test_every_public_name_has_examples_and_says_what_it_takes_gives_and_raises() -> None:
    assert undocumented((name, getattr(corpus, name)) for name in corpus.__all__) == []


def test_the_public_names_are_imported_for_type_checkers_as_all_lists_them() -> None:
    assert sorted(corpus._origins()) == sorted(corpus.__all__)
    assert all(getattr(corpus, name) is not None for name in corpus.__all__)
