"""Studies over recorded runs and banks: each a command (``python -m evals.studies.NAME``)
that replays or reads folders and prints a table from `evals.reporting`."""
