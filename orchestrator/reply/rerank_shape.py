"""The shape of the LLM reranker's reply (:mod:`orchestrator.loop.corpus_calls`): the pool's
passage numbers, most useful first, ``{"order": [3, 1, 2]}``. Read through
:func:`orchestrator.reply.parse.parse_order`; whether the numbers are an ordering of the pool
(each once, none other) is checked where the pool is known (:func:`corpus.rerank.apply_order`).
"""

from __future__ import annotations

import re
from typing import Any

from orchestrator.reply.fields import kind_of
from orchestrator.reply.top import read_top

_NUMBER = re.compile(r"^\[?\s*(\d{1,4})\s*\]?$")


def normalise_order(value: Any) -> tuple[list[int] | None, list[str], str | None]:
    """(the passage numbers or None, item errors, the fatal problem or None) for a loaded
    rerank reply. A number may be written as text (``"3"``, ``"[3]"``); any other item makes
    the whole ordering unusable, since a reranker's order is kept only whole. Never raises."""
    top = read_top(value, "order", list, "a list")
    if top.problem is not None:
        return None, top.errors, top.problem
    numbers: list[int] = []
    for index, item in enumerate(top.value):
        found = _NUMBER.match(item.strip()) if isinstance(item, str) else None
        if isinstance(item, int) and not isinstance(item, bool):
            numbers.append(item)
        elif found is not None:
            numbers.append(int(found.group(1)))
        else:
            return None, top.errors, f"order[{index}] is {kind_of(item)}, not a passage number"
    if not numbers:
        return None, top.errors, "the order is empty"
    return numbers, top.errors, None
