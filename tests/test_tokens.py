"""One token estimate, and the hard bound beside it (issue 33)."""

from __future__ import annotations

from orchestrator.llm import estimate_tokens, prompt_tokens


def test_the_estimate_counts_three_ascii_characters_a_token_and_one_for_any_other() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 2
    assert estimate_tokens("日本") == 2
    assert estimate_tokens("abcé") == 2


def test_a_prompt_adds_an_overhead_per_message_and_a_missing_content_counts_as_empty() -> None:
    messages = [{"role": "system", "content": "abc"}, {"role": "assistant"}]
    assert prompt_tokens(messages) == (1 + 8) + (0 + 8)


def test_the_bound_counts_every_utf8_byte_and_is_never_below_the_estimate() -> None:
    for text in ("plain English words", "Grüße, 日本語", "{}[]0123456789"):
        messages = [{"role": "user", "content": text}]
        assert prompt_tokens(messages, bound=True) == len(text.encode("utf-8")) + 16
        assert prompt_tokens(messages, bound=True) >= prompt_tokens(messages)
