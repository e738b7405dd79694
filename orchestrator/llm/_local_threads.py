"""How many threads llama.cpp gets for a built-in model: the cores other processes leave free."""

from __future__ import annotations

import os
import time

from orchestrator.llm.local_models import LocalModelError


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies over all CPUs from /proc/stat, or None where there is none."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = [int(v) for v in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    if len(fields) < 5:
        return None
    total = sum(fields[:8])  # guest time is already counted in user/nice
    return total - fields[3] - fields[4], total  # minus idle and iowait


def busy_cores(sample_s: float = 0.5) -> float:
    """How many cores other processes keep busy right now (this process is asleep meanwhile).

    Samples /proc/stat over ``sample_s`` seconds: a direct reading, unlike the load average,
    which still shows work that stopped a minute ago. Falls back to the 1-minute load average
    where /proc/stat does not exist, and to 0.0 where neither does.
    """
    before = _cpu_times()
    if before is not None:
        time.sleep(sample_s)
        after = _cpu_times()
        if after is not None and after[1] > before[1]:
            share = (after[0] - before[0]) / (after[1] - before[1])
            return share * (os.cpu_count() or 1)
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        return 0.0


def default_threads() -> int:
    """Inference threads: ``$LOGIC_GRAPH_LOCAL_THREADS``, else the cores not already busy.

    llama.cpp's worker threads meet at a barrier after every operation, so when another
    process preempts one of them all of them wait. Measured on a 2-core machine (0.5B model):
    idle, 2 threads generate about 32 tokens/s and 1 thread about 20; with two other busy
    processes, 2 threads drop to 1.4-4 tokens/s while 1 thread keeps 10-19. So we use the
    cores left over by :func:`busy_cores`, at least 1. Raises LocalModelError on a malformed
    override.
    """
    override = os.environ.get("LOGIC_GRAPH_LOCAL_THREADS")
    if override is not None:
        if not override.strip().isdigit() or int(override) < 1:
            raise LocalModelError(
                f"LOGIC_GRAPH_LOCAL_THREADS must be a whole number >= 1, got {override!r}"
            )
        return int(override)
    cores = _usable_cores()
    return max(1, min(cores, round(cores - busy_cores())))
