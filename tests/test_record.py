"""evals.record: which evals.run invocations extend a set's banks."""

from __future__ import annotations

import argparse

import pytest

from evals.record import invocations


def settings(shape: str, *, greedy: bool = False, hops: bool = False) -> argparse.Namespace:
    return argparse.Namespace(
        model="local-1.5b",
        seed=1,
        max_tokens=512,
        root="banks",
        samples=6,
        budget_calls=9,
        temp=0.8,
        shape=shape,
        skip=2,
        greedy=greedy,
        hops=hops,
    )


def value(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


@pytest.mark.parametrize(
    ("shape", "arms", "bank"),
    [
        ("graph", "1,6,7", "banks/multihop-local-1.5b"),
        ("chain", "1,6,7", "banks/multihop-local-1.5b-chain"),
    ],
    ids=["graph: arms 1, 6, 7", "chain: arms 1, 6, 7 in its own banks"],
)
def test_each_item_extends_a_sampled_bank_and_a_greedy_one(
    shape: str, arms: str, bank: str
) -> None:
    sampled, greedy = invocations("multihop", 3, settings(shape))
    assert value(sampled, "--arms") == arms and value(sampled, "--out") == bank
    assert value(sampled, "--n") == "6" and value(sampled, "--limit") == "3"
    assert value(sampled, "--skip") == value(greedy, "--skip") == "2"
    assert value(greedy, "--arms") == "6" and value(greedy, "--temp") == "0"
    assert value(greedy, "--out") == bank + "-t0"
    # Explicit either way: a models.json default must not change a bank's shape.
    assert value(sampled, "--shape") == value(greedy, "--shape") == shape


def test_a_greedy_recording_is_one_invocation_of_three_arms_at_one_call_each() -> None:
    (only,) = invocations("multihop", 3, settings("chain", greedy=True))
    assert value(only, "--out") == "banks/multihop-local-1.5b-chain-greedy"
    assert value(only, "--arms") == "1,6,7" and value(only, "--n") == "1"
    assert value(only, "--temp") == "0" and value(only, "--budget-calls") == "3"
    # Arm 7's samples stay at the sampling temperature, not at arm 6's greedy 0.
    assert value(only, "--sample-temp") == "0.8"
    assert value(only, "--skip") == "2" and value(only, "--limit") == "3"


def test_a_greedy_recording_with_hops_keeps_its_own_bank_and_room_for_the_hops() -> None:
    (only,) = invocations("prose", 3, settings("chain", greedy=True, hops=True))
    assert value(only, "--out") == "banks/prose-local-1.5b-chain-greedy-hops"
    assert value(only, "--hops") == "on_failure" and value(only, "--budget-calls") == "6"
    assert value(only, "--n") == "1" and value(only, "--temp") == "0"
