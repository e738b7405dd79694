"""Bounds of a corpus search that the layers above enforce too (the MCP tool's schema).

Kept in a module of its own so that importing them loads no index, reader or retrieval code.
"""

MAX_SEARCH_K = 50
"""Most chunks one ``search_evidence`` call may ask for."""
