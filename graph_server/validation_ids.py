"""The id rule: how graph ids, node ids, edge endpoints, run ids and sources are normalised.

Each is normalised by :func:`normalise_id`: a JSON integer becomes its decimal string;
the text is put in Unicode NFC; whitespace and invisible format characters (zero-width
space, joiner, byte-order mark, ...) are stripped from both ends; what remains must be
non-empty, at most ``max_id_chars`` long and free of control, format, surrogate and line or
paragraph separator characters. So ``"A"``, ``" A "`` and ``"A\\u200b"`` are one id,
and ``"A\\u200bB"`` is refused.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from graph_server.limits import StoreLimits
from graph_server.validation_text import shown
from graph_server.views import SUPER_SOURCE

_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Control, format (zero-width), surrogate, line and paragraph separator characters."""


def _strip_edge_junk(text: str) -> str:
    """``text`` without the leading and trailing characters :func:`_is_edge_junk` drops."""
    start, end = 0, len(text)
    while start < end and _is_edge_junk(text[start]):
        start += 1
    while end > start and _is_edge_junk(text[end - 1]):
        end -= 1
    return text[start:end]


def _is_edge_junk(char: str) -> bool:
    return char.isspace() or unicodedata.category(char) == "Cf"


def normalise_id(field: str, value: Any, limits: StoreLimits) -> tuple[str | None, str | None]:
    """``(id, None)`` for a usable id after normalisation, else ``(None, reason)``.

    The rule is in the module docstring. Booleans are refused (JSON ``true`` is not
    an id); integers are accepted as their decimal string; the virtual super-source's id
    is reserved. O(len(value)).

    Parameters
    ----------
    field : str
        Where the id stands (``id``, ``src``, ``run_ids item``); the reason opens with it.
    value : object
        A string or a JSON integer, as a caller sent it.
    limits : StoreLimits
        Gives ``max_id_chars``.

    Returns
    -------
    id : str or None
        The normalised id, or None when it is refused.
    reason : str or None
        The part of the rule it breaks, naming the offending character if any; or None.

    Examples
    --------
    >>> limits = StoreLimits()
    >>> normalise_id("src", " A\\u200b", limits), normalise_id("src", 7, limits)
    (('A', None), ('7', None))
    >>> normalise_id("src", True, limits)
    (None, 'src must be a non-empty string, got True')
    >>> print(normalise_id("src", "A\\u200bB", limits)[1])
    src 'A\\u200bB' holds U+200B (ZERO WIDTH SPACE), a control or invisible character; ids
    may not contain one
    """
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None, f"{field} must be a non-empty string, got {shown(value)}"
    text = _strip_edge_junk(unicodedata.normalize("NFC", value) if not value.isascii() else value)
    if not text:
        return None, f"{field} must be a non-empty string, got {shown(value)}"
    if len(text) > limits.max_id_chars:
        return None, (
            f"{field} {shown(value)} is longer than the limit of {limits.max_id_chars} characters"
        )
    if not text.isprintable():
        for char in text:
            if unicodedata.category(char) in _REFUSED_CATEGORIES:
                return None, (
                    f"{field} {shown(value)} holds U+{ord(char):04X} "
                    f"({unicodedata.name(char, 'unnamed')}), a control or invisible "
                    "character; ids may not contain one"
                )
    if text == SUPER_SOURCE:
        return None, f"{field} {text!r} is reserved for the virtual super-source"
    return text, None
