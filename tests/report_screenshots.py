"""Regenerate the report.html screenshots in docs/images/ (shown in README.md and docs/report.md).

Run ``python tests/report_screenshots.py`` (needs Debian's ``chromium``). For each scripted
report of ``tests/report_pages.py`` (rack-7, a refusal, a corpus run, an answer of width 2) it
opens report.html in headless Chromium at 1400x1000, clicks the first given the answer's
argument uses (else the first given), and saves the window as ``docs/images/report-<name>.png``;
for rack-7 it also saves the documents with that given's sentence marked
(``report-rack7-documents.png``). No model is run.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from browser import Browser, find_chromium  # noqa: E402
from report_pages import REPORTS  # noqa: E402

IMAGES = ROOT / "docs" / "images"


def main() -> None:
    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("needs chromium (Debian: apt-get install chromium)")
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="shots-") as folder, Browser(chromium) as browser:
        for name, run in REPORTS.items():
            report_json = run(Path(folder) / name)
            report = json.loads(report_json.read_text(encoding="utf-8"))
            argued = [step["id"] for line in report["chosen"]["arguments"] for step in line]
            givens = [g["id"] for g in report["givens"] if g["span"] is not None]
            chosen = next((g for g in givens if g in argued), givens[0])
            tab = browser.open((report_json.parent / "report.html").as_uri())
            number = tab.evaluate(
                "[...document.querySelectorAll('g.node')]"
                f".find(g => g.dataset.id === {json.dumps(chosen)}).dataset.i"
            )
            tab.click(f"#n{number}")
            tab.screenshot(IMAGES / f"report-{name}.png")
            if name == "rack7":
                tab.evaluate("document.getElementById('sec-documents').scrollIntoView()")
                tab.screenshot(IMAGES / f"report-{name}-documents.png")
            if tab.problems:
                raise SystemExit(f"{name}: {tab.problems}")
            tab.close()
            print(IMAGES / f"report-{name}.png")


if __name__ == "__main__":
    main()
