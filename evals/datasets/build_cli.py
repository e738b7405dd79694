"""The command line every data-set builder (``build_*.py``) shares: its flags and its output.

Each builder takes a few flags with defaults (where to start, how many items, where to write)
and writes its items with :func:`~evals.datasets.loaders.write_items`, saying on stderr what it
wrote, so the committed files are rebuilt the same way whichever builder made them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals.datasets.loaders import write_items

Flag = tuple[str, Callable[[str], Any], Any]
"""``(flag, type, default)``: ``("--count", int, 150)``."""


def builder_parser(doc: str | None, *flags: Flag) -> argparse.ArgumentParser:
    """A builder's argument parser: ``flags`` in order, the first line of the builder's
    docstring ``doc`` as the description."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n", 1)[0])
    for flag, kind, default in flags:
        parser.add_argument(flag, type=kind, default=default)
    return parser


def one_file_args(
    doc: str | None, argv: list[str] | None, start: str, defaults: tuple[int, int, Path]
) -> argparse.Namespace:
    """The flags of a builder that writes one file, parsed from ``argv``: ``start`` (the
    integer it starts from, a seed or a first item), ``--count`` and ``--out``, whose
    defaults are ``defaults`` in that order."""
    first, count, out = defaults
    flags: tuple[Flag, ...] = ((start, int, first), ("--count", int, count), ("--out", Path, out))
    return builder_parser(doc, *flags).parse_args(argv)


def write_built(items: list[dict[str, Any]], path: Path, note: str = "") -> None:
    """Write ``items`` to ``path`` and say so on stderr (``note`` follows the path)."""
    write_items(items, path)
    print(f"wrote {len(items)} items to {path}{note}", file=sys.stderr)
