"""Named, versioned prompt templates for the control loop (design §4.2).

* ``interrogation/v3`` - read numbered documents, answer a question as an argument graph
  (JSON with ``nodes``, ``edges`` using ``from``/``to``, and ``conclusion_node``). v2 added
  the rule that ids are ``n1``, ``n2``, ... and that ``conclusion_node`` holds an id, not
  the answer: with v1 the 0.5B local model wrote the answer text there in 15 of 20
  multi-hop interrogations, and every such reply had to be dropped. v3 dropped the example
  id from that rule, because the model then copied it ("n5") whether or not it had a node n5
  (9 of 20 math interrogations).
* ``interrogation/v4`` - evidence shown as numbered sentences ([D2.3]); a given cites one in
  ``source``; a short ``answer`` beside the conclusion.
* ``interrogation/v5`` - reasons sit on the node they bear on (``because``, ``against``: ids
  of earlier nodes) instead of a separate ``edges`` list. With v4 the 1.5B local model gave
  the right answer in both runs on 5 of the first 15 multi-hop items but wired its graphs with
  ``assumes`` edges or none, so no conclusion was reachable from a cited sentence and every
  item was refused; listing "because" on the conclusion itself is the question a small model
  answers best.
* ``interrogation_chain/v1`` - the chain shape for small models: the answer plus the numbers
  of the sentences that lead to it, in order, each with at most one short inference; the
  system builds the graph (:func:`orchestrator.reply.parse.parse_chain`). A 0.5B model that cannot
  keep node ids, types and "because" lists straight can still list the sentences it used.
* ``interrogation_worked/v1`` - the worked shape (:mod:`orchestrator.checks.derivation`): the
  model works the question out in its own words, writing each calculation as an equation, and
  ends with an ``ANSWER:`` line; the system draws the argument graph from the working. A
  1.5B model's plain-text working on math word problems is right far more often than its
  JSON chains.
* ``interrogation_reasoned/v1`` - the reasoned shape: the evaluation harness's own reasoned
  prompt, one text in :mod:`orchestrator.reply.reasoned`, its reply read as a working as in
  the worked shape. Asking for each calculation as an equation cost the 1.5B a third of its
  right workings on word problems (docs/results/worked-shape.md); this prompt asks for
  nothing the baseline does not. It follows no layout: it is the baseline's text.
* ``verification/v1`` - judge one claim against the documents only:
  ``{"verdict": supported|refuted|not_determinable, "reason"}``.
* ``repair/v1`` - one follow-up turn asking for the same answer as clean JSON (design §4.3).
* ``plan/v2`` - hop-by-hop interrogation (:mod:`orchestrator.checks.hops`): the question alone,
  split into single-fact lookups in order, a later one naming an earlier one's answer as
  ``#1`` (``{"lookups": [...]}``). v1 let the 1.5B write "this company" for an earlier
  answer and stop a hop short (a town's name for "On which river lies the town ...?"): v2
  forbids the first and asks that the last lookup ask what the question asks. v2 still
  folded two hops into one lookup ("the town where the inventor of X was born"); v3 says
  that "the X of the Y of Z" is two lookups and shows one plan, for a question about
  things no item names.
* ``lookup/v1`` - one lookup of a plan against the evidence: the one sentence that answers
  it and the value it gives (``{"sentence", "answer"}``).
* ``query_rewrite/v1`` - corpus tasks only: the question rewritten as up to three keyword
  search queries, one per fact the answer chains together
  (``{"queries": [...]}``).
* ``rerank/v1`` - corpus tasks with ``rerank="llm"``: the question and a pool of numbered
  passages (each cut to :data:`RERANK_SNIPPET_CHARS`), ordered most useful first
  (``{"order": [3, 1, 2]}``).
* ``hyde/v1`` - corpus tasks with ``hyde``: the question alone, answered by a short passage
  as a reference document would state it (plain text), whose embedding searches the corpus.

Two layouts place the same texts (:data:`LAYOUTS`, ``RunConfig.prompt_layout``):

* ``classic`` - each role's instructions as the system turn, then the numbered evidence and
  the question in the user turn. Every committed reply bank was recorded this way.
* ``evidence_first`` (``evidence_first/v1``) - the system turn is one short shared preamble
  and the numbered evidence; the role's instructions, the question and the reply format
  follow in the user turn. Every call of a task that sees the same evidence (the greedy and
  sampled interrogations, the verifications, the hop lookups) then begins with the same
  tokens, and a server with a prompt cache (llama.cpp: ``usage.prompt_tokens_details.
  cached_tokens``) reads them back instead of computing them again. Runs that see the
  documents in another order (``diversity="shuffle"``) or without some sentences (leave-out)
  begin differently, by design.

The texts are short on purpose: 0.5B local models with a ~2k-token context use them too, so
every sentence has to earn its tokens. The reply shapes use capitalised slots (SENTENCE, TYPE)
rather than a filled-in example because small models copy a literal example, "..." claims
included, instead of answering. Change a template only together with its version string
in :data:`PROMPT_VERSIONS`, so reports and eval results say which wording produced them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from string import Template

from corpus.evidence import Evidence
from orchestrator.llm import ChatMessage
from orchestrator.reply.schemas import DEFAULT_MAX_NODES

LAYOUTS: tuple[str, ...] = ("classic", "evidence_first")
"""Where the evidence sits in a prompt (module docstring): ``RunConfig.prompt_layout``."""
LAYOUT_VERSIONS: dict[str, str] = {"evidence_first": "evidence_first/v1"}
"""The version of each layout other than ``classic``, reported beside the templates'."""

PROMPT_VERSIONS: dict[str, str] = {
    "interrogation": "interrogation/v5",
    "interrogation_chain": "interrogation_chain/v1",
    "interrogation_worked": "interrogation_worked/v1",
    "interrogation_reasoned": "interrogation_reasoned/v1",
    "verification": "verification/v2",
    "repair": "repair/v1",
    "query_rewrite": "query_rewrite/v1",
    "plan": "plan/v3",
    "lookup": "lookup/v1",
    "rerank": "rerank/v1",
    "hyde": "hyde/v1",
}

_SHARED_PREAMBLE = (
    "Below are numbered evidence sentences, such as [D2.3] (document 2, sentence 3). "
    "The task after them says what to do with them."
)


def prompt_versions(layout: str = "classic") -> dict[str, str]:
    """The template versions a run with ``layout`` sends, for reports and eval results:
    :data:`PROMPT_VERSIONS`, plus ``"layout"`` when it is not ``classic``."""
    check_layout(layout)
    versions = dict(PROMPT_VERSIONS)
    if layout in LAYOUT_VERSIONS:
        versions["layout"] = LAYOUT_VERSIONS[layout]
    return versions


def check_layout(layout: object) -> None:
    """Raise ValueError unless ``layout`` is one of :data:`LAYOUTS`."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout={layout!r} is invalid: must be one of {', '.join(LAYOUTS)}")


def _with_evidence(
    instructions: str, rendered: str, request: str, layout: str
) -> list[ChatMessage]:
    """The two turns of a prompt over numbered evidence: ``instructions`` (the role's rules),
    ``rendered`` (the evidence as numbered sentences) and ``request`` (the question or
    claim, and the reply format), placed as ``layout`` says."""
    check_layout(layout)
    if layout == "evidence_first":
        return [
            {"role": "system", "content": f"{_SHARED_PREAMBLE}\n\nEvidence:\n{rendered}"},
            {"role": "user", "content": f"{instructions}\n\n{request}"},
        ]
    return [
        {"role": "system", "content": instructions},
        {"role": "user", "content": f"Evidence:\n{rendered}\n\n{request}"},
    ]


_INTERROGATION_SYSTEM = Template(
    """You turn evidence into an argument graph. The evidence is a list of sentences, each \
with a number such as [D2.3] (document 2, sentence 3). Answer the question with a graph of \
short claims.

Node types:
- "given": what one evidence sentence says, in that sentence's own words. Its "source" is \
the sentence's number, e.g. "D2.3". A given says nothing its sentence does not say.
- "inference": a step that follows from earlier nodes.
- "assumption": a premise you rely on that no sentence states.
- "conclusion": your answer to the question as a full sentence. Exactly one node has this type.
Every node that is not a given has "source": "none".

Each node lists the ids of earlier nodes it rests on:
- "because": the nodes that are reasons for it (givens, inferences or assumptions). Every \
inference and the conclusion need at least one. A given has "because": [].
- "against": the nodes that are evidence against it; usually [].

Rules:
- Use the evidence and nothing else; bring in no outside knowledge.
- The question is not evidence: never copy it into a node.
- $support_rule
- When a sentence speaks against a claim, add it as a given and list it in that claim's \
"against". Honest objections are wanted.
- List the givens first, then inferences and assumptions, and the conclusion last. Use at \
most $max_nodes nodes. Each confidence is a number from 0 to 1.
- Node ids are n1, n2, n3, ... "because" and "against" name node ids, never sentence \
numbers. "conclusion_node" repeats the id of the node whose type is "conclusion".
- "answer" is the answer alone, in as few words as possible: a name, a number, yes or no. If \
the evidence does not decide the question, the answer is "unanswerable".

Reply with one JSON object and no other text. Its shape, with the capitalised words filled in:
{"nodes": [{"id": "n1", "type": TYPE, "source": SENTENCE_NUMBER_OR_none, "claim": SENTENCE, \
"because": [IDS], "against": [IDS], "confidence": NUMBER}, ...], "conclusion_node": \
CONCLUSION_ID, "answer": SHORT_ANSWER}"""
)

_CHAIN_SYSTEM = """You answer a question from numbered evidence sentences, such as [D2.3] \
(document 2, sentence 3), and show which sentences lead to the answer.

Write the steps in order. Each step names one sentence number in "sentence" and, in \
"inference", what follows once that sentence is added, in a few words ("" if nothing new \
follows yet). Use only sentences that the answer depends on, and nothing outside the evidence.

"answer" is the answer alone, as short as possible: a name, a number, yes or no. If the \
evidence does not decide the question, the answer is "unanswerable".

Reply with one JSON object and no other text. Its shape, with the capitalised words filled in:
{"steps": [{"sentence": SENTENCE_NUMBER, "inference": SHORT_INFERENCE}, ...], "answer": \
SHORT_ANSWER}"""

_WORKED_SYSTEM = """You answer a question from numbered evidence sentences, such as [D2.3] \
(document 2, sentence 3), by working it out step by step in plain words.

Write every calculation as an equation with its result, such as 20 * 30 = 600, one step to a \
line. Start only from numbers the sentences give or results you have already worked out.

End with one line: ANSWER: followed by the answer alone, as short as possible (a number, a \
name, yes or no). If the evidence does not decide the question, write ANSWER: unanswerable"""

_SUPPORT_RULE_ONE = (
    "Connect the conclusion to the givens by at least one line of reasoning. Never make up support."
)
_SUPPORT_RULE_MANY = Template(
    "Connect the conclusion to the givens, by $k separate lines of reasoning that share no "
    "step if the evidence allows. Never "
    "make up support to reach that number: one real line is worth more than several invented "
    "ones."
)

_VERIFICATION_SYSTEM = """You check one claim against numbered evidence sentences, using only \
what they say. Pick one verdict:
- "supported": the evidence states the claim or it follows directly from it.
- "refuted": the evidence says something that cannot be true together with the claim.
- "not_determinable": the evidence leaves it open; a claim about something it never mentions \
is not_determinable, not refuted.
Reply with one JSON object and no other text, with the capitalised words filled in:
{"verdict": VERDICT, "reason": SENTENCE}
where SENTENCE says what the deciding evidence sentence states, with its number (e.g. [D2.3]), \
or says that no sentence covers the claim."""

_REPAIR_USER = Template(
    "That reply could not be used: $error. Send the same answer again as one valid JSON object "
    "with no other text."
)

_THINK_USER = (
    "First think it through in plain text, with no JSON yet: which sentences matter (give "
    "their numbers), what follows from them, and what the answer is, or that the evidence does "
    "not decide it."
)
_COMMIT_USER = "Now write that reasoning as the argument graph: reply with the JSON object only."

DEFAULT_MAX_BAD_CHARS = 4000


def interrogation_messages(
    evidence: Evidence,
    question: str,
    k: int = 2,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    think_first: bool = False,
    order: Sequence[int] | None = None,
    layout: str = "classic",
) -> list[ChatMessage]:
    """Template A: system rules plus a user turn with the numbered evidence and the question
    (placed as ``layout`` says: module docstring).

    ``k`` is the number of independent lines of support to aim for (1..10); ``max_nodes``
    (2..100) should match the schema bound when structured output is used. With
    ``think_first`` the user turn asks for plain-text reasoning first; the graph is then asked
    for with :func:`commit_messages` in the same conversation.
    """
    _check_text("question", question)
    _check_evidence(evidence)
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 10:
        raise ValueError(f"k={k!r} is invalid: must be an integer in 1..10")
    if not isinstance(max_nodes, int) or isinstance(max_nodes, bool) or not 2 <= max_nodes <= 100:
        raise ValueError(f"max_nodes={max_nodes!r} is invalid: must be an integer in 2..100")
    rule = _SUPPORT_RULE_ONE if k == 1 else _SUPPORT_RULE_MANY.substitute(k=k)
    system = _INTERROGATION_SYSTEM.substitute(support_rule=rule, max_nodes=max_nodes)
    return _with_evidence(system, evidence.render(order), _ask(question, think_first), layout)


def chain_messages(
    evidence: Evidence,
    question: str,
    *,
    think_first: bool = False,
    order: Sequence[int] | None = None,
    layout: str = "classic",
) -> list[ChatMessage]:
    """The chain-shaped interrogation: the same evidence and question as
    :func:`interrogation_messages`, asking only for the sentences that lead to the answer
    (with ``think_first``, for plain-text reasoning first, as there; ``order`` and
    ``layout`` as there)."""
    _check_text("question", question)
    _check_evidence(evidence)
    return _with_evidence(
        _CHAIN_SYSTEM, evidence.render(order), _ask(question, think_first), layout
    )


def worked_messages(
    evidence: Evidence,
    question: str,
    *,
    order: Sequence[int] | None = None,
    layout: str = "classic",
) -> list[ChatMessage]:
    """The worked-shape interrogation: the same evidence and question as
    :func:`chain_messages`, answered in plain text with each calculation written as an
    equation and a final ``ANSWER:`` line (``order`` and ``layout`` as there)."""
    _check_text("question", question)
    _check_evidence(evidence)
    ask = f"Question: {' '.join(question.split())}\n\nWork it out, then end with the ANSWER line."
    return _with_evidence(_WORKED_SYSTEM, evidence.render(order), ask, layout)


def _ask(question: str, think_first: bool) -> str:
    """The question of an interrogation and what to reply with."""
    reply = _THINK_USER if think_first else "Reply with the JSON object only."
    return f"Question: {' '.join(question.split())}\n\n{reply}"


def commit_messages(messages: list[ChatMessage], reasoning: str) -> list[ChatMessage]:
    """The second turn of a think-first interrogation: the model's own reasoning, then the
    request for the graph. The input list is not modified."""
    if not isinstance(messages, list) or not messages:
        raise ValueError(f"messages must be a non-empty list, got {_describe(messages)}")
    _check_text("reasoning", reasoning)
    return [
        *messages,
        {"role": "assistant", "content": reasoning[:DEFAULT_MAX_BAD_CHARS]},
        {"role": "user", "content": _COMMIT_USER},
    ]


def verification_messages(
    evidence: Evidence, claim: str, *, layout: str = "classic"
) -> list[ChatMessage]:
    """Template B: a fresh-context check of one claim against the evidence (no graph), placed
    as ``layout`` says."""
    _check_text("claim", claim)
    _check_evidence(evidence)
    request = (
        f"Claim: {json.dumps(' '.join(claim.split()), ensure_ascii=False)}\n\n"
        "Reply with the JSON object only."
    )
    return _with_evidence(_VERIFICATION_SYSTEM, evidence.render(), request, layout)


_QUERY_REWRITE_SYSTEM = """You write search queries for a keyword search over a folder of \
documents. Given a question, write at most three short queries (a few keywords each) that \
together find every passage needed to answer it. When the answer needs several facts chained \
together, write one query per fact; when a later fact depends on an earlier answer you do not \
know yet, search for the earlier fact. Reply with one JSON object and no other text:
{"queries": [QUERY, QUERY]}"""


def query_rewrite_messages(question: str) -> list[ChatMessage]:
    """Template D: the question alone, to be rewritten into search queries."""
    return _question_alone(_QUERY_REWRITE_SYSTEM, question)


RERANK_SNIPPET_CHARS = 300
"""Each passage of a rerank prompt is cut to this many characters: 16 passages stay near
1,500 tokens, inside a small model's window."""

_RERANK_SYSTEM = """You sort passages by how useful each is for answering a question. Each \
passage has a number such as [3]. Put first the passages that state a fact the answer needs, \
including a fact about something another passage leads to; put last the passages about other \
things. List every passage number exactly once. Reply with one JSON object and no other text:
{"order": [NUMBER, NUMBER]}"""

_HYDE_SYSTEM = """You write the passage of a reference document that answers a question. \
Write two or three plain sentences stating the facts as such a document would, with names, \
places and dates; where you do not know them, write likely ones. No preamble, no JSON."""


def rerank_messages(question: str, passages: Sequence[str]) -> list[ChatMessage]:
    """The question and the numbered passages of a pool (``[1]`` is ``passages[0]``), each
    whitespace-collapsed and cut to :data:`RERANK_SNIPPET_CHARS`."""
    _check_text("question", question)
    if isinstance(passages, str) or not passages:
        raise ValueError(f"passages must be a non-empty list of strings, got {_describe(passages)}")
    lines = []
    for number, passage in enumerate(passages, 1):
        _check_text(f"passages[{number - 1}]", passage)
        lines.append(f"[{number}] {' '.join(passage.split())[:RERANK_SNIPPET_CHARS]}")
    user = (
        f"Question: {' '.join(question.split())}\n\nPassages:\n"
        + "\n".join(lines)
        + f"\n\nReply with the JSON object only, all {len(passages)} numbers."
    )
    return [{"role": "system", "content": _RERANK_SYSTEM}, {"role": "user", "content": user}]


def hyde_messages(question: str) -> list[ChatMessage]:
    """The question alone, to be answered by a hypothetical passage (HyDE)."""
    return _question_alone(_HYDE_SYSTEM, question)


_PLAN_SYSTEM = """You split a question into the single-fact lookups that answer it, in order. \
Each lookup asks one fact about one named thing: a question that says "the X of the Y of Z" \
is two lookups, first the Y of Z, then the X of #1. When a lookup needs the answer of an \
earlier lookup, write #1 for the answer of the first lookup, #2 for the second, and so on; \
never write "it", "this" or "that" for an earlier answer. The last lookup asks for exactly \
what the question asks. For a question that compares two things, look up the compared fact of \
each. Reply with one JSON object and no other text.

For example, "In which country was the author of the novel that won the Veldt Prize born?" \
becomes {"lookups": ["Which novel won the Veldt Prize?", "Who wrote #1?", "In which country \
was #2 born?"]}"""

_LOOKUP_SYSTEM = """You answer one short question from numbered evidence sentences, such as \
[D2.3] (document 2, sentence 3). Find the one sentence that answers it and give the answer \
that sentence states, as short as possible: a name, a number, yes or no. If no sentence \
answers it, the sentence is "none". Reply with one JSON object and no other text:
{"sentence": SENTENCE_NUMBER, "answer": SHORT_ANSWER}"""


def plan_messages(question: str) -> list[ChatMessage]:
    """The hop plan: the question alone, to be split into lookups (no evidence: the plan
    is about what the question asks, and the evidence would only lengthen the call)."""
    return _question_alone(_PLAN_SYSTEM, question)


def lookup_messages(
    evidence: Evidence, lookup: str, *, layout: str = "classic"
) -> list[ChatMessage]:
    """One hop: the numbered evidence, then one lookup of the plan, earlier answers filled
    in (placed as ``layout`` says)."""
    _check_text("lookup", lookup)
    _check_evidence(evidence)
    request = f"Question: {' '.join(lookup.split())}\n\nReply with the JSON object only."
    return _with_evidence(_LOOKUP_SYSTEM, evidence.render(), request, layout)


def repair_messages(
    messages: list[ChatMessage],
    bad_text: str,
    error: str,
    *,
    max_bad_chars: int = DEFAULT_MAX_BAD_CHARS,
) -> list[ChatMessage]:
    """The original conversation, the unusable reply, and a turn naming what was wrong.

    ``bad_text`` is cut to its first ``max_bad_chars`` characters so that a runaway reply
    cannot overflow a small model's context. The input list is not modified.
    """
    if not isinstance(messages, list) or not messages:
        raise ValueError(f"messages must be a non-empty list, got {_describe(messages)}")
    if not isinstance(bad_text, str):
        raise ValueError(f"bad_text must be a string, got {_describe(bad_text)}")
    _check_text("error", error)
    follow_up = _REPAIR_USER.substitute(error=" ".join(error.split()))
    return [
        *messages,
        {"role": "assistant", "content": bad_text[:max_bad_chars]},
        {"role": "user", "content": follow_up},
    ]


def _question_alone(instructions: str, question: str) -> list[ChatMessage]:
    """A prompt of a role's ``instructions`` and the question alone, whitespace collapsed."""
    _check_text("question", question)
    return [
        {"role": "system", "content": instructions},
        {"role": "user", "content": f"Question: {' '.join(question.split())}"},
    ]


def _check_evidence(evidence: object) -> None:
    if not isinstance(evidence, Evidence):
        raise ValueError(f"evidence must be an Evidence, got {_describe(evidence)}")


def _check_text(field: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{field} must be a non-empty string, got {_describe(value)}")


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
