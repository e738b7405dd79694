"""The one way the evaluation commands end on an expected error."""

from __future__ import annotations

import sys
from collections.abc import Callable


def exit_status(prog: str, body: Callable[[], int], expected: tuple[type[Exception], ...]) -> int:
    """``body()``'s exit status. An ``expected`` error (bad arguments, an unusable input) is
    printed to stderr as ``prog: message`` and gives 2, so every command fails the same way
    and none prints a traceback for a mistake its user can fix."""
    try:
        return body()
    except expected as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
