"""evals.record: which evaluations extend a set's banks."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.command import build_parser
from evals.flags import run_options
from evals.options import RecordOptions, RunOptions
from evals.record import invocations


def settings(shape: str, *, greedy: bool = False, hops: bool = False) -> RecordOptions:
    return RecordOptions(
        model="local-1.5b",
        sets=("multihop",),
        items=3,
        seed=1,
        max_tokens=512,
        root=Path("banks"),
        samples=6,
        budget_calls=9,
        temp=0.8,
        shape=shape,
        skip=2,
        greedy=greedy,
        hops=hops,
    )


@pytest.mark.parametrize(
    ("shape", "bank"),
    [("graph", "banks/multihop-local-1.5b"), ("chain", "banks/multihop-local-1.5b-chain")],
    ids=["graph: arms 1, 6, 7", "chain: arms 1, 6, 7 in its own banks"],
)
def test_each_item_extends_a_sampled_bank_and_a_greedy_one(shape: str, bank: str) -> None:
    sampled, greedy = invocations("multihop", 3, settings(shape))
    assert sampled.arms == (1, 6, 7) and sampled.out == Path(bank)
    assert sampled.n == 6 and sampled.limit == 3
    assert sampled.skip == greedy.skip == 2
    assert greedy.arms == (6,) and greedy.temp == 0
    assert greedy.out == Path(bank + "-t0")
    # Explicit either way: a models.json default must not change a bank's shape.
    assert sampled.shape == greedy.shape == shape


def test_a_greedy_recording_is_one_invocation_of_three_arms_at_one_call_each() -> None:
    (only,) = invocations("multihop", 3, settings("chain", greedy=True))
    assert only.out == Path("banks/multihop-local-1.5b-chain-greedy")
    assert only.arms == (1, 6, 7) and only.n == 1
    assert only.temp == 0 and only.budget_calls == 3
    # Arm 7's samples stay at the sampling temperature, not at arm 6's greedy 0.
    assert only.sample_temp == 0.8
    assert only.skip == 2 and only.limit == 3


def test_a_greedy_recording_with_hops_keeps_its_own_bank_and_room_for_the_hops() -> None:
    (only,) = invocations("prose", 3, settings("chain", greedy=True, hops=True))
    assert only.out == Path("banks/prose-local-1.5b-chain-greedy-hops")
    assert only.hops == "on_failure" and only.budget_calls == 6
    assert only.n == 1 and only.temp == 0


def as_command_line(options: RunOptions) -> RunOptions:
    """What ``eval run`` makes of the flags the recording passed before it called the
    library (``evals.run`` argument lists), for the same evaluation."""
    argv = [
        *("--dataset", options.dataset, "--model", str(options.model)),
        *("--limit", str(options.limit), "--skip", str(options.skip)),
        *("--seed", str(options.seed), "--k", "2", "--max-tokens", str(options.max_tokens)),
        *("--shape", str(options.shape), "--arms", ",".join(map(str, options.arms))),
        *("--n", str(options.n), "--budget-calls", str(options.budget_calls)),
        *("--temp", "0" if options.temp == 0 else str(options.temp)),
        *("--out", str(options.out)),
    ]
    if options.sample_temp is not None:
        argv += ["--sample-temp", str(options.sample_temp)]
    if options.hops != "off":
        argv += ["--hops", options.hops]
    return run_options(build_parser().parse_args(["run", *argv]))


@pytest.mark.parametrize(
    ("shape", "greedy", "hops"),
    [
        ("graph", False, False),
        ("chain", False, False),
        ("chain", True, False),
        ("chain", True, True),
    ],
)
def test_the_recording_makes_the_evaluations_its_old_command_lines_made(
    shape: str, greedy: bool, hops: bool
) -> None:
    """Resumed banks must keep their fingerprint: every setting equals what the old argument
    lists meant, defaults included."""
    for options in invocations("multihop", 3, settings(shape, greedy=greedy, hops=hops)):
        assert as_command_line(options) == options
