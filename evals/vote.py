"""Plurality vote over sampled answers: the decision rule of self-consistency (arm 7).

Answers are grouped by `orchestrator.reply.answers.answer_key`, arm 6's clustering rule,
so the two arms can only differ in how they reach an answer, never in what counts as the same
answer. A sample that declines ("unknown", "cannot be determined" ...) votes for
`~orchestrator.reply.answers.UNANSWERABLE`; a sample with no readable answer does not vote.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from orchestrator.reply import UNANSWERABLE, answer_key, preferred_spelling

# Outcomes of a vote.
MAJORITY = "majority"  # one answer has more votes than any other
ABSTAIN = "abstain"  # the most voted "answer" is a refusal
TIE = "tie"  # two or more answers share the top count: not answered
NO_VOTES = "no_votes"  # no sample gave a readable answer


@dataclass(frozen=True)
class VoteResult:
    """What a vote decided.

    ``answer`` is the winning answer as the samples spelled it most often (None unless the
    outcome is `MAJORITY`); ``key`` its normalised form; ``counts`` votes per key, sorted by
    key; ``voters`` samples that voted; ``share`` the winner's votes over all samples (None
    without a winner), which serves as the arm's confidence.
    """

    outcome: str
    answer: str | None
    key: str | None
    counts: dict[str, int]
    voters: int
    share: float | None


def majority_vote(answers: Sequence[str | None], category: Collection[str] = ()) -> VoteResult:
    """Plurality vote over `answers` (one entry per sample; None: the sample gave no answer);
    ``category`` is the question's `~orchestrator.reply.answers.asked_category`, as arm 6 uses it.

    A tie at the top is reported as `TIE`, never broken by order or chance. O(n log n).
    """
    keys = [answer_key(a, category) if a is not None else "" for a in answers]
    counts = Counter(key for key in keys if key)
    ordered = dict(sorted(counts.items()))
    if not counts:
        return VoteResult(NO_VOTES, None, None, ordered, 0, None)
    top = max(counts.values())
    leaders = sorted(key for key, n in counts.items() if n == top)
    voters = sum(counts.values())
    if len(leaders) > 1:
        return VoteResult(TIE, None, None, ordered, voters, None)
    winner = leaders[0]
    share = top / len(answers)
    if winner == UNANSWERABLE:
        return VoteResult(ABSTAIN, None, winner, ordered, voters, share)
    spellings = [a for a, k in zip(answers, keys, strict=True) if k == winner and a]
    return VoteResult(MAJORITY, preferred_spelling(spellings), winner, ordered, voters, share)
