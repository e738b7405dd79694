"""Corpus tasks end to end on scripted models: rewrite, retrieval rounds, citations a person
can follow, and the refusal when the corpus does not hold the answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from canned_runs import model_graph, verdict
from corpus_fixtures import RACK_SENTENCE, corpus_script, span_of, write_corpus

import corpus
from orchestrator.api import RunConfig, run_task
from orchestrator.cli.run import main
from orchestrator.llm import ChatMessage
from orchestrator.llm.testing import ScriptedClient, ScriptedKwargs
from orchestrator.loop.corpus_calls import parse_queries
from orchestrator.loop.corpus_mode import END_ANSWERED, END_MAX_ROUNDS, END_NO_NEW_EVIDENCE
from orchestrator.records.reasons import RefusalReason
from orchestrator.records.report import GivenRecord, GivenSource
from orchestrator.records.task import TaskError, load_task, validate_task
from orchestrator.report.markdown import render_markdown


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    path = root / "index.sqlite"
    report = corpus.ingest(write_corpus(root / "docs"), path, dense=False)
    assert report.ok
    return path


def citation_of(given: GivenRecord) -> GivenSource:
    """``given``'s citation, which a corpus run's given has."""
    citation = given["citation"]
    assert citation is not None
    return citation


def config(**overrides: Any) -> RunConfig:
    return RunConfig(**{"n": 2, "k": 1, "budget_calls": 8, "seed": 1, **overrides})


def test_a_corpus_answer_cites_file_page_chunk_and_the_quoted_sentence(
    index: Path, tmp_path: Path
) -> None:
    client = ScriptedClient(
        corpus_script('{"queries": ["rack 7 hall", "Quelheim site"]}', answer=True)
    )
    task = {"question": "Which hall is rack 7 in?", "corpus": str(index)}
    report = run_task(task, client=client, model="m", config=config(), out_dir=tmp_path)

    assert report["headline"] == "Answer: hall B"
    retrieval = report["retrieval"]
    assert retrieval["end"] == END_ANSWERED
    assert retrieval["rewrite"] == {"queries": ["rack 7 hall", "Quelheim site"], "fallback": None}
    assert retrieval["rounds"][0]["queries"] == [
        "Which hall is rack 7 in?",
        "rack 7 hall",
        "Quelheim site",
    ]
    [given] = report["givens"]
    assert given["text"] == RACK_SENTENCE
    citation = given["citation"]
    assert citation is not None
    assert citation["path"] == "racks/rack7-v1.2.md"
    assert citation["page"] == 1
    assert citation["chunk_id"].startswith("racks/rack7-v1.2.md#p1c")
    page_text = "\n".join(
        page.text for page in corpus.read_pages(index.parent / "docs" / citation["path"])
    )
    assert page_text[citation["start"] : citation["end"]] == RACK_SENTENCE
    markdown = (tmp_path / "report.md").read_text()
    assert citation["citation"] in markdown and "## Retrieval" in markdown
    # the rewrite is a logical call like any other: counted, budgeted, tagged with its round
    roles = [call["role"] for call in report["calls"]]
    assert roles[0] == "query_rewrite" and roles.count("interrogation") == 2
    assert report["totals"]["calls"] == len(report["calls"]) == report["budget"]["used"]
    assert {call["retrieval_round"] for call in report["calls"]} == {1}
    assert report["config"]["budget_calls"] == 8


def test_a_corpus_without_the_answer_is_refused_after_every_round_with_each_round_traced(
    index: Path, tmp_path: Path
) -> None:
    client = ScriptedClient(corpus_script("no idea", answer=False))
    task = {"question": "Who is the mayor of the Quelheim site?", "corpus": str(index)}
    settings = config(retrieval_k=1, max_retrieval_rounds=3, budget_calls=20)
    report = run_task(task, client=client, model="m", config=settings, out_dir=tmp_path)

    assert report["refused"] and report["refusal_reason"] == RefusalReason.INSUFFICIENT_EVIDENCE
    assert report["headline"] == "Refused: insufficient_evidence"
    retrieval = report["retrieval"]
    # Every run said "unanswerable" and none carried an answer.
    assert retrieval["last_refusal_reason"] == "runs_found_no_answer"
    assert retrieval["rewrite"]["fallback"] == "the reply holds no JSON object"
    rounds = retrieval["rounds"]
    # the question first, then its grammar plan's sub-questions, each retrieved on its own
    assert rounds[0]["queries"][0] == "Who is the mayor of the Quelheim site?"
    plan = [hop["sub_question"] for hop in rounds[0]["plan"]]
    assert plan == ["Who or what is the mayor of the Quelheim?", "Who is #1 site?"]
    assert len(rounds) >= 2 and all(len(r["hits"]) == 1 for r in rounds if "refused" in r)
    # round 2 searched for what round 1 lacked: the question's words no chunk contained
    assert "mayor" in rounds[1]["queries"][0]
    assert retrieval["end"] in {END_MAX_ROUNDS, END_NO_NEW_EVIDENCE}
    # each round's loop saw every chunk found so far, earlier ones first
    shown = [r["chunks_shown"] for r in rounds if "chunks_shown" in r]
    assert shown == sorted(shown) and shown[-1] == len(retrieval["chunks_shown"])
    assert report["stop_reason"] != report["refusal_reason"]  # separate fields, separate facts
    events = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    traced = [e for e in events if e["event"] == "retrieval"]
    assert [e["round"] for e in traced] == [r["round"] for r in rounds]
    assert traced[0]["hits"] == rounds[0]["hits"]
    assert report["totals"]["calls"] <= 20
    assert "## Retrieval" in render_markdown(report)


def test_the_rounds_never_spend_more_than_the_call_budget(index: Path) -> None:
    client = ScriptedClient(corpus_script('{"queries": ["mayor"]}', answer=False))
    task = {"question": "Who is the mayor of the Quelheim site?", "corpus": str(index)}
    settings = config(retrieval_k=1, max_retrieval_rounds=5, budget_calls=5)
    report = run_task(task, client=client, model="m", config=settings)

    assert len(client.calls) == report["totals"]["calls"] <= 5
    assert report["refusal_reason"] == RefusalReason.INSUFFICIENT_EVIDENCE


def test_a_question_no_chunk_matches_costs_only_the_rewrite(index: Path) -> None:
    client = ScriptedClient(corpus_script("{}", answer=False))
    task = {"question": "Zorblax quuxfrob?", "corpus": str(index)}
    report = run_task(task, client=client, model="m", config=config())

    assert [call["role"] for call in report["calls"]] == ["query_rewrite"]
    assert report["refusal_reason"] == RefusalReason.INSUFFICIENT_EVIDENCE
    assert report["retrieval"]["last_refusal_reason"] == "no_evidence"
    assert report["retrieval"]["end"] == END_NO_NEW_EVIDENCE
    assert report["retrieval"]["rewrite"]["fallback"] == "the reply has no 'queries' list"


def test_a_failed_rewrite_falls_back_to_the_question_and_is_recorded(index: Path) -> None:
    def reply(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> Any:
        if kwargs["role"] == "query_rewrite":
            raise KeyError("client bug")
        return corpus_script("", answer=True)(model, messages, kwargs)

    task = {"question": "Which hall is rack 7 in?", "corpus": str(index)}
    report = run_task(task, client=ScriptedClient(reply), model="m", config=config())

    assert report["answer"] == "hall B"
    assert report["retrieval"]["rewrite"]["fallback"] is not None
    assert report["retrieval"]["rewrite"]["fallback"].startswith("the rewrite call failed")
    assert report["calls"][0]["ok"] is False and report["totals"]["failed_calls"] == 1


def test_a_missing_index_fails_before_any_call(tmp_path: Path) -> None:
    client = ScriptedClient([])
    task = {"question": "Which hall is rack 7 in?", "corpus": str(tmp_path / "none.sqlite")}
    with pytest.raises(TaskError, match=r"task field 'corpus': .* does not exist"):
        run_task(task, client=client, model="m", config=config())
    assert client.calls == []


def test_the_cli_reports_a_missing_corpus_as_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task_file = tmp_path / "task.json"
    task_file.write_text(json.dumps({"question": "Where?", "corpus": "missing.sqlite"}))
    code = main(["--task", str(task_file), "--model", "x/y", "--base-url", "http://127.0.0.1:9/v1"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: task field 'corpus'") and "missing.sqlite" in err


@pytest.mark.parametrize(
    ("text", "queries", "problem"),
    [
        ('{"queries": ["rack 7 hall", "hall B"]}', ["rack 7 hall", "hall B"], None),
        ('```json\n{"queries": ["a  b\\nc"]}\n```', ["a b c"], None),
        (
            '{"queries": ["x", "X", 3, "", "the", "Where is it?", "y", "z", "w"]}',
            ["x", "y", "z"],
            None,
        ),
        ('{"queries": "rack"}', [], "the reply has no 'queries' list"),
        ('{"queries": ["where is it?"]}', [], "the reply's 'queries' holds no usable query"),
        ("[1, 2]", [], "the reply holds no JSON object"),
        ("", [], "the reply holds no JSON object"),
    ],
)
def test_rewrite_replies_are_read_leniently_and_never_repeat_the_question(
    text: str, queries: list[str], problem: str | None
) -> None:
    assert parse_queries(text, "Where is it?") == (queries, problem)


def test_a_task_gives_documents_or_a_corpus_never_both(tmp_path: Path) -> None:
    assert validate_task({"question": "q?", "corpus": " idx.sqlite "}).corpus == "idx.sqlite"
    with pytest.raises(TaskError, match="both 'documents' and 'corpus'"):
        validate_task({"question": "q?", "documents": ["d"], "corpus": "idx.sqlite"})
    with pytest.raises(TaskError, match="'corpus' must be the path"):
        validate_task({"question": "q?", "corpus": ""})
    task_file = tmp_path / "sub" / "task.json"
    task_file.parent.mkdir()
    task_file.write_text(json.dumps({"question": "q?", "corpus": "idx.sqlite"}))
    assert load_task(task_file).corpus == str(tmp_path / "sub" / "idx.sqlite")
    absolute = str(tmp_path / "elsewhere.sqlite")
    task_file.write_text(json.dumps({"question": "q?", "corpus": absolute}))
    assert load_task(task_file).corpus == absolute


def test_a_task_without_documents_is_refused_without_any_call() -> None:
    client = ScriptedClient([])
    report = run_task({"question": "q?", "documents": []}, client=client, model="m")
    assert report["refusal_reason"] == "no_evidence" and client.calls == []


CHAIN = (
    "Rookcombe Foundry built the Faldcrest Bridge.",
    "Rookcombe Foundry was founded by Vidar Tarvard.",
    "Vidar Tarvard was born in Quelheim.",
)
MULTIHOP_FILES = {
    "bridges/faldcrest.txt": CHAIN[0] + " The Faldcrest Bridge crosses the Brynow River.",
    "companies/rookcombe.txt": CHAIN[1] + " It has its head office in Karnmere.",
    "people/tarvard.txt": CHAIN[2] + " He was a keen amateur astronomer.",
    "bridges/tamarstead.txt": "The Tamarstead Bridge was built by Tullton Ironworks.",
    "people/korick.txt": "Wenna Korick was born in the town of Quelheim.",
}


def chain_script(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
    """Cites every chain sentence it is shown; answers only when the whole chain is there."""
    if kwargs["role"] == "query_rewrite":
        return '{"queries": ["Faldcrest Bridge built"]}'
    if kwargs["role"] == "verification":
        return verdict("supported")
    spans = [span_of(messages, sentence) for sentence in CHAIN]
    nodes = [
        {"id": f"n{i}", "type": "given", "source": span, "claim": CHAIN[i - 1]}
        for i, span in enumerate(spans, 1)
        if span is not None
    ]
    complete = len(nodes) == len(CHAIN)
    claim = "The founder was born in Quelheim." if complete else "The birthplace is not stated."
    nodes.append({"id": "n9", "type": "conclusion", "source": "none", "claim": claim})
    edges = [
        {"from": n["id"], "to": "n9", "relation": "supports", "confidence": 0.9} for n in nodes[:-1]
    ]
    return model_graph(nodes, edges, "n9", answer="Quelheim" if complete else "unanswerable")


def test_gap_rounds_follow_the_names_each_round_cites_until_the_chain_is_complete(
    tmp_path: Path,
) -> None:
    index = tmp_path / "index.sqlite"
    assert corpus.ingest(write_corpus(tmp_path / "docs", MULTIHOP_FILES), index, dense=False).ok
    task = {
        "question": "In which town was the founder of the company that built the Faldcrest "
        "Bridge born?",
        "corpus": str(index),
    }
    settings = config(retrieval_k=1, max_retrieval_rounds=3, budget_calls=20)
    report = run_task(task, client=ScriptedClient(chain_script), model="m", config=settings)

    assert report["answer"] == "Quelheim", report["retrieval"]
    rounds = report["retrieval"]["rounds"]
    new = [[h["path"] for h in r["hits"]] for r in rounds]
    assert new == [["bridges/faldcrest.txt"], ["companies/rookcombe.txt"], ["people/tarvard.txt"]]
    # round 2 followed "Rookcombe Foundry", a name only the cited sentence held
    assert rounds[1]["queries"][0] == "Rookcombe Foundry"
    cited = sorted(citation_of(g)["path"] for g in report["givens"])
    assert cited == ["bridges/faldcrest.txt", "companies/rookcombe.txt", "people/tarvard.txt"]
    assert report["retrieval"]["end"] == END_ANSWERED and len(rounds) == 3


def test_progress_counts_every_round_against_the_whole_budget(tmp_path: Path) -> None:
    index = tmp_path / "index.sqlite"
    corpus.ingest(write_corpus(tmp_path / "docs", MULTIHOP_FILES), index, dense=False)
    task = {"question": "Who founded the company that built the Faldcrest Bridge?"}
    events: list[dict[str, Any]] = []
    settings = config(retrieval_k=1, max_retrieval_rounds=2, budget_calls=9)
    report = run_task(
        {**task, "corpus": str(index)},
        client=ScriptedClient(chain_script),
        model="m",
        config=settings,
        progress=events.append,
    )

    assert len(report["retrieval"]["rounds"]) == 2
    # the rewrite (call 1) is not a loop step; every loop call after it is counted once
    announced = [e["announce"] for e in events if "announce" in e]
    events = [e for e in events if "announce" not in e]
    calls = [e["calls_done"] for e in events]
    assert calls == list(range(2, report["totals"]["calls"] + 1))
    assert announced[0] == "rewriting the question into search queries"
    assert [line.split(":")[0] for line in announced[1:]] == [
        "retrieval round 1 of at most 2",
        "retrieval round 2 of at most 2",
    ]
    assert {e["budget_calls"] for e in events} == {9}
    assert events[0]["step"].startswith("round 1 ") and events[-1]["step"].startswith("round 2 ")
