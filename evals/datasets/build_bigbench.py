"""Build two external task sets from BIG-bench task files (Apache-2.0).

The task JSON ships only in the ``bigbench`` package's source distribution (about 360 MB), so it
is fetched once by hand, never in CI, and only the small built subsets are committed::

    pip download --no-deps --no-binary :all: bigbench==1.0.0 -d ~/.cache/logic-graph
    python -m evals.datasets.build_bigbench --sdist ~/.cache/logic-graph/bigbench-1.0.0.tar.gz

The archive is checked against `SDIST_SHA256` and read in place (only the task files needed).

* ``logical_deduction.jsonl`` - BIG-bench ``logical_deduction`` (three and five objects): the
  paragraph of ordering premises is the document; the question asks which object has the
  property all the answer choices name ("Which one is the leftmost: ...?"), answered with the
  object's name.
* ``vitaminc.jsonl`` - BIG-bench ``vitaminc_fact_verification``: a Wikipedia passage is the
  document; does it show the claim true (``yes``), false (``no``), or neither? "Neither"
  becomes an unanswerable item (``meta.answerable: false``, gold ``""``): the right response
  is to abstain.

Examples are drawn with ``random.Random(SEED)`` (logical deduction: half from each object
count; VitaminC: a third per label, so a third of the items are unanswerable), then shuffled
with the same generator, so the first N items of a file are a fair mix.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import tarfile
from pathlib import Path
from typing import Any

from evals.datasets.build_cli import builder_parser, write_built

SDIST_NAME = "bigbench-1.0.0.tar.gz"
SDIST_SHA256 = "1bb398a5512c6d798cdebe0dfa0ac03f67f6033fa6b39c6ef71df978c7cbc5c2"
DEFAULT_SDIST = Path.home() / ".cache" / "logic-graph" / SDIST_NAME
LICENSE = "Apache-2.0"
DATA_DIR = Path(__file__).resolve().parent
SEED = 2201
DEFAULT_COUNT = 60
_TASKS = "bigbench-1.0.0/bigbench/benchmark_tasks/"
LOGICAL_DEDUCTION = {
    "three_objects": _TASKS + "logical_deduction/three_objects/task.json",
    "five_objects": _TASKS + "logical_deduction/five_objects/task.json",
}
VITAMINC = _TASKS + "vitaminc_fact_verification/task.json"


class BuildError(ValueError):
    """The archive or an example is not what this builder expects."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_tasks(sdist: Path, members: list[str]) -> dict[str, dict[str, Any]]:
    """Member path -> parsed task JSON, read straight from the checked archive."""
    actual = sha256_of(sdist)
    if actual != SDIST_SHA256:
        raise BuildError(f"{sdist}: sha256 {actual} is not the pinned {SDIST_SHA256}")
    tasks = {}
    with tarfile.open(sdist, "r:gz") as archive:
        for member in members:
            handle = archive.extractfile(member)
            if handle is None:
                raise BuildError(f"{sdist} has no file {member}")
            tasks[member] = json.loads(handle.read().decode("utf-8"))
    return tasks


# --- logical deduction ---------------------------------------------------------------------

_COPULAS = frozenset({"is", "are", "was", "were"})


def split_choices(choices: list[str]) -> tuple[list[str], str]:
    """(subject of each choice, the predicate they share): "The owl is the leftmost." and "The
    robin is the leftmost." -> (["owl", "robin"], "is the leftmost"); "Ada finished first." ->
    (["Ada"], "finished first"). A copula that differs between choices ("The apples are",
    "The pear is") is dropped from the subjects and the predicate reads "is ..."."""
    words = [choice.rstrip(".").split() for choice in choices]
    shared = 0
    while all(len(w) > shared + 1 for w in words) and len({w[-1 - shared] for w in words}) == 1:
        shared += 1
    if shared == 0:
        raise BuildError(f"choices share no predicate: {choices!r}")
    subjects = [w[: len(w) - shared] for w in words]
    predicate = " ".join(words[0][len(words[0]) - shared :])
    if all(s[-1] in _COPULAS for s in subjects) and len({s[-1] for s in subjects}) > 1:
        subjects = [s[:-1] for s in subjects]
        predicate = "is " + predicate
    names = [" ".join(s[1:] if s[0] == "The" else s) for s in subjects]
    return names, predicate


def logical_deduction_item(objects: str, index: int, example: dict[str, Any]) -> dict[str, Any]:
    """One item: the premises paragraph, "Which one <predicate>?", the object as answer."""
    choices = list(example["target_scores"])
    try:
        names, predicate = split_choices(choices)
    except BuildError as exc:
        raise BuildError(f"logical_deduction/{objects} {index}: {exc}") from exc
    gold = [name for name, choice in zip(names, choices, strict=True) if choice in _gold(example)]
    if len(gold) != 1:
        raise BuildError(f"logical_deduction/{objects} {index}: not exactly one right choice")
    articled = any(choice.startswith("The ") for choice in choices)
    listed = ", ".join(f"the {name}" if articled else name for name in names)
    return {
        "id": f"logical_deduction-{objects}-{index:04d}",
        "dataset": "logical_deduction",
        "kind": "qa",
        "question": f"Which one {predicate}: {listed}? Answer with the name only.",
        "documents": [example["input"].strip()],
        "paragraph_ids": ["p01"],
        "answer": gold[0],
        "answer_aliases": [f"the {gold[0]}"] if articled else [],
        "supporting_ids": ["p01"],
        "meta": {
            "source": f"BIG-bench logical_deduction/{objects} ({SDIST_NAME})",
            "license": LICENSE,
            "source_index": index,
            "objects": objects,
            "choices": choices,
        },
    }


def _gold(example: dict[str, Any]) -> list[str]:
    return [choice for choice, value in example["target_scores"].items() if value == 1]


def build_logical_deduction(
    tasks: dict[str, dict[str, Any]], count: int, rng: random.Random
) -> list[dict[str, Any]]:
    """`count` items, half from three-object and half from five-object puzzles."""
    items = []
    for position, (objects, member) in enumerate(sorted(LOGICAL_DEDUCTION.items())):
        examples = tasks[member]["examples"]
        take = count // 2 + (count % 2 if position == 0 else 0)
        for index in sorted(rng.sample(range(len(examples)), take)):
            items.append(logical_deduction_item(objects, index, examples[index]))
    rng.shuffle(items)
    return items


# --- VitaminC ------------------------------------------------------------------------------

_LABELS = {"True": "yes", "False": "no", "Neither": ""}


def vitaminc_item(index: int, example: dict[str, Any]) -> dict[str, Any]:
    """One item: the passage as the document, "Does the passage show that <claim>?" as the
    question; "Neither" becomes an unanswerable item."""
    passage, sep, claim = example["input"].rpartition("\nClaim:")
    gold = _gold(example)
    if not sep or len(gold) != 1 or gold[0] not in _LABELS:
        raise BuildError(f"vitaminc {index}: not a passage + claim with one known label")
    title, _, text = passage.partition(": ")
    answer = _LABELS[gold[0]]
    claim = " ".join(claim.split())
    return {
        "id": f"vitaminc-{index:05d}",
        "dataset": "vitaminc",
        "kind": "qa",
        "question": (
            f'Claim: "{claim}" According to the passage about {title.strip()}, is the claim '
            "true? Answer yes if the passage shows it is true, no if the passage shows it is "
            "false, or unanswerable if the passage does not settle it."
        ),
        "documents": [" ".join(text.split())],
        "paragraph_ids": ["p01"],
        "answer": answer,
        "answer_aliases": {"yes": ["true"], "no": ["false"], "": []}[answer],
        "supporting_ids": ["p01"],
        "meta": {
            "source": f"BIG-bench vitaminc_fact_verification ({SDIST_NAME})",
            "license": LICENSE,
            "source_index": index,
            "label": gold[0],
            "answerable": bool(answer),
        },
    }


def build_vitaminc(task: dict[str, Any], count: int, rng: random.Random) -> list[dict[str, Any]]:
    """`count` items, a third per label (True, False, Neither), drawn without replacement."""
    examples = task["examples"]
    by_label: dict[str, list[int]] = {label: [] for label in _LABELS}
    for index, example in enumerate(examples):
        gold = _gold(example)
        if len(gold) == 1 and gold[0] in by_label:
            by_label[gold[0]].append(index)
    items = []
    for position, label in enumerate(_LABELS):
        take = count // 3 + (1 if position < count % 3 else 0)
        for index in sorted(rng.sample(by_label[label], take)):
            items.append(vitaminc_item(index, examples[index]))
    rng.shuffle(items)
    return items


def build(sdist: Path, count: int = DEFAULT_COUNT) -> dict[str, list[dict[str, Any]]]:
    """File name -> items, for both sets."""
    tasks = read_tasks(sdist, [*sorted(LOGICAL_DEDUCTION.values()), VITAMINC])
    return {
        "logical_deduction.jsonl": build_logical_deduction(tasks, count, random.Random(SEED)),
        "vitaminc.jsonl": build_vitaminc(tasks[VITAMINC], count, random.Random(SEED)),
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    args = builder_parser(
        __doc__,
        ("--sdist", Path, DEFAULT_SDIST),
        ("--count", int, DEFAULT_COUNT),
        ("--out-dir", Path, DATA_DIR),
    ).parse_args(argv)
    if not args.sdist.is_file():
        print(f"no {args.sdist}; fetch it first (see this module's docstring)", file=sys.stderr)
        return 2
    for name, items in build(args.sdist, args.count).items():
        write_built(items, args.out_dir / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
