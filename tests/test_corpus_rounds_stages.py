"""The retrieval stages of a corpus task (issue 36): sub-questions from the grammar plan, the
chunks each round drops and why, the LLM and cross-encoder rerankers, and HyDE."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from corpus_fixtures import HashEmbedder, corpus_script, vec_search_available, write_corpus

import corpus
from corpus.rerank import RerankerUnavailable, apply_order, load_cross_encoder, rerank_hits
from corpus.retrieval import Hit
from orchestrator.api import RunConfig, run_task
from orchestrator.cli.main import main as logic_graph
from orchestrator.cli.run import main as run_main
from orchestrator.llm import ChatMessage
from orchestrator.llm.testing import ScriptedClient, ScriptedKwargs
from orchestrator.loop import corpus_mode
from orchestrator.loop.corpus_calls import rerank_by_model
from orchestrator.loop.corpus_search import first_round
from orchestrator.records import TaskError
from orchestrator.report.markdown import render_markdown

FOUNDER = "In which town was the founder of Rookcombe Foundry born?"
HOPS = {
    "foundry.md": "Rookcombe Foundry was founded by Tamsin Vell.",
    "vell.md": "Tamsin Vell was born in Harrowgate.",
    "mill.md": "Kestrel Mill was founded by Oren Dask. Oren Dask was born in the town of Lisk.",
    "holt.md": "Mara Holt was born in the town of Brennick; the town was founded by farmers.",
    "hall.md": "The town hall of Rookcombe was built in 1870.",
}
HAS_CROSS_ENCODER = importlib.util.find_spec("sentence_transformers") is not None


@pytest.fixture(scope="module")
def hops_index(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("hops")
    path = root / "hops.sqlite"
    assert corpus.ingest(write_corpus(root / "docs", HOPS), path, dense=False).ok
    return str(path)


@pytest.fixture(scope="module")
def rack_index(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("racks")
    path = root / "index.sqlite"
    assert corpus.ingest(write_corpus(root / "docs"), path, dense=False).ok
    return str(path)


def pool(*texts: str) -> list[Hit]:
    return [
        Hit(f"c{i}", f"f{i}.md", 1, 0, len(t), "", None, t, 1.0 / i, i, None)
        for i, t in enumerate(texts, 1)
    ]


def one_seeded_run(budget_calls: int, **stages: Any) -> RunConfig:
    """Settings for one seeded interrogation (n=1, k=1) that retrieves 2 chunks a round within
    ``budget_calls`` model calls; ``stages`` are the retrieval settings the test is about."""
    return RunConfig(n=1, k=1, budget_calls=budget_calls, seed=1, retrieval_k=2, **stages)


class Overlap:
    """A tiny fake cross-encoder: the number of words a text shares with the query."""

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        asked = set(query.lower().split())
        return [float(len(asked & set(text.lower().split()))) for text in texts]


# ----------------------------------------------------------------------------- sub-questions


def test_a_question_with_a_grammar_plan_reaches_its_second_hop_in_round_1(
    hops_index: str,
) -> None:
    found = first_round(hops_index, FOUNDER, [], RunConfig(retrieval_k=2))

    assert [hit.path for hit in found.new] == ["foundry.md", "vell.md"]
    plan = found.record["plan"]
    assert [hop["sub_question"] for hop in plan] == [
        "Who or what is the founder of Rookcombe Foundry?",
        "In which town was #1 born?",
    ]
    assert "Tamsin Vell" in plan[0]["bridge"]
    assert "In which town was Tamsin Vell born?" in found.record["queries"]


def test_with_subquestions_off_round_1_searches_the_question_alone(hops_index: str) -> None:
    found = first_round(hops_index, FOUNDER, [], RunConfig(retrieval_k=2, subquestions=False))

    assert [hit.path for hit in found.new] == ["foundry.md", "hall.md"]  # no second hop
    assert "plan" not in found.record and "plan_note" not in found.record
    assert found.record["queries"] == [FOUNDER]


def test_a_round_says_why_it_did_not_retrieve_hop_by_hop(rack_index: str) -> None:
    found = first_round(rack_index, "Which hall is rack 7 in?", [], RunConfig(retrieval_k=2))

    assert "plan" not in found.record
    assert found.record["plan_note"].startswith("the question has no plan")


def test_the_chunks_the_questions_own_hits_displaced_are_recorded_with_the_reason(
    rack_index: str,
) -> None:
    question = "Which hall is rack 7 in?"
    rewrites = ["UPS diesel generator", "chillers cooling night", "generator tested Tuesday"]
    expected = corpus.retrieve(rack_index, question, rewrites, 2).dropped
    found = first_round(rack_index, question, rewrites, RunConfig(retrieval_k=2))

    assert expected  # the rewrites pushed the question's own best hit out of the top 2
    assert [d["chunk_id"] for d in found.record["dropped"]] == [d.chunk_id for d in expected]
    dropped = found.record["dropped"][0]
    assert dropped["kept_for"] in {hit.chunk_id for hit in found.new}
    assert "question's own hit 1" in dropped["reason"]


def test_a_corpus_run_reports_its_plan_and_dropped_chunks_in_json_and_markdown(
    hops_index: str, tmp_path: Path
) -> None:
    client = ScriptedClient(corpus_script("no idea", answer=False))
    task = {"question": FOUNDER, "corpus": hops_index}
    settings = one_seeded_run(4, max_retrieval_rounds=1)
    report = run_task(task, client=client, model="m", config=settings, out_dir=tmp_path)

    first = report["retrieval"]["rounds"][0]
    assert first["dropped"] == [] and len(first["plan"]) == 2
    assert report["config"]["subquestions"] is True and report["config"]["entity_weight"] == 0
    assert "retrieved hop by hop: Who or what is the founder" in render_markdown(report)
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["retrieval"]["rounds"][0]["plan"] == first["plan"]


# ----------------------------------------------------------------------------- rerankers


def llm_reply(order: Any) -> ScriptedClient:
    return ScriptedClient([json.dumps({"order": order}) if not isinstance(order, str) else order])


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ([2, 2, 1], "the ordering repeats 'c2'"),
        ([3, 1, 4], "the ordering names 'passage 4', which is not in the pool"),
        ([2, 1], "the ordering leaves out 1 of the 3 chunks ('c3' first)"),
        ("I would put the second passage first.", "the rerank reply cannot be read"),
        (["two", 1, 3], "the rerank reply cannot be read"),
    ],
)
def test_an_invalid_llm_ordering_falls_back_to_the_fused_order_with_the_reason(
    reply: Any, why: str
) -> None:
    candidates = pool("rack 9 hall", "rack 7 is in hall B", "chillers")
    hits, fallback, record = rerank_by_model(
        llm_reply(reply), "m", "Where is rack 7?", candidates, RunConfig()
    )

    assert hits == candidates
    assert fallback is not None and fallback.startswith(why)
    assert record["step"] == "rerank" and record["parse_outcome"] == "unusable"


def test_a_valid_llm_ordering_reorders_the_pool() -> None:
    candidates = pool("rack 9 hall", "rack 7 is in hall B", "chillers")
    client = llm_reply(["2", 1, 3])
    hits, fallback, record = rerank_by_model(
        client, "m", "Where is rack 7?", candidates, RunConfig()
    )

    assert [hit.chunk_id for hit in hits] == ["c2", "c1", "c3"] and fallback is None
    assert record["parse_outcome"] == "ok"
    prompt = client.calls[0]["messages"][-1]["content"]
    assert "[2] rack 7 is in hall B" in prompt and "all 3 numbers" in prompt


def test_the_llm_reranker_keeps_the_top_k_of_a_pool_twice_as_deep_and_records_what_fell_out(
    rack_index: str, tmp_path: Path
) -> None:
    script = corpus_script("no idea", answer=True)

    def reply(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        if kwargs["role"] == "rerank":
            count = messages[-1]["content"].count("\n[")
            return json.dumps({"order": list(range(count, 0, -1))})  # the fused order reversed
        return script(model, messages, kwargs)

    task = {"question": "Which hall is rack 7 in?", "corpus": rack_index}
    settings = one_seeded_run(6, rerank="llm")
    report = run_task(task, client=ScriptedClient(reply), model="m", config=settings)

    first = report["retrieval"]["rounds"][0]
    assert first["rerank"]["method"] == "llm" and first["rerank"]["fallback"] is None
    assert len(first["rerank"]["pool"]) == 4
    assert [h["chunk_id"] for h in first["hits"]] == first["rerank"]["pool"][:1:-1]
    assert {d["chunk_id"] for d in first["dropped"]} == set(first["rerank"]["pool"][:2])
    assert all("llm reranker placed it below the top 2" in d["reason"] for d in first["dropped"])
    assert [c["role"] for c in report["calls"]][:2] == ["query_rewrite", "rerank"]


def test_the_cross_encoder_slot_reorders_with_a_scorer() -> None:
    candidates = pool("rack 9 hall", "rack 7 is in hall B", "chillers")
    hits, fallback = rerank_hits("rack 7 hall B", candidates, Overlap())

    assert [hit.chunk_id for hit in hits] == ["c2", "c1", "c3"] and fallback is None


def test_a_scorer_that_fails_or_miscounts_leaves_the_fused_order() -> None:
    class Broken:
        def scores(self, query: str, texts: Sequence[str]) -> list[float]:
            raise RuntimeError("out of memory")

    class Short:
        def scores(self, query: str, texts: Sequence[str]) -> list[float]:
            return [1.0]

    candidates = pool("a", "b")
    assert rerank_hits("q", candidates, Broken()) == (
        candidates,
        "the reranker failed: RuntimeError: out of memory",
    )
    assert rerank_hits("q", candidates, Short())[1] == (
        "the reranker gave 1 scores for 2 chunks, or a score that is not a finite number"
    )


def test_a_corpus_run_with_a_cross_encoder_reranks_each_round_without_a_model_call(
    rack_index: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded: list[str] = []

    def fake_loader(path: str) -> Overlap:
        loaded.append(path)
        return Overlap()

    monkeypatch.setattr(corpus_mode, "load_cross_encoder", fake_loader)
    client = ScriptedClient(corpus_script("no idea", answer=True))
    task = {"question": "Which hall is rack 7 in?", "corpus": rack_index}
    settings = one_seeded_run(6, rerank="cross-encoder", reranker_path=str(tmp_path))
    report = run_task(task, client=client, model="m", config=settings)

    assert loaded == [str(tmp_path)]
    first = report["retrieval"]["rounds"][0]
    assert first["rerank"]["method"] == "cross-encoder" and first["rerank"]["fallback"] is None
    assert "rerank" not in [call["role"] for call in report["calls"]]


@pytest.mark.skipif(HAS_CROSS_ENCODER, reason="sentence-transformers is installed here")
def test_the_cross_encoder_without_its_library_is_an_error_naming_the_extra(
    tmp_path: Path, rack_index: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(RerankerUnavailable, match=r"corpus-rerank"):
        load_cross_encoder(tmp_path)
    code = logic_graph(["search", "rack 7", "--index", rack_index, "--reranker", str(tmp_path)])
    assert code == 2 and "corpus-rerank" in capsys.readouterr().err
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"question": "Which hall is rack 7 in?", "corpus": rack_index}))
    code = run_main(["--task", str(task), "--model", "m", "--reranker", str(tmp_path)])
    assert code == 2 and "corpus-rerank" in capsys.readouterr().err


def test_a_reranker_path_that_is_no_folder_is_refused_naming_the_reranker(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"reranker '.*nothing' is not a folder"):
        load_cross_encoder(tmp_path / "nothing")


def test_bad_stage_settings_are_refused_naming_the_field() -> None:
    with pytest.raises(TaskError, match=r"^entity_weight=-1 is invalid"):
        RunConfig(entity_weight=-1)
    with pytest.raises(TaskError, match=r"^rerank='bm25' is invalid"):
        RunConfig(rerank="bm25")
    with pytest.raises(TaskError, match=r"^reranker_path=None with rerank='cross-encoder'"):
        RunConfig(rerank="cross-encoder")
    with pytest.raises(TaskError, match=r"^subquestions='on' is invalid"):
        RunConfig(subquestions="on")  # type: ignore[arg-type]


def test_two_rerankers_on_the_command_line_are_refused(
    tmp_path: Path, rack_index: str, capsys: pytest.CaptureFixture[str]
) -> None:
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"question": "Which hall is rack 7 in?", "corpus": rack_index}))
    code = run_main(["--task", str(task), "--rerank", "llm", "--reranker", str(tmp_path)])
    assert code == 2 and "give one reranker" in capsys.readouterr().err


def test_apply_order_takes_a_complete_ordering_of_the_pool() -> None:
    candidates = pool("a", "b", "c")
    assert [h.chunk_id for h in apply_order(candidates, ["c3", "c1", "c2"])[0]] == [
        "c3",
        "c1",
        "c2",
    ]


# ----------------------------------------------------------------------------- dense rankings


def test_every_round_is_keyword_only_by_default_and_searches_dense_when_told(
    rack_index: str,
) -> None:
    task = {"question": "Which hall is rack 7 in?", "corpus": rack_index}
    script = corpus_script("no idea", answer=False)  # refused, so a second round runs
    settings = one_seeded_run(8)
    off = run_task(task, client=ScriptedClient(script), model="m", config=settings)
    on = run_task(
        task,
        client=ScriptedClient(script),
        model="m",
        config=one_seeded_run(8, dense=True),
    )
    assert len(off["retrieval"]["rounds"]) == len(on["retrieval"]["rounds"]) == 2
    for asked in off["retrieval"]["rounds"]:
        assert asked["dense_note"] == "dense retrieval was turned off for this search"
    for asked in on["retrieval"]["rounds"]:  # asked for, but this index holds no vectors
        assert not asked["dense_used"] and "for this search" not in asked["dense_note"]


def test_hyde_without_dense_retrieval_is_refused_naming_both_flags(
    tmp_path: Path, rack_index: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(TaskError, match=r"^hyde=True with dense=False is invalid"):
        RunConfig(hyde=True)
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"question": "Which hall is rack 7 in?", "corpus": rack_index}))
    assert run_main(["--task", str(task), "--hyde"]) == 2
    err = capsys.readouterr().err
    assert "--dense on" in err and "--hyde" in err


def test_logic_graph_search_is_keyword_only_unless_dense_is_on(
    rack_index: str, capsys: pytest.CaptureFixture[str]
) -> None:
    query = ["search", "rack 7", "--index", rack_index]
    assert logic_graph(query) == 0
    assert "keyword only (dense retrieval was turned off" in capsys.readouterr().out
    assert logic_graph([*query, "--dense", "on", "--keyword-only"]) == 0
    assert "keyword only (dense retrieval was turned off" in capsys.readouterr().out
    assert logic_graph([*query, "--dense", "on"]) == 0  # asked for; the index has no vectors
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("2 hits, keyword only (") and "for this search" not in first


# ----------------------------------------------------------------------------- search and HyDE


def test_logic_graph_search_retrieves_hop_by_hop_unless_told_not_to(
    hops_index: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert logic_graph(["search", FOUNDER, "--index", hops_index, "-k", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 sub-questions" in out and "vell.md" in out
    assert (
        logic_graph(["search", FOUNDER, "--index", hops_index, "-k", "2", "--subquestions", "off"])
        == 0
    )
    assert "vell.md" not in capsys.readouterr().out


def test_hyde_is_off_by_default_and_one_call_when_on(rack_index: str) -> None:
    task = {"question": "Which hall is rack 7 in?", "corpus": rack_index}
    settings = one_seeded_run(6)
    script = corpus_script("no idea", answer=True)
    off = run_task(task, client=ScriptedClient(script), model="m", config=settings)
    assert "hyde" not in off["retrieval"] and "hyde" not in [c["role"] for c in off["calls"]]

    def reply(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        return (
            "Rack 7 is in hall B." if kwargs["role"] == "hyde" else script(model, messages, kwargs)
        )

    on = run_task(
        task,
        client=ScriptedClient(reply),
        model="m",
        config=one_seeded_run(6, dense=True, hyde=True),
    )
    assert [c["role"] for c in on["calls"]].count("hyde") == 1
    hyde = on["retrieval"]["hyde"]
    assert hyde["passage"] == "Rack 7 is in hall B."
    assert hyde["fallback"] is not None
    assert hyde["fallback"].startswith("the passage was not used: ")  # a keyword-only index


@pytest.mark.skipif(not vec_search_available(), reason="needs sqlite-vec ([corpus] extra)")
def test_a_hyde_passage_adds_its_dense_ranking_to_the_fusion(tmp_path: Path) -> None:
    files = {
        "a.md": "The bell tower stands at the harbour.",
        "b.md": "Quarry stone was shipped north.",
        "c.md": "Copper roofs turn green with age.",
    }
    embedder = HashEmbedder()
    index = tmp_path / "dense.sqlite"
    assert corpus.ingest(write_corpus(tmp_path / "docs", files), index, dense=embedder).ok
    question = "Where is the bell tower?"
    plain = corpus.retrieve(index, question, (), 3, dense=embedder)
    hyde = corpus.retrieve(
        index, question, (), 3, dense=embedder, hyde="Copper roofs turn green with age."
    )

    assert plain.dense_used and hyde.dense_used
    rank = {h.chunk_id: i for i, h in enumerate(hyde.hits)}
    before = {h.chunk_id: i for i, h in enumerate(plain.hits)}
    assert rank["c.md#p1c1"] < before["c.md#p1c1"]
