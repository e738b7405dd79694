"""The inputs of one orchestrator run: the task (question + documents) and the run settings.

Both are validated up front so a bad file or flag fails before any model call, with an error
that names the field, the value and the rule broken (:class:`TaskError`, a ``ValueError``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from orchestrator.llm import MAX_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS
from orchestrator.reply import (
    DEFAULT_MAX_EDGES,
    DEFAULT_MAX_NODES,
    LAYOUTS,
    SHAPES,
    WORKING_SHAPES,
)

DIVERSITY: tuple[str, ...] = ("sample", "shuffle", "reword")
"""``RunConfig.diversity``: what makes the runs after the first differ."""
HOPS: tuple[str, ...] = ("off", "on_failure", "first", "only", "always", "auto", "auto_only")
"""``RunConfig.hops``: never ask hop by hop, only when the interrogations give no grounded
answer, first (the interrogations only when the hops give no grounded answer), only (first,
and no interrogation after them), always, auto (first when the question spells out its own
hops, else off) or auto_only (only when it does, else off)
(:mod:`orchestrator.loop.stages.hops`)."""
HOPS_BEFORE_INTERROGATION: tuple[str, ...] = ("first", "only")
"""The hop settings in force (:func:`orchestrator.checks.hops_in_force`) that ask the hops before
any interrogation."""

RERANK: tuple[str, ...] = ("off", "llm", "cross-encoder")
"""``RunConfig.rerank``: no reranking, the LLM reranker (one call per pool), or the
cross-encoder at ``reranker_path`` (:mod:`corpus.rerank`)."""

MAX_DOCUMENTS = 200
MAX_TASK_CHARS = 1_000_000
"""Question plus documents; far beyond any context window, so only absurd inputs hit it."""
MAX_N = 64
MAX_BUDGET_CALLS = 10_000
MAX_RETRIEVAL_ROUNDS = 5
MAX_RETRIEVAL_K = 50


class TaskError(ValueError):
    """A task or run setting is invalid; the message names the field, value and rule."""


@dataclass(frozen=True)
class Task:
    """A question to answer from ``documents`` only; ``expected_answer`` is for evals.

    A corpus task names an ingested index in ``corpus`` instead (``documents`` is then
    empty): :mod:`orchestrator.loop.corpus_mode` retrieves its documents from that index and
    runs the loop on a task of them whose ``headings`` say what each chunk stands under
    (:attr:`corpus.CorpusEvidence.headings`). A task's own documents have none (``()``), and
    :meth:`to_dict` leaves them out: they come from the index, never from a task file.
    """

    question: str
    documents: tuple[str, ...]
    expected_answer: str | None = None
    corpus: str | None = None
    headings: tuple[str, ...] = ()

    @property
    def is_word_problem(self) -> bool:
        """Whether the task's one document is its own question: a word problem, whose
        statement is the only evidence there is (``evals`` hands such items over this way)."""
        return self.documents == (self.question,)

    @property
    def is_numeric_word_problem(self) -> bool:
        """Whether the task is a word problem (:attr:`is_word_problem`) whose statement writes
        a number in digits: the questions a model's ``word_problems`` settings in models.json
        are for (:func:`orchestrator.api.model_defaults`)."""
        return self.is_word_problem and re.search(r"[0-9]", self.question) is not None

    def to_dict(self) -> dict[str, Any]:
        """The task as JSON-ready data (the shape :func:`validate_task` accepts)."""
        data: dict[str, Any] = {"question": self.question}
        if self.corpus is not None:
            data["corpus"] = self.corpus
        else:
            data["documents"] = list(self.documents)
        data["expected_answer"] = self.expected_answer
        return data


@dataclass(frozen=True)
class RunConfig:
    """Settings of one run (design §4.1); validated on construction.

    ``n`` interrogations (1..64) aiming at ``k`` disjoint lines of support (1..10); at most
    ``budget_calls`` logical calls in all (1..10000: interrogations, repairs, verifications);
    ``temperature`` (0..2) for every call; ``seed`` (None = unseeded) from which each call's
    seed is derived; ``m_verify`` fresh verification calls per disputed claim (1..15, odd so a
    majority always exists); at most ``max_per_round`` claims per round (1..20);
    ``structured_output`` sends a bounded JSON schema as ``response_format``; ``max_nodes`` /
    ``max_edges`` bound the graph a model is asked for; ``max_tokens_*`` cap each reply;
    ``think_first`` makes each interrogation two calls in one conversation, plain-text
    reasoning and then the graph. ``require_k`` refuses an answer whose width is below ``k``
    instead of giving it with a weak-support caveat. ``interrogation_shape`` is ``graph`` (the
    full argument graph), ``chain`` (the answer and the sentences leading to it, for small
    models; :func:`orchestrator.reply.parse.parse_chain`) or ``worked`` (plain-text working
    whose graph the system draws: :mod:`orchestrator.checks.derivation`) or ``reasoned``
    (the baselines' reasoned prompt, its reply read as the worked shape reads one; neither
    with ``think_first``). For a corpus task: ``retrieval_k`` chunks
    per retrieval (1..50) and at most ``max_retrieval_rounds`` retrievals (1..5), the first from the
    question and its rewrites, each later one from what the previous round lacked.
    ``greedy_first`` makes the first interrogation run (``r1``: its reasoning, graph and
    repair calls) greedy, at temperature 0, and the others sampled at ``temperature``: small
    models lose much of their accuracy when sampled, and one greedy run keeps their best guess
    in the set while the sampled runs still bring independent arguments.
    ``hops`` asks the question hop by hop (:mod:`orchestrator.checks.hops`): ``off``, ``on_failure``
    (when the interrogations give no grounded answer), ``first`` (before the interrogations,
    which are then asked only when the hops give no grounded answer), ``only`` (before them, and
    no interrogation after hops that give no grounded answer: the run refuses), ``always``,
    ``auto`` (``first`` when the question's grammar unwinds into lookups,
    :func:`orchestrator.checks.decompose.decompose`, else ``off``) or ``auto_only`` (``only``
    when it unwinds, else ``off``); the plan and each lookup are one greedy call each, from
    the same budget.
    ``diversity`` is what makes the runs after the first differ: ``sample`` (at
    ``temperature``), ``shuffle`` (greedy, each seeing the documents in its own order, span
    ids kept: small models lose accuracy when sampled) or ``reword`` (the working shapes only,
    and ``n`` at most 2: run 2 is greedy and asked in the other working shape's words, so
    that ``reasoned`` is followed by ``worked`` and ``worked`` by ``reasoned``).
    ``leave_out`` asks once more, greedy, once an answer is verified, without the sentences
    its arguments rest on: a second verified argument is width 2 by construction.
    ``adaptive`` starts the first interrogation alone and the other ``n - 1`` only when it gives
    no grounded answer: extra calls are spent where the first chain failed, and a verified first
    answer is never put at risk by sampled runs.
    ``prompt_layout`` places the evidence in every prompt over it: ``classic`` (after each
    role's instructions) or ``evidence_first`` (first, after one shared preamble, so that a
    server's prompt cache serves it to every call of the task; :mod:`orchestrator.reply.prompts`).
    ``context_tokens`` is the model's context window per request (256..10,000,000; None =
    unknown): evidence is packed to fit it (:mod:`orchestrator.loop.context_window`).
    Corpus retrieval stages (docs/corpus.md, "Retrieval"): ``dense`` fuses the dense rankings
    of an index that holds vectors with the keyword ones (off by default: keyword alone
    retrieved as well or better where measured, docs/corpus.md); ``subquestions`` retrieves a
    question that has a grammar plan (:func:`orchestrator.checks.decompose.decompose`) hop by
    hop (:func:`corpus.multihop.retrieve_plan`); ``entity_weight`` (0..100, 0 = off) fuses the
    entity-graph ranking in; ``rerank`` reorders each round's pool before the top
    ``retrieval_k`` are kept (``off``, ``llm``: one call per round, or ``cross-encoder``: the
    model in the folder ``reranker_path``); ``hyde`` asks for a hypothetical answer passage
    (one call) whose dense ranking joins round 1, so it needs ``dense``. ``chunk_headings``
    shows and reads each retrieved chunk under its heading (its section trail, else its file's
    title line: :attr:`corpus.retrieval.Hit.heading`); off by default, since it gave the
    built-in 1.5B no more right answers where measured (docs/results/outside-corpus.md).
    """

    n: int = 6
    k: int = 2
    budget_calls: int = 20
    temperature: float = 0.8
    seed: int | None = None
    m_verify: int = 3
    max_per_round: int = 3
    structured_output: bool = False
    max_nodes: int = DEFAULT_MAX_NODES
    max_edges: int = DEFAULT_MAX_EDGES
    max_tokens_interrogation: int | None = 2048
    max_tokens_verification: int | None = 512
    think_first: bool = False
    max_tokens_think: int | None = 512
    retrieval_k: int = 8
    max_retrieval_rounds: int = 2
    require_k: bool = False
    interrogation_shape: str = "graph"
    context_tokens: int | None = None
    greedy_first: bool = False
    hops: str = "off"
    adaptive: bool = False
    diversity: str = "sample"
    leave_out: bool = False
    prompt_layout: str = "classic"
    dense: bool = False
    subquestions: bool = True
    entity_weight: float = 0.0
    rerank: str = "off"
    reranker_path: str | None = None
    hyde: bool = False
    chunk_headings: bool = False

    def __post_init__(self) -> None:
        self._check_numbers()
        self._check_choices()
        flags = (
            "structured_output",
            "think_first",
            "require_k",
            "greedy_first",
            "adaptive",
            "leave_out",
            "dense",
            "subquestions",
            "hyde",
            "chunk_headings",
        )
        for flag in flags:
            if not isinstance(getattr(self, flag), bool):
                raise TaskError(f"{flag}={getattr(self, flag)!r} is invalid: must be true or false")
        self._check_retrieval_stages()

    def _check_numbers(self) -> None:
        """Raise :class:`TaskError` for a count, budget, temperature or seed out of range."""
        _int_in("n", self.n, 1, MAX_N)
        _int_in("retrieval_k", self.retrieval_k, 1, MAX_RETRIEVAL_K)
        _int_in("max_retrieval_rounds", self.max_retrieval_rounds, 1, MAX_RETRIEVAL_ROUNDS)
        _int_in("k", self.k, 1, 10)
        _int_in("budget_calls", self.budget_calls, 1, MAX_BUDGET_CALLS)
        _int_in("m_verify", self.m_verify, 1, 15)
        if self.m_verify % 2 == 0:
            raise TaskError(f"m_verify={self.m_verify!r} is invalid: must be odd (3, 5, ...)")
        _int_in("max_per_round", self.max_per_round, 1, 20)
        _int_in("max_nodes", self.max_nodes, 2, 100)
        _int_in("max_edges", self.max_edges, 0, 200)
        for name in ("max_tokens_interrogation", "max_tokens_verification", "max_tokens_think"):
            value = getattr(self, name)
            if value is not None:
                _int_in(name, value, 16, 100_000)
        temp = self.temperature
        if (
            isinstance(temp, bool)
            or not isinstance(temp, int | float)
            or not math.isfinite(temp)
            or not 0 <= temp <= 2
        ):
            raise TaskError(f"temperature={temp!r} is invalid: must be a number in 0..2")
        if self.seed is not None:
            _int_in("seed", self.seed, 0, 2**31 - 1)
        if self.context_tokens is not None:
            _int_in("context_tokens", self.context_tokens, MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS)

    def _check_choices(self) -> None:
        """Raise :class:`TaskError` for a setting that is none of its choices, or for two
        settings that do not go together."""
        _one_of("diversity", self.diversity, DIVERSITY)
        _one_of("prompt_layout", self.prompt_layout, LAYOUTS)
        _one_of("hops", self.hops, HOPS)
        _one_of("interrogation_shape", self.interrogation_shape, SHAPES)
        if self.diversity == "reword" and (
            self.interrogation_shape not in WORKING_SHAPES or self.n > len(WORKING_SHAPES)
        ):
            raise TaskError(
                f"diversity='reword' needs interrogation_shape one of {', '.join(WORKING_SHAPES)} "
                f"and n at most {len(WORKING_SHAPES)} (there are two wordings), got "
                f"interrogation_shape={self.interrogation_shape!r}, n={self.n}"
            )
        if self.interrogation_shape in WORKING_SHAPES and self.think_first:
            raise TaskError(
                f"think_first=True does not go with "
                f"interrogation_shape={self.interrogation_shape!r}: its reply is the model's "
                "plain-text reasoning already"
            )

    def _check_retrieval_stages(self) -> None:
        """Raise :class:`TaskError` for a bad entity weight or reranker setting, or HyDE
        without dense retrieval."""
        weight = self.entity_weight
        if (
            isinstance(weight, bool)
            or not isinstance(weight, int | float)
            or not 0 <= weight <= 100
        ):
            raise TaskError(f"entity_weight={weight!r} is invalid: must be a number in 0..100")
        _one_of("rerank", self.rerank, RERANK)
        path = self.reranker_path
        if (self.rerank == "cross-encoder") != (path is not None):
            raise TaskError(
                f"reranker_path={path!r} with rerank={self.rerank!r} is invalid: a reranker path "
                "is given exactly when rerank is cross-encoder"
            )
        if path is not None and (not isinstance(path, str) or not path.strip()):
            raise TaskError(f"reranker_path={path!r} is invalid: must be the path of a folder")
        if self.hyde and not self.dense:
            raise TaskError(
                "hyde=True with dense=False is invalid: the HyDE passage is searched by dense "
                "vectors only; turn dense retrieval on (--dense on) or HyDE off (no --hyde)"
            )

    def to_dict(self) -> dict[str, Any]:
        """Every setting, JSON-ready."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


_TASK_FIELDS = ("question", "documents", "corpus", "expected_answer", "id", "notes")


def validate_task(task: Any) -> Task:
    """Check a task dict: ``question``, then either ``documents`` (a list of strings) or
    ``corpus`` (the path of an index made by ``logic-graph ingest``), optional
    ``expected_answer``.

    ``documents`` may be empty (the system should then refuse). Unknown keys are rejected so
    a typo such as ``"document"`` is not silently ignored. Whether ``corpus`` names a usable
    index is checked when it is opened. Raises :class:`TaskError`.
    """
    if isinstance(task, Task):
        return task
    if not isinstance(task, dict):
        raise TaskError(f"task must be a JSON object, got {_shown(task)}")
    unknown = sorted(set(task) - set(_TASK_FIELDS))
    if unknown:
        raise TaskError(f"task has unknown field(s) {unknown}; allowed: {', '.join(_TASK_FIELDS)}")
    question = task.get("question")
    if not isinstance(question, str) or not question.strip():
        raise TaskError(f"task field 'question' must be a non-empty string, got {_shown(question)}")
    expected = task.get("expected_answer")
    if expected is not None and not isinstance(expected, str):
        raise TaskError(
            f"task field 'expected_answer' must be a string or null, got {_shown(expected)}"
        )
    if "corpus" in task:
        corpus = task["corpus"]
        if "documents" in task:
            raise TaskError("task gives both 'documents' and 'corpus'; give one of them")
        if not isinstance(corpus, str) or not corpus.strip():
            raise TaskError(
                f"task field 'corpus' must be the path of an index, got {_shown(corpus)}"
            )
        return Task(question.strip(), (), expected, corpus=corpus.strip())
    if "documents" not in task:
        raise TaskError(
            "task has neither 'documents' (a list of strings: the texts to answer from) nor "
            "'corpus' (the path of an index made by logic-graph ingest); give one of them"
        )
    documents = task["documents"]
    if not isinstance(documents, list):
        raise TaskError(
            f"task field 'documents' must be a list of strings, got {_shown(documents)}"
        )
    if len(documents) > MAX_DOCUMENTS:
        raise TaskError(
            f"task field 'documents' has {len(documents)} items, over the limit of {MAX_DOCUMENTS}"
        )
    for index, document in enumerate(documents):
        if not isinstance(document, str) or not document.strip():
            raise TaskError(
                f"task field 'documents[{index}]' must be a non-empty string, got "
                f"{_shown(document)}"
            )
    total = len(question) + sum(len(d) for d in documents)
    if total > MAX_TASK_CHARS:
        raise TaskError(f"task text has {total} characters, over the limit of {MAX_TASK_CHARS}")
    return Task(question.strip(), tuple(documents), expected)


def load_task(path: Path) -> Task:
    """Read and validate a task JSON file. Raises :class:`TaskError` (unreadable, not JSON,
    or invalid), never a raw OSError/JSONDecodeError. A relative ``corpus`` path is taken
    relative to the task file's folder, so a task and its index can move together."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"task file {str(path)!r} cannot be read: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskError(f"task file {str(path)!r} is not valid JSON: {exc}") from exc
    try:
        task = validate_task(data)
    except TaskError as exc:
        raise TaskError(f"task file {str(path)!r}: {exc}") from exc
    if task.corpus is not None and not Path(task.corpus).is_absolute():
        task = replace(task, corpus=str(path.parent / task.corpus))
    return task


def _one_of(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise TaskError(f"{name}={value!r} is invalid: must be one of {', '.join(choices)}")


def _int_in(name: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TaskError(f"{name}={value!r} is invalid: must be an integer in {low}..{high}")


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"
