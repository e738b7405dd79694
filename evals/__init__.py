"""logic-graph evaluation harness."""
