"""Three scripted runs whose report.html the browser tests, the screenshots and the docs use.

No model: each run is :func:`orchestrator.api.run_task` on a :class:`ScriptedClient`, so the
reports are the same every time.

- ``rack7``: the rack-7 fixture answered "yes" by six scripted runs (the design's argument);
- ``refusal``: the look-alike example: the runs borrow a sister firm's founding year, the chain
  check refuses the link as ``look_alike`` and the run refuses;
- ``corpus``: a corpus-mode run over a small ingested folder, answered "hall B";
- ``two_lines``: an answer of width 2: three runs argue from x9's operating system and the cron
  policy, three from the operations inventory, and the two lines share no claim.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from canned_runs import RACK7_TASK, Script, always, model_graph, six_runs
from corpus_fixtures import corpus_script, write_corpus

import corpus
from orchestrator.api import RunConfig, run_task
from orchestrator.llm.testing import ScriptedClient

ROOT = Path(__file__).resolve().parents[1]
LOOKALIKE_TASK: dict[str, Any] = json.loads((ROOT / "examples" / "lookalike.json").read_text())


def borrowed_year_reply() -> str:
    """A run that reads the Ironworks' founding year as the Foundry's."""
    nodes = [
        {
            "id": "n1",
            "type": "given",
            "source": "D1.1",
            "claim": "Embstone Ironworks was founded by Mara Vance in 1921",
            "confidence": 0.9,
        },
        {
            "id": "n2",
            "type": "inference",
            "source": "none",
            "claim": "Embstone Foundry was founded in 1921",
            "because": ["n1"],
        },
        {
            "id": "n3",
            "type": "conclusion",
            "source": "none",
            "claim": "Embstone Foundry was founded in 1921.",
            "because": ["n2"],
        },
    ]
    return json.dumps({"nodes": nodes, "conclusion_node": "n3", "answer": "1921"})


TWO_LINES_TASK: dict[str, Any] = {
    "question": "Can server x9 host the nightly cron job?",
    "documents": [
        "Server x9 runs Linux.",
        "The cron scheduler runs only on Linux hosts. The nightly cron job may go on any host "
        "that runs the cron scheduler.",
        "The operations inventory lists server x9 as approved for nightly cron jobs.",
    ],
}


def _claim(node_id: str, kind: str, claim: str, source: str = "none") -> dict[str, Any]:
    return {"id": node_id, "type": kind, "source": source, "claim": claim, "confidence": 0.9}


def _supports(*pairs: str) -> list[dict[str, Any]]:
    return [{"src": p[0], "dst": p[1], "relation": "supports", "confidence": 0.85} for p in pairs]


def two_lines(out: Path) -> Path:
    conclusion = _claim("Z", "conclusion", "server x9 can host the nightly cron job")
    by_system = model_graph(
        [
            _claim("A", "given", "Server x9 runs Linux.", "D1.1"),
            _claim("B", "given", "The cron scheduler runs only on Linux hosts.", "D2.1"),
            _claim("C", "inference", "server x9 can run the cron scheduler"),
            conclusion,
        ],
        _supports("AC", "BC", "CZ"),
        "Z",
    )
    inventory = "The operations inventory lists server x9 as approved for nightly cron jobs."
    by_inventory = model_graph(
        [
            _claim("D", "given", inventory, "D3.1"),
            _claim("E", "inference", "server x9 is approved for nightly cron jobs"),
            conclusion,
        ],
        _supports("DE", "EZ"),
        "Z",
    )
    runs = {f"r{i}": by_system if i <= 3 else by_inventory for i in range(1, 7)}
    run_task(
        TWO_LINES_TASK,
        client=ScriptedClient(Script(runs, votes=always("supported")), cost_per_call=0.001),
        model="scripted",
        config=RunConfig(seed=3),
        out_dir=out,
    )
    return out / "report.json"


def rack7(out: Path) -> Path:
    run_task(
        RACK7_TASK,
        client=ScriptedClient(Script(six_runs()), cost_per_call=0.001),
        model="scripted",
        config=RunConfig(seed=7),
        out_dir=out,
    )
    return out / "report.json"


def refusal(out: Path) -> Path:
    reply = borrowed_year_reply()
    run_task(
        LOOKALIKE_TASK,
        client=ScriptedClient(Script({"r1": reply, "r2": reply}, votes=always("not_determinable"))),
        model="scripted",
        config=RunConfig(n=2, k=1, budget_calls=2),
        out_dir=out,
    )
    return out / "report.json"


def corpus_run(out: Path) -> Path:
    index = out / "index.sqlite"
    assert corpus.ingest(write_corpus(out / "docs"), index, dense=False).ok
    script = corpus_script('{"queries": ["rack 7 hall", "Quelheim site"]}', answer=True)
    run_task(
        {"question": "Which hall is rack 7 in?", "corpus": str(index)},
        client=ScriptedClient(script, cost_per_call=0.001),
        model="scripted",
        config=RunConfig(n=2, k=1, budget_calls=8, seed=1),
        out_dir=out / "run",
    )
    return out / "run" / "report.json"


REPORTS: dict[str, Callable[[Path], Path]] = {
    "rack7": rack7,
    "refusal": refusal,
    "corpus": corpus_run,
    "two_lines": two_lines,
}
"""Name -> a function that runs it into a folder and returns its report.json."""
