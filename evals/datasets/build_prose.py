"""Build ``prose.jsonl``: multi-hop questions over documents written as encyclopedic prose.

Usage (stdlib only; the output is committed and must stay byte-identical)::

    python -m evals.datasets.build_prose [--seed 3203] [--count 52] [--out PATH]

The worlds, questions and gold answers are those of :mod:`evals.datasets.build_multihop` (same
families, near-miss distractors, facts stated once in their subject's paragraph), at another
seed, so no item repeats a ``multihop`` world. What changes is how a paragraph is written, in
the style of an encyclopedia article rather than one self-contained fact per sentence:

* it opens with a title line, ``Title: Rookton Foundry`` or the bare name, then a newline;
* its first sentence introduces the subject by its full name ("Rookton Foundry is an
  engineering firm.");
* later sentences about the subject usually open with a pronoun ("It", "He", "She") or a
  definite description ("The foundry", "The yard", "The bridge"), or the surname of a person;
* companies of the "Steel Company" trade are written "Steel Co.", an abbreviation with a full
  stop inside the name, in the documents, the question and the answer alike.

Every fourth item (positions 3, 7, 11, ...) is unanswerable: it is built like an answerable one,
then the paragraph stating the question's last fact is removed, as
:mod:`evals.datasets.build_unanswerable` does for ``multihop``. Its gold answer is ``""`` and
``meta.answerable`` is false. The near-miss paragraphs stay, so an unanswerable item is also a
look-alike trap: "It was founded by Vidar Tarvard" in the paragraph of *Rookcombe* Foundry does
not answer a question about Rookton Foundry.

The set exists to measure the chain check on ordinary prose (issue 32): how often it refuses an
argument only because it misreads a title line, a pronoun or an abbreviation. Cost: linear in
the number of items.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.datasets.build_cli import one_file_args, write_built
from evals.datasets.build_multihop import (
    Entity,
    Rng,
    World,
    build_item,
    mention,
)
from evals.datasets.build_multihop import (
    build as build_items,
)
from evals.datasets.multihop_vocabulary import FILLERS, KIND_RELATIONS, RELATIONS

DEFAULT_SEED = 3203
DEFAULT_COUNT = 52
GENERATOR_VERSION = 1
UNANSWERABLE_EVERY = 4
"""Positions ``UNANSWERABLE_EVERY - 1``, ``2 * UNANSWERABLE_EVERY - 1``, ... are unanswerable."""
DEFAULT_OUT = Path(__file__).resolve().parent / "prose.jsonl"

_SHE = frozenset(
    ["Ilsa", "Tamsin", "Berit", "Dagny", "Fenna", "Halla", "Isolde", "Kestrel", "Malin", "Odile",
     "Runa", "Sigrid", "Ulla", "Wenna", "Yrsa", "Brisa", "Dorit"]
)  # fmt: skip
"""First names of build_multihop's people written with "she"; the others with "he"."""
_TRADE_NOUN = {
    "Works": "the works",
    "Foundry": "the foundry",
    "Ironworks": "the ironworks",
    "Engineering": "the firm",
    "Bridgeworks": "the company",
    "Steel Company": "the company",
    "Construction": "the firm",
    "Shipwrights": "the yard",
}
_KIND_NOUN = {
    "town": "the town",
    "bridge": "the bridge",
    "river": "the river",
    "instrument": "the instrument",
}
_INTRODUCTIONS = {
    "person": ("{s} was an engineer.", "{s} was a craftsman and inventor."),
    "company": ("{s} is an engineering firm.", "{s} is a manufacturing company."),
    "bridge": ("{s} is a road bridge.", "{s} is a river crossing."),
    "town": ("{s} is a small market town.", "{s} is a town."),
    "river": ("{s} is a river.", "{s} is a lowland river."),
    "instrument": ("{s} is a folk instrument.", "{s} is a traditional instrument."),
}
_ABBREVIATED = ("Steel Company", "Steel Co.")
"""The trade written as an abbreviation with a full stop: ``Rookton Steel Co.``."""


def referring_expression(subject: Entity, rng: Rng) -> str:
    """How a later sentence of ``subject``'s paragraph opens: a pronoun, a definite description
    ("the yard"), or a person's surname; lower case but for names."""
    if subject.kind == "person":
        pronoun = "she" if subject.extra in _SHE else "he"
        return rng.choice((pronoun, pronoun, subject.key))
    noun = _TRADE_NOUN[subject.extra] if subject.kind == "company" else _KIND_NOUN[subject.kind]
    return rng.choice(("it", "it", noun))


def possessive(reference: str) -> str:
    """The possessive of a reference: "she" -> "her", "the yard" -> "the yard's"."""
    return {"he": "his", "she": "her", "it": "its"}.get(reference, f"{reference}'s")


def _capitalised(text: str) -> str:
    return text[0].upper() + text[1:]


class ProseWorld(World):
    """A :class:`~evals.datasets.build_multihop.World` whose paragraphs read as prose."""

    def paragraph(self, subject: Entity) -> tuple[str, dict[str, str]]:
        """Title line, introduction, then the facts and colour in random order, most of them
        opening with a reference to the subject rather than its name. Returns the text and its
        fact sentences by relation, as the parent does."""
        full = mention(subject)
        sentences: dict[str, str] = {}
        for relation in KIND_RELATIONS[subject.kind]:
            obj = self.facts[(subject.name, relation)]
            template = self.rng.choice(RELATIONS[relation].phrasings)
            written = mention(self.by_name[obj]) if obj in self.by_name else obj
            # Only a sentence that opens with its subject gets a reference: the rule under
            # test resolves sentence-initial references, and a name elsewhere stays a name.
            opens = template.startswith("{s}") and self.rng.chance(3, 4)
            ref = referring_expression(subject, self.rng) if opens else full
            if template.startswith("{s}'s"):  # "Her year of birth", not "She's year of birth"
                template, ref = template.replace("{s}'s", "{s}", 1), possessive(ref)
            sentences[relation] = _capitalised(template.format(s=ref, o=written))
        ordered = list(sentences.values())
        self.rng.shuffle(ordered)
        fillers = list(FILLERS[subject.kind])
        self.rng.shuffle(fillers)
        for filler in fillers[: self.rng.below(2)]:
            ref = referring_expression(subject, self.rng)
            ordered.insert(self.rng.below(len(ordered) + 1), _capitalised(filler.format(s=ref)))
        intro = _capitalised(self.rng.choice(_INTRODUCTIONS[subject.kind]).format(s=full))
        title = subject.name if self.rng.chance(1, 2) else f"Title: {subject.name}"
        return f"{title}\n" + " ".join([intro, *ordered]), sentences


def _abbreviate(value: Any) -> Any:
    """``value`` (any JSON value) with the abbreviated trade written in every string."""
    if isinstance(value, str):
        return value.replace(*_ABBREVIATED)
    if isinstance(value, list):
        return [_abbreviate(v) for v in value]
    if isinstance(value, dict):
        return {k: _abbreviate(v) for k, v in value.items()}
    return value


def _without_last_fact(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with the paragraph of its last evidence sentence removed, unanswerable."""
    removed = item["meta"]["evidence"][-1]["paragraph_id"]
    keep = [i for i, pid in enumerate(item["paragraph_ids"]) if pid != removed]
    return {
        **item,
        "documents": [item["documents"][i] for i in keep],
        "paragraph_ids": [item["paragraph_ids"][i] for i in keep],
        "answer": "",
        "answer_aliases": [],
        "supporting_ids": [],
        "meta": {
            **item["meta"],
            "answerable": False,
            "removed_paragraph": removed,
            "answer_if_present": item["answer"],
        },
    }


def build_prose_item(seed: int, index: int) -> dict[str, Any]:
    """Item ``index`` of the prose set built with ``seed``."""
    item: dict[str, Any] = _abbreviate(build_item(seed, index, ProseWorld))
    item = {
        **item,
        "id": f"prose-{index:04d}",
        "dataset": "prose",
        "meta": {
            **item["meta"],
            "generator": "evals/datasets/build_prose.py",
            "generator_version": GENERATOR_VERSION,
            "answerable": True,
        },
    }
    if index % UNANSWERABLE_EVERY == UNANSWERABLE_EVERY - 1:
        item = _without_last_fact(item)
    return item


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    args = one_file_args(__doc__, argv, "--seed", (DEFAULT_SEED, DEFAULT_COUNT, DEFAULT_OUT))
    items = build_items(args.seed, args.count, build_prose_item)
    write_built(items, args.out, f" (seed {args.seed})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
