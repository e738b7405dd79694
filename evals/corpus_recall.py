"""Retrieval recall of a data set over one pooled corpus, with no model: the gold paragraphs
of each item, the pool written as files, and recall@k for each retrieval configuration.

Used by ``python -m evals.corpus_eval`` (step 2 of its docstring) and by the retrieval
studies. An item's gold paragraphs are its ``supporting_ids``, else all its own documents;
an outside-corpus item (``outside_docs``) names installed documentation files instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import corpus
from evals.datasets.build_outside_docs import CORPUS as OUTSIDE_CORPUS
from orchestrator.api import RunConfig
from orchestrator.loop import first_round, search_question

RECALL_AT = (1, 3, 5, 8, 10, 20)


TABLE_AT = (5, 10, 20)
"""The k of the side-by-side table of configurations."""


ENTITY_WEIGHT = 0.3
"""Weight of the entity-graph ranking in the configurations that use it (measured best of
0.2, 0.3, 0.5 and 1 on the multihop pool; docs/results/multihop-retrieval.md)."""


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def paragraph_ids(item: Mapping[str, Any]) -> list[str]:
    """The item's paragraph ids (``p01`` ...), or ``d1``, ``d2`` ... when it has none."""
    ids = item.get("paragraph_ids")
    documents = item["documents"]
    if isinstance(ids, list) and len(ids) == len(documents):
        return [str(i) for i in ids]
    return [f"d{j}" for j in range(1, len(documents) + 1)]


def gold_ids(item: Mapping[str, Any]) -> set[str]:
    """The paragraphs an answer needs: ``supporting_ids`` when given, else every document."""
    supporting = item.get("supporting_ids")
    if isinstance(supporting, list) and supporting:
        return {str(i) for i in supporting}
    return set(paragraph_ids(item))


def item_dir(item: Mapping[str, Any]) -> str:
    """The folder of an item's documents inside the pooled corpus."""
    return _SAFE.sub("_", str(item["id"]))[:120] or "item"


def outside(item: Mapping[str, Any]) -> bool:
    """Whether the item's documents are files of the outside corpus
    (:mod:`evals.datasets.build_outside_docs`) rather than its own, pooled ones."""
    return bool(item["meta"].get("corpus") == OUTSIDE_CORPUS)


def corpus_path(item: Mapping[str, Any], paragraph_id: str) -> str:
    """The relative path of one paragraph in the pooled corpus (the chunk's ``path``); an
    outside-corpus item's paragraph id is that path already."""
    if outside(item):
        return paragraph_id
    return f"{item_dir(item)}/{_SAFE.sub('_', paragraph_id)}.txt"


def write_pool(items: Sequence[Mapping[str, Any]], root: Path) -> int:
    """Write every document of ``items`` under ``root`` (unchanged files are left alone, so
    a re-ingest skips them). Returns the number of files. Raises ValueError when two items
    map to the same folder."""
    seen: dict[str, str] = {}
    count = 0
    for item in items:
        folder = item_dir(item)
        if seen.setdefault(folder, str(item["id"])) != str(item["id"]):
            raise ValueError(f"items {seen[folder]!r} and {item['id']!r} share folder {folder}")
        for pid, text in zip(paragraph_ids(item), item["documents"], strict=True):
            path = root / corpus_path(item, pid)
            path.parent.mkdir(parents=True, exist_ok=True)
            data = text.encode("utf-8")
            if not path.is_file() or path.read_bytes() != data:
                path.write_bytes(data)
            count += 1
    return count


def recall(item: Mapping[str, Any], paths: Iterable[str]) -> float:
    """Share of the item's gold paragraphs among the retrieved chunk ``paths``."""
    gold = {corpus_path(item, pid) for pid in gold_ids(item)}
    return len(gold & set(paths)) / len(gold)


@dataclass(frozen=True)
class RetrievalConfig:
    """One retrieval configuration of the side-by-side recall table."""

    name: str
    dense: bool
    """Keyword and dense rankings (hybrid), or keyword only."""
    plan: bool
    """Sub-question retrieval (:func:`corpus.multihop.retrieve_plan`) with the plan of
    :func:`orchestrator.checks.decompose.decompose`; the question alone when it has none or
    :func:`corpus.multihop.check_plan` rejects it
    (:func:`orchestrator.loop.corpus_search.search_question`)."""
    entities: float
    """Weight of the entity-graph ranking, 0 for none."""
    rounds: bool = False
    """Through corpus mode's round 1 (:func:`orchestrator.loop.corpus_search.first_round`,
    the question without rewrites) instead of calling :mod:`corpus` directly: what a corpus
    task retrieves with these settings."""


_DEFAULTS = RunConfig()


CONFIGS = (
    RetrievalConfig("keyword", False, False, 0.0),
    RetrievalConfig("hybrid", True, False, 0.0),
    RetrievalConfig("keyword+entity", False, False, ENTITY_WEIGHT),
    RetrievalConfig("hybrid+entity", True, False, ENTITY_WEIGHT),
    RetrievalConfig("keyword+subq", False, True, 0.0),
    RetrievalConfig("hybrid+subq", True, True, 0.0),
    RetrievalConfig("keyword+subq+entity", False, True, ENTITY_WEIGHT),
    RetrievalConfig("hybrid+subq+entity", True, True, ENTITY_WEIGHT),
    RetrievalConfig(
        "corpus-round1", _DEFAULTS.dense, _DEFAULTS.subquestions, _DEFAULTS.entity_weight, True
    ),
    RetrievalConfig(
        "corpus-round1+entity", _DEFAULTS.dense, _DEFAULTS.subquestions, ENTITY_WEIGHT, True
    ),
)
"""Keyword or hybrid, each with and without the entity graph and sub-questions; then corpus
mode's round 1 with the run defaults (:class:`~orchestrator.records.RunConfig`), alone and
with the entity graph."""


def ranked_paths(item: Mapping[str, Any], index: Path, config: RetrievalConfig) -> list[str]:
    """The files of the chunks ``config`` retrieves for ``item``'s question, best first
    (``max(RECALL_AT)`` of them)."""
    depth = max(RECALL_AT)
    question = item["question"]
    if config.rounds:
        settings = RunConfig(
            retrieval_k=depth,
            dense=config.dense,
            subquestions=config.plan,
            entity_weight=config.entities,
        )
        return [hit.path for hit in first_round(str(index), question, [], settings).new]
    found = search_question(
        str(index),
        question,
        [],
        depth,
        subquestions=config.plan,
        entity_weight=config.entities,
        dense=config.dense,
    )
    return [hit.path for hit in found.pool]


def retrieval_recall(
    items: Sequence[Mapping[str, Any]],
    index: Path,
    *,
    dense: bool,
    config: RetrievalConfig | None = None,
) -> dict[str, Any]:
    """Mean recall@k over ``items`` (one ranking of 20 chunks each: the question alone,
    keyword or hybrid as ``dense`` says, unless ``config`` names another configuration),
    and the share of items with every gold paragraph in the top k."""
    config = config or RetrievalConfig("hybrid" if dense else "keyword", dense, False, 0.0)
    sums = dict.fromkeys(RECALL_AT, 0.0)
    complete = dict.fromkeys(RECALL_AT, 0)
    for item in items:
        paths = ranked_paths(item, index, config)
        for k in RECALL_AT:
            value = recall(item, paths[:k])
            sums[k] += value
            complete[k] += value == 1.0
    n = max(1, len(items))
    return {
        "items": len(items),
        "recall_at": {k: sums[k] / n for k in RECALL_AT},
        "all_gold_at": {k: complete[k] / n for k in RECALL_AT},
    }


def configurations_table(measured: Mapping[str, Mapping[str, Any] | str]) -> str:
    """The side-by-side table: one row per configuration (its :func:`retrieval_recall`, or
    why it was not run), mean recall@k then all-gold@k for k in :data:`TABLE_AT`."""
    head = [f"recall@{k}" for k in TABLE_AT] + [f"all-gold@{k}" for k in TABLE_AT]
    lines = [
        "| configuration | " + " | ".join(head) + " |",
        "|---|" + "---:|" * len(head),
    ]
    for name, result in measured.items():
        if isinstance(result, str):
            lines.append(f"| {name} | not run: {result} |" + " |" * (len(head) - 1))
            continue
        cells = [f"{result['recall_at'][k]:.1%}" for k in TABLE_AT]
        cells += [f"{result['all_gold_at'][k]:.1%}" for k in TABLE_AT]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def measure_configurations(
    items: Sequence[Mapping[str, Any]], index: Path, configs: Sequence[RetrievalConfig]
) -> dict[str, dict[str, Any] | str]:
    """:func:`retrieval_recall` of each configuration, by name; a hybrid configuration on
    an index without usable dense vectors is not run, and its entry says why."""
    dense_note = corpus.retrieve(index, "probe", (), 1, dense=True).dense_note
    measured: dict[str, dict[str, Any] | str] = {}
    for config in configs:
        if config.dense and dense_note:
            measured[config.name] = dense_note
        else:
            measured[config.name] = retrieval_recall(
                items, index, dense=config.dense, config=config
            )
    return measured
