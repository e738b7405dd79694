"""The external task sets (reasoning-gym, BIG-bench): shape, gold answers, reproducible builds."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from evals.datasets import BUILTIN, build_bigbench, build_reasoning_gym, load_items, validate_item
from evals.score import is_answerable, score
from orchestrator.reply.answers import answer_key

EXTERNAL = ("family_relationships", "knights_knaves", "syllogism", "logical_deduction", "vitaminc")


@pytest.fixture(scope="module", params=EXTERNAL)
def external(request: pytest.FixtureRequest) -> tuple[str, list[dict[str, Any]]]:
    return request.param, load_items(BUILTIN[request.param])


def test_every_external_item_is_valid_and_its_evidence_is_a_document(
    external: tuple[str, list[dict[str, Any]]],
) -> None:
    name, items = external
    assert len(items) >= 50
    assert len({item["id"] for item in items}) == len(items)
    for item in items:
        validate_item(item)
        assert item["dataset"] == name and item["kind"] == "qa"
        assert item["documents"] and all(d.strip() for d in item["documents"])
        assert item["meta"]["license"] == "Apache-2.0"
        # Gold answers are short values the orchestrator can cluster (its answer limit is 80).
        assert len(item["answer"]) <= 80


def test_a_gold_answer_or_alias_scores_as_correct(
    external: tuple[str, list[dict[str, Any]]],
) -> None:
    _, items = external
    for item in items:
        if not is_answerable(item):
            continue
        for spelling in [item["answer"], *item["answer_aliases"]]:
            assert score(item, spelling)["correct"], (item["id"], spelling)


def test_knights_and_knaves_accept_the_verdicts_in_either_order() -> None:
    item = load_items(BUILTIN["knights_knaves"], limit=1)[0]
    first, second = item["answer"].rstrip(".").split(", and ")
    assert score(item, f"{second} and {first}")["correct"]
    assert not score(item, f"{first.replace('is a', 'is not a')}, and {second}")["correct"]


def test_vitaminc_neither_items_are_unanswerable_and_true_false_are_yes_no() -> None:
    items = load_items(BUILTIN["vitaminc"])
    labels = {item["meta"]["label"]: 0 for item in items}
    for item in items:
        labels[item["meta"]["label"]] += 1
        expected = {"True": "yes", "False": "no", "Neither": ""}[item["meta"]["label"]]
        assert item["answer"] == expected
        assert is_answerable(item) == (expected != "")
    assert labels == {"True": 20, "False": 20, "Neither": 20}
    # The orchestrator's answer clustering reads "true"/"false" as yes/no, like the scorer.
    assert answer_key("True") == "yes" and answer_key("false") == "no"


def test_logical_deduction_answers_are_among_the_objects_the_question_lists() -> None:
    for item in load_items(BUILTIN["logical_deduction"]):
        assert item["answer"] in item["question"]
        assert item["answer"] in item["documents"][0]
        assert item["meta"]["objects"] in ("three_objects", "five_objects")


def test_syllogism_questions_are_yes_no_claims_over_two_premises() -> None:
    for item in load_items(BUILTIN["syllogism"]):
        assert item["answer"] in ("yes", "no")
        assert item["question"].startswith("Does it logically follow")
        assert item["documents"][0].count(".") >= 2


@pytest.mark.skipif(
    build_reasoning_gym.installed_version() != build_reasoning_gym.PACKAGE_VERSION,
    reason="reasoning-gym==0.1.25 is not installed (pip install -e '.[datasets]')",
)
@pytest.mark.parametrize("name", sorted(build_reasoning_gym.CUTTERS))
def test_the_reasoning_gym_builder_reproduces_the_committed_file_byte_for_byte(
    name: str, tmp_path: Path
) -> None:
    assert importlib.util.find_spec("reasoning_gym") is not None
    assert build_reasoning_gym.main(["--set", name, "--out-dir", str(tmp_path)]) == 0
    assert (tmp_path / f"{name}.jsonl").read_bytes() == BUILTIN[name].read_bytes()


@pytest.mark.skipif(
    not build_bigbench.DEFAULT_SDIST.is_file(),
    reason=f"the BIG-bench sdist is not at {build_bigbench.DEFAULT_SDIST} (see build_bigbench)",
)
def test_the_bigbench_builder_reproduces_the_committed_files_byte_for_byte(
    tmp_path: Path,
) -> None:
    assert build_bigbench.main(["--out-dir", str(tmp_path)]) == 0
    for name in ("logical_deduction", "vitaminc"):
        assert (tmp_path / f"{name}.jsonl").read_bytes() == BUILTIN[name].read_bytes()


def test_the_bigbench_builder_refuses_an_archive_that_is_not_the_pinned_one(
    tmp_path: Path,
) -> None:
    fake = tmp_path / build_bigbench.SDIST_NAME
    fake.write_bytes(b"not the archive")
    with pytest.raises(build_bigbench.BuildError, match="sha256"):
        build_bigbench.build(fake)


def test_the_logical_deduction_choices_split_into_subjects_and_a_shared_predicate() -> None:
    names, predicate = build_bigbench.split_choices(
        ["The owl is the leftmost.", "The blue jay is the leftmost."]
    )
    assert (names, predicate) == (["owl", "blue jay"], "is the leftmost")
    names, predicate = build_bigbench.split_choices(["Ada finished first.", "Eli finished first."])
    assert (names, predicate) == (["Ada", "Eli"], "finished first")
    with pytest.raises(build_bigbench.BuildError):
        build_bigbench.split_choices(["Ada won.", "Eli lost."])
