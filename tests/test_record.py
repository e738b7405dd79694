"""evals.record: which evals.run invocations extend a set's banks."""

from __future__ import annotations

import argparse

import pytest

from evals.record import invocations


def settings(shape: str) -> argparse.Namespace:
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
