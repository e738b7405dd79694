"""The cells and tables every report of `evals.reporting` is made of."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

Row = TypeVar("Row", bound=Mapping[str, Any])
Value = TypeVar("Value")


def usd(value: float | None) -> str:
    """Dollars with enough digits for cheap models; "unknown" for None."""
    if value is None:
        return "unknown"
    if value == 0:
        return "$0"
    return f"${value:.6f}" if value < 0.01 else f"${value:.4f}"


def share(value: float | None, *, digits: int = 1, missing: str = "-") -> str:
    """A ratio as a percentage with ``digits`` decimals (``0.5`` -> ``50.0%``); ``missing``
    for None."""
    return missing if value is None else f"{100 * value:.{digits}f}%"


def points(value: float | None) -> str:
    """A ratio in percentage points without the sign of a positive value (``-0.13`` ->
    ``-13``); "-" for None."""
    return "-" if value is None else f"{100 * value:.0f}"


def signed(value: float | None) -> str:
    """A difference with its sign and two decimals; "-" for None."""
    return "-" if value is None else f"{value:+.2f}"


def number(value: float | None, digits: int = 0) -> str:
    """A figure with thousands separators; "unknown" for None."""
    return "unknown" if value is None else f"{value:,.{digits}f}"


def table(header: str, rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table's lines: ``header`` (its cells joined by " | "), then ``rows``; the
    first column left-aligned, the figures right-aligned."""
    separator = "|---|" + "---:|" * header.count(" | ")
    return [f"| {header} |", separator, *("| " + " | ".join(map(str, row)) + " |" for row in rows)]


def grouped(
    rows: Sequence[Row], column: str, values: Iterable[Value]
) -> Iterator[tuple[Value, list[Row]]]:
    """Each of ``values`` with the rows holding it in ``column``, in the order of ``values``;
    a value no row holds is left out (the groups a table shows one row each)."""
    for value in values:
        group = [row for row in rows if row[column] == value]
        if group:
            yield value, group
