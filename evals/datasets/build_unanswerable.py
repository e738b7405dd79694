"""Build ``multihop_unanswerable.jsonl``: multi-hop questions whose decisive paragraph is gone.

Usage (stdlib only; the output is committed and must stay byte-identical)::

    python -m evals.datasets.build_unanswerable [--first N --count 30] [--out PATH]

Each item is a copy of a ``multihop.jsonl`` item (by default items 120-149, then 200-229, so
that the answerable items an evaluation takes, 0-119 and 150-199, share no world with these;
``--first`` builds from one range instead) with one
paragraph removed: the one stating the question's last fact (the paragraph of the final
``meta.evidence`` sentence). ``build_multihop`` states every fact about a subject only in that
subject's own paragraph, so once it is gone no document says the fact and the question cannot
be answered from the documents. As a second guard the builder skips an item when a remaining
sentence names both the removed sentence's subject (the words before "was"/"is") and the gold
answer (2 of items 120-149 are skipped, so those give 28). The gold answer
becomes ``""``, ``meta``
records ``answerable: false``, the source item and the removed paragraph; a system scores well
here only by refusing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.datasets.build_cli import builder_parser, write_built
from evals.datasets.loaders import BUILTIN, load_items

DEFAULT_RANGES = ((120, 30), (200, 25), (280, 16), (380, 17))
"""``(first, count)`` of the items the shipped file is built from, in order (:func:`build`):
30 from multihop item 120 on (items 122-151), 25 from 200 on (200-229), 16 from 280 on
(280-299) and 17 from 380 on (380-399). The last three were added on 2026-11-28 as items nobody
here had seen; the counts are those the ranges gave when each was the end of the multihop set,
so that the file stays byte-identical as the set grows, and a new range only adds items."""
DEFAULT_OUT = Path(__file__).resolve().parent / "multihop_unanswerable.jsonl"


def make_unanswerable(item: dict[str, Any]) -> dict[str, Any] | None:
    """The item without the paragraph of its last evidence sentence, or None when the answer
    would still be readable elsewhere (never the case for the shipped generator)."""
    last = item["meta"]["evidence"][-1]
    removed = last["paragraph_id"]
    keep = [i for i, pid in enumerate(item["paragraph_ids"]) if pid != removed]
    documents = [item["documents"][i] for i in keep]
    subject = last["sentence"].split(" was ")[0].split(" is ")[0]
    answer = item["answer"].casefold()
    for document in documents:
        for sentence in document.split(". "):
            folded = sentence.casefold()
            if subject.casefold() in folded and answer in folded:
                return None
    return {
        **item,
        "id": f"{item['id']}-u",
        "dataset": "multihop_unanswerable",
        "documents": documents,
        "paragraph_ids": [item["paragraph_ids"][i] for i in keep],
        "answer": "",
        "answer_aliases": [],
        "supporting_ids": [s for s in item["supporting_ids"] if s != removed],
        "meta": {
            **item["meta"],
            "answerable": False,
            "source_item": item["id"],
            "removed_paragraph": removed,
            "removed_sentence": last["sentence"],
            "original_answer": item["answer"],
        },
    }


def build(first: int, count: int) -> list[dict[str, Any]]:
    """``count`` unanswerable items from multihop items ``first``, ``first + 1``, ... (the
    items that would stay answerable skipped), or fewer when the set ends first."""
    if first < 0 or count < 0:
        raise ValueError(f"first and count must be >= 0, got {first}, {count}")
    items: list[dict[str, Any]] = []
    for item in load_items(BUILTIN["multihop"])[first:]:
        if len(items) == count:
            break
        derived = make_unanswerable(item)
        if derived is not None:
            items.append(derived)
    return items


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    flags = (("--first", int, None), ("--count", int, 30), ("--out", Path, DEFAULT_OUT))
    args = builder_parser(__doc__, *flags).parse_args(argv)
    ranges = DEFAULT_RANGES if args.first is None else ((args.first, args.count),)
    write_built([item for first, count in ranges for item in build(first, count)], args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
