"""Every benchmark script still runs: a crashed benchmark is a defect no other test notices.

Each script under ``benchmarks/`` that needs no model and no network runs as its own process
(as a person runs it) at its smallest setting, and must exit cleanly and print the lines that
carry its figures. Only those lines' labels are checked, never a timing nor a met/missed
verdict: both depend on how busy the machine is. The scripts that need a built-in model, and
``bench_faults.py`` (each of its areas takes a minute or more at its only size), only answer
``--help``, which at least imports them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from browser import find_chromium
from corpus_fixtures import vec_search_available

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 300
GOALS_LINE = "goals missed: "


@dataclass(frozen=True)
class Smoke:
    """One script at its smallest setting and the labels that begin its figures' lines."""

    script: str
    args: tuple[str, ...]
    labels: tuple[str, ...]
    exits_on_a_missed_goal: bool = False
    """The script exits 1 after printing a ``goals missed: ...`` line that names a goal (a
    machine-speed verdict, not a crash)."""


SMOKES = (
    Smoke(
        "bench_engine.py",
        ("--quick",),
        (
            "merge_duplicates full pass",
            "  same pass, before (issue 12)",
            "assert_graph (ingest + dedup)",
            "merge_duplicates re-pass",
            "assert_graph templated (now)",
            "RSS: load, then delete_graph",
            "check_structure",
            "support_width",
            GOALS_LINE,
        ),
    ),
    Smoke(
        "bench_mcp_stdio.py",
        ("--calls", "20", "--churn", "20"),
        (
            "server start + handshake:",
            "check_structure over stdio: median",
            "check_structure in-process (library mode): median",
            "churn: ",
            "server RSS before churn:",
        ),
    ),
    Smoke(
        "bench_orchestrator.py",
        ("--latency", "0", "--repeats", "1"),
        (
            "single call:",
            "N=6 fan-out (run_task):",
            "graph: 6 runs x 40 nodes -> 56 nodes after merge",
            "time outside model calls:",
            "same workload, zero-latency client:",
        ),
    ),
    Smoke(
        "bench_report_html.py",
        ("--nodes", "100", "--edges", "200", "--repeat", "1"),
        (
            "report.html of 100 nodes, 200 edges:",
            "headless Chromium, navigation start to ready and painted:"
            if find_chromium()
            else "no chromium: load time not measured",
        ),
    ),
    Smoke(
        "bench_splitter.py",
        ("--mb", "0.05"),
        ("normal prose", "initials ('hall D. ' repeated)", "one block, no stops", GOALS_LINE),
        exits_on_a_missed_goal=True,
    ),
    Smoke(
        "bench_corpus.py",
        (
            *("--files", "40", "--no-large", "--embedders", "static"),
            *("--embed-sample", "8", "--recall-limit", "5"),
        ),
        (
            "== small: 40 files, 200 chunks",
            "first ingest (keyword index, entity graph):",
            "no-change re-ingest:",
            "index size on disk:",
            "keyword-only query: p50",
            "keyword + entity query: p50",
            "hybrid query (real query embedding, random chunk vectors): p50",
            "| static-e5-small",
        ),
    ),
    Smoke(
        "bench_index_guard.py",
        ("--quick",),
        (
            "crafted index refused in",
            "runaway query, limit  0.5 s: stopped after",
            "runaway query, cancelled at 0.2 s: stopped after",
            "guarded keyword search, p50 of 20:",
            GOALS_LINE,
        ),
        exits_on_a_missed_goal=True,
    ),
    Smoke(
        "bench_dedup_soundness.py",
        (),
        (
            "items whose answer-bearing sentence merged with another sentence:",
            "names of 7+ chars in the data set:",
            "content-word pairs within one item's documents",
            "1000 synthetic claims: paraphrases merged",
            "restatement pairs merged:",
        ),
    ),
)
NEEDS_THE_CORPUS_EXTRA = {"bench_corpus.py"}
"""Dense vectors: numpy and sqlite-vec, with an sqlite3 that loads extensions ([corpus])."""
HELP_ONLY = (
    "bench_eval_throughput.py",
    "bench_faults.py",
    "bench_local_tokens.py",
    "bench_main_job.py",
    "bench_prompt_cache.py",
)


def run_script(script: str, args: tuple[str, ...], tmp: Path) -> subprocess.CompletedProcess[str]:
    """``python benchmarks/<script> <args>`` from the repository root; temporary files
    (every file these scripts write) go under ``tmp``."""
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp)},
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def smoke_params() -> list[object]:
    return [
        pytest.param(
            smoke,
            id=smoke.script.removesuffix(".py"),
            marks=pytest.mark.skipif(
                smoke.script in NEEDS_THE_CORPUS_EXTRA and not vec_search_available(),
                reason="needs numpy and sqlite-vec ([corpus] extra)",
            ),
        )
        for smoke in SMOKES
    ]


@pytest.mark.parametrize("smoke", smoke_params())
def test_each_model_free_benchmark_runs_at_its_smallest_setting(
    smoke: Smoke, tmp_path: Path
) -> None:
    done = run_script(smoke.script, smoke.args, tmp_path)
    lines = done.stdout.splitlines()
    verdict_only = (
        smoke.exits_on_a_missed_goal
        and done.returncode == 1
        and "Traceback" not in done.stderr
        and bool(lines)
        and lines[-1].startswith(GOALS_LINE)
    )
    assert done.returncode == 0 or verdict_only, done.stdout + done.stderr
    missing = [label for label in smoke.labels if not any(ln.startswith(label) for ln in lines)]
    assert not missing, f"no line starts with {missing}:\n{done.stdout}"


def test_every_benchmark_script_is_run_here_or_only_asked_for_help() -> None:
    covered = {smoke.script for smoke in SMOKES} | set(HELP_ONLY)
    assert covered == {path.name for path in (ROOT / "benchmarks").glob("*.py")}


@pytest.mark.parametrize("script", HELP_ONLY, ids=lambda script: script.removesuffix(".py"))
def test_each_benchmark_that_needs_a_model_answers_help(script: str, tmp_path: Path) -> None:
    done = run_script(script, ("--help",), tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("usage: "), done.stdout
