"""Fitting the evidence into the model's context window.

A llama.cpp slot or a vLLM server rejects a request whose prompt plus ``max_tokens`` is
longer than its context window (HTTP 400), so evidence that does not fit costs every call of
a round. This module estimates prompt sizes and packs documents so that the interrogation
prompt (system rules, numbered evidence, question) plus its reply fits:

- sizes come from the one token estimate, :mod:`orchestrator.llm.tokens` (deliberately
  pessimistic, so an estimate that fits leaves the real prompt room to spare).
- :func:`pack`: documents taken in priority order, each kept while the window still holds
  it, every other one left out with the reason; the interrogation reply gets what is left,
  at most its configured ``max_tokens`` and at least :data:`MIN_REPLY_TOKENS` of it.
- :func:`fit_documents`: the same for a task's own documents, all or nothing: inline
  documents are the user's evidence, so instead of silently dropping some the run is refused
  before any call when they do not fit.

Verification prompts carry the same evidence with a shorter system text and a smaller reply,
so a fitting interrogation implies a fitting verification. A repair turn (the bad reply sent
back) can still overflow a tight window; it then fails like any other call.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from corpus.evidence import build_evidence
from orchestrator.llm import DEFAULT_MAX_TOKENS, estimate_tokens, prompt_tokens
from orchestrator.records import ContextRecord, RunConfig, TaskError
from orchestrator.reply import WORKING_SHAPES, prompts, reasoned_messages

log = logging.getLogger(__name__)

MIN_REPLY_TOKENS = 1024
"""The least an interrogation reply is given when the window is tight: a bounded graph of
eight nodes and ten edges takes about 600 tokens of JSON."""


@dataclass(frozen=True)
class Fit:
    """The outcome of :func:`pack`.

    ``kept`` are indices into the documents, in their original order (so the prompt numbers
    them as before); ``left_out`` pairs each other index with why it was left out.
    ``prompt_tokens`` estimates the interrogation prompt of the kept documents and
    ``reply_tokens`` is the ``max_tokens`` that still fits beside it.
    """

    kept: tuple[int, ...]
    left_out: tuple[tuple[int, str], ...]
    context_tokens: int
    prompt_tokens: int
    reply_tokens: int

    def config_for(self, config: RunConfig) -> RunConfig:
        """``config`` with the interrogation reply capped at what fits."""
        if config.max_tokens_interrogation == self.reply_tokens:
            return config
        return replace(config, max_tokens_interrogation=self.reply_tokens)

    def to_dict(self) -> ContextRecord:
        """The window's figures for a report (the documents are reported by the caller)."""
        return {
            "context_tokens": self.context_tokens,
            "prompt_tokens_estimate": self.prompt_tokens,
            "max_tokens_interrogation": self.reply_tokens,
        }


def base_tokens(question: str, config: RunConfig) -> int:
    """Estimated tokens of an interrogation without evidence: system rules, question, the
    think-first turn when there is one (its reply travels in the second call's prompt)."""
    if config.diversity == "reword":
        # A reworded run is asked in the other working shape's words: room for the longer.
        return max(
            base_tokens(question, replace(config, interrogation_shape=shape, diversity="sample"))
            for shape in WORKING_SHAPES
        )
    empty = build_evidence(())
    if config.interrogation_shape == "worked":
        messages = prompts.worked_messages(empty, question, layout=config.prompt_layout)
    elif config.interrogation_shape == "reasoned":
        messages = reasoned_messages(question)
    elif config.interrogation_shape == "chain":
        messages = prompts.chain_messages(
            empty, question, think_first=config.think_first, layout=config.prompt_layout
        )
    else:
        messages = prompts.interrogation_messages(
            empty,
            question,
            config.k,
            max_nodes=config.max_nodes,
            think_first=config.think_first,
            layout=config.prompt_layout,
        )
    if config.think_first:
        messages = prompts.commit_messages(messages, "-")
        return prompt_tokens(messages) + (config.max_tokens_think or DEFAULT_MAX_TOKENS)
    return prompt_tokens(messages)


def document_tokens(document: str, heading: str = "") -> int:
    """Estimated tokens a document adds to the evidence block: its numbered sentences (and
    the line naming its ``heading``, when it has one), plus one token per sentence for a
    longer ``[D12.3]`` label and one for the blank line between documents, so the sum over
    documents never falls below the rendered whole."""
    evidence = build_evidence((document,), (heading,))
    return estimate_tokens(evidence.render()) + len(evidence.spans) + 1


def evidence_room(question: str, config: RunConfig, context_tokens: int) -> tuple[int, int]:
    """``(room, base)``: the tokens a window of ``context_tokens`` leaves for evidence once
    the prompt without evidence (``base``) and the least reply are counted. Raises
    :class:`TaskError` when nothing is left."""
    floor = min(_reply_cap(config), MIN_REPLY_TOKENS)
    base = base_tokens(question, config)
    room = context_tokens - base - floor
    if room <= 0:
        raise TaskError(
            f"context_tokens={context_tokens} is too small: the instructions and question "
            f"alone take about {base} tokens and the reply needs at least {floor}; give the "
            "model's real window (--context-tokens) or use a model with a larger one"
        )
    return room, base


def pack(
    documents: Sequence[str],
    priority: Sequence[int],
    question: str,
    config: RunConfig,
    context_tokens: int,
    headings: Sequence[str] = (),
) -> Fit:
    """Keep documents in ``priority`` order (indices into ``documents``, best first) while
    the estimated interrogation prompt plus a reply of at least ``min(max_tokens,
    MIN_REPLY_TOKENS)`` fits ``context_tokens``; a document that does not fit is left out,
    and later, smaller ones still get their chance. Indices missing from ``priority`` are
    left out as not ranked. ``headings``: what each document stands under (retrieved chunks,
    :attr:`corpus.CorpusEvidence.headings`), counted with it; ``()``: none. Deterministic.
    Raises :class:`TaskError` as :func:`evidence_room`. Cost: O(total size of the
    documents)."""
    room, base = evidence_room(question, config, context_tokens)
    left = room
    kept: set[int] = set()
    left_out: dict[int, str] = {}
    for index in priority:
        if index in kept or index in left_out:
            continue
        cost = document_tokens(documents[index], headings[index] if headings else "")
        if cost <= left:
            kept.add(index)
            left -= cost
        elif cost > room:
            left_out[index] = f"about {cost} tokens, more than the window's {room} for evidence"
        else:
            left_out[index] = (
                f"about {cost} tokens; {left} left in the window after better-ranked evidence"
            )
    for index in set(range(len(documents))) - kept - set(left_out):
        left_out[index] = "not ranked"
    prompt = base + room - left
    return Fit(
        kept=tuple(sorted(kept)),
        left_out=tuple(sorted(left_out.items())),
        context_tokens=context_tokens,
        prompt_tokens=prompt,
        reply_tokens=min(_reply_cap(config), context_tokens - prompt),
    )


def fit_documents(question: str, documents: Sequence[str], config: RunConfig) -> RunConfig:
    """The run settings for a task's own documents under ``config.context_tokens``: the
    interrogation reply capped so the request fits. Raises :class:`TaskError` (before any
    call) when the documents do not all fit; ``config`` unchanged when the window is
    unknown."""
    window = config.context_tokens
    if window is None or not documents:
        return config
    fit = pack(documents, range(len(documents)), question, config, window)
    if fit.left_out:
        need = sum(document_tokens(d) for d in documents)
        room, _ = evidence_room(question, config, window)
        raise TaskError(
            f"task field 'documents' needs about {need} tokens of prompt but the model's "
            f"context window (context_tokens={window}) leaves about {room} for evidence; "
            "shorten the documents, use a model with a larger window, or ingest them as a "
            "corpus (docs/corpus.md), whose retrieval rounds pack the best chunks to fit"
        )
    return fit.config_for(config)


def _reply_cap(config: RunConfig) -> int:
    """The interrogation's ``max_tokens`` as sent (the client's default when unset)."""
    return config.max_tokens_interrogation or DEFAULT_MAX_TOKENS
