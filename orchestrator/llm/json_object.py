"""The one name for free-form JSON.

:data:`JsonObject` is data whose shape no record describes because it is not ours to fix: a
JSON Schema, an HTTP request or answer body, ``extra_body`` and ``response_format`` as the
server takes them, a parsed file before it is checked. Data with a known shape gets a record
instead (a TypedDict or a dataclass, defined once).
"""

from typing import Any

JsonObject = dict[str, Any]
"""A free-form JSON object (see the module docstring)."""
