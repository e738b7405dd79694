"""Prompts for the baseline arms 1-5 of the evaluation harness (arm 6 uses the orchestrator's own).

Every prompt is a named template with a version in `PROMPT_VERSIONS`; each raw result line
records the version it was produced with, so a prompt change never silently mixes with old
results. All arms share one answer convention: the reply ends with a line ``ANSWER: <answer>``
(``ANSWER: unknown`` when the documents do not settle the question), which `evals.arms`
parses.

The builders take an item in the common dataset format (`evals.datasets`) and return chat
messages. Math items carry no documents; QA items are shown their paragraphs numbered [1], [2],
... in item order. Only the question and the paragraph texts reach the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.llm import ChatMessage
from orchestrator.reply import ANSWER_RULE, REASONED_SYSTEM, fresh_conversation

PROMPT_VERSIONS: dict[str, int] = {
    "direct": 1,
    "reasoned": 1,
    "revisit": 1,
    "reinject": 1,
    "arrow": 1,
    "compress": 1,
    "chain_check": 1,
}

_DIRECT_SYSTEM = (
    "You answer questions accurately and briefly. Use only the documents supplied with the "
    "question, never outside knowledge. Do not explain your answer.\n" + ANSWER_RULE
)

_REVISIT_USER = (
    "Revisit your reasoning above. Look for mistakes: a misread fact, a wrong calculation, a "
    "step that does not follow. Correct anything that is wrong, then give your final answer.\n"
    + ANSWER_RULE
)

_REINJECT_USER = (
    "An earlier attempt at this question produced the reasoning below, quoted word for word.\n"
    "<earlier_reasoning>\n{trace}\n</earlier_reasoning>\n"
    "Check that reasoning against the question and the documents step by step. Keep what holds, "
    "fix what does not, and give the final answer.\n" + ANSWER_RULE
)

_ARROW_SYSTEM = (
    "You reason only in arrow chains. Write each line of reasoning as a chain of short steps "
    "joined by ' -> ', for example:\n"
    "Ann was born in Bray -> Bray lies in Kerrow county -> Ann was born in Kerrow county\n"
    "12 boxes * 4 pens = 48 pens -> 48 pens - 5 lost = 43 pens\n"
    "Each step is a fact taken from the documents or one calculation; no other prose. Use only "
    "the documents supplied with the question, never outside knowledge.\n" + ANSWER_RULE
)

_COMPRESS_USER = (
    "Rewrite the reasoning of your reply above as a compact arrow chain: short steps joined by "
    "' -> ', each step one fact or one calculation, ending with the answer. Keep every fact and "
    "number the answer depends on; drop everything else. Reply with the chain only, one chain "
    "per line, no other text."
)

_CHAIN_CHECK_SYSTEM = (
    "You check reasoning written as arrow chains (steps joined by ' -> '). Test every step "
    "against the documents and recompute every calculation. If a step is wrong or unsupported, "
    "say which and work out the correct result. Use only the documents supplied with the "
    "question, never outside knowledge.\n" + ANSWER_RULE
)

_CHAIN_CHECK_USER = "Reasoning chain to check:\n{chain}"


def _new_conversation(
    system: str, item: Mapping[str, Any], after: str | None = None
) -> list[ChatMessage]:
    """A call in a fresh context: ``system``, then the item's documents and question, with
    ``after`` as a paragraph of its own below them."""
    return fresh_conversation(system, item["question"], item.get("documents") or [], after=after)


def _next_turn(first: list[ChatMessage], reply: str, user: str) -> list[ChatMessage]:
    """The conversation ``first`` continued: the model's ``reply``, then ``user``'s turn."""
    return [*first, {"role": "assistant", "content": reply}, {"role": "user", "content": user}]


def direct_messages(item: Mapping[str, Any]) -> list[ChatMessage]:
    """Arm 1: answer at once, no reasoning asked for (prompt ``direct``)."""
    return _new_conversation(_DIRECT_SYSTEM, item)


def reasoned_messages(item: Mapping[str, Any]) -> list[ChatMessage]:
    """First call of arms 2, 3 and 5: reason step by step, then answer (prompt ``reasoned``)."""
    return _new_conversation(REASONED_SYSTEM, item)


def revisit_messages(first: list[ChatMessage], reply: str) -> list[ChatMessage]:
    """Arm 2, second call: the same conversation plus a generic "revisit" turn."""
    return _next_turn(first, reply, _REVISIT_USER)


def reinject_messages(item: Mapping[str, Any], trace: str) -> list[ChatMessage]:
    """Arm 3, second call: a new conversation given the earlier reasoning word for word."""
    return _new_conversation(REASONED_SYSTEM, item, _REINJECT_USER.format(trace=trace))


def arrow_messages(item: Mapping[str, Any]) -> list[ChatMessage]:
    """Arm 4: a single call forced to think in arrow chains (prompt ``arrow``)."""
    return _new_conversation(_ARROW_SYSTEM, item)


def compress_messages(first: list[ChatMessage], reply: str) -> list[ChatMessage]:
    """Arm 5, second call: the model compresses its own reply into an arrow chain."""
    return _next_turn(first, reply, _COMPRESS_USER)


def chain_check_messages(item: Mapping[str, Any], chain: str) -> list[ChatMessage]:
    """Arm 5, third call: a fresh context checks the chain against documents and question."""
    return _new_conversation(_CHAIN_CHECK_SYSTEM, item, _CHAIN_CHECK_USER.format(chain=chain))
