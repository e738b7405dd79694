"""Read datasets into the common item format (described in `evals.datasets`).

Sources: the two offline sets shipped next to this file (``math``, ``multihop``), files already
in the common format, and user-supplied copies of the public GSM8K, HotpotQA and MuSiQue files.
Every loader validates each record and raises `DatasetFormatError` naming the file, the line (or
the item index for a JSON array), the field and the rule broken; nothing is silently dropped
except what a documented option filters out. Loaders are linear in the file size.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from evals.score import extract_number

DATA_DIR = Path(__file__).resolve().parent
BUILTIN = {
    "math": DATA_DIR / "math.jsonl",
    "multihop": DATA_DIR / "multihop.jsonl",
    "multihop_unanswerable": DATA_DIR / "multihop_unanswerable.jsonl",
    "prose": DATA_DIR / "prose.jsonl",
    # Hand-written questions over installed Debian documentation (build_outside_docs.py).
    "outside_docs": DATA_DIR / "outside_docs.jsonl",
    # External sets, built from pinned registry packages (see PROVENANCE.md).
    "family_relationships": DATA_DIR / "family_relationships.jsonl",
    "knights_knaves": DATA_DIR / "knights_knaves.jsonl",
    "syllogism": DATA_DIR / "syllogism.jsonl",
    "logical_deduction": DATA_DIR / "logical_deduction.jsonl",
    "vitaminc": DATA_DIR / "vitaminc.jsonl",
}
KINDS = ("math", "qa")
_LIST_FIELDS = ("documents", "paragraph_ids", "supporting_ids", "answer_aliases")


class DatasetFormatError(ValueError):
    """A dataset record breaks its format; the message says where and how."""


def validate_item(item: Any) -> None:
    """Check one item against the common format; raise ValueError naming the broken field.

    Rules: ``id``, ``dataset``, ``question`` and ``answer`` are non-empty strings (``answer``
    may be empty only when ``meta.answerable`` is False); ``kind`` is one of `KINDS`;
    ``documents``, ``paragraph_ids``, ``supporting_ids`` and ``answer_aliases`` are lists of
    strings; there is one paragraph id per document and ids are unique; every supporting id is a
    paragraph id; ``meta`` is a dict.
    """
    if not isinstance(item, dict):
        raise ValueError(f"an item must be a JSON object, got {type(item).__name__}")
    for field in ("id", "dataset", "question"):
        value = item.get(field)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"field {field!r} must be a non-empty string, got {value!r}")
    if item.get("kind") not in KINDS:
        raise ValueError(f"field 'kind' must be one of {KINDS}, got {item.get('kind')!r}")
    meta = item.get("meta")
    if not isinstance(meta, dict):
        raise ValueError(f"field 'meta' must be an object, got {meta!r}")
    answer = item.get("answer")
    if not isinstance(answer, str) or (not answer.strip() and meta.get("answerable", True)):
        raise ValueError(f"field 'answer' must be a non-empty string, got {answer!r}")
    for field in _LIST_FIELDS:
        value = item.get(field)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"field {field!r} must be a list of strings, got {value!r}")
    documents, paragraph_ids = item["documents"], item["paragraph_ids"]
    if len(documents) != len(paragraph_ids):
        raise ValueError(
            f"fields 'documents' ({len(documents)}) and 'paragraph_ids' ({len(paragraph_ids)}) "
            "must have the same length"
        )
    if len(set(paragraph_ids)) != len(paragraph_ids):
        raise ValueError(f"field 'paragraph_ids' must hold unique ids, got {paragraph_ids!r}")
    unknown = [s for s in item["supporting_ids"] if s not in set(paragraph_ids)]
    if unknown:
        raise ValueError(f"field 'supporting_ids' names ids not in 'paragraph_ids': {unknown!r}")
    if item["kind"] == "math" and extract_number(answer) is None:
        raise ValueError(f"field 'answer' of a math item must hold a number, got {answer!r}")


def item_to_task(item: Mapping[str, Any]) -> dict[str, Any]:
    """The orchestrator's task for an item: ``{"question", "documents", "expected_answer"}``.

    Only the question and the paragraph texts reach the model; gold data (supporting ids, meta)
    stays behind. ``expected_answer`` is the gold answer, for reports only. An item without
    paragraphs (a word problem) hands over its own statement as the one document: the
    orchestrator accepts only document-stated facts as givens, and there the quantities the
    question states are the evidence.
    """
    return {
        "question": item["question"],
        "documents": list(item["documents"]) or [item["question"]],
        "expected_answer": item["answer"],
    }


def _item(
    *,
    id: str,
    dataset: str,
    kind: str,
    question: str,
    answer: str,
    documents: list[str] | None = None,
    paragraph_ids: list[str] | None = None,
    supporting_ids: list[str] | None = None,
    answer_aliases: list[str] | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Assemble an item with every field of the common format present."""
    return {
        "id": id,
        "dataset": dataset,
        "kind": kind,
        "question": question,
        "documents": documents or [],
        "paragraph_ids": paragraph_ids or [],
        "answer": answer,
        "answer_aliases": answer_aliases or [],
        "supporting_ids": supporting_ids or [],
        "meta": meta or {},
    }


def write_items(items: list[dict[str, Any]], path: str | Path) -> None:
    """Write items one JSON object a line: keys sorted, UTF-8, "\\n" line ends on every OS, so
    the same items always give the same bytes."""
    with Path(path).open("w", encoding="utf-8", newline="\n") as handle:
        for item in items:
            handle.write(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n")


def _jsonl_records(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for each non-blank line; bad JSON raises with the line."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetFormatError(f"{path}:{number}: invalid JSON ({exc.msg})") from exc


def _jsonl_items(
    path: Path, item_of: Callable[[Any, str, int], dict[str, Any] | None]
) -> list[dict[str, Any]]:
    """The items ``item_of(record, where, line number)`` makes of the records of a JSONL file,
    in order (``where`` is ``<path>:<line>``, for errors); a None is a record to skip."""
    items = []
    for number, record in _jsonl_records(path):
        item = item_of(record, f"{path}:{number}", number)
        if item is not None:
            items.append(item)
    return items


def _require(record: Any, field: str, kind: type | tuple[type, ...], where: str) -> Any:
    """record[field], checked to be an instance of `kind`, else a located DatasetFormatError."""
    if not isinstance(record, dict):
        raise DatasetFormatError(f"{where}: expected a JSON object, got {type(record).__name__}")
    value = record.get(field)
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise DatasetFormatError(f"{where}: field {field!r} must be {names}, got {value!r}")
    return value


def _titled(title: str, text: str) -> str:
    """A paragraph's text with its title in front, since titles often carry the entity name."""
    return f"{title}: {text}" if title else text


def _unique_ids(titles: list[str]) -> list[str]:
    """Titles made unique by suffixing repeats with " (2)", " (3)", ... in order."""
    seen: dict[str, int] = {}
    ids = []
    for title in titles:
        seen[title] = seen.get(title, 0) + 1
        ids.append(title if seen[title] == 1 else f"{title} ({seen[title]})")
    return ids


def _limited(items: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """The first `limit` items (all when None); a negative limit is an error."""
    if limit is None:
        return items
    if limit < 0:
        raise ValueError(f"limit must be >= 0 or None, got {limit}")
    return items[:limit]


def load_items(path: str | Path, *, limit: int | None = None) -> list[dict[str, Any]]:
    """Items from a JSONL file already in the common format, each validated."""
    path = Path(path)
    items = []
    ids: set[str] = set()
    for number, record in _jsonl_records(path):
        try:
            validate_item(record)
        except ValueError as exc:
            raise DatasetFormatError(f"{path}:{number}: {exc}") from exc
        if record["id"] in ids:
            raise DatasetFormatError(f"{path}:{number}: duplicate item id {record['id']!r}")
        ids.add(record["id"])
        items.append(record)
    return _limited(items, limit)


def load_gsm8k(path: str | Path, *, limit: int | None = None) -> list[dict[str, Any]]:
    """GSM8K JSONL: each line ``{"question": str, "answer": "<solution> #### <number>"}``.

    The gold answer is the number after the last ``####`` (commas removed); the worked solution
    goes to ``meta.solution``. Ids are ``gsm8k-<line number>``.
    """
    path = Path(path)
    source = path.name
    items = _jsonl_items(path, lambda record, where, line: _gsm8k_item(record, where, line, source))
    return _limited(items, limit)


def _gsm8k_item(record: Any, where: str, line: int, source: str) -> dict[str, Any]:
    """One GSM8K record, line ``line`` of file ``source``, as an item (see `load_gsm8k`)."""
    question = _require(record, "question", str, where)
    solution = _require(record, "answer", str, where)
    if "####" not in solution:
        raise DatasetFormatError(f"{where}: field 'answer' must end with '#### <number>'")
    final = solution.rsplit("####", 1)[1].strip()
    gold = extract_number(final)
    if gold is None:
        raise DatasetFormatError(f"{where}: field 'answer' has no number after '####': {final!r}")
    return _item(
        id=f"gsm8k-{line:05d}",
        dataset="gsm8k",
        kind="math",
        question=question.strip(),
        answer=gold,
        meta={"source_file": source, "line": line, "solution": solution},
    )


def _qa_item(
    dataset: str, record_id: Any, number: int, question: str, answer: str, **fields: Any
) -> dict[str, Any]:
    """A question-answering item of ``dataset``: the record's own id, else
    ``<dataset>-<number>``; question and answer stripped; ``fields`` as :func:`_item` takes
    them."""
    return _item(
        id=str(record_id) if record_id else f"{dataset}-{number:05d}",
        dataset=dataset,
        kind="qa",
        question=question.strip(),
        answer=answer.strip(),
        **fields,
    )


def _hotpot_pairs(value: Any, first: str, second: str, where: str, field: str) -> list[list[Any]]:
    """HotpotQA pairs, from the original list-of-pairs form or the column form of other exports.

    `first`/`second` name the columns of the column form, e.g. ``{"title": [...], "sentences":
    [...]}``.
    """
    if isinstance(value, dict):
        left, right = value.get(first), value.get(second)
        if not isinstance(left, list) or not isinstance(right, list) or len(left) != len(right):
            raise DatasetFormatError(
                f"{where}: field {field!r} needs equal-length lists {first!r} and {second!r}"
            )
        return [[a, b] for a, b in zip(left, right, strict=True)]
    if not isinstance(value, list) or not all(
        isinstance(pair, list | tuple) and len(pair) == 2 for pair in value
    ):
        raise DatasetFormatError(f"{where}: field {field!r} must be a list of [{first}, {second}]")
    return [list(pair) for pair in value]


def _hotpot_item(record: Any, where: str, index: int) -> dict[str, Any]:
    """One HotpotQA record as an item (see `load_hotpotqa`)."""
    question = _require(record, "question", str, where)
    answer = _require(record, "answer", str, where)
    context = _hotpot_pairs(record.get("context"), "title", "sentences", where, "context")
    titles, texts = [], []
    for title, sentences in context:
        if not isinstance(title, str) or not isinstance(sentences, list):
            raise DatasetFormatError(f"{where}: a 'context' entry must be [title, [sentences]]")
        if not all(isinstance(s, str) for s in sentences):
            raise DatasetFormatError(f"{where}: sentences of context {title!r} must be strings")
        titles.append(title)
        # HotpotQA sentences keep their leading spaces, so plain concatenation restores the text.
        texts.append("".join(sentences).strip())
    facts = _hotpot_pairs(
        record.get("supporting_facts", []), "title", "sent_id", where, "supporting_facts"
    )
    ids = _unique_ids(titles)
    sentence_counts = {title: len(sentences) for title, sentences in context}
    supporting: list[str] = []
    dangling = []
    for title, sentence in facts:
        if title not in sentence_counts or not isinstance(sentence, int):
            dangling.append([title, sentence])
            continue
        if not 0 <= sentence < sentence_counts[title]:
            dangling.append([title, sentence])  # known quirk of the public files; keep the title
        if title not in supporting:
            supporting.append(title)
    record_id = record.get("_id", record.get("id"))
    meta: dict[str, Any] = {"type": record.get("type"), "level": record.get("level")}
    meta["supporting_facts"] = facts
    if dangling:
        meta["dangling_supporting_facts"] = dangling
    return _qa_item(
        "hotpotqa",
        record_id,
        index,
        question,
        answer,
        documents=[_titled(t, x) for t, x in zip(titles, texts, strict=True)],
        paragraph_ids=ids,
        supporting_ids=[ids[titles.index(title)] for title in supporting],
        meta=meta,
    )


def load_hotpotqa(path: str | Path, *, limit: int | None = None) -> list[dict[str, Any]]:
    """HotpotQA distractor setting: the official JSON array, or JSONL with one record a line.

    Records need ``question``, ``answer``, ``context`` (``[[title, [sentence, ...]], ...]`` or the
    column form ``{"title": [...], "sentences": [...]}``) and optionally ``supporting_facts``
    (``[[title, sentence_index], ...]`` or ``{"title": [...], "sent_id": [...]}``). Paragraph ids
    are the titles (repeats suffixed); supporting ids are the titles named by supporting facts,
    in their order. Facts that point outside the context are kept in
    ``meta.dangling_supporting_facts`` (the public dev set has a few).
    """
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        head = handle.read(1024).lstrip()
    if not head.startswith("["):
        return _limited(_jsonl_items(path, _hotpot_item), limit)
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(
            f"{path}:{exc.lineno}: invalid JSON ({exc.msg}, column {exc.colno})"
        ) from exc
    items = [
        _hotpot_item(record, f"{path}: item {index}", index) for index, record in enumerate(records)
    ]
    return _limited(items, limit)


def load_musique(
    path: str | Path, *, limit: int | None = None, answerable_only: bool = True
) -> list[dict[str, Any]]:
    """MuSiQue JSONL: ``id``, ``question``, ``answer``, ``answer_aliases``, ``answerable`` and
    ``paragraphs`` (``[{"idx", "title", "paragraph_text", "is_supporting"}, ...]``).

    Paragraph ids are the ``idx`` values as strings; supporting ids are those flagged
    ``is_supporting``. With `answerable_only` (the default) records marked ``answerable: false``
    (the "full" variant's unanswerable halves) are skipped; otherwise they are kept with
    ``meta.answerable`` False.
    """
    path = Path(path)
    source = path.name

    def item_of(record: Any, where: str, line: int) -> dict[str, Any] | None:
        return _musique_item(record, where, line, source, answerable_only)

    return _limited(_jsonl_items(path, item_of), limit)


def _musique_item(
    record: Any, where: str, line: int, source: str, answerable_only: bool
) -> dict[str, Any] | None:
    """One MuSiQue record, line ``line`` of file ``source``, as an item; None for an
    unanswerable one when ``answerable_only`` (see `load_musique`)."""
    question = _require(record, "question", str, where)
    answer = _require(record, "answer", str, where)
    paragraphs = _require(record, "paragraphs", list, where)
    answerable = record.get("answerable", True)
    if not isinstance(answerable, bool):
        raise DatasetFormatError(f"{where}: field 'answerable' must be true or false")
    if answerable_only and not answerable:
        return None
    aliases = record.get("answer_aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise DatasetFormatError(f"{where}: field 'answer_aliases' must be a list of strings")
    documents, ids, supporting = [], [], []
    for position, paragraph in enumerate(paragraphs):
        at = f"{where}: paragraphs[{position}]"
        text = _require(paragraph, "paragraph_text", str, at)
        idx = _require(paragraph, "idx", int, at)
        title = paragraph.get("title", "")
        if not isinstance(title, str):
            raise DatasetFormatError(f"{at}: field 'title' must be a string, got {title!r}")
        documents.append(_titled(title, text.strip()))
        ids.append(str(idx))
        if paragraph.get("is_supporting") is True:
            supporting.append(str(idx))
    if len(set(ids)) != len(ids):
        raise DatasetFormatError(f"{where}: paragraph 'idx' values must be unique")
    record_id = record.get("id")
    return _qa_item(
        "musique",
        record_id,
        line,
        question,
        answer,
        documents=documents,
        paragraph_ids=ids,
        supporting_ids=supporting,
        answer_aliases=[a.strip() for a in aliases],
        meta={"answerable": answerable, "source_file": source, "line": line},
    )


def _sniff(path: Path) -> str:
    """Name the format of a user file from its first record: common, gsm8k, hotpotqa, musique."""
    with path.open(encoding="utf-8") as handle:
        head = handle.read(1024).lstrip()
    if head.startswith("["):
        return "hotpotqa"
    for number, record in _jsonl_records(path):
        if not isinstance(record, dict):
            break
        if "kind" in record and "dataset" in record:
            return "common"
        if "paragraphs" in record:
            return "musique"
        if "context" in record:
            return "hotpotqa"
        if "question" in record and "answer" in record:
            return "gsm8k"
        raise DatasetFormatError(
            f"{path}:{number}: cannot tell the format from the fields {sorted(record)}"
        )
    raise DatasetFormatError(f"{path}: no JSON object records found")


def load_dataset(spec: str | Path, *, limit: int | None = None) -> list[dict[str, Any]]:
    """Items for ``"math"``, ``"multihop"`` (the shipped sets) or a path to a user file.

    A path's format is recognised from its first record: common-format items, MuSiQue
    (``paragraphs``), HotpotQA (a JSON array or ``context``) or GSM8K (``question`` + ``answer``).
    """
    if str(spec) in BUILTIN:
        return load_items(BUILTIN[str(spec)], limit=limit)
    path = Path(spec)
    if not path.is_file():
        raise FileNotFoundError(f"dataset {str(spec)!r} is neither {sorted(BUILTIN)} nor a file")
    loaders = {
        "common": load_items,
        "gsm8k": load_gsm8k,
        "hotpotqa": load_hotpotqa,
        "musique": load_musique,
    }
    return loaders[_sniff(path)](path, limit=limit)
