"""logic-graph orchestrator: fan-out interrogations, merge, check, re-interrogate, report."""
