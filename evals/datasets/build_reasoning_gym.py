"""Build three external task sets from ``reasoning-gym`` (Apache-2.0): the facts are the documents.

Usage (needs the ``datasets`` extra: ``pip install -e '.[datasets]'``; outputs are committed and
must stay byte-identical)::

    python -m evals.datasets.build_reasoning_gym [--set NAME ...] [--count 50]

Sets, each written to ``<name>.jsonl`` beside this file:

* ``family_relationships`` - a family described in a few sentences; "What is X to Y?" answered
  with one relation word. Multi-hop over stated facts.
* ``knights_knaves`` - truth-tellers and liars make statements; who is which? The answer is
  the generator's sentence ("Zoey is a fool, and Riley is a sage."), with every other order of
  the people as an alias.
* ``syllogism`` - two premises and a candidate conclusion: does it follow? Answered yes or no
  (claim verification).

The generator's prompt is cut into the documents (the puzzle's statements, which are the only
evidence) and the question (what is asked, with the generator's answer-format instruction).
Items come from ``create_dataset(name, seed=SEEDS[name], size=count)`` in index order, so a
rebuild with the pinned package version gives the same bytes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from evals.datasets.build_cli import builder_parser, write_built

PACKAGE = "reasoning-gym"
PACKAGE_VERSION = "0.1.25"
LICENSE = "Apache-2.0"
DATA_DIR = Path(__file__).resolve().parent
DEFAULT_COUNT = 50
# One fixed seed per set (arbitrary, recorded in every item's meta).
SEEDS = {"family_relationships": 2101, "knights_knaves": 2102, "syllogism": 2103}


class BuildError(ValueError):
    """A generated example does not have the shape this builder cuts it by."""


def _item(
    name: str, index: int, question: str, document: str, answer: str, aliases: list[str], entry: Any
) -> dict[str, Any]:
    metadata_ = entry.get("metadata") or {}
    return {
        "id": f"{name}-{index:04d}",
        "dataset": name,
        "kind": "qa",
        "question": question,
        "documents": [document],
        "paragraph_ids": ["p01"],
        "answer": answer,
        "answer_aliases": aliases,
        "supporting_ids": ["p01"],
        "meta": {
            "source": f"{PACKAGE}=={PACKAGE_VERSION}",
            "generator": name,
            "seed": SEEDS[name],
            "source_index": index,
            "license": LICENSE,
            "original_question": entry["question"],
            "difficulty": metadata_.get("difficulty"),
        },
    }


def family_relationships(index: int, entry: dict[str, Any]) -> dict[str, Any]:
    """The story before the blank line is the document; the question after it is asked."""
    story, _, question = entry["question"].partition("\n\n")
    if not question:
        raise BuildError(f"family_relationships {index}: no blank line between story and question")
    return _item(
        "family_relationships",
        index,
        question.strip(),
        story.strip(),
        entry["answer"],
        [],
        entry,
    )


_KK_QUESTION = re.compile(r"\bSo who is (?:a|an) ")


def _kk_aliases(answer: str) -> list[str]:
    """The same verdicts in every other order of the people (sorted, without the gold form)."""
    clauses = [c.strip() for c in re.split(r",\s*(?:and\s+)?|\s+and\s+", answer.rstrip(".")) if c]
    forms = set()
    for order in itertools.permutations(clauses):
        body = ", ".join(order[:-1]) + (", and " if len(order) > 2 else " and ") + order[-1]
        forms.add(body + ".")
        if len(order) == 2:
            forms.add(f"{order[0]}, and {order[1]}.")
    forms.discard(answer)
    return sorted(forms)


def knights_knaves(index: int, entry: dict[str, Any]) -> dict[str, Any]:
    """The island and its statements are the document; "So who is ...?" is the question."""
    text = entry["question"]
    match = _KK_QUESTION.search(text)
    if match is None:
        raise BuildError(f"knights_knaves {index}: no 'So who is' question in the prompt")
    answer = entry["answer"]
    return _item(
        "knights_knaves",
        index,
        text[match.start() :].strip(),
        text[: match.start()].strip(),
        answer,
        _kk_aliases(answer),
        entry,
    )


_PREMISE = re.compile(r"^\d+\.\s*(?P<text>.+?)\s*$", re.MULTILINE)
_CONCLUSION = re.compile(r"Does it logically follow that:\s*\n(?P<text>.+?)\?", re.DOTALL)


def syllogism(index: int, entry: dict[str, Any]) -> dict[str, Any]:
    """The numbered premises are the document; the candidate conclusion becomes a yes/no
    question."""
    text = entry["question"]
    premises = [m.group("text").rstrip(".") + "." for m in _PREMISE.finditer(text)]
    conclusion = _CONCLUSION.search(text)
    if len(premises) < 2 or conclusion is None:
        raise BuildError(f"syllogism {index}: premises or conclusion not found")
    claim = conclusion.group("text").strip()
    question = (
        f"Does it logically follow from the statements that {claim[0].lower() + claim[1:]}? "
        "Answer yes or no."
    )
    return _item(
        "syllogism", index, question, " ".join(premises), entry["answer"].lower(), [], entry
    )


CUTTERS: dict[str, Callable[[int, dict[str, Any]], dict[str, Any]]] = {
    "family_relationships": family_relationships,
    "knights_knaves": knights_knaves,
    "syllogism": syllogism,
}


def installed_version() -> str | None:
    """The installed reasoning-gym version, or None when it is not installed."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


def build(name: str, count: int = DEFAULT_COUNT) -> list[dict[str, Any]]:
    """The first `count` items of set `name`; ImportError without the pinned package."""
    version = installed_version()
    if version != PACKAGE_VERSION:
        raise ImportError(
            f"{PACKAGE}=={PACKAGE_VERSION} is needed (found {version or 'none'}); "
            "pip install -e '.[datasets]'"
        )
    import reasoning_gym  # optional dependency, imported here so the module imports without it

    dataset = reasoning_gym.create_dataset(name, seed=SEEDS[name], size=count)
    return [CUTTERS[name](index, dict(entry)) for index, entry in enumerate(dataset)]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = builder_parser(__doc__, ("--count", int, DEFAULT_COUNT), ("--out-dir", Path, DATA_DIR))
    parser.add_argument("--set", dest="sets", action="append", choices=sorted(CUTTERS))
    args = parser.parse_args(argv)
    for name in args.sets or sorted(CUTTERS):
        write_built(build(name, args.count), args.out_dir / f"{name}.jsonl")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
