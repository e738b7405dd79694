"""The pre-registered hop study (docs/results/hops.md), replayed from a ``-greedy-hops`` bank.

    python -m evals.studies.hop_study [BANK ...] [--out runs/hop-study] [--before DIR]

Each BANK (default: ``evals/banks/prose-local-1.5b-chain-greedy-hops``) was recorded with
``evals.record --greedy --hops``: per item the greedy chain, the hops when it failed, one plain
call (arm 1) and arm 7 with as many samples as arm 6 made calls. Offline, the script replays:

* ``with hops``: arms 1, 6 and 7 as recorded (``--hops on_failure``, or ``first``, up to 6
  calls);
* ``without hops``: arm 6 alone with ``--hops off --budget-calls 3``, the 1.5B's default;

and prints right / wrong / abstained for each (an abstention on an unanswerable item counts
as right, as in the goal table), arm 6's calls per item, the paired difference in right answers
with hops minus without (95% percentile bootstrap over items, 10,000 resamples, seed 0), right
answers per wrong one, abstention on the unanswerable items, and then the goal table of the
``with hops`` folder (:mod:`evals.goal`: arm 6 against arms 1 and 7 at the same calls).

``--before DIR`` names a checkout of the checks before this session's prose reading (commit
18cd15e): ``without hops`` is replayed there too, for claim 1 (false refusals on prose).
No model is started.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals import goal
from evals.options import REPO, ReplayOptions
from evals.replay import replay
from evals.reporting import render_goal_table
from evals.results import ArmRows, ResultRow, latest_rows, raw_path, read_rows
from evals.score import ABSTAINED, CORRECT, WRONG, row_outcome
from evals.stats import paired_bootstrap

DEFAULT_BANK = REPO / "evals" / "banks" / "prose-local-1.5b-chain-greedy-hops"


def rows(folder: Path, arm: int) -> ArmRows:
    """Item id -> result row of ``arm`` in a replay folder."""
    return latest_rows(read_rows(raw_path(folder, arm)))


def outcome(row: ResultRow) -> str:
    """Right, wrong or abstained, an abstention on an unanswerable item being right."""
    result = row_outcome(row)
    return CORRECT if result == ABSTAINED and row.get("answerable") is False else result


def tally(found: ArmRows) -> str:
    """``right / wrong / abstained (right per wrong)``."""
    counts = [sum(outcome(r) == o for r in found.values()) for o in (CORRECT, WRONG, ABSTAINED)]
    ratio = f"{counts[0] / counts[1]:.2f}" if counts[1] else "n/a"
    return f"{counts[0]} / {counts[1]} / {counts[2]} ({ratio} right per wrong)"


def replay_into(banks: Sequence[Path], out: Path, **overrides: Any) -> Path:
    """Replay ``banks`` offline into ``out`` (emptied first) with ``overrides`` of the first
    bank's settings (`ReplayOptions` fields)."""
    shutil.rmtree(out, ignore_errors=True)
    replay(ReplayOptions(banks=tuple(banks), out=out, **overrides))
    return out


def replay_before(banks: Sequence[Path], out: Path, code: Path) -> Path:
    """Arm 6 replayed within three calls by another checkout ``code``, as its own process
    (so its modules are its own): the checks before knew no hops, so this is the chain
    alone."""
    shutil.rmtree(out, ignore_errors=True)
    argv = [*map(str, banks), "--out", str(out), "--offline", "--arms", "6", "--budget-calls", "3"]
    command = [sys.executable, "-m", "evals.replay", *argv]
    subprocess.run(command, cwd=code, check=True, capture_output=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("banks", nargs="*", type=Path, default=[DEFAULT_BANK])
    parser.add_argument("--out", type=Path, default=REPO / "runs" / "hop-study")
    parser.add_argument("--before", type=Path, help="a checkout of the checks before (18cd15e)")
    args = parser.parse_args(argv)
    with_hops = replay_into(args.banks, args.out / "with-hops", arms=(1, 6, 7))
    without = replay_into(
        args.banks, args.out / "without-hops", arms=(6,), hops="off", budget_calls=3
    )
    a6, plain, sc = rows(with_hops, 6), rows(with_hops, 1), rows(with_hops, 7)
    base = rows(without, 6)
    items = sorted(set(a6) & set(base))
    unanswerable = [i for i in items if a6[i].get("answerable") is False]
    print(f"items: {len(items)} ({len(unanswerable)} unanswerable)")
    print(f"arm 1, one plain call:        {tally(plain)}")
    print(f"arm 7, self-consistency:      {tally(sc)}")
    print(f"arm 6 without hops (default): {tally(base)}")
    print(f"arm 6 with hops as recorded:  {tally(a6)}")
    calls = [a6[i]["n_calls"] for i in items]
    print(f"arm 6 calls per item with hops: {sum(calls) / max(1, len(calls)):.2f}")
    right = paired_bootstrap(
        [float(outcome(a6[i]) == CORRECT) for i in items],
        [float(outcome(base[i]) == CORRECT) for i in items],
    )
    if right["diff"] is not None:
        print(
            f"right answers per item, with minus without hops: {right['diff']:+.3f} "
            f"[{right['low']:+.3f}, {right['high']:+.3f}]"
        )
    if unanswerable:
        kept = sum(row_outcome(a6[i]) == ABSTAINED for i in unanswerable)
        print(f"abstention on unanswerable items with hops: {kept} of {len(unanswerable)}")
    if args.before is not None:
        before = replay_before(args.banks, args.out / "before-reading", args.before)
        print(f"arm 6 without hops, checks before the prose reading: {tally(rows(before, 6))}")
    print()
    print(render_goal_table(goal.goal_table(goal.pool([with_hops]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
