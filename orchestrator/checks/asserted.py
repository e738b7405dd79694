"""What a sentence asserts, read lexically: the facts a claim states as its own.

A compound answer ("X is a knight, and Y is a knave") is grounded clause by clause, and a
clause counts only when a claim asserts it, not when it stands in a quotation or a report of
what someone said (:func:`asserted_parts`). The answer check
(:func:`orchestrator.checks.follows.clauses_follow`) and anchoring
(:mod:`orchestrator.checks.anchor`) read claims this way.

All functions are pure and deterministic.
"""

from __future__ import annotations

import re

from orchestrator.reply import normalise_text

_QUOTATION = re.compile(r'"[^"]*"|“[^”]*”|‘[^’]*’|(?<!\w)\'[^\']*\'(?!\w)')
_STRAY_QUOTE = re.compile(r'["“”‘]')
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_REPORTS = re.compile(
    r"\b(?:sa(?:y|ys|id|ying)|stat(?:e|es|ed|ing|ement|ements)|claim\w*|t(?:ell|ells|old|elling)"
    r"|assert\w*|declar\w*|not(?:e|es|ed|ing)|remark\w*|mention\w*|comment\w*|express\w*"
    r"|put it|according|words?|repl(?:y|ies|ied)|insist\w*|argu\w*|explain\w*|exclaim\w*"
    r"|suggest\w*|think\w*|thought|believ\w*|wr(?:ote|ites?|itten))\b",
    re.IGNORECASE,
)
"""Words that make a sentence report what someone says or thinks."""
_SUPPOSES = re.compile(
    r"\b(?:if|unless|whether|suppos\w*|assum\w*|or|either|neither|nor|not|never|no|cannot"
    r"|\w+n['’]t|false that|untrue that)\b",
    re.IGNORECASE,
)
"""Words that make a sentence suppose, offer alternatives or deny."""
_PARTS = re.compile(r"[;,]|\b(?:and|but|so|because|since|therefore|thus|hence)\b", re.IGNORECASE)
"""Where a sentence joins the facts it asserts."""


def asserted_parts(text: str) -> list[str]:
    """The facts ``text`` asserts, each folded as an answer is (:func:`orchestrator.reply.answers.
    normalise_text`): its sentences with every quotation cut out (an unclosed one runs to the
    end of its sentence), split at commas, semicolons and joining words (and, but, so,
    because, since, therefore, thus, hence). A sentence that reports what someone says or
    thinks (said, claimed, told, according to, in X's words ...), supposes (if, unless,
    assume), offers alternatives (or, either) or denies (not, never, n't) asserts nothing.
    "Aiden is a sinner, and Logan is a saint" -> ``["aiden is sinner", "logan is saint"]``;
    'Aiden asserted: "Logan is a saint"' -> ``[]``. A lexical reading, deliberately strict: a
    fact it misses only leaves an answer ungrounded. O(len(text))."""
    found: list[str] = []
    for sentence in _SENTENCE_END.split(_QUOTATION.sub(" ", text)):
        sentence = _STRAY_QUOTE.split(sentence)[0]
        if _REPORTS.search(sentence) or _SUPPOSES.search(sentence):
            continue
        found += [normalise_text(part) for part in _PARTS.split(sentence)]
    return [part for part in found if part]
