"""``python -m orchestrator.run``: the stable name of the run command.

The command itself lives in :mod:`orchestrator.cli.run`; this module keeps the name that the
README, scripts and the ``logic-graph-run`` console script use.
"""

from orchestrator.cli import run as run_command

main = run_command.main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
