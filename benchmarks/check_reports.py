"""Byte-for-byte check of the reports the scripted rack-7 runs produce (issue 21).

Runs the scripted runs of ``tests/canned_runs.py`` (and two corpus tasks) through
:func:`orchestrator.api.run_task` with fixed seeds, writes each run's report.json and report.md
into a folder, masks what legitimately differs between two runs (every ``*_s`` field,
timestamps, durations), and prints one SHA-256 per file plus one for every request sent (model,
messages, kwargs: what a reply bank keys on). Save the output before a refactor and diff it
after::

    python benchmarks/check_reports.py --out /tmp/reports > before.txt
    ...
    python benchmarks/check_reports.py --out /tmp/reports2 | diff before.txt -
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

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
    return _DURATION.sub("<dur>", _TIME.sub("<time>", text.replace(str(out), "<out>")))


def digest(data: str) -> str:
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def requests_digest(client: ScriptedClient) -> str:
    sent = sorted(
        json.dumps(
            {"model": c["model"], "messages": c["messages"], "kwargs": c["kwargs"]},
            sort_keys=True,
            default=repr,
        )
        for c in client.calls
    )
    return digest("\n".join(sent))


def check(name: str, client: ScriptedClient, task: Any, config: RunConfig, out: Path) -> None:
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    run_task(task, client=client, model="scripted", config=config, out_dir=folder)
    report = json.loads((folder / "report.json").read_text())
    masked = json.dumps(mask(report), indent=1, sort_keys=True).replace(str(out), "<out>")
    (folder / "report.masked.json").write_text(masked)
    md = mask_markdown((folder / "report.md").read_text(), out)
    (folder / "report.masked.md").write_text(md)
    print(f"{name:22} json {digest(masked)}  md {digest(md)}  requests {requests_digest(client)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="reports-")))
    args = parser.parse_args()
    for name, (script, config) in scenarios().items():
        check(name, ScriptedClient(script, cost_per_call=0.001), RACK7_TASK, config, args.out)
    index = args.out / "corpus" / "index.sqlite"
    if not index.exists():
        assert corpus.ingest(write_corpus(args.out / "corpus" / "docs"), index, dense=False).ok
    question = {"question": "Which hall is rack 7 in?", "corpus": str(index)}
    mayor = {"question": "Who is the mayor of the Quelheim site?", "corpus": str(index)}
    corpus_runs = {
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
    for name, (script, task, config) in corpus_runs.items():
        check(name, ScriptedClient(script, cost_per_call=0.001), task, config, args.out)


if __name__ == "__main__":
    main()
