"""The one way the evaluation commands end on an expected error."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

Handler = Callable[[argparse.Namespace, str], int]
"""A subcommand: its parsed flags and the name its errors go under -> its exit status."""


def exit_status(prog: str, body: Callable[[], int], expected: tuple[type[Exception], ...]) -> int:
    """``body()``'s exit status. An ``expected`` error (bad arguments, an unusable input) is
    printed to stderr as ``prog: message`` and gives 2, so every command fails the same way
    and none prints a traceback for a mistake its user can fix."""
    try:
        return body()
    except expected as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2


def run_alias(
    module: str,
    add_flags: Callable[[argparse.ArgumentParser], None],
    handler: Handler,
    argv: Sequence[str] | None,
) -> int:
    """``python -m MODULE``: one subcommand of ``logic-graph eval`` under its old module name,
    which its usage line and error messages keep (``argv``: None for the process's own)."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}")
    add_flags(parser)
    return handler(parser.parse_args(list(sys.argv[1:] if argv is None else argv)), module)
