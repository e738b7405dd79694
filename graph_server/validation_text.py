"""Checking the texts, numbers and switches a caller sends (claims, confidences, flags).

Each check returns ``(value, None)`` or ``(None, reason)``; the reason names the field, the
offending value (:func:`shown`) and the rule it breaks. They never raise.
"""

from __future__ import annotations

import json
import math
from typing import Any

_SHOWN_CHARS = 60


def shown(value: Any) -> str:
    """A short repr of a caller value for error messages. O(len(repr(value))).

    Parameters
    ----------
    value : object
        Anything a caller sent.

    Returns
    -------
    str
        Its ``repr``, cut after 60 characters with the full length noted.

    Examples
    --------
    >>> shown("A")
    "'A'"
    >>> shown("x" * 100)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (102 chars)"
    """
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + f"... ({len(text)} chars)"


def decode_json_text(value: Any) -> Any:
    """Decode a string that JSON-encodes an array or object; pass anything else on.

    Models often send a list or an object as a JSON string. Strings that are not such
    JSON (including nesting too deep to parse) are returned untouched, so the caller's
    check reports the field with its usual message. O(len(value)).

    Parameters
    ----------
    value : object
        A field as a caller sent it.

    Returns
    -------
    object
        The decoded list or dict, or ``value`` itself.

    Examples
    --------
    >>> decode_json_text('["r1", "r2"]'), decode_json_text('{"id": "A"}')
    (['r1', 'r2'], {'id': 'A'})
    >>> decode_json_text("[not json"), decode_json_text('"A"'), decode_json_text(3)
    ('[not json', '"A"', 3)
    """
    if not isinstance(value, str) or not value.lstrip().startswith(("[", "{")):
        return value
    try:
        decoded = json.loads(value)
    except (ValueError, RecursionError):
        return value
    return decoded if isinstance(decoded, list | dict) else value


def check_text(field: str, value: Any, limit: int) -> tuple[str | None, str | None]:
    """A non-empty string of at most ``limit`` characters, surrounding spaces dropped,
    holding valid Unicode only (no lone surrogate). O(len(value)).

    Parameters
    ----------
    field : str
        The field's name (``claim``, ``reason``), which opens the reason.
    value : object
        The text as a caller sent it; anything but a string is refused.
    limit : int
        The most characters it may have (surrounding spaces count).

    Returns
    -------
    text : str or None
        The text without surrounding spaces, or None when it is refused.
    reason : str or None
        The rule it breaks (not a non-empty string, over ``limit``, a lone surrogate), or
        None.

    Examples
    --------
    >>> check_text("claim", "  Acme paid ", 20)
    ('Acme paid', None)
    >>> check_text("claim", "Acme paid", 5)
    (None, 'claim has 9 characters, over the limit of 5')
    >>> check_text("claim", "  ", 5)
    (None, "claim must be a non-empty string, got '  '")
    """
    if not isinstance(value, str) or not value.strip():
        return None, f"{field} must be a non-empty string, got {shown(value)}"
    if len(value) > limit:
        return None, f"{field} has {len(value)} characters, over the limit of {limit}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return None, (
            f"{field} holds a lone surrogate U+{ord(value[exc.start]):04X} at character "
            f"{exc.start}, which is not valid Unicode"
        )
    return value.strip(), None


def check_confidence(field: str, value: Any) -> tuple[float | None, str | None]:
    """Parse a number in [0, 1]. Numeric strings such as ``"0.9"`` are accepted;
    booleans are not numbers; ``-0.0`` comes back as ``0.0``. O(1).

    Parameters
    ----------
    field : str
        The number's name (``confidence``), which opens the reason.
    value : object
        A number or a numeric string, as a caller sent it.

    Returns
    -------
    confidence : float or None
        The number as a float, or None when it is refused.
    reason : str or None
        Whether it is no finite number or lies outside [0, 1]; None when it is accepted.

    Examples
    --------
    >>> check_confidence("confidence", "0.9"), check_confidence("confidence", -0.0)
    ((0.9, None), (0.0, None))
    >>> check_confidence("confidence", 2)
    (None, 'confidence 2 is outside [0, 1]')
    >>> check_confidence("confidence", True)
    (None, 'confidence must be a number in [0, 1], got True')
    """
    if isinstance(value, bool):
        return None, f"{field} must be a number in [0, 1], got {shown(value)}"
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None, f"{field} must be a number in [0, 1], got {shown(value)}"
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None, f"{field} must be a number in [0, 1], got {shown(value)}"
    if not 0.0 <= value <= 1.0:
        return None, f"{field} {value} is outside [0, 1]"
    return float(value) + 0.0, None  # + 0.0 turns -0.0 into 0.0


def check_flag(field: str, value: Any) -> tuple[bool | None, str | None]:
    """Parse a yes/no switch: a bool, or the strings ``"true"``/``"false"`` (any case,
    surrounding spaces ignored) as JSON-minded clients send them. Anything else,
    including 0/1 and "yes"/"no", is refused with a reason naming ``field``. O(1).

    Parameters
    ----------
    field : str
        The switch's name (``dedup``); the reason names it.
    value : object
        A bool or a ``"true"``/``"false"`` string, as a caller sent it.

    Returns
    -------
    flag : bool or None
        The switch, or None when it is refused.
    reason : str or None
        ``"<field> must be true or false, got <value>"``, or None.

    Examples
    --------
    >>> check_flag("force", " TRUE "), check_flag("force", False)
    ((True, None), (False, None))
    >>> check_flag("force", 1)
    (None, 'force must be true or false, got 1')
    """
    if isinstance(value, bool):
        return value, None
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true", None
    return None, f"{field} must be true or false, got {shown(value)}"
