"""Ctrl-C and SIGTERM for the command line: finish the report from what was done, then exit 130.

:func:`stop_on_signals` turns SIGINT and SIGTERM into a :class:`~orchestrator.llm.RunStop`
request while a run is attached to it, so that the run makes no further call, cuts the calls
in flight and writes its report (marked ``interrupted``) within seconds. Before a run is
attached (while a built-in model starts, or the backend is probed) nothing is lost by stopping
at once, so the signal raises :class:`KeyboardInterrupt` there as usual. A second signal
during the same run ends the process at once with exit code 130, for a report that does not
come.

The handler itself only sets a flag: it runs on the main thread between two bytecodes, maybe
while that thread holds one of the locks :meth:`RunStop.request` would take, so a watcher
thread passes the request on.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from orchestrator.llm import RunStop

EXIT_INTERRUPTED = 130
"""The exit code of an interrupted run: 128 + SIGINT, what shells report for Ctrl-C."""
_POLL_S = 0.05


@contextmanager
def stop_on_signals(stop: RunStop) -> Iterator[None]:
    """While the block runs, SIGINT and SIGTERM request ``stop`` (see the module docstring);
    the previous handlers come back on exit. Only on the main thread (elsewhere a no-op:
    Python delivers signals to the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[str] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if not stop.started:
            raise KeyboardInterrupt(name)
        if caught:
            os.write(2, f"[logic-graph] {name} again: quitting without the report\n".encode())
            os._exit(EXIT_INTERRUPTED)
        caught.append(name)

    done = threading.Event()

    def watch() -> None:
        while not done.wait(_POLL_S):
            if caught:
                print(
                    f"[logic-graph] {caught[0]}: stopping; writing the report of what was done "
                    "(again to quit at once)",
                    file=sys.stderr,
                    flush=True,
                )
                stop.request(caught[0])
                return

    watcher = threading.Thread(target=watch, name="logic-graph-signals", daemon=True)
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    watcher.start()
    try:
        yield
    finally:
        done.set()
        for sig, old in previous.items():
            signal.signal(sig, old)
        watcher.join(timeout=1)
