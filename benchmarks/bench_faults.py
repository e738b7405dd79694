"""Every figure of issue 35's fault pass, one area after another (slow: minutes).

    python benchmarks/bench_faults.py [--only engine,corpus,runtime]

Runs, in that order, ``tests/faults_engine.py`` (dedup under templated claims, the state
file reloading after random accepted operations, argument width on a large graph),
``tests/faults_corpus.py`` (ingest memory and time for each adversarial kind against
prose, the index-roots race) and ``tests/faults_runtime.py`` (SIGINT at random moments,
a dripping ``/props``, the serve front). Each prints its own figures and says what it measured
against; the fast checks of the same faults are tests (``tests/test_faults_*.py``). Exit status:
the first non-zero status of an area, else 0.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
AREAS_DIR = HERE.parent / "tests"
AREAS = ("engine", "corpus", "runtime")


def run_area(area: str) -> int:
    """Load ``tests/faults_<area>.py`` and run its ``main`` with no arguments."""
    path = AREAS_DIR / f"faults_{area}.py"
    if not path.is_file():
        print(f"== {area}: {path.name} is missing", flush=True)
        return 1
    spec = importlib.util.spec_from_file_location(f"faults_{area}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    print(f"== {area} ({path.name})", flush=True)
    status = module.main([])
    return int(status or 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(AREAS), help="comma-separated areas")
    args = parser.parse_args(argv)
    wanted = [a.strip() for a in args.only.split(",") if a.strip()]
    unknown = sorted(set(wanted) - set(AREAS))
    if unknown:
        parser.error(f"--only: unknown area(s) {unknown}; choose from {list(AREAS)}")
    first_failure = 0
    for area in wanted:
        status = run_area(area)
        first_failure = first_failure or status
    return first_failure


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    raise SystemExit(main())
