"""Evaluation datasets in one common item format.

Every dataset, shipped or loaded from a public file, becomes a list of items (plain dicts, one
JSON object a line when stored)::

    {
      "id": "multihop-0007",          # unique within the dataset
      "dataset": "multihop",          # math | multihop | gsm8k | hotpotqa | musique
      "kind": "qa",                   # "math" (scored on the final number) or "qa" (EM / F1)
      "question": "In which town ...?",
      "documents": ["...", "..."],    # paragraph texts given to the model; [] for math
      "paragraph_ids": ["p01", ...],  # one id per document, unique within the item
      "answer": "Quelmere",           # gold answer; for math a number as a string
      "answer_aliases": ["..."],      # other accepted spellings (may be empty)
      "supporting_ids": ["p03", ...], # paragraph ids of the gold (supporting) paragraphs
      "meta": {...}                   # provenance and dataset-specific details
    }

`item_to_task` turns an item into the orchestrator's task
``{"question", "documents", "expected_answer"}``; `evals.score.score` scores an answer against it.

The shipped sets are ``math.jsonl`` (200 items, see ``build_math.py``) and ``multihop.jsonl``
(230 items, see ``build_multihop.py``); ``PROVENANCE.md`` records where they come from.
"""

from collections.abc import Callable
from typing import Any

from evals.datasets.loaders import (
    BUILTIN,
    DatasetFormatError,
    item_to_task,
    load_dataset,
    load_gsm8k,
    load_hotpotqa,
    load_items,
    load_musique,
    validate_item,
    write_items,
)

FORMATS: dict[str, Callable[..., list[dict[str, Any]]]] = {
    "common": load_items,
    "gsm8k": load_gsm8k,
    "hotpotqa": load_hotpotqa,
    "musique": load_musique,
}
"""``--format`` of a data set file: its loader."""

__all__ = [
    "BUILTIN",
    "FORMATS",
    "DatasetFormatError",
    "item_to_task",
    "load_dataset",
    "load_gsm8k",
    "load_hotpotqa",
    "load_items",
    "load_musique",
    "validate_item",
    "write_items",
]
