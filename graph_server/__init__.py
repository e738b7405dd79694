"""logic-graph argument-graph engine: store, dedup, structural checks, semantics."""
