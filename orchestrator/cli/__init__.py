"""The command lines: ``logic-graph`` and its verbs, and ``python -m orchestrator.run``.

- :mod:`.main`: ``logic-graph`` (ask, serve, view, index, search);
- :mod:`.run`: the run command with every setting;
- :mod:`.ask`: a question in one line; :mod:`.view`: a saved graph's page;
- :mod:`.interrupt`: Ctrl-C and SIGTERM finish the report, then exit.
"""

from orchestrator.cli import ask, interrupt, main, run, view

__all__ = ["ask", "interrupt", "main", "run", "view"]
