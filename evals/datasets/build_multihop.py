"""Build ``multihop.jsonl``: 230 grounded multi-hop questions over invented entities.

Usage (stdlib only; the output is committed and must stay byte-identical)::

    python -m evals.datasets.build_multihop [--seed 1613] [--count 230] [--out PATH]

Each item is a small fictional world (people, towns, companies, bridges, rivers, musical
instruments) in which every fact is stated exactly once, in the paragraph about its subject.
Questions either follow a chain of 2-3 relations ("In which town was the founder of the company
that built the Varnholt Bridge born?") or compare one attribute of two entities, possibly reached
through one hop first ("Which company was founded earlier: the one that built X or the one that
built Y?"). The paragraphs that state the chain's facts are gold (2-4); the rest of the ten are
distractors built to share names and wording with them:

* a near-miss copy of the question's chain (same relations, names one syllable off);
* entities linked to the gold ones by the same relation types (another bridge by the same
  company, another person born in the answer town, ...);
* paragraphs about entities the gold paragraphs mention, the answer entity included;
* further random entities of the same kinds.

Since a subject's facts appear only in its own paragraph, no distractor can state a fact on the
question's chain, so the gold answer follows from the gold paragraphs alone and nothing in the
item contradicts it. Randomness comes from a local SplitMix64 generator (not `random`, whose
methods may change between Python versions) and no step iterates over a set, so the output
depends on the seed alone. Cost: linear in the number of items. The words (name parts,
relations and their phrasings, question families) are in
:mod:`evals.datasets.multihop_vocabulary`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from evals.datasets.build_cli import one_file_args, write_built
from evals.datasets.multihop_vocabulary import (
    CHAINS,
    COMPANY_KINDS,
    COMPARISONS,
    FAMILIES,
    FILLERS,
    FIRST_NAMES,
    HEADS,
    INCOMING,
    KIND_RELATIONS,
    NAME_FORMAT,
    RANGES,
    RELATIONS,
    TAILS,
    WITH_ARTICLE,
)

DEFAULT_SEED = 1613
DEFAULT_COUNT = 400
PARAGRAPHS_PER_ITEM = 10
GENERATOR_VERSION = 1
DEFAULT_OUT = Path(__file__).resolve().parent / "multihop.jsonl"
_MASK = (1 << 64) - 1
_MAX_NAME_TRIES = 500

T = TypeVar("T")


class Rng:
    """SplitMix64: a tiny, fully specified generator, so output never depends on `random`."""

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK

    def next_u64(self) -> int:
        """The next 64-bit output."""
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform integer in [0, n), by rejection so that no value is favoured."""
        if n <= 0:
            raise ValueError(f"n must be positive, got {n}")
        limit = (1 << 64) - (1 << 64) % n
        while True:
            value = self.next_u64()
            if value < limit:
                return value % n

    def between(self, low: int, high: int) -> int:
        """Uniform integer in [low, high]."""
        return low + self.below(high - low + 1)

    def choice(self, options: Sequence[T]) -> T:
        """One element of a non-empty sequence."""
        return options[self.below(len(options))]

    def chance(self, numerator: int, denominator: int) -> bool:
        """True with probability numerator / denominator."""
        return self.below(denominator) < numerator

    def shuffle(self, items: list[T]) -> None:
        """Fisher-Yates shuffle in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


@dataclass(frozen=True)
class Entity:
    """A named thing in an item's world; `key` (head + tail) is unique within the world."""

    name: str
    kind: str
    key: str
    head: str
    extra: str  # first name of a person, trade of a company, else ""


def mention(entity: Entity) -> str:
    """How running text names the entity ("the Varnholt Bridge", "Quelmere")."""
    return f"the {entity.name}" if entity.kind in WITH_ARTICLE else entity.name


def _sentence(text: str) -> str:
    """Capitalise the first letter (subjects like "the vellharp" start sentences)."""
    return text[0].upper() + text[1:]


class World:
    """The entities and facts of one item. Facts are functional: one object per (subject,
    relation), stated in exactly one place, the subject's paragraph."""

    def __init__(self, rng: Rng) -> None:
        self.rng = rng
        self.entities: list[Entity] = []
        self.by_name: dict[str, Entity] = {}
        self.facts: dict[tuple[str, str], str] = {}  # (subject name, relation) -> object

    def _clashes(self, key: str) -> bool:
        """Whether `key` would be confusable in text with an existing key or first name."""
        lowered = key.lower()
        for entity in self.entities:
            for taken in (entity.key.lower(), entity.extra.lower()):
                if taken and (lowered in taken or taken in lowered):
                    return True
        return False

    def new(self, kind: str, near: Entity | None = None) -> Entity:
        """A fresh entity of `kind`; with `near`, a near-miss of it (same head and extra)."""
        for _ in range(_MAX_NAME_TRIES):
            head = near.head if near else self.rng.choice(HEADS[kind])
            # Joining parts can triple a letter ("Sarr" + "ridge"); two read as a real name.
            key = re.sub(r"(.)\1\1", r"\1\1", head + self.rng.choice(TAILS[kind]))
            if near:
                extra = near.extra
            elif kind == "person":
                extra = self.rng.choice(FIRST_NAMES)
            elif kind == "company":
                extra = self.rng.choice(COMPANY_KINDS)
            else:
                extra = ""
            if self._clashes(key) or (kind == "person" and self._clashes(extra) and not near):
                continue
            entity = Entity(NAME_FORMAT[kind].format(key=key, extra=extra), kind, key, head, extra)
            self.entities.append(entity)
            self.by_name[entity.name] = entity
            return entity
        raise RuntimeError(f"could not find a fresh {kind} name after {_MAX_NAME_TRIES} tries")

    def set(self, subject: Entity, relation: str, value: Entity | int) -> None:
        """Record a fact; setting a different value for a known fact is a bug."""
        if RELATIONS[relation].subject != subject.kind:
            raise ValueError(f"relation {relation!r} does not apply to a {subject.kind}")
        text = value.name if isinstance(value, Entity) else str(value)
        previous = self.facts.setdefault((subject.name, relation), text)
        if previous != text:
            raise ValueError(f"{subject.name} {relation}: {previous!r} already, not {text!r}")

    def _number(self, subject: Entity, relation: str) -> int:
        """A value for a numeric fact, kept chronologically plausible where facts allow."""
        low, high = RANGES[relation]
        if relation == "founded_year":
            born = self.facts.get((self.facts.get((subject.name, "founded_by"), ""), "birth_year"))
            return int(born) + self.rng.between(25, 55) if born else self.rng.between(low, high)
        if relation == "birth_year":
            founded = [
                int(self.facts[(company, "founded_year")])
                for (company, rel), obj in self.facts.items()
                if rel == "founded_by" and obj == subject.name
                and (company, "founded_year") in self.facts
            ]  # fmt: skip
            if founded:
                return min(founded) - self.rng.between(25, 55)
        if relation == "opened_year":
            builder = self.facts.get((subject.name, "built_by"), "")
            founded_text = self.facts.get((builder, "founded_year"))
            if founded_text:
                return int(founded_text) + self.rng.between(3, 60)
        return self.rng.between(low, high)

    def fill(self, subject: Entity, avoid: Sequence[str] = ()) -> None:
        """Give `subject` every fact of its kind that it lacks. Objects are new entities or, a
        third of the time, existing ones not in `avoid` (so paragraphs share entities)."""
        for relation in KIND_RELATIONS[subject.kind]:
            if (subject.name, relation) in self.facts:
                continue
            target = RELATIONS[relation].target
            if target in ("year", "km"):
                self.set(subject, relation, self._number(subject, relation))
                continue
            pool = [
                e
                for e in self.entities
                if e.kind == target and e.name != subject.name and e.name not in avoid
            ]
            # A river never flows into an existing river, so no loops of rivers can arise.
            reuse = relation != "flows_into" and pool and self.rng.chance(1, 3)
            self.set(subject, relation, self.rng.choice(pool) if reuse else self.new(target))

    def objects(self, subject: Entity) -> list[Entity]:
        """Entities named as objects of `subject`'s facts, in relation order."""
        return [
            self.by_name[self.facts[(subject.name, rel)]]
            for rel in KIND_RELATIONS[subject.kind]
            if self.facts.get((subject.name, rel), "") in self.by_name
        ]

    def paragraph(self, subject: Entity) -> tuple[str, dict[str, str]]:
        """The paragraph about `subject` (all its facts plus colour) and its fact sentences by
        relation. Two-fact kinds get one colour sentence, instruments two, others 0-1."""
        sentences: dict[str, str] = {}
        for relation in KIND_RELATIONS[subject.kind]:
            obj = self.facts[(subject.name, relation)]
            template = self.rng.choice(RELATIONS[relation].phrasings)
            written = mention(self.by_name[obj]) if obj in self.by_name else obj
            sentences[relation] = _sentence(template.format(s=mention(subject), o=written))
        ordered = list(sentences.values())
        self.rng.shuffle(ordered)
        fillers = list(FILLERS[subject.kind])
        self.rng.shuffle(fillers)
        extra = {1: 2, 2: 1}.get(len(ordered), self.rng.below(2))
        for filler in fillers[:extra]:
            ordered.insert(
                self.rng.below(len(ordered) + 1), _sentence(filler.format(s=mention(subject)))
            )
        return " ".join(ordered), sentences


def _chain(world: World, family: str) -> dict[str, Any]:
    """Gold structure of a chain question: entities, question, answer, program, evidence."""
    start_kind, path, question = CHAINS[family]
    chain = [world.new(start_kind)]
    for relation in path:
        target = world.new(RELATIONS[relation].target)
        world.set(chain[-1], relation, target)
        chain.append(target)
    names = [e.name for e in chain]
    for entity in chain[:-1]:
        world.fill(entity, avoid=names)  # no gold paragraph may mention the answer by accident
    # Near-miss copy of the chain, then entities sharing each gold link's object.
    copy = [world.new(start_kind, near=chain[0])]
    for relation, original in zip(path, chain[1:], strict=True):
        twin = world.new(original.kind, near=original)
        world.set(copy[-1], relation, twin)
        copy.append(twin)
    sharing = []
    for relation, previous, target in zip(path, chain[:-1], chain[1:], strict=True):
        other = world.new(previous.kind)
        world.set(other, relation, target)
        sharing.append(other)
    answer = chain[-1]
    return {
        "gold": chain[:-1],
        "distractors": [copy[0], *sharing, *copy[1:-1], answer],
        "question": question.format(start=mention(chain[0])),
        "answer": answer,
        "program": {"start": chain[0].name, "path": list(path)},
        "evidence": list(zip(chain[:-1], path, strict=True)),
        "hops": len(path),
    }


def _comparison(world: World, family: str) -> dict[str, Any]:
    """Gold structure of a comparison question (see `_chain` for the fields)."""
    kind, hops, attribute, pick, question = COMPARISONS[family]
    operands = [world.new(kind), world.new(kind)]
    targets = list(operands)
    for relation in hops:
        targets = []
        for operand in operands:
            target = world.new(RELATIONS[relation].target)
            world.set(operand, relation, target)
            targets.append(target)
    low, high = RANGES[attribute]
    first = world.rng.between(low, high)
    second = first
    while abs(second - first) < 3:  # a clear winner, never a tie
        second = world.rng.between(low, high)
    for target, value in zip(targets, (first, second), strict=True):
        world.set(target, attribute, value)
    chooser = min if pick == "min" else max
    winner = chooser(targets, key=lambda t: int(world.facts[(t.name, attribute)]))
    gold = operands + (targets if hops else [])
    names = [e.name for e in gold]
    for entity in gold:
        world.fill(entity, avoid=names)
    twins = []
    for operand, target in zip(operands, targets, strict=True):
        twin = world.new(kind, near=operand)
        twins.append(twin)
        for relation in hops:
            target_twin = world.new(target.kind, near=target)
            world.set(twin, relation, target_twin)
            twins.append(target_twin)
    sharing = []
    for entity in gold:
        incoming = INCOMING[entity.kind]
        if incoming:
            relation = world.rng.choice(incoming)
            other = world.new(RELATIONS[relation].subject)
            world.set(other, relation, entity)
            sharing.append(other)
    evidence = [(operand, relation) for operand in operands for relation in hops]
    evidence += [(target, attribute) for target in targets]
    return {
        "gold": gold,
        "distractors": twins + sharing,
        "question": question.format(a=mention(operands[0]), b=mention(operands[1])),
        "answer": winner,
        "program": {
            "operands": [o.name for o in operands],
            "path": list(hops),
            "attribute": attribute,
            "pick": pick,
        },
        "evidence": evidence,
        "hops": len(hops) + 1,
    }


def build_item(seed: int, index: int, world_type: type[World] = World) -> dict[str, Any]:
    """Item number `index` of the set built with `seed` (independent of the other items).
    ``world_type`` writes the paragraphs (:mod:`evals.datasets.build_prose` writes prose)."""
    rng = Rng(seed * 1_000_003 + index)
    world = world_type(rng)
    family = FAMILIES[index % len(FAMILIES)]
    spec = _chain(world, family) if family in CHAINS else _comparison(world, family)
    gold: list[Entity] = spec["gold"]
    chosen = list(gold)
    candidates: list[Entity] = list(spec["distractors"])
    for entity in gold:
        candidates.extend(world.objects(entity))
    while len(chosen) < PARAGRAPHS_PER_ITEM:
        if not candidates:
            candidates.append(world.new(rng.choice([e.kind for e in gold])))
        candidate = candidates.pop(0)
        if candidate in chosen:
            continue
        world.fill(candidate)
        chosen.append(candidate)
    texts: dict[str, str] = {}
    fact_sentences: dict[tuple[str, str], str] = {}
    for entity in chosen:
        texts[entity.name], sentences = world.paragraph(entity)
        for relation, sentence in sentences.items():
            fact_sentences[(entity.name, relation)] = sentence
    order = list(chosen)
    rng.shuffle(order)
    ids = {entity.name: f"p{position:02d}" for position, entity in enumerate(order, start=1)}
    answer: Entity = spec["answer"]
    return {
        "id": f"multihop-{index:04d}",
        "dataset": "multihop",
        "kind": "qa",
        "question": spec["question"],
        "documents": [texts[entity.name] for entity in order],
        "paragraph_ids": [ids[entity.name] for entity in order],
        "answer": answer.name,
        "answer_aliases": [answer.key] if answer.kind == "river" else [],
        "supporting_ids": sorted(ids[entity.name] for entity in gold),
        "meta": {
            "generator": "evals/datasets/build_multihop.py",
            "generator_version": GENERATOR_VERSION,
            "seed": seed,
            "index": index,
            "family": family,
            "type": "chain" if family in CHAINS else "comparison",
            "hops": spec["hops"],
            "program": spec["program"],
            "evidence": [
                {"paragraph_id": ids[entity.name], "sentence": fact_sentences[(entity.name, rel)]}
                for entity, rel in spec["evidence"]
            ],
        },
    }


def build(
    seed: int = DEFAULT_SEED,
    count: int = DEFAULT_COUNT,
    item: Callable[[int, int], dict[str, Any]] = build_item,
) -> list[dict[str, Any]]:
    """All items of the set, in index order; ``item(seed, index)`` builds one (the prose set
    passes its own, :func:`evals.datasets.build_prose.build_prose_item`)."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    return [item(seed, index) for index in range(count)]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    args = one_file_args(__doc__, argv, "--seed", (DEFAULT_SEED, DEFAULT_COUNT, DEFAULT_OUT))
    write_built(build(args.seed, args.count), args.out, f" (seed {args.seed})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
