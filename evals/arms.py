"""The seven arms of the evaluation: six baselines and the orchestrator, same items, same model.

Each arm is a function ``(item, model, client, *, settings) -> ArmResult``:

1. `single_pass` - one call, answer at once.
2. `naive_revisit` - reason and answer, then "revisit your reasoning" in the same conversation.
3. `cot_reinjection` - reason and answer, then a new conversation gets that reasoning verbatim
   and gives the final answer.
4. `arrow_thinking` - one call whose system prompt forces arrow-chain (``a -> b -> c``) thinking.
5. `compressed_chain` - reason and answer; the model compresses its reasoning to an arrow chain;
   a fresh context checks the chain against documents and question and answers.
6. `orchestrator` - `orchestrator.api.run_task`; the answer is the chosen cluster's short
   answer, as the runs gave it.
7. `self_consistency` - N independent reasoned answers (fresh contexts, temperature > 0, a
   different seed each) and a plurality vote over answers normalised as arm 6 clusters them;
   the harness sets N to the number of calls arm 6 spent on the same item.

Arms 2, 3 and 5 share their first call, so their differences isolate what is fed back. Every
arm wraps the client it is given in a `CallRecorder`, so ``ArmResult.calls`` holds exactly the
ledger records of its own calls, and all arms share the caller's ledger. Model failures
(`LLMError`) propagate to the caller; a malformed reply never raises: it yields ``answer=None``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from corpus.evidence import build_evidence, shuffled_order
from evals import prompts
from evals.datasets import item_to_task
from evals.metering import CallRecorder
from evals.vote import ABSTAIN, TIE, majority_vote
from orchestrator.api import RunConfig, run_task
from orchestrator.llm import ChatMessage, SupportsChat
from orchestrator.reply import UNANSWERABLE, WORKING_SHAPES, asked_category, parse_answer
from orchestrator.reply import prompts as orchestrator_prompts


@dataclass(frozen=True)
class ArmResult:
    """What one arm produced for one item.

    ``answer`` is the text to score (None: no answer found, or a refusal); ``refused`` is True
    when the arm declined to answer; ``calls`` are the ledger records of its calls; ``trace``
    lists each step's request and reply (arm 6: the orchestrator's report); ``extra`` holds
    arm-specific facts (answer format, first answer, support width for arm 6, ...).
    """

    answer: str | None
    refused: bool
    calls: list[dict[str, Any]]
    trace: list[dict[str, Any]]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ArmSettings:
    """Knobs shared by all arms.

    ``max_tokens``: completion cap per baseline call; ``temperature``/``seed``: sampling of the
    baseline calls; ``run_config``: arm 6's orchestrator settings (None: `RunConfig` defaults);
    ``artifacts_dir``: where arm 6 writes each item's report and trace (None: nowhere);
    ``samples``: arm 7's number of samples; ``sample_temperature``: their temperature;
    ``sample_diversity``: ``sample`` (each at ``sample_temperature``) or ``shuffle`` (each
    greedy, the first with the documents as given and the others in the order arm 6's run of
    the same number sees them: the same source of diversity at the same calls) or ``reword``
    (each greedy, the odd ones asked with prompt ``reasoned`` and the even ones with the
    worked shape's prompt over the evidence arm 6 sees, as arm 6's runs with
    ``diversity="reword"`` are).
    """

    max_tokens: int = 512
    temperature: float = 0.0
    seed: int | None = None
    run_config: RunConfig | None = None
    artifacts_dir: Path | None = None
    samples: int = 3
    sample_temperature: float = 0.8
    sample_diversity: str = "sample"


Arm = Callable[..., ArmResult]

# --- the baseline arms ---------------------------------------------------------------------


class _Steps:
    """Runs the calls of one baseline arm through a recorder and keeps the trace."""

    def __init__(
        self, client: SupportsChat, model: str, arm: int, item: Mapping[str, Any], s: ArmSettings
    ) -> None:
        self.recorder = CallRecorder(client, {"eval_arm": arm, "eval_item": str(item["id"])})
        self.model = model
        self.settings = s
        self.trace: list[dict[str, Any]] = []

    def call(
        self,
        step: str,
        messages: list[ChatMessage],
        *,
        temperature: float | None = None,
        seed: int | None = None,
    ) -> str:
        """One call at the arm's temperature and seed unless given; returns its text (raises
        LLMError on failure)."""
        result = self.recorder.chat(
            self.model,
            messages,
            temperature=self.settings.temperature if temperature is None else temperature,
            max_tokens=self.settings.max_tokens,
            seed=self.settings.seed if seed is None else seed,
            role=f"eval:{step}",
        )
        self.trace.append({"step": step, "messages": messages, "reply": result.text})
        return result.text

    def reasoned(self, item: Mapping[str, Any]) -> tuple[list[ChatMessage], str]:
        """The first call of arms 2, 3 and 5 (prompt ``reasoned``): its messages and reply."""
        first = prompts.reasoned_messages(item)
        return first, self.call("reasoned", first)

    def finish(self, final_text: str, **extra: Any) -> ArmResult:
        """The arm's result, answer parsed from `final_text`."""
        parsed = parse_answer(final_text)
        return ArmResult(
            answer=parsed.value,
            refused=parsed.refused,
            calls=self.recorder.records(),
            trace=self.trace,
            extra={"answer_format": parsed.format, **extra},
        )


def _single_call(
    arm: int, step: str, messages: Callable[[Mapping[str, Any]], list[ChatMessage]], doc: str
) -> Arm:
    """An arm that answers in one call: ``step``, with ``messages`` built from the item."""

    def run(
        item: Mapping[str, Any], model: str, client: SupportsChat, *, settings: ArmSettings
    ) -> ArmResult:
        steps = _Steps(client, model, arm, item, settings)
        return steps.finish(steps.call(step, messages(item)))

    run.__doc__ = doc
    return run


single_pass = _single_call(
    1, "direct", prompts.direct_messages, "Arm 1: one call, direct answer (prompt ``direct``)."
)
arrow_thinking = _single_call(
    4,
    "arrow",
    prompts.arrow_messages,
    "Arm 4: one call under a system prompt that forces arrow-chain thinking.",
)


Second = Callable[[Mapping[str, Any], list[ChatMessage], str], list[ChatMessage]]
"""(item, the reasoned call's messages, its reply) -> the second call's messages."""


def _reasoned_then(arm: int, step: str, second: Second, doc: str) -> Arm:
    """An arm that reasons (prompt ``reasoned``), then answers in a second call, ``step``."""

    def run(
        item: Mapping[str, Any], model: str, client: SupportsChat, *, settings: ArmSettings
    ) -> ArmResult:
        steps = _Steps(client, model, arm, item, settings)
        first, reply = steps.reasoned(item)
        final = steps.call(step, second(item, first, reply))
        return steps.finish(final, first_answer=parse_answer(reply).value)

    run.__doc__ = doc
    return run


naive_revisit = _reasoned_then(
    2,
    "revisit",
    lambda _item, first, reply: prompts.revisit_messages(first, reply),
    'Arm 2: reasoned answer, then "revisit your reasoning" in the same conversation.',
)
cot_reinjection = _reasoned_then(
    3,
    "reinject",
    lambda item, _first, reply: prompts.reinject_messages(item, reply),
    "Arm 3: reasoned answer, then a new conversation gets that reply verbatim and answers.",
)


def compressed_chain(
    item: Mapping[str, Any], model: str, client: SupportsChat, *, settings: ArmSettings
) -> ArmResult:
    """Arm 5: reasoned answer -> the model compresses it to an arrow chain -> a fresh context
    checks the chain against the documents and question and gives the final answer."""
    steps = _Steps(client, model, 5, item, settings)
    first, reply = steps.reasoned(item)
    chain = steps.call("compress", prompts.compress_messages(first, reply)).strip()
    final = steps.call("chain_check", prompts.chain_check_messages(item, chain))
    return steps.finish(final, first_answer=parse_answer(reply).value, chain=chain)


def self_consistency(
    item: Mapping[str, Any], model: str, client: SupportsChat, *, settings: ArmSettings
) -> ArmResult:
    """Arm 7: ``settings.samples`` reasoned answers in fresh contexts, then a plurality vote.

    Each sample uses prompt ``reasoned`` at ``settings.sample_temperature`` with seed
    ``settings.seed + i`` (so a seeded local model does not repeat itself). The vote
    (`evals.vote.majority_vote`) decides: a winning refusal or a tie is not an answer
    (``refused``), and ``extra`` records the votes, the outcome and the winner's share.
    """
    steps = _Steps(client, model, 7, item, settings)
    replies: list[str] = []
    for i in range(settings.samples):
        seed = None if settings.seed is None else settings.seed + i
        messages, temperature = prompts.reasoned_messages(item), settings.sample_temperature
        if settings.sample_diversity == "shuffle":
            messages, temperature = prompts.reasoned_messages(_reordered(item, i + 1)), 0.0
        elif settings.sample_diversity == "reword":
            messages = prompts.reasoned_messages(item) if i % 2 == 0 else _worked_messages(item)
            temperature = 0.0
        replies.append(steps.call(f"sample{i + 1}", messages, temperature=temperature, seed=seed))
    answer, refused, extra = vote_on_replies(replies, item["question"])
    return ArmResult(answer, refused, steps.recorder.records(), steps.trace, extra)


def vote_on_replies(
    replies: Sequence[str], question: str
) -> tuple[str | None, bool, dict[str, Any]]:
    """Arm 7's decision over plain-text ``replies`` to ``question``: (the answer, whether it
    is a refusal, what the vote was). Each reply's answer line is one vote (a declined answer
    votes "unanswerable"); a winning refusal or a tie is no answer."""
    voted: list[str | None] = []
    for reply in replies:
        parsed = parse_answer(reply)
        voted.append(UNANSWERABLE if parsed.refused else parsed.value)
    vote = majority_vote(voted, asked_category(question))
    extra = {
        "answer_format": "vote",
        "samples": len(replies),
        "sample_answers": voted,
        "votes": vote.counts,
        "vote_outcome": vote.outcome,
        "confidence": vote.share,
    }
    return vote.answer, vote.outcome in (ABSTAIN, TIE), extra


def _worked_messages(item: Mapping[str, Any]) -> list[ChatMessage]:
    """The worked shape's prompt for ``item`` over the evidence arm 6 sees (its documents, or
    a word problem's own statement, as numbered sentences)."""
    task = item_to_task(item)
    evidence = build_evidence(task["documents"])
    return orchestrator_prompts.worked_messages(evidence, task["question"])


def _reordered(item: Mapping[str, Any], run: int) -> Mapping[str, Any]:
    """``item`` with its documents in the order arm 6's run ``run`` sees them
    (:func:`corpus.evidence.shuffled_order`; run 1 sees them as given)."""
    documents = list(item["documents"])
    if run == 1 or len(documents) < 2:
        return item
    return {**item, "documents": [documents[n - 1] for n in shuffled_order(len(documents), run)]}


# --- arm 6 ---------------------------------------------------------------------------------


def item_folder(text: str) -> str:
    """The file-system-safe name of the folder arm 6 writes an item's report into (summary.html
    links to it)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:120] or "item"


def orchestrator(
    item: Mapping[str, Any], model: str, client: SupportsChat, *, settings: ArmSettings
) -> ArmResult:
    """Arm 6: the full orchestrator on the item's task.

    A refusal by the orchestrator is a refusal here. Otherwise the answer is the chosen
    cluster's short answer, exactly as the runs gave it: no extra call rewrites it, so what is
    scored is what the graph decided. ``extra`` holds ``width`` (support width of the chosen
    conclusion, None when there is none), the conclusion sentence, stop and refusal reasons.
    """
    recorder = CallRecorder(client, {"eval_arm": 6, "eval_item": str(item["id"])})
    out_dir = None
    if settings.artifacts_dir is not None:
        out_dir = settings.artifacts_dir / "arm6" / item_folder(str(item["id"]))
    report = run_task(
        item_to_task(item),
        client=recorder,
        model=model,
        config=settings.run_config or RunConfig(),
        out_dir=out_dir,
    )
    chosen = report["chosen"]
    # On a refusal the report still carries a "chosen" block (width 0, no node): no conclusion
    # was chosen, so there is no width to stratify by.
    width = chosen["width"] if chosen["node_id"] else None
    run_support = chosen["run_support"] if chosen["node_id"] else 0
    answer = report["answer"]
    refused = report["refused"] or not answer
    extra: dict[str, Any] = {
        "width": width,
        # Support width is how sure the graph is: the risk-coverage curve ranks answers by it,
        # and ties by the runs behind the answer (`evals.stats` reads "rank").
        "confidence": None if refused else width,
        "rank": None if refused or width is None else [width, run_support],
        "run_support": run_support,
        "conclusion": report["conclusion"],
        "stop_reason": report["stop_reason"],
        "refusal_reason": report["refusal_reason"],
        "answer_format": "graph",
    }
    trace: list[dict[str, Any]] = [{"step": "orchestrator", "report": report}]
    if refused:
        answer = None
    return ArmResult(
        answer=answer, refused=refused, calls=recorder.records(), trace=trace, extra=extra
    )


ARMS: dict[int, tuple[str, Arm]] = {
    1: ("single pass", single_pass),
    2: ("naive revisit", naive_revisit),
    3: ("verbatim CoT re-injection", cot_reinjection),
    4: ("arrow-notation thinking", arrow_thinking),
    5: ("compressed chain, fresh check", compressed_chain),
    6: ("full orchestrator", orchestrator),
    7: ("self-consistency", self_consistency),
}
"""Arm number -> (short name, function)."""

# The harness's own prompt templates each arm uses (arm 6 also uses the orchestrator's).
ARM_PROMPTS: dict[int, tuple[str, ...]] = {
    1: ("direct",),
    2: ("reasoned", "revisit"),
    3: ("reasoned", "reinject"),
    4: ("arrow",),
    5: ("reasoned", "compress", "chain_check"),
    6: (),
    7: ("reasoned",),
}


CORPUS_STAGE_PROMPTS = frozenset({"rerank", "hyde"})
"""Templates of the corpus retrieval stages that are off by default (the LLM reranker, HyDE;
docs/corpus.md): an arm-6 run never sends them."""


_SHAPE_TEMPLATES = {
    "graph": "interrogation",
    "chain": "interrogation_chain",
    "worked": "interrogation_worked",
    "reasoned": "interrogation_reasoned",
}
"""The interrogation template each shape sends; a run never sends the others'."""


def prompt_version(arm: int, shape: str = "graph", diversity: str = "sample") -> str:
    """A stable version string for an arm's prompts, e.g. ``"reasoned@1+revisit@1"``; arm 6's
    starts with the versions of the orchestrator templates its interrogation ``shape`` uses
    (a run never sends another shape's interrogation template; nor does it send the
    templates of the corpus stages that are off unless asked for, :data:`CORPUS_STAGE_PROMPTS`),
    so adding a template it does not send does not change this run's tag. With
    ``diversity="reword"`` a run sends both working shapes' templates."""
    own = [f"{name}@{prompts.PROMPT_VERSIONS[name]}" for name in ARM_PROMPTS[arm]]
    if arm == 6:
        sent = set(WORKING_SHAPES) if diversity == "reword" else {shape}
        unused = {t for s, t in _SHAPE_TEMPLATES.items() if s not in sent}
        unused |= CORPUS_STAGE_PROMPTS
        used = [v for k, v in orchestrator_prompts.PROMPT_VERSIONS.items() if k not in unused]
        own = sorted(used) + own
    return "+".join(own)
