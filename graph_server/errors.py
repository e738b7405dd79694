"""The errors :class:`graph_server.store.GraphStore` raises when it refuses a call.

Every refusal is a :class:`StoreError`, whose ``str()`` is the message for the caller: it
names the field or limit, the value and the rule broken. The MCP server
(:func:`graph_server.server.dispatch`) turns one into the tool's ``{"error": ...}`` result;
library callers catch the class they can handle. Anything else a store method raises is a
bug and propagates as such.

::

    StoreError
    ├── InvalidInput      a value broke a rule (field, problem)
    │   └── NotFound      an id names no graph or node
    ├── LimitExceeded     a StoreLimits limit would be passed (limit, problem)
    └── Cancelled         the caller's cancel check fired before the commit point
"""

from __future__ import annotations

__all__ = ["Cancelled", "InvalidInput", "LimitExceeded", "NotFound", "StoreError"]


class StoreError(Exception):
    """A call the store refused; nothing of it was applied.

    Parameters
    ----------
    problem : str
        The message for the caller (also ``str(error)``).

    Examples
    --------
    >>> str(StoreError("format must be one of graphml, json, mermaid, html; got 'pdf'"))
    "format must be one of graphml, json, mermaid, html; got 'pdf'"
    """

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


class InvalidInput(StoreError):
    """An argument broke a rule of the store (a type, a range, an id rule, an enum).

    Parameters
    ----------
    field : str
        The argument at fault, as the caller spells it (``"conclusion_id"``).
    problem : str
        The message, naming the field, the value and the rule.

    Examples
    --------
    >>> error = InvalidInput("dedup", "dedup must be true or false, got 'maybe'")
    >>> error.field, str(error)
    ('dedup', "dedup must be true or false, got 'maybe'")
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(problem)
        self.field = field


class NotFound(InvalidInput):
    """An id names no stored graph, or no live node of the graph.

    Examples
    --------
    >>> isinstance(NotFound("graph_id", "graph_id 'g' not found"), InvalidInput)
    True
    """


class LimitExceeded(StoreError):
    """The call would pass one of the store's limits (``StoreLimits`` in validation).

    Parameters
    ----------
    limit : str
        The limit's name (``"max_claim_bytes"``, ``"max_graphs"``, ...).
    problem : str
        The message, naming the limit and what the call would have needed.

    Examples
    --------
    >>> LimitExceeded("max_graphs", "over the limit of 1 graphs").limit
    'max_graphs'
    """

    def __init__(self, limit: str, problem: str) -> None:
        super().__init__(problem)
        self.limit = limit


class Cancelled(StoreError):
    """The caller's ``cancel`` check fired before the call's commit point; nothing changed.

    Parameters
    ----------
    method : str
        The store method that stopped.

    Examples
    --------
    >>> str(Cancelled("merge_duplicates"))[:50]
    'cancelled: merge_duplicates stopped before its com'
    """

    def __init__(self, method: str) -> None:
        super().__init__(
            f"cancelled: {method} stopped before its commit point; nothing from this call was "
            "applied and the graph is as it was"
        )
        self.method = method
