"""How many tokens a prompt takes, counted without a tokenizer: the one token estimate.

Two rules, side by side so that they cannot drift apart:

- the estimate (:func:`estimate_tokens`): one token per three ASCII characters and one per
  other character, plus :data:`MESSAGE_OVERHEAD_TOKENS` per message. Tokenizers give English
  prose about four characters a token (accented, Cyrillic or CJK text far fewer), so the
  estimate is deliberately pessimistic: a prompt it says fits leaves the real one room to
  spare. Packing evidence into a context window and the screen's cost forecast use it.
- the bound (``prompt_tokens(..., bound=True)``): one token per UTF-8 byte, plus
  :data:`BOUND_OVERHEAD_TOKENS` per message. Byte-level BPE tokenizers never produce more
  tokens than bytes, so this is a hard upper bound; a cost cap that must never be overshot
  uses it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

CHARS_PER_TOKEN = 3
"""ASCII characters per estimated token."""
MESSAGE_OVERHEAD_TOKENS = 8
"""Chat-template tokens around each message (role markers, separators), generously."""
BOUND_OVERHEAD_TOKENS = 16
"""The same overhead where an upper bound is needed: twice the estimate's."""


def estimate_tokens(text: str) -> int:
    """A pessimistic token count of ``text`` (see the module docstring). Cost: O(len)."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    return -(-ascii_chars // CHARS_PER_TOKEN) + (len(text) - ascii_chars)


def prompt_tokens(messages: Sequence[Mapping[str, object]], *, bound: bool = False) -> int:
    """Tokens of a chat request's ``messages`` (their ``content``; a missing one counts as
    empty): the estimate, or with ``bound`` the hard upper bound (see the module docstring)."""
    if bound:
        return sum(
            len(str(m.get("content") or "").encode("utf-8")) + BOUND_OVERHEAD_TOKENS
            for m in messages
        )
    return sum(
        estimate_tokens(str(m.get("content") or "")) + MESSAGE_OVERHEAD_TOKENS for m in messages
    )
