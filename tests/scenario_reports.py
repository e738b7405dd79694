"""The 15 scenario reports, the safety net of every refactor (issue 21).

Runs the scripted runs of ``tests/canned_runs.py`` (and two corpus tasks) through
:func:`orchestrator.api.run_task` with fixed seeds, writes each run's report.json and report.md
into a folder, and masks what legitimately differs between two runs (every ``*_s`` field,
timestamps, durations). ``tests/test_scenario_reports.py`` compares each masked report byte
for byte with ``tests/fixtures/scenario_reports/<name>.json`` and ``.md``, and the SHA-256 of
every request sent (model, messages, kwargs: what a reply bank keys on) with ``requests.txt``
there. When a change is meant to change a report, rewrite the expected files and review
their diff::

    python tests/scenario_reports.py --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from canned_runs import (  # noqa: E402
    CONTRADICTING,
    GOOD,
    MALFORMED,
    PARAPHRASE,
    RACK7_TASK,
    SALVAGEABLE,
    Script,
    always,
    chain_run,
    six_runs,
    split_votes,
)
from corpus_fixtures import corpus_script, write_corpus  # noqa: E402

import corpus  # noqa: E402
from orchestrator.api import RunConfig, run_task  # noqa: E402
from orchestrator.llm.errors import APIStatusError  # noqa: E402
from orchestrator.llm.testing import ScriptedClient  # noqa: E402

MIXED = six_runs(r2=PARAPHRASE, r3=MALFORMED, r4=SALVAGEABLE, r5=CONTRADICTING)


def scenarios() -> dict[str, tuple[Any, RunConfig]]:
    """Name -> (script, config), every one seeded."""
    chain = {
        f"r{i}": chain_run(f"p{i}", [f"step {i} of the reasoning"], "x9 can run it", "ignored")
        for i in range(1, 7)
    }
    return {
        "good": (Script(six_runs()), RunConfig(seed=7)),
        "mixed": (Script(MIXED), RunConfig(seed=7)),
        "mixed_struct": (Script(MIXED), RunConfig(seed=3, structured_output=True)),
        "mixed_think": (Script(MIXED), RunConfig(seed=5, think_first=True, budget_calls=40)),
        "mixed_greedy": (Script(MIXED), RunConfig(seed=9, greedy_first=True)),
        "not_determinable": (
            Script(MIXED, votes=always("not_determinable")),
            RunConfig(seed=7),
        ),
        "split": (Script(MIXED, votes=split_votes), RunConfig(seed=7)),
        # One repairable run: with two, which one gets the last call depends on thread order.
        "small_budget": (
            Script(six_runs(r3=MALFORMED, r5=CONTRADICTING)),
            RunConfig(seed=7, budget_calls=7),
        ),
        "budget_for_one_round": (
            Script(six_runs(r5=CONTRADICTING)),
            RunConfig(seed=7, budget_calls=9),
        ),
        "chains": (Script(chain), RunConfig(seed=11, k=1)),
        "failed_run": (
            Script(six_runs(r2=APIStatusError(500, "boom"), r6=CONTRADICTING)),
            RunConfig(seed=7, require_k=True),
        ),
        "unseeded_contra": (
            Script(six_runs(r1=CONTRADICTING, r2=CONTRADICTING, r3=CONTRADICTING)),
            RunConfig(seed=1),
        ),
        "good_first_malformed": (
            Script(six_runs(r1=MALFORMED), repairs={"r1": GOOD}),
            RunConfig(seed=2),
        ),
    }


def _corpus_script(rewrite: str, answer: bool) -> Any:
    """The corpus scenarios' script."""
    # Its own conclusions, so the hashes stay those recorded before the script was shared.
    return corpus_script(rewrite, answer=answer, hall="In hall B.", unanswerable="Not named.")


_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?")
_DURATION = re.compile(r"\d+(\.\d+)?(e-?\d+)? ?(s|ms|seconds?)\b")


def mask(value: Any, key: str = "") -> Any:
    """Every ``*_s`` field, timestamp and duration replaced by a fixed mark."""
    if key.endswith(("_s", "_at")) or "_s_" in key or key == "timing":
        return "<masked>"
    if isinstance(value, dict):
        return {k: mask(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v) for v in value]
    if isinstance(value, str):
        return _DURATION.sub("<dur>", _TIME.sub("<time>", value))
    return value


def mask_markdown(text: str, out: Path) -> str:
    """report.md with ``out`` as ``<out>`` and timestamps and durations masked, the latency
    column of the calls table included (0.00 or 0.01 s on a loaded machine)."""
    masked = _DURATION.sub("<dur>", _TIME.sub("<time>", text.replace(str(out), "<out>")))
    return "\n".join(_mask_latency_column(masked.split("\n")))


def _mask_latency_column(lines: list[str]) -> list[str]:
    """The rows of every table whose header has a ``latency s`` column, that cell masked."""
    column: int | None = None
    result = []
    for line in lines:
        cells = line.split("|")
        if not line.startswith("|"):
            column = None
        elif column is None and "latency s" in [c.strip() for c in cells]:
            column = [c.strip() for c in cells].index("latency s")
        elif column is not None and not set(line) <= set("|-: ") and len(cells) > column:
            cells[column] = " <dur> "
            line = "|".join(cells)
        result.append(line)
    return result


def digest(data: str) -> str:
    """The first 16 hex digits of the SHA-256 of ``data``."""
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def requests_digest(client: ScriptedClient) -> str:
    """The digest of every request the client was sent, in a fixed order."""
    sent = sorted(
        json.dumps(
            {"model": c["model"], "messages": c["messages"], "kwargs": c["kwargs"]},
            sort_keys=True,
            default=repr,
        )
        for c in client.calls
    )
    return digest("\n".join(sent))


EXPECTED = HERE / "fixtures" / "scenario_reports"
REQUESTS_FILE = EXPECTED / "requests.txt"


@dataclass(frozen=True)
class Masked:
    """One scenario's masked report.json and report.md, and the digest of its requests."""

    json: str
    markdown: str
    requests: str


def run_scenario(client: ScriptedClient, task: Any, config: RunConfig, folder: Path) -> Masked:
    """Run one scenario into ``folder`` and mask its report (paths under ``folder.parent``
    become ``<out>``)."""
    out = folder.parent
    folder.mkdir(parents=True, exist_ok=True)
    run_task(task, client=client, model="scripted", config=config, out_dir=folder)
    report = json.loads((folder / "report.json").read_text())
    masked = json.dumps(mask(report), indent=1, sort_keys=True).replace(str(out), "<out>")
    markdown = mask_markdown((folder / "report.md").read_text(), out)
    return Masked(masked, markdown, requests_digest(client))


def corpus_runs(out: Path) -> dict[str, tuple[Any, Any, RunConfig]]:
    """The two corpus scenarios: name -> (script, task, config), over an index ingested once
    under ``out``."""
    index = out / "corpus" / "index.sqlite"
    if not index.exists():
        assert corpus.ingest(write_corpus(out / "corpus" / "docs"), index, dense=False).ok
    question = {"question": "Which hall is rack 7 in?", "corpus": str(index)}
    mayor = {"question": "Who is the mayor of the Quelheim site?", "corpus": str(index)}
    return {
        "corpus_answer": (
            _corpus_script('{"queries": ["rack 7 hall", "Quelheim site"]}', True),
            question,
            RunConfig(n=2, k=1, budget_calls=8, seed=1),
        ),
        "corpus_refused": (
            _corpus_script("no idea", False),
            mayor,
            RunConfig(n=2, k=1, budget_calls=20, seed=1, retrieval_k=1, max_retrieval_rounds=3),
        ),
    }


NAMES = (*scenarios(), "corpus_answer", "corpus_refused")
"""Every scenario, in the order the expected requests file lists them."""


def run_named(name: str, out: Path) -> Masked:
    """Run the scenario ``name`` into ``out/name``."""
    if name in ("corpus_answer", "corpus_refused"):
        script, task, config = corpus_runs(out)[name]
    else:
        (script, config), task = scenarios()[name], RACK7_TASK
    return run_scenario(ScriptedClient(script, cost_per_call=0.001), task, config, out / name)


def expected_requests() -> dict[str, str]:
    """Scenario name -> the digest of its requests, from ``requests.txt``."""
    lines = REQUESTS_FILE.read_text(encoding="utf-8").splitlines()
    return dict(line.split(" ", 1) for line in lines if line.strip())


def write_expected(out: Path) -> None:
    """Rewrite every expected file from today's code."""
    digests = []
    for name in NAMES:
        masked = run_named(name, out)
        (EXPECTED / f"{name}.json").write_text(masked.json)
        (EXPECTED / f"{name}.md").write_text(masked.markdown)
        digests.append(f"{name} {masked.requests}\n")
    REQUESTS_FILE.write_text("".join(digests), encoding="utf-8")


def main() -> None:
    """``--write``: rewrite the expected files (review their diff before committing)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the expected files")
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="reports-")))
    args = parser.parse_args()
    if not args.write:
        parser.error("nothing to do: the check is tests/test_scenario_reports.py; pass --write")
    write_expected(args.out)


if __name__ == "__main__":
    main()
