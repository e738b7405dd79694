"""The flags that say how the runs of one task differ and when a further call is spent:
greedy first, the source of diversity, adaptive runs, leave-the-argument-out and hop-by-hop
interrogation. Defined once for ``python -m orchestrator.run`` and ``logic-graph ask``; each
one left unset takes the model's setting in models.json (docs/orchestrator.md)."""

from __future__ import annotations

import argparse

from orchestrator.records import DIVERSITY, HOPS


def add_strategy_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--greedy-first``, ``--diversity``, ``--leave-out``, ``--adaptive`` and ``--hops``."""
    parser.add_argument(
        "--greedy-first",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the first interrogation at temperature 0, the others sampled at --temp "
        "(default: the model's greedy_first in models.json, else off)",
    )
    parser.add_argument(
        "--diversity",
        choices=DIVERSITY,
        help="what makes the runs after the first differ: sampling at --temp, greedy runs "
        "that each see the documents in another order, or (worked and reasoned shapes) a "
        "greedy run in the other shape's words (default: sample, or what models.json's "
        "word_problems sets for a word problem)",
    )
    parser.add_argument(
        "--leave-out",
        action="store_true",
        help="once an answer is verified, ask once more without the sentences its argument "
        "rests on (a second argument is width 2; a flip shows the first was fragile)",
    )
    parser.add_argument(
        "--adaptive",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="start the first interrogation alone, and the other n-1 only when it gives no "
        "grounded answer (default: off, or what models.json's word_problems sets for a word "
        "problem)",
    )
    parser.add_argument(
        "--hops",
        choices=HOPS,
        help="ask hop by hop (a plan, then one greedy lookup per hop): off; on_failure of the "
        "interrogations; first, before them (they run only if the hops give no answer); "
        "only, before them and none after (no answer from the hops is a refusal); always; "
        "auto: first when the question spells out its hops ('the founder of the company that "
        "built X'), else off; auto_only: only when it spells them out, else off (default: the "
        "model's hops in models.json, else off)",
    )
