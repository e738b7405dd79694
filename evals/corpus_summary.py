"""summary.md of ``python -m evals.corpus_eval``: the retrieval recall table, then per mode
(inline, corpus) the answers and citations, corpus minus inline with paired intervals, and
the corpus runs' retrieval and refusals. Rows are those of :func:`evals.corpus_eval.run_mode`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evals.corpus_recall import RECALL_AT
from evals.metrics import abstention_metrics
from evals.reporting.cells import grouped, table
from evals.stats import paired_bootstrap

MODES = ("inline", "corpus")
"""The two ways an item is answered: its own documents inline, or retrieved from the pool."""


def summarise(
    rows: Sequence[dict[str, Any]], retrieval: Mapping[str, Any], meta: Mapping[str, Any]
) -> str:
    """summary.md: retrieval recall, then per mode the answer and citation figures."""
    out = _recall_lines(retrieval, meta)
    if not rows:
        return "\n".join(out)
    out += _answer_lines(rows) + _paired_lines(rows)
    out += _corpus_run_lines([r for r in rows if r["mode"] == "corpus"])
    return "\n".join(out) + "\n"


def _paired_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """summary.md's comparison of the two modes on the items both answered: corpus minus
    inline right and wrong answers per item, with paired bootstrap 95% intervals, and the
    wrong answers that cite outside the item's gold paragraphs (a look-alike entity of another
    item or a distractor paragraph) in each mode ([] unless both modes ran)."""
    by_mode = {mode: {r["id"]: r for r in rows if r["mode"] == mode} for mode in MODES}
    shared = sorted(set(by_mode["inline"]) & set(by_mode["corpus"]))
    if not shared:
        return []
    pairs = [(by_mode["corpus"][i], by_mode["inline"][i]) for i in shared]
    lines = ["", f"Corpus minus inline, on the {len(shared)} items run in both modes:"]
    for label, wanted in (("right", "correct"), ("wrong", "wrong")):
        gap = paired_bootstrap(
            [float(c["outcome"] == wanted) for c, _ in pairs],
            [float(i["outcome"] == wanted) for _, i in pairs],
        )
        lines.append(
            f"- {label} answers per item: {gap['diff']:+.1%} "
            f"(95% interval {gap['low']:+.1%} to {gap['high']:+.1%})"
        )
    off_gold = {
        mode: sum(
            1
            for r in by_mode[mode].values()
            if r["outcome"] == "wrong" and r["cited"] > r["cited_gold"]
        )
        for mode in MODES
    }
    lines.append(
        "- wrong answers citing outside the gold paragraphs: "
        + ", ".join(f"{mode} {off_gold[mode]}" for mode in MODES)
    )
    return lines


def _recall_lines(retrieval: Mapping[str, Any], meta: Mapping[str, Any]) -> list[str]:
    """The title, the settings and the retrieval recall table of summary.md."""
    return [
        f"# Corpus mode vs inline documents: {meta['dataset']}",
        "",
        f"Model `{meta['model']}`; {meta['items']} questions; pooled corpus of "
        f"{meta['documents']} documents ({meta['chunks']} chunks, "
        f"{'hybrid' if meta['dense'] else 'keyword-only'} retrieval). Settings: {meta['config']}.",
        "",
        f"## Retrieval recall of the gold paragraphs (question only, no model; "
        f"{retrieval['items']} questions)",
        "",
        "| k | " + " | ".join(str(k) for k in RECALL_AT) + " |",
        "|---|" + "---:|" * len(RECALL_AT),
        "| mean recall@k | "
        + " | ".join(f"{retrieval['recall_at'][k]:.1%}" for k in RECALL_AT)
        + " |",
        "| all gold in top k | "
        + " | ".join(f"{retrieval['all_gold_at'][k]:.1%}" for k in RECALL_AT)
        + " |",
        "",
    ]


def _answer_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """summary.md's answer table: one row per mode."""
    header = (
        "mode | items | correct | wrong | abstained | coverage | accuracy (answered) | net "
        "| citation precision | calls/item"
    )
    body = [_answer_row(mode, mine) for mode, mine in grouped(rows, "mode", MODES)]
    return ["## Answers", "", *table(header, body)]


def _answer_row(mode: str, rows: Sequence[dict[str, Any]]) -> tuple[object, ...]:
    """The answer table's row of ``mode``, whose rows are ``rows``."""
    m = abstention_metrics(rows)
    cited = sum(r["cited"] for r in rows)
    precision = f"{sum(r['cited_gold'] for r in rows) / cited:.1%} of {cited}" if cited else "-"
    selective = "-" if m["accuracy_answered"] is None else f"{m['accuracy_answered']:.1%}"
    coverage = "-" if m["coverage"] is None else f"{m['coverage']:.1%}"
    calls = sum(r["n_calls"] for r in rows) / len(rows)
    return (
        mode,
        m["items"],
        m["correct_answers"],
        m["wrong_answers"],
        m["abstained"],
        coverage,
        selective,
        f"{m['net_score']:+d}",
        precision,
        f"{calls:.1f}",
    )


def _corpus_run_lines(corpus_rows: Sequence[dict[str, Any]]) -> list[str]:
    """summary.md's line on the corpus runs' retrieval and refusals ([] without any)."""
    out: list[str] = []
    if corpus_rows:
        n = len(corpus_rows)
        round1 = sum(r["recall_round1"] for r in corpus_rows) / n
        shown = sum(r["recall_shown"] for r in corpus_rows) / n
        second = sum(r["rounds"] > 1 for r in corpus_rows)
        fallback = sum(r["rewrite_fallback"] is not None for r in corpus_rows)
        refusals: dict[str, int] = {}
        for r in corpus_rows:
            if r["refused"]:
                refusals[r["refusal_reason"]] = refusals.get(r["refusal_reason"], 0) + 1
        out += [
            "",
            f"Corpus runs: gold recall of round 1 (question + rewrites) {round1:.1%}, of all "
            f"chunks shown to the last loop {shown:.1%}; {second} of {n} went to a second "
            f"round; the rewrite was unusable in {fallback}. Refusals: "
            + (", ".join(f"{k} {v}" for k, v in sorted(refusals.items())) or "none")
            + ".",
        ]
    return out
