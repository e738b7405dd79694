"""The reasoned prompt: reason step by step in plain words, then end with an ``ANSWER:`` line.

Two callers send it, from this one definition, so that they send the same text:

* the evaluation harness's baselines (``evals.prompts``: the first call of arms 2, 3 and 5,
  and every sample of arm 7, self-consistency), as its prompt ``reasoned`` version 1;
* the loop's ``reasoned`` interrogation shape (``interrogation_reasoned/v1`` in
  :data:`orchestrator.reply.prompts.PROMPT_VERSIONS`), which reads the reply as a working
  (:func:`orchestrator.checks.parse_worked`) and draws its argument graph from it.

Because the texts are one, at temperature 0 the reasoned shape's first run and one greedy
reasoned answer read the same reply, and at the same calls the shape's runs and
self-consistency read the same samples: what differs is only how the replies are judged, by
the graph checks or by a vote (docs/results/reasoned-shape.md).

Documents are shown whole, numbered ``[1]``, ``[2]`` ..., without sentence ids: the model
cites nothing, the system finds the sentence that states each number it starts from. A word
problem has no documents; its statement is shown once, as the question.
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.llm import ChatMessage

ANSWER_RULE = (
    "Finish with one last line of the form\n"
    "ANSWER: <answer>\n"
    "For a calculation, give only the number (no units). For a question about the documents, "
    "give the shortest phrase that answers it, such as a name, a place or a year. If the "
    "information given is not enough to decide, write ANSWER: unknown"
)
"""The output rule every plain-text prompt ends with, so that answers parse one way
(:func:`orchestrator.reply.parse_answer`)."""

REASONED_SYSTEM = (
    "You answer questions by reasoning step by step. Use only the documents supplied with the "
    "question, never outside knowledge. Write out your reasoning, then state the result.\n"
    + ANSWER_RULE
)


def question_block(question: str, documents: Sequence[str] = ()) -> str:
    """The documents, numbered, and the question, as one user turn's text.

    Parameters
    ----------
    question : str
        The question, shown as given.
    documents : sequence of str
        The documents' texts in the order shown; none for a word problem.

    Returns
    -------
    str

    Examples
    --------
    >>> print(question_block("Who built it?", ["Ann built the mill."]))
    Documents:
    [1] Ann built the mill.
    <BLANKLINE>
    Question: Who built it?
    >>> question_block("What is 2 + 3?")
    'Question: What is 2 + 3?'
    """
    if not documents:
        return f"Question: {question}"
    numbered = "\n".join(f"[{i}] {text}" for i, text in enumerate(documents, start=1))
    return f"Documents:\n{numbered}\n\nQuestion: {question}"


def fresh_conversation(
    system: str, question: str, documents: Sequence[str] = (), *, after: str | None = None
) -> list[ChatMessage]:
    """A call in a fresh context: ``system``, then the documents and the question
    (:func:`question_block`), with ``after`` as a paragraph of its own below them."""
    text = question_block(question, documents)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": text if after is None else f"{text}\n\n{after}"},
    ]


def reasoned_messages(question: str, documents: Sequence[str] = ()) -> list[ChatMessage]:
    """The reasoned prompt (:data:`REASONED_SYSTEM`) for ``question`` and ``documents``, in a
    fresh context.

    Examples
    --------
    >>> [m["role"] for m in reasoned_messages("What is 2 + 3?")]
    ['system', 'user']
    """
    return fresh_conversation(REASONED_SYSTEM, question, documents)
