"""Datasets: public-format loaders, the common item format, and the two shipped offline sets.

The multi-hop checks re-derive every answer with a resolver written here, independently of the
generator: it parses the paragraph *text* with its own sentence patterns and follows the item's
program over the facts it finds.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from corpus.evidence import build_evidence
from evals import datasets
from evals.datasets import (
    build_math,
    build_multihop,
    build_prose,
    build_unanswerable,
    multihop_vocabulary,
)

DATA_DIR = Path(build_multihop.__file__).parent

# --------------------------------------------------------------------------- public formats


def _write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


GSM8K_RECORDS = [
    {
        "question": "Mira packs 12 jars a day for 6 days. How many jars does she pack?",
        "answer": "She packs 12*6=<<12*6=72>>72 jars.\n#### 72",
    },
    {
        "question": "A lamp costs $1,200 and is sold at a $150 discount. What is the price?",
        "answer": "1200-150=<<1200-150=1050>>1050\n#### 1,050",
    },
]

HOTPOT_RECORD: dict[str, Any] = {
    "_id": "5ab3d2ae55429969a97a81a5",
    "question": "Which town is home to the firm that rebuilt Ostgate Pier?",
    "answer": "Brelling",
    "type": "bridge",
    "level": "medium",
    "supporting_facts": [["Ostgate Pier", 1], ["Harlow Marine", 0], ["Harlow Marine", 7]],
    "context": [
        ["Ostgate Pier", ["Ostgate Pier is a pier.", " It was rebuilt by Harlow Marine."]],
        ["Harlow Marine", ["Harlow Marine is a firm based in Brelling.", " It builds piers."]],
        ["Brelling", ["Brelling is a coastal town."]],
    ],
}

MUSIQUE_RECORDS = [
    {
        "id": "2hop__1_2",
        "question": "Who founded the label that signed Corla Venn?",
        "answer": "Idris Marr",
        "answer_aliases": ["I. Marr"],
        "answerable": True,
        "question_decomposition": [],
        "paragraphs": [
            {"idx": 0, "title": "Corla Venn", "paragraph_text": "Corla Venn signed with Tallow "
             "Records.", "is_supporting": True},
            {"idx": 1, "title": "Tallow Records", "paragraph_text": "Tallow Records was founded "
             "by Idris Marr.", "is_supporting": True},
            {"idx": 2, "title": "Other", "paragraph_text": "Unrelated text.",
             "is_supporting": False},
        ],
    },
    {
        "id": "2hop__3_4",
        "question": "Who founded the label that signed Pim Dorr?",
        "answer": "",
        "answer_aliases": [],
        "answerable": False,
        "paragraphs": [
            {"idx": 0, "title": "Pim Dorr", "paragraph_text": "Pim Dorr sings.",
             "is_supporting": False},
        ],
    },
]  # fmt: skip


def test_gsm8k_loader_takes_the_number_after_the_marker(tmp_path: Path) -> None:
    items = datasets.load_gsm8k(_write_jsonl(tmp_path / "test.jsonl", GSM8K_RECORDS))
    assert [item["answer"] for item in items] == ["72", "1050"]
    assert items[0]["id"] == "gsm8k-00001"
    assert items[0]["kind"] == "math"
    assert items[0]["documents"] == []
    assert "<<12*6=72>>" in items[0]["meta"]["solution"]
    for item in items:
        datasets.validate_item(item)


def test_gsm8k_answer_without_marker_names_file_and_line(tmp_path: Path) -> None:
    bad = [GSM8K_RECORDS[0], {"question": "Q?", "answer": "just 5"}]
    path = _write_jsonl(tmp_path / "bad.jsonl", bad)
    with pytest.raises(
        datasets.DatasetFormatError, match=r"bad\.jsonl:2: field 'answer' must end with"
    ):
        datasets.load_gsm8k(path)


def test_invalid_json_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(GSM8K_RECORDS[0]) + "\n\n{not json\n", encoding="utf-8")
    with pytest.raises(datasets.DatasetFormatError, match=r"broken\.jsonl:3: invalid JSON"):
        datasets.load_gsm8k(path)


def test_non_object_line_is_rejected_with_its_location(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "list.jsonl", [[1, 2]])
    with pytest.raises(datasets.DatasetFormatError, match=r"list\.jsonl:1: expected a JSON object"):
        datasets.load_gsm8k(path)


def test_hotpotqa_json_array_becomes_titled_paragraphs(tmp_path: Path) -> None:
    path = tmp_path / "hotpot_dev_distractor_v1.json"
    path.write_text(json.dumps([HOTPOT_RECORD]), encoding="utf-8")
    (item,) = datasets.load_hotpotqa(path)
    assert item["id"] == HOTPOT_RECORD["_id"]
    assert item["kind"] == "qa"
    assert item["paragraph_ids"] == ["Ostgate Pier", "Harlow Marine", "Brelling"]
    assert (
        item["documents"][0]
        == "Ostgate Pier: Ostgate Pier is a pier. It was rebuilt by Harlow Marine."
    )
    assert item["supporting_ids"] == ["Ostgate Pier", "Harlow Marine"]
    # sentence 7 does not exist: kept for the record, not dropped silently
    assert item["meta"]["dangling_supporting_facts"] == [["Harlow Marine", 7]]
    datasets.validate_item(item)


def test_hotpotqa_column_form_jsonl_loads_the_same(tmp_path: Path) -> None:
    columns: dict[str, Any] = dict(HOTPOT_RECORD)
    columns["context"] = {
        "title": [t for t, _ in HOTPOT_RECORD["context"]],
        "sentences": [s for _, s in HOTPOT_RECORD["context"]],
    }
    columns["supporting_facts"] = {"title": ["Ostgate Pier", "Harlow Marine"], "sent_id": [1, 0]}
    array = tmp_path / "a.json"
    array.write_text(json.dumps([HOTPOT_RECORD]), encoding="utf-8")
    (from_columns,) = datasets.load_hotpotqa(_write_jsonl(tmp_path / "c.jsonl", [columns]))
    (from_array,) = datasets.load_hotpotqa(array)
    assert from_columns["documents"] == from_array["documents"]
    assert from_columns["supporting_ids"] == from_array["supporting_ids"]


def test_hotpotqa_bad_item_names_its_index(tmp_path: Path) -> None:
    broken = dict(HOTPOT_RECORD, context=[["title only"]])
    path = tmp_path / "h.json"
    path.write_text(json.dumps([HOTPOT_RECORD, broken]), encoding="utf-8")
    with pytest.raises(datasets.DatasetFormatError, match=r"h\.json: item 1: field 'context'"):
        datasets.load_hotpotqa(path)


def test_hotpotqa_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    path.write_text('[\n{"question": "q",\n "answer": }\n]', encoding="utf-8")
    with pytest.raises(datasets.DatasetFormatError, match=r"h\.json:3: invalid JSON"):
        datasets.load_hotpotqa(path)


def test_musique_loader_keeps_supporting_flags_and_aliases(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "musique_ans_v1.0_dev.jsonl", MUSIQUE_RECORDS)
    (item,) = datasets.load_musique(path)
    assert item["id"] == "2hop__1_2"
    assert item["paragraph_ids"] == ["0", "1", "2"]
    assert item["supporting_ids"] == ["0", "1"]
    assert item["answer_aliases"] == ["I. Marr"]
    assert item["documents"][1] == "Tallow Records: Tallow Records was founded by Idris Marr."
    datasets.validate_item(item)


def test_musique_unanswerable_records_are_kept_on_request(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "full.jsonl", MUSIQUE_RECORDS)
    items = datasets.load_musique(path, answerable_only=False)
    assert [item["meta"]["answerable"] for item in items] == [True, False]
    for item in items:
        datasets.validate_item(item)


def test_musique_paragraph_without_idx_names_the_paragraph(tmp_path: Path) -> None:
    record = json.loads(json.dumps(MUSIQUE_RECORDS[0]))
    del record["paragraphs"][1]["idx"]
    path = _write_jsonl(tmp_path / "m.jsonl", [record])
    with pytest.raises(
        datasets.DatasetFormatError, match=r"m\.jsonl:1: paragraphs\[1\]: field 'idx'"
    ):
        datasets.load_musique(path)


def test_load_dataset_recognises_each_public_format(tmp_path: Path) -> None:
    gsm = _write_jsonl(tmp_path / "g.jsonl", GSM8K_RECORDS)
    musique = _write_jsonl(tmp_path / "m.jsonl", MUSIQUE_RECORDS)
    hotpot = tmp_path / "h.json"
    hotpot.write_text(json.dumps([HOTPOT_RECORD]), encoding="utf-8")
    assert datasets.load_dataset(gsm)[0]["dataset"] == "gsm8k"
    assert datasets.load_dataset(musique)[0]["dataset"] == "musique"
    assert datasets.load_dataset(str(hotpot))[0]["dataset"] == "hotpotqa"
    assert len(datasets.load_dataset(gsm, limit=1)) == 1


def test_load_dataset_reads_common_format_files_back(tmp_path: Path) -> None:
    items = datasets.load_dataset("multihop", limit=3)
    path = _write_jsonl(tmp_path / "mine.jsonl", items)
    assert datasets.load_dataset(path) == items


def test_load_dataset_explains_unknown_names_and_formats(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="neither"):
        datasets.load_dataset("gsm8k-test")
    odd = _write_jsonl(tmp_path / "odd.jsonl", [{"prompt": "x"}])
    with pytest.raises(datasets.DatasetFormatError, match="cannot tell the format"):
        datasets.load_dataset(odd)
    with pytest.raises(ValueError, match="limit"):
        datasets.load_dataset("math", limit=-1)


def test_load_items_rejects_duplicate_ids_with_the_line(tmp_path: Path) -> None:
    item = datasets.load_dataset("math", limit=1)[0]
    path = _write_jsonl(tmp_path / "dup.jsonl", [item, item])
    with pytest.raises(datasets.DatasetFormatError, match=r"dup\.jsonl:2: duplicate item id"):
        datasets.load_items(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "essay"}, "field 'kind'"),
        ({"question": " "}, "field 'question'"),
        ({"documents": ["a"]}, "same length"),
        ({"paragraph_ids": ["p1", "p1"], "documents": ["a", "b"]}, "unique"),
        ({"supporting_ids": ["p9"]}, "'supporting_ids'"),
        ({"answer_aliases": "x"}, "field 'answer_aliases'"),
        ({"meta": None}, "field 'meta'"),
        ({"answer": "seven"}, "must hold a number"),
    ],
)
def test_validate_item_names_the_broken_field(change: dict[str, Any], message: str) -> None:
    item = dict(datasets.load_dataset("math", limit=1)[0], **change)
    with pytest.raises(ValueError, match=message):
        datasets.validate_item(item)


def test_item_to_task_hands_over_question_documents_and_answer_only() -> None:
    item = datasets.load_dataset("multihop", limit=1)[0]
    task = datasets.item_to_task(item)
    assert task == {
        "question": item["question"],
        "documents": item["documents"],
        "expected_answer": item["answer"],
    }
    assert task["documents"] is not item["documents"]


def test_item_to_task_gives_a_word_problem_its_own_statement_as_the_document() -> None:
    item = datasets.load_dataset("math", limit=1)[0]
    assert item["documents"] == []
    assert datasets.item_to_task(item)["documents"] == [item["question"]]


# --------------------------------------------------------------------------- shipped math set


@pytest.fixture(scope="module")
def math_items() -> list[dict[str, Any]]:
    return datasets.load_items(datasets.BUILTIN["math"])


def test_math_set_has_880_valid_items_with_unique_ids(math_items: list[dict[str, Any]]) -> None:
    assert len(math_items) == 880
    assert len({item["id"] for item in math_items}) == 880
    for item in math_items:
        assert item["kind"] == "math" and item["dataset"] == "math"
        # answers are stored canonically: an integer or a decimal without trailing zeros
        assert re.fullmatch(r"-?\d+(\.\d*[1-9])?", item["answer"]), item["answer"]
        assert item["meta"]["generator"] == "gsm_symbolic"
        assert item["meta"]["license"] == "Apache-2.0"
        assert item["meta"]["solution"].rstrip().endswith(item["answer"]) or item["meta"][
            "solution"
        ].rstrip().endswith(item["answer"] + ".0")


def test_math_provenance_file_names_the_seed_and_version(math_items: list[dict[str, Any]]) -> None:
    provenance = (DATA_DIR / "PROVENANCE.md").read_text(encoding="utf-8")
    meta = math_items[0]["meta"]
    assert {item["meta"]["seed"] for item in math_items} == {meta["seed"]}
    assert f"reasoning-gym=={meta['package_version']}" in provenance
    assert f"seed {meta['seed']}" in provenance


@pytest.mark.parametrize(
    ("solution", "errors"),
    [
        ("There are 12 x 2 = 24 players.\nIn total 12 + 24 + 34 = 70.", 0),
        ("He paid $1,200 / 4 = $300 each.", 0),
        ("2 / 4 = 50.0% of the sides.", 0),
        ("Ben has 13*0.5=6 tubes.", 1),
        ("She bought 899.6 / 1.2 = 749 cans.", 1),
        ("So 0.58*80 = 46 students.", 1),
        ("Substituting, we get 2x+110=278", 0),  # algebra, not arithmetic
        ("Each horse needs 7 kg * 2 - 5 = 9 kg.", 0),  # left side mixes in words
        ("It takes 10\u00f71/2=20 minutes.", 0),
        ("Rounded: 10 / 3 = 3.33 hours.", 0),
        ("Rounded badly: 10 / 3 = 3.4 hours.", 1),
    ],
)
def test_math_audit_flags_false_arithmetic_steps_only(solution: str, errors: int) -> None:
    assert len(build_math.arithmetic_errors(solution)) == errors


def test_math_audit_rejects_float_artefacts_and_disagreeing_answers() -> None:
    sound = {"question": "Q?", "answer": "8", "metadata": {"answer_value": 8.0,
             "answer_cot": "4 + 4 = 8\n#### 8"}}  # fmt: skip
    assert build_math.audit(sound) == []
    leaky = dict(sound, question="It is 0.6666666666666666 water. How much?")
    assert "floating-point artefact" in build_math.audit(leaky)[0]
    mismatch = dict(sound, answer="9")
    assert any("answer_value" in reason for reason in build_math.audit(mismatch))
    assert build_math.audit(dict(sound, answer="nine")) == ["answer 'nine' is not a finite number"]


@pytest.mark.skipif(
    importlib.util.find_spec("reasoning_gym") is None, reason="reasoning-gym not installed"
)
def test_math_builder_reproduces_the_committed_items(math_items: list[dict[str, Any]]) -> None:
    items, _ = build_math.build(build_math.DEFAULT_SEED, 6)
    assert items == math_items[:6]


# --------------------------------------------------------------------------- shipped multi-hop set

_ENTITY = r"(?:[Tt]he )?[A-Z][a-z]+(?: [A-Z][a-z]+)*|[Tt]he [a-z]+"
_S, _O, _N = rf"(?P<s>{_ENTITY})", rf"(?P<o>{_ENTITY})", r"(?P<o>\d+)"
# The resolver's own reading of each relation; every fact sentence must match exactly one.
_PATTERNS = [
    ("born_in", rf"{_S} was born in (?:the town of )?{_O}"),
    ("birth_year", rf"{_S} was born in the year {_N}"),
    ("birth_year", rf"{_S}'s year of birth was {_N}"),
    ("founded_by", rf"{_S} was founded by {_O}"),
    ("founded_by", rf"{_O} founded {_S}"),
    ("founded_year", rf"{_S} was (?:founded|established) in {_N}"),
    ("headquartered_in", rf"{_S} (?:is headquartered in|has its head office in) {_O}"),
    ("built_by", rf"{_S} was built by {_O}"),
    ("built_by", rf"{_O} built {_S}"),
    ("spans", rf"{_S} (?:spans|crosses) {_O}"),
    ("opened_year", rf"{_S} (?:opened|was opened to traffic) in {_N}"),
    ("lies_on", rf"{_S} (?:lies on|is a town on) {_O}"),
    ("town_founded_year", rf"{_S} (?:was first settled|received its charter) in {_N}"),
    ("flows_into", rf"{_S} (?:flows|empties) into {_O}"),
    ("length_km", rf"{_S} (?:is|runs for) {_N} kilometres(?: long)?"),
    ("invented_by", rf"{_S} was invented by {_O}"),
    ("invented_by", rf"{_O} invented {_S}"),
]
_COMPILED = [(relation, re.compile(pattern)) for relation, pattern in _PATTERNS]
Fact = tuple[str, str]  # (subject, relation)


def _bare(name: str) -> str:
    return re.sub(r"^[Tt]he ", "", name)


def _facts(item: dict[str, Any], paragraph_ids: list[str]) -> dict[Fact, tuple[str, str, str]]:
    """(subject, relation) -> (object, paragraph id, sentence), over the given paragraphs.

    Fails on a sentence two patterns read, and on a fact stated twice, even identically.
    """
    texts = dict(zip(item["paragraph_ids"], item["documents"], strict=True))
    facts: dict[Fact, tuple[str, str, str]] = {}
    for pid in paragraph_ids:
        for sentence in re.split(r"(?<=\.) ", texts[pid]):
            body = sentence.removesuffix(".")
            readings = [
                (relation, match)
                for relation, pattern in _COMPILED
                if (match := pattern.fullmatch(body))
            ]
            assert len(readings) <= 1, f"{item['id']}: ambiguous sentence {sentence!r}"
            if readings:
                relation, match = readings[0]
                key = (_bare(match["s"]), relation)
                assert key not in facts, f"{item['id']}: {key} stated twice"
                facts[key] = (_bare(match["o"]), pid, sentence)
    return facts


def _resolve(
    program: dict[str, Any], facts: dict[Fact, tuple[str, str, str]]
) -> tuple[str, list[Fact]]:
    """Follow the item's program over parsed facts: (answer, facts used)."""
    used: list[Fact] = []

    def follow(name: str, path: list[str]) -> str:
        for relation in path:
            used.append((name, relation))
            name = facts[(name, relation)][0]
        return name

    if "start" in program:
        return follow(program["start"], program["path"]), used
    ends = [follow(operand, program["path"]) for operand in program["operands"]]
    values = [int(follow(end, [program["attribute"]])) for end in ends]
    best = min(values) if program["pick"] == "min" else max(values)
    assert values.count(best) == 1, "comparison must not tie"
    return ends[values.index(best)], used


@pytest.fixture(scope="module")
def multihop_items() -> list[dict[str, Any]]:
    return datasets.load_items(datasets.BUILTIN["multihop"])


MULTIHOP_BUILDERS = {
    "multihop": build_multihop,
    "multihop_unanswerable": build_unanswerable,
    "prose": build_prose,
}
"""The builders of the shipped sets made from build_multihop's worlds, by set name."""


@pytest.mark.parametrize("name", MULTIHOP_BUILDERS)
def test_each_multihop_builder_reproduces_its_committed_file_byte_for_byte(
    name: str, tmp_path: Path
) -> None:
    out = tmp_path / f"{name}.jsonl"
    assert MULTIHOP_BUILDERS[name].main(["--out", str(out)]) == 0
    assert out.read_bytes() == datasets.BUILTIN[name].read_bytes()


def test_multihop_output_does_not_depend_on_hash_randomisation(tmp_path: Path) -> None:
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"h{hash_seed}.jsonl"
        command = [sys.executable, "-m", "evals.datasets.build_multihop", "--count", "4"]
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([*command, "--out", str(out)], check=True, env=env, capture_output=True)
        outputs.append(out.read_bytes())
    committed = datasets.BUILTIN["multihop"].read_bytes().splitlines(keepends=True)[:4]
    assert outputs[0] == outputs[1] == b"".join(committed)


def test_multihop_seed_changes_the_items() -> None:
    assert build_multihop.build_item(1, 0) != build_multihop.build_item(2, 0)
    assert build_multihop.build_item(1, 0) == build_multihop.build_item(1, 0)


def test_multihop_set_shape(multihop_items: list[dict[str, Any]]) -> None:
    assert len(multihop_items) == 400
    assert len({item["id"] for item in multihop_items}) == 400
    families = {item["meta"]["family"] for item in multihop_items}
    assert families == set(multihop_vocabulary.FAMILIES)
    for item in multihop_items:
        assert item["kind"] == "qa"
        assert len(item["documents"]) == 10
        assert 2 <= len(item["supporting_ids"]) <= 4
        allowed_hops = (2, 3) if item["meta"]["type"] == "chain" else (1, 2)
        assert item["meta"]["hops"] in allowed_hops


def test_every_multihop_answer_follows_from_its_gold_paragraphs(
    multihop_items: list[dict[str, Any]],
) -> None:
    for item in multihop_items:
        gold = _facts(item, item["supporting_ids"])
        answer, used = _resolve(item["meta"]["program"], gold)
        assert answer == item["answer"], item["id"]
        # every gold paragraph is needed, and nothing else is
        assert sorted({gold[fact][1] for fact in used}) == item["supporting_ids"], item["id"]


def test_distractors_neither_contradict_nor_restate_the_chain(
    multihop_items: list[dict[str, Any]],
) -> None:
    for item in multihop_items:
        everything = _facts(item, item["paragraph_ids"])  # fails on any fact stated twice
        answer, used = _resolve(item["meta"]["program"], everything)
        assert answer == item["answer"], item["id"]
        distractors = [p for p in item["paragraph_ids"] if p not in item["supporting_ids"]]
        assert not {fact for fact in used if everything[fact][1] in distractors}, item["id"]


def test_no_distractor_contains_an_answer_sentence(multihop_items: list[dict[str, Any]]) -> None:
    for item in multihop_items:
        texts = dict(zip(item["paragraph_ids"], item["documents"], strict=True))
        for evidence in item["meta"]["evidence"]:
            assert evidence["paragraph_id"] in item["supporting_ids"]
            assert evidence["sentence"] in texts[evidence["paragraph_id"]]
            for pid, text in texts.items():
                if pid not in item["supporting_ids"]:
                    assert evidence["sentence"] not in text, (item["id"], pid)


def test_chain_answers_appear_in_the_final_hop_paragraph_but_not_the_question(
    multihop_items: list[dict[str, Any]],
) -> None:
    for item in multihop_items:
        if item["meta"]["type"] != "chain":
            continue
        texts = dict(zip(item["paragraph_ids"], item["documents"], strict=True))
        final_hop = item["meta"]["evidence"][-1]
        assert item["answer"] in final_hop["sentence"]
        assert item["answer"] in texts[final_hop["paragraph_id"]]
        assert item["answer"] not in item["question"]


def test_distractors_share_entities_with_the_gold_paragraphs(
    multihop_items: list[dict[str, Any]],
) -> None:
    for item in multihop_items:
        gold = _facts(item, item["supporting_ids"])
        names = {s for s, _ in gold} | {o for o, _, _ in gold.values() if not o.isdigit()}
        distractors = [
            text
            for pid, text in zip(item["paragraph_ids"], item["documents"], strict=True)
            if pid not in item["supporting_ids"]
        ]
        shared = [name for name in sorted(names) if any(name in text for text in distractors)]
        assert shared, item["id"]


def test_every_fact_sentence_has_a_reading(multihop_items: list[dict[str, Any]]) -> None:
    # Colour sentences aside, the resolver reads every sentence the generator meant as a fact,
    # so the resolver's patterns cover all generator templates.
    for item in multihop_items[:40]:
        facts = _facts(item, item["paragraph_ids"])
        sentences = {sentence for _, _, sentence in facts.values()}
        for evidence in item["meta"]["evidence"]:
            assert evidence["sentence"] in sentences
    readable = {relation for relation, _ in _PATTERNS}
    assert readable == set(multihop_vocabulary.RELATIONS)


def test_rng_is_a_pure_function_of_its_seed() -> None:
    first, second = build_multihop.Rng(7), build_multihop.Rng(7)
    assert [first.next_u64() for _ in range(5)] == [second.next_u64() for _ in range(5)]
    # SplitMix64 reference output for seed 0 (published test vector)
    assert build_multihop.Rng(0).next_u64() == 0xE220A8397B1DCDAF
    rng = build_multihop.Rng(3)
    assert all(0 <= rng.below(7) < 7 for _ in range(200))
    with pytest.raises(ValueError, match="positive"):
        rng.below(0)


def test_unanswerable_items_lack_the_paragraph_that_stated_the_answer() -> None:
    items = datasets.load_items(datasets.BUILTIN["multihop_unanswerable"])
    assert len(items) == 88
    for item in items:
        assert item["meta"]["answerable"] is False and item["answer"] == ""
        assert item["meta"]["removed_paragraph"] not in item["paragraph_ids"]
        removed = item["meta"]["removed_sentence"]
        assert all(removed not in document for document in item["documents"])


def test_prose_items_open_with_a_title_and_refer_back_to_their_subject() -> None:
    items = datasets.load_items(datasets.BUILTIN["prose"])
    assert len(items) == 52
    unanswerable = [item for item in items if not item["meta"]["answerable"]]
    assert [items.index(item) % 4 for item in unanswerable] == [3] * 13
    for item in unanswerable:
        assert (
            item["answer"] == "" and item["meta"]["removed_paragraph"] not in item["paragraph_ids"]
        )
    for item in items:
        for document in item["documents"]:
            title, _, body = document.partition("\n")
            assert body.startswith((title.removeprefix("Title: "), "The "))
            if title.startswith("Title: ") or title[0].isupper():  # "dresselpipe" is no title
                assert build_evidence([document]).spans[0].reading is not None
    texts = " ".join(d for item in items for d in item["documents"])
    for reference in (". It ", ". She ", ". He ", ". The yard ", ". Her ", ". His "):
        assert reference in texts
    assert "Steel Co." in texts
