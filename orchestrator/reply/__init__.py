"""What a model is asked, and how its reply is read.

- :mod:`.prompts`: the named, versioned prompt templates;
- :mod:`.schemas`: the bounded JSON schemas sent as ``response_format``;
- :mod:`.graph_record`: the normalised graph a reply describes, typed once;
- :mod:`.parse`: replies turned into validated graphs, chains, plans and verdicts, never a crash;
- :mod:`.fields`, :mod:`.top`: lenient readers of a reply's fields;
- :mod:`.graph_shape`, :mod:`.chain_shape`, :mod:`.hop_shape`, :mod:`.verdict_shape`: one
  module per reply shape;
- :mod:`.answers`: short answers normalised so agreeing runs land in one cluster;
- :mod:`.final_answer`: the answer line of a reply written in plain text;
- :mod:`.reasoned`: the plain-text reasoned prompt, one text for the harness's baselines and
  the reasoned shape;
- :mod:`.compliance`: per-model counts of how replies parsed.

Other rooms take what they use from here by name, except the two catalogues: ``prompts`` and
``schemas`` come whole, so a call reads ``prompts.chain_messages`` beside
``schemas.chain_response_format``.
"""

from orchestrator.reply import prompts, schemas
from orchestrator.reply.answers import (
    ANSWER_SHORT,
    NO,
    UNANSWERABLE,
    YES,
    answer_clauses,
    answer_key,
    asked_category,
    clause_sides,
    is_entity,
    normalise_text,
    preferred_spelling,
    shorten_answer,
)
from orchestrator.reply.chain_shape import normalise_chain
from orchestrator.reply.compliance import OUTCOMES, ComplianceTally
from orchestrator.reply.fields import CONCLUSION_DECLARED, DEFAULT_CONFIDENCE
from orchestrator.reply.final_answer import ParsedAnswer, normalize_answer, parse_answer
from orchestrator.reply.graph_record import GraphBuilder, ReplyEdge, ReplyGraph, ReplyNode
from orchestrator.reply.parse import (
    GUESSED_CONCLUSIONS,
    GraphParse,
    Repair,
    extract_json_text,
    parse_chain,
    parse_graph,
    parse_lookup,
    parse_order,
    parse_plan,
    parse_verdict,
)
from orchestrator.reply.prompts import LAYOUTS
from orchestrator.reply.reasoned import (
    ANSWER_RULE,
    REASONED_SYSTEM,
    fresh_conversation,
    question_block,
    reasoned_messages,
)
from orchestrator.reply.schemas import (
    DEFAULT_MAX_EDGES,
    DEFAULT_MAX_NODES,
    SHAPES,
    WORKING_SHAPES,
)

__all__ = [
    "ANSWER_RULE",
    "ANSWER_SHORT",
    "CONCLUSION_DECLARED",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_MAX_EDGES",
    "DEFAULT_MAX_NODES",
    "GUESSED_CONCLUSIONS",
    "LAYOUTS",
    "NO",
    "OUTCOMES",
    "REASONED_SYSTEM",
    "SHAPES",
    "UNANSWERABLE",
    "WORKING_SHAPES",
    "YES",
    "ComplianceTally",
    "GraphBuilder",
    "GraphParse",
    "ParsedAnswer",
    "Repair",
    "ReplyEdge",
    "ReplyGraph",
    "ReplyNode",
    "answer_clauses",
    "answer_key",
    "asked_category",
    "clause_sides",
    "extract_json_text",
    "fresh_conversation",
    "is_entity",
    "normalise_chain",
    "normalise_text",
    "normalize_answer",
    "parse_answer",
    "parse_chain",
    "parse_graph",
    "parse_lookup",
    "parse_order",
    "parse_plan",
    "parse_verdict",
    "preferred_spelling",
    "prompts",
    "question_block",
    "reasoned_messages",
    "schemas",
    "shorten_answer",
]
