"""Limits and input validation for the graph store: one name for each piece, which lives in
:mod:`graph_server.limits` (enums, defaults, ``StoreLimits``),
:mod:`graph_server.validation_text` (texts, numbers and switches),
:mod:`graph_server.validation_ids` (the id rule) and :mod:`graph_server.validation_schema`
(nodes, edges and spans).

Validators return either a clean value or a human-readable reason naming the
field, the offending value and the rule it breaks; they never raise. The MCP
server hands its arguments to the same validators, so both modes refuse and
accept exactly the same input.

Ids (graph ids, node ids, edge endpoints, run ids, sources) all follow one rule,
:func:`normalise_id`: ``"A"``, ``" A "`` and ``"A\\u200b"`` are one id, and ``"A\\u200bB"``
is refused.
"""

from __future__ import annotations

from graph_server.limits import DEFAULT_CONFIDENCE as DEFAULT_CONFIDENCE
from graph_server.limits import DEFAULT_JACCARD_THRESHOLD as DEFAULT_JACCARD_THRESHOLD
from graph_server.limits import DEFAULT_RATIO_THRESHOLD as DEFAULT_RATIO_THRESHOLD
from graph_server.limits import DEFAULT_SEARCH_K as DEFAULT_SEARCH_K
from graph_server.limits import EXPORT_FORMATS as EXPORT_FORMATS
from graph_server.limits import MAX_SEARCH_K as MAX_SEARCH_K
from graph_server.limits import MAX_SEARCH_QUERY_CHARS as MAX_SEARCH_QUERY_CHARS
from graph_server.limits import NODE_TYPES as NODE_TYPES
from graph_server.limits import RELATIONS as RELATIONS
from graph_server.limits import StoreLimits as StoreLimits
from graph_server.validation_ids import normalise_id as normalise_id
from graph_server.validation_schema import EDGE_KEYS as EDGE_KEYS
from graph_server.validation_schema import NODE_KEYS as NODE_KEYS
from graph_server.validation_schema import SPAN_KEYS as SPAN_KEYS
from graph_server.validation_schema import EdgeRecord as EdgeRecord
from graph_server.validation_schema import NodeRecord as NodeRecord
from graph_server.validation_schema import parse_edge as parse_edge
from graph_server.validation_schema import parse_node as parse_node
from graph_server.validation_schema import parse_span as parse_span
from graph_server.validation_schema import unknown_keys as unknown_keys
from graph_server.validation_text import check_confidence as check_confidence
from graph_server.validation_text import check_flag as check_flag
from graph_server.validation_text import check_text as check_text
from graph_server.validation_text import decode_json_text as decode_json_text
from graph_server.validation_text import shown as shown
