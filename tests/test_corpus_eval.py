"""The corpus-mode evaluation: pooling, gold mapping, recall@k and citation precision."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from canned_runs import model_graph, verdict

import corpus
from corpus.retrieval import Hit
from evals.corpus_eval import (
    _plan,
    answer_settings,
    answer_shape,
    build_parser,
    citation_precision,
    main,
    run_mode,
)
from evals.corpus_recall import (
    CONFIGS,
    configurations_table,
    corpus_path,
    gold_ids,
    measure_configurations,
    recall,
    retrieval_recall,
    write_pool,
)
from evals.corpus_summary import _paired_lines
from orchestrator.api import RunConfig
from orchestrator.llm import Backend, ChatMessage
from orchestrator.llm.testing import ScriptedClient, ScriptedKwargs
from orchestrator.loop.corpus_search import interleave_new


def item(item_id: str, documents: list[str], supporting: list[str], **extra: Any) -> dict[str, Any]:
    ids = [f"p{j:02d}" for j in range(1, len(documents) + 1)]
    return {
        "id": item_id,
        "dataset": "test",
        "kind": "qa",
        "meta": {},
        "answer_aliases": [],
        "question": extra.pop("question", "Where does Orla Venn live?"),
        "answer": extra.pop("answer", "Braskmere"),
        "documents": documents,
        "paragraph_ids": ids,
        "supporting_ids": supporting,
        **extra,
    }


ORLA = item(
    "q/1",
    ["Orla Venn lives in Braskmere.", "Ivo Marl lives in Kelvford.", "Braskmere has a mill."],
    ["p01"],
)
IVO = item(
    "q2",
    ["Ivo Marl keeps bees.", "Orla Vane lives in Jorvwick."],
    [],
    question="What does Ivo Marl keep?",
    answer="bees",
)


def test_gold_paragraphs_are_the_supporting_ones_or_else_every_document() -> None:
    assert gold_ids(ORLA) == {"p01"}
    assert gold_ids(IVO) == {"p01", "p02"}
    assert corpus_path(ORLA, "p01") == "q_1/p01.txt"
    assert recall(ORLA, ["q_1/p02.txt", "q_1/p01.txt"]) == 1.0
    assert recall(IVO, ["q2/p01.txt", "q_1/p01.txt"]) == 0.5


def test_the_pool_holds_every_document_once_and_recall_is_measured_on_it(tmp_path: Path) -> None:
    assert write_pool([ORLA, IVO], tmp_path / "corpus") == 5
    assert (tmp_path / "corpus" / "q_1" / "p01.txt").read_text() == "Orla Venn lives in Braskmere."
    index = tmp_path / "index.sqlite"
    assert corpus.ingest(tmp_path / "corpus", index, dense=False).ok
    measured = retrieval_recall([ORLA, IVO], index, dense=False)
    assert measured["recall_at"][1] == pytest.approx((1.0 + 0.5) / 2)
    # "Orla Vane lives in Jorvwick." shares no word with Ivo's question: keyword search
    # cannot find it, however deep it looks
    assert measured["recall_at"][20] == 0.75 and measured["all_gold_at"][1] == 0.5


def test_every_configuration_is_measured_side_by_side_and_hybrid_needs_vectors(
    tmp_path: Path,
) -> None:
    write_pool([ORLA, IVO], tmp_path / "corpus")
    index = tmp_path / "index.sqlite"
    corpus.ingest(tmp_path / "corpus", index, dense=False)
    measured = measure_configurations([ORLA, IVO], index, CONFIGS)
    assert list(measured) == [c.name for c in CONFIGS]
    keyword = measured["keyword"]
    assert not isinstance(keyword, str) and keyword["recall_at"][20] == 0.75
    assert str(measured["hybrid+subq"]).startswith("dense embeddings were turned off")
    table = configurations_table(measured).splitlines()
    assert table[0].startswith("| configuration | recall@5 | recall@10 | recall@20 | all-gold@5")
    assert table[2] == "| keyword | 75.0% | 75.0% | 75.0% | 50.0% | 50.0% | 50.0% |"
    assert table[3].startswith("| hybrid | not run: dense embeddings were turned off")


def test_two_items_may_not_share_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="share folder"):
        write_pool([ORLA, {**IVO, "id": "q 1"}, {**IVO, "id": "q_1"}], tmp_path)


def test_citation_precision_counts_cited_spans_in_gold_paragraphs() -> None:
    # Partial reports: only the givens, what citation_precision reads.
    inline: Any = {"givens": [{"span": "D1.1", "document": 1}, {"span": "D2.1", "document": 2}]}
    assert citation_precision(ORLA, inline) == (1, 2)
    from_corpus: Any = {
        "givens": [
            {"span": "D1.1", "document": 1, "citation": {"path": "q_1/p01.txt"}},
            {"span": "D2.1", "document": 2, "citation": {"path": "q2/p01.txt"}},
            {"span": None, "document": None},  # not a checked citation: not counted
        ]
    }
    assert citation_precision(ORLA, from_corpus) == (1, 2)


def answer_from_orla_sentence(model: str, messages: list[ChatMessage], kw: ScriptedKwargs) -> str:
    if kw["role"] == "query_rewrite":
        return '{"queries": ["Orla Venn lives"]}'
    if kw["role"] == "verification":
        return verdict("supported")
    prompt = messages[-1]["content"]
    span = next(
        (line[1:].split("]")[0] for line in prompt.splitlines() if "Orla Venn lives" in line),
        None,
    )
    if span is None:
        return model_graph(
            [{"id": "n1", "type": "conclusion", "source": "none", "claim": "Not stated."}],
            [],
            "n1",
            answer="unanswerable",
        )
    return model_graph(
        [
            {"id": "n1", "type": "given", "source": span, "claim": "Orla Venn lives in Braskmere."},
            {
                "id": "n2",
                "type": "conclusion",
                "source": "none",
                "claim": "She lives in Braskmere.",
            },
        ],
        [{"from": "n1", "to": "n2", "relation": "supports", "confidence": 0.9}],
        "n2",
        answer="Braskmere",
    )


@pytest.mark.parametrize("mode", ["inline", "corpus"])
def test_both_modes_score_the_answer_and_its_citations(tmp_path: Path, mode: str) -> None:
    write_pool([ORLA, IVO], tmp_path / "corpus")
    index = tmp_path / "index.sqlite"
    corpus.ingest(tmp_path / "corpus", index, dense=False)
    row = run_mode(
        mode,
        ORLA,
        index=index,
        client=ScriptedClient(answer_from_orla_sentence),
        model="m",
        config=RunConfig(n=2, k=1, budget_calls=6, seed=1),
        artifacts=tmp_path / "runs",
    )
    assert (row["outcome"], row["answer"], row["cited"], row["cited_gold"]) == (
        "correct",
        "Braskmere",
        1,
        1,
    )
    if mode == "corpus":
        assert row["recall_round1"] == 1.0 and row["rounds"] == 1
        assert row["n_calls"] == 3  # the rewrite and two interrogations


def test_the_command_writes_a_summary_and_rejects_unknown_modes(tmp_path: Path) -> None:
    dataset = tmp_path / "set.jsonl"
    dataset.write_text("".join(json.dumps(i) + "\n" for i in (ORLA, IVO)))
    out = tmp_path / "out"
    assert main(["--dataset", str(dataset), "--out", str(out), "--retrieval-only"]) == 0
    summary = (out / "summary.md").read_text()
    assert "| mean recall@k | 75.0% |" in summary and "## Answers" not in summary
    assert "| keyword+subq+entity |" in summary
    assert main(["--dataset", str(dataset), "--out", str(out), "--modes", "both"]) == 2


def test_unseen_chunks_are_taken_from_each_ranking_in_turn() -> None:
    def hit(chunk_id: str) -> Hit:
        return Hit(chunk_id, "f", 1, 0, 1, "", None, "t", 0.0, None, None)

    a, b, c, d, e = (hit(x) for x in "abcde")
    assert interleave_new([[a, b, c], [a, d, e]], [a], 3) == [b, d, c]
    assert interleave_new([[a, b], [b, c]], [], 5) == [a, b, c]
    assert interleave_new([[a], []], [a], 2) == []


def test_answer_runs_take_the_models_own_shape_unless_told() -> None:
    assert answer_shape(None, "local-1.5b") == "chain"
    assert answer_shape("graph", "local-1.5b") == "graph"
    assert answer_shape(None, "no-such-model") == "graph"


def test_answer_runs_ask_hop_by_hop_only_when_told(tmp_path: Path) -> None:
    dataset = tmp_path / "set.jsonl"
    dataset.write_text("".join(json.dumps(i) + "\n" for i in (ORLA, IVO)))
    argv = ["--dataset", str(dataset), "--out", str(tmp_path / "out")]
    assert _plan(build_parser().parse_args(argv)).config.hops == "off"
    told = build_parser().parse_args([*argv, "--hops", "on_failure"])
    assert _plan(told).config.hops == "on_failure"


def test_answer_runs_pack_the_evidence_into_the_servers_context_window() -> None:
    backend = Backend(ScriptedClient([]), "local-1.5b", True, True, context_tokens=4096)  # type: ignore[arg-type]
    settings = answer_settings(RunConfig(), backend, None, "local-1.5b")
    assert (settings.context_tokens, settings.structured_output) == (4096, True)
    assert settings.interrogation_shape == "chain"
    told = answer_settings(RunConfig(context_tokens=2048), backend, "graph", "local-1.5b")
    assert (told.context_tokens, told.interrogation_shape) == (2048, "graph")


def test_the_summary_compares_the_modes_item_by_item_and_counts_off_gold_wrong_answers() -> None:
    def row(item: str, mode: str, result: str, cited: int = 1, gold: int = 1) -> dict[str, object]:
        return {"id": item, "mode": mode, "outcome": result, "cited": cited, "cited_gold": gold}

    rows = [
        row("a", "inline", "correct"),
        row("a", "corpus", "wrong", cited=2, gold=1),
        row("b", "inline", "correct"),
        row("b", "corpus", "correct"),
        row("c", "inline", "abstained"),  # no corpus run: left out of the pairs
    ]
    lines = _paired_lines(rows)
    assert lines[1] == "Corpus minus inline, on the 2 items run in both modes:"
    assert lines[2].startswith("- right answers per item: -50.0% (95% interval -100.0% to")
    assert lines[3].startswith("- wrong answers per item: +50.0%")
    assert lines[4] == "- wrong answers citing outside the gold paragraphs: inline 0, corpus 1"
    assert _paired_lines([row("a", "inline", "correct")]) == []
