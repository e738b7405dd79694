"""Docstrings in the networkx (numpydoc) style, checked: their Examples run as doctests, and
each public function says what it takes, gives and raises.

The doctest files of the packages share it (tests/test_doctests_corpus.py,
tests/test_graph_server_doctests.py).
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import io
import pkgutil
import re
import textwrap
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
"""How outputs are compared: ``...`` matches anything, runs of whitespace are one space."""
_HEADING = re.compile(r"^([A-Z][a-z]+)\n-+$", re.MULTILINE)


def submodules(package: ModuleType) -> list[ModuleType]:
    """The modules of ``package`` (one level down, private ones included), imported."""
    return [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
    ]


def doctests(modules: Iterable[ModuleType]) -> list[doctest.DocTest]:
    """Every docstring of ``modules`` (and of what they define) that has examples, by name."""
    finder = doctest.DocTestFinder()
    found = [test for module in modules for test in finder.find(module) if test.examples]
    return sorted(found, key=lambda test: test.name)


def failures(test: doctest.DocTest) -> str:
    """Run ``test`` in a copy of its globals; the doctest report of what failed, or ``""``."""
    report = io.StringIO()
    runner = doctest.DocTestRunner(verbose=False, optionflags=OPTIONS)
    runner.run(test, out=report.write, clear_globs=True)
    return report.getvalue()


def sections(doc: str | None) -> set[str]:
    """The numpydoc section headings of ``doc`` ("Parameters", "Returns", "Examples", ...);
    an Examples section counts only when ``doc`` holds a doctest (``>>>``)."""
    found = set(_HEADING.findall(inspect.cleandoc(doc or "")))
    return found if ">>>" in (doc or "") else found - {"Examples"}


def raises_itself(function: Callable[..., Any]) -> bool:
    """Whether the body of ``function`` holds a ``raise`` statement of its own (not one of a
    function nested in it)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    todo: list[ast.AST] = list(ast.iter_child_nodes(tree.body[0]))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Raise):
            return True
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return False


def missing_sections(function: Callable[..., Any]) -> list[str]:
    """The sections ``function``'s docstring lacks: Parameters when it takes any, Returns (or
    Yields) when it returns a value, Raises when it raises, and always Examples."""
    signature = inspect.signature(function)
    needed = ["Examples"]
    if [name for name in signature.parameters if name not in ("self", "cls")]:
        needed.append("Parameters")
    if signature.return_annotation not in (None, "None", inspect.Signature.empty):
        needed.append("Returns")
    if raises_itself(function):
        needed.append("Raises")
    have = sections(function.__doc__)
    if "Yields" in have:
        have.add("Returns")
    return [name for name in needed if name not in have]


def public_members(cls: type) -> list[Callable[..., Any]]:
    """The public methods ``cls`` defines itself (properties are described by the class)."""
    return [
        value
        for name, value in vars(cls).items()
        if not name.startswith("_") and inspect.isfunction(value)
    ]


def undocumented(objects: Iterable[tuple[str, Any]]) -> list[str]:
    """``"name: Section, ..."`` for each function, class or public method among ``objects``
    (``(name, object)`` pairs) whose docstring lacks a section it needs; a class needs
    Examples."""
    found = []
    for name, obj in objects:
        if inspect.isclass(obj):
            if "Examples" not in sections(obj.__doc__):
                found.append(f"{name}: Examples")
            for method in public_members(obj):
                if missing := missing_sections(method):
                    found.append(f"{name}.{method.__name__}: {', '.join(missing)}")
        elif inspect.isfunction(obj) and (missing := missing_sections(obj)):
            found.append(f"{name}: {', '.join(missing)}")
    return found


def defined_in(module: ModuleType) -> list[tuple[str, Any]]:
    """The public functions and classes ``module`` defines (not those it imports)."""
    return [
        (f"{module.__name__}.{name}", value)
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(value) or inspect.isclass(value))
        and value.__module__ == module.__name__
    ]
