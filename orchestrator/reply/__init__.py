"""What a model is asked, and how its reply is read.

- :mod:`.prompts`: the named, versioned prompt templates;
- :mod:`.schemas`: the bounded JSON schemas sent as ``response_format``;
- :mod:`.graph_record`: the normalised graph a reply describes, typed once;
- :mod:`.parse`: replies turned into validated graphs, chains, plans and verdicts, never a crash;
- :mod:`.fields`, :mod:`.top`: lenient readers of a reply's fields;
- :mod:`.graph_shape`, :mod:`.chain_shape`, :mod:`.hop_shape`, :mod:`.verdict_shape`: one
  module per reply shape;
- :mod:`.answers`: short answers normalised so agreeing runs land in one cluster;
- :mod:`.compliance`: per-model counts of how replies parsed.
"""

from orchestrator.reply.answers import (
    NO,
    UNANSWERABLE,
    YES,
    answer_key,
    asked_category,
    normalise_text,
    preferred_spelling,
)
from orchestrator.reply.chain_shape import normalise_chain
from orchestrator.reply.graph_record import ReplyEdge, ReplyGraph, ReplyNode
from orchestrator.reply.parse import GUESSED_CONCLUSIONS
from orchestrator.reply.prompts import LAYOUTS
from orchestrator.reply.schemas import SHAPES

__all__ = [
    "GUESSED_CONCLUSIONS",
    "LAYOUTS",
    "NO",
    "SHAPES",
    "UNANSWERABLE",
    "YES",
    "ReplyEdge",
    "ReplyGraph",
    "ReplyNode",
    "answer_key",
    "asked_category",
    "normalise_chain",
    "normalise_text",
    "preferred_spelling",
]
