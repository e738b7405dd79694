"""summary.html: an evaluation run as one offline page beside summary.md.

It holds three plots, drawn here as static SVG so they need nothing the core install lacks:
accuracy per arm with its 95% interval, the risk-coverage curve of each arm that scores its own
confidence, and arm 6's accuracy by support width. After the plots comes every item with each
arm's outcome, linked to the item's arm-6 report.html. The intervals are Wilson score intervals
on one arm's own items. The paired differences between arms, with their bootstrap intervals,
are in summary.md's Statistics section.

Everything shown is escaped. The page has no script, and its Content-Security-Policy allows
only its own style, so it sends no request. The same run always gives the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.arms import item_folder  # the folder arm 6 writes an item's report to
from evals.score import row_outcome
from graph_server.svg_graph import ARGUMENT_COLOURS

Rows = Mapping[str, Mapping[str, Any]]
Z95 = 1.959964
WIDTH, ROW_H, LABEL_W = 760, 26, 260
STYLE = """body { font: 14px/1.45 system-ui, sans-serif; margin: 1em 1.5em; color: #1a1a1a; }
h1 { font-size: 1.35em; } h2 { font-size: 1.1em; border-bottom: 1px solid #ddd; }
svg text { font-size: 12px; fill: #222; } svg .axis { stroke: #999; fill: none; }
svg .grid { stroke: #eee; }
svg .ci { stroke: #000; stroke-width: 1.5; } svg .curve { fill: none; stroke-width: 2; }
table { border-collapse: collapse; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.15em 0.5em; text-align: left; }
td.correct { background: #e3f5e1; } td.wrong { background: #fde2e1; }
td.abstained { background: #fff1cc; } td.error, td.no_answer { background: #eee; }
.note { color: #555; max-width: 60em; }"""


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def wilson(successes: int, n: int) -> tuple[float, float] | None:
    """The 95% Wilson score interval of ``successes`` out of ``n`` (None when n is 0)."""
    if n <= 0:
        return None
    p = successes / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def render_summary_html(summary: Mapping[str, Any], arms: Mapping[int, Rows], run_dir: Path) -> str:
    """The page for ``summary`` (:func:`evals.summary.summarize`) over ``arms`` (arm -> item id
    -> row); item links point to ``run_dir``'s arm-6 reports that exist."""
    config = summary.get("config", {})
    title = f"Evaluation: {config.get('dataset', '?')} / {config.get('model', '?')}"
    bars = [
        (f"arm {arm} {metrics['name']}", metrics["correct"], metrics["items"])
        for arm, metrics in summary["arms"].items()
    ]
    parts = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="note">{esc(run_dir)}; {len(_items(arms))} items.</p>',
        "<h2>Accuracy per arm</h2>",
        '<p class="note">Right answers, plus abstentions on unanswerable items, over all items; '
        "the whisker is the 95% Wilson interval of each arm on its own items. Paired "
        "differences between arms, with bootstrap intervals, are in summary.md.</p>",
        _bar_chart(bars),
        *_risk_coverage(summary.get("risk_coverage", {}), summary["arms"]),
        *_by_width(summary.get("arm6_width")),
        "<h2>Items</h2>",
        _item_table(arms, run_dir),
    ]
    digest = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        f"style-src 'sha256-{digest}'\"><title>{esc(title)}</title><style>{STYLE}</style>"
        "</head><body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )


def _bar_chart(bars: Sequence[tuple[str, int, int]], colour: str | None = None) -> str:
    """Horizontal bars of ``(label, successes, n)`` from 0 to 1, each with its interval;
    each bar in its own colour unless ``colour`` is given."""
    height = 30 + ROW_H * len(bars)
    span = WIDTH - LABEL_W - 110
    out = [_frame(LABEL_W, span, height)]
    for row, (label, successes, n) in enumerate(bars):
        y = 20 + row * ROW_H
        value = successes / n if n else 0.0
        out.append(f'<text x="{LABEL_W - 8}" y="{y + 15}" text-anchor="end">{esc(label)}</text>')
        out.append(
            f'<rect x="{LABEL_W}" y="{y + 4}" width="{span * value:.1f}" height="{ROW_H - 8}" '
            f'fill="{colour or ARGUMENT_COLOURS[row % len(ARGUMENT_COLOURS)]}"/>'
        )
        interval = wilson(successes, n)
        if interval is not None:
            low, high = (LABEL_W + span * bound for bound in interval)
            mid = y + ROW_H // 2
            out.append(
                f'<path class="ci" d="M{low:.1f},{mid} H{high:.1f} M{low:.1f},{mid - 5} '
                f'V{mid + 5} M{high:.1f},{mid - 5} V{mid + 5}"/>'
            )
        out.append(
            f'<text x="{LABEL_W + span + 8}" y="{y + 15}">'
            f"{f'{100 * value:.0f}%' if n else 'n/a'} ({successes}/{n})</text>"
        )
    return f'<svg viewBox="0 0 {WIDTH} {height}" width="{WIDTH}">{"".join(out)}</svg>'


def _frame(left: int, span: int, height: int) -> str:
    """Vertical grid lines at 0, 25, 50, 75 and 100% with their labels."""
    lines = []
    for tenth in (0, 25, 50, 75, 100):
        x = left + span * tenth / 100
        lines.append(f'<path class="grid" d="M{x:.1f},14 V{height - 4}"/>')
        lines.append(f'<text x="{x:.1f}" y="11" text-anchor="middle">{tenth}%</text>')
    return "".join(lines)


def _risk_coverage(curves: Mapping[str, Any], arms: Mapping[str, Any]) -> list[str]:
    """Risk (wrong over answered) against coverage (answered over items), one line per arm."""
    if not curves:
        return []
    size, left, top = 300, 50, 16
    out = [
        f'<path class="axis" d="M{left},{top} V{top + size} H{left + size}"/>',
        f'<text x="{left + size / 2}" y="{top + size + 32}" text-anchor="middle">coverage</text>',
        f'<text x="12" y="{top + size / 2}" transform="rotate(-90 12 {top + size / 2})" '
        'text-anchor="middle">risk</text>',
    ]
    for tick in (0, 0.5, 1):
        out.append(
            f'<text x="{left + size * tick}" y="{top + size + 16}" text-anchor="middle">'
            f"{tick:g}</text>"
            f'<text x="{left - 6}" y="{top + size * (1 - tick) + 4}" text-anchor="end">'
            f"{tick:g}</text>"
        )
    legend = []
    for k, (arm, points) in enumerate(sorted(curves.items())):
        colour = ARGUMENT_COLOURS[k % len(ARGUMENT_COLOURS)]
        xy = [(left + size * p["coverage"], top + size * (1 - p["risk"])) for p in points]
        path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y) in enumerate(xy))
        out.append(f'<path class="curve" d="{path}" stroke="{colour}"/>')
        out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>' for x, y in xy]
        name = arms.get(arm, {}).get("name", "")
        legend.append(
            f'<rect x="{left + size + 20}" y="{top + 18 * k}" width="12" height="12" '
            f'fill="{colour}"/><text x="{left + size + 38}" y="{top + 18 * k + 11}">'
            f"arm {esc(arm)} {esc(name)}</text>"
        )
    return [
        "<h2>Risk against coverage</h2>",
        '<p class="note">Answering only when the arm\'s own confidence (arm 6: support width; '
        "arm 7: vote share) reaches a threshold: lower and further right is better.</p>",
        f'<svg viewBox="0 0 {WIDTH} {size + 60}" width="{WIDTH}">{"".join(out + legend)}</svg>',
    ]


def _by_width(strata: Mapping[str, Any] | None) -> list[str]:
    if not strata:
        return []
    bars = [
        (f"width {bucket} ({counts['items']} items)", counts["correct"], counts["answered"])
        for bucket, counts in strata["buckets"].items()
    ]
    return [
        "<h2>Arm 6 accuracy by support width</h2>",
        '<p class="note">Right answers over answered items at each width of the chosen '
        f"conclusion (a refusal is not a wrong conclusion); {strata['no_conclusion']} items had "
        f"no conclusion. G4: {esc(strata['g4']['verdict'])}.</p>",
        _bar_chart(bars, ARGUMENT_COLOURS[0]),
    ]


def _items(arms: Mapping[int, Rows]) -> list[str]:
    return sorted({item for rows in arms.values() for item in rows})


def _item_table(arms: Mapping[int, Rows], run_dir: Path) -> str:
    head = "".join(f"<th>arm {arm}</th>" for arm in arms)
    rows = []
    for item in _items(arms):
        cells = []
        for rows_of_arm in arms.values():
            row = rows_of_arm.get(item)
            outcome = row_outcome(row) if row is not None else ""
            cells.append(f'<td class="{esc(outcome)}">{esc(outcome or "-")}</td>')
        report = Path("arm6") / item_folder(item) / "report.html"
        link = (
            f'<a href="{esc(report.as_posix())}">report</a>'
            if (run_dir / report).is_file()
            else "-"
        )
        question = next((r[item].get("question") for r in arms.values() if item in r), "") or ""
        short = question if len(question) <= 90 else question[:89] + "…"
        rows.append(
            f"<tr><td>{esc(item)}</td><td>{esc(short)}</td>{''.join(cells)}<td>{link}</td></tr>"
        )
    return (
        f"<table><thead><tr><th>item</th><th>question</th>{head}<th>arm 6</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
