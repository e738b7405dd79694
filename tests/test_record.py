"""evals.record: which evals.run invocations extend a set's banks."""

from __future__ import annotations

import argparse

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
    )


def value(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_the_graph_shape_records_arms_1_6_7_sampled_and_arm_6_greedy() -> None:
    sampled, greedy = invocations("multihop", 3, settings("graph"))
    assert value(sampled, "--arms") == "1,6,7" and value(sampled, "--n") == "6"
    assert value(sampled, "--out") == "banks/multihop-local-1.5b"
    assert value(greedy, "--arms") == "6" and value(greedy, "--temp") == "0"
    assert value(greedy, "--out") == "banks/multihop-local-1.5b-t0"
    assert "--shape" not in sampled and value(sampled, "--limit") == "3"


def test_the_chain_shape_records_arm_6_alone_into_its_own_banks() -> None:
    sampled, greedy = invocations("vitaminc", 2, settings("chain"))
    assert value(sampled, "--arms") == "6" and value(sampled, "--shape") == "chain"
    assert value(sampled, "--out") == "banks/vitaminc-local-1.5b-chain"
    assert value(greedy, "--shape") == "chain" and value(greedy, "--temp") == "0"
    assert value(greedy, "--out") == "banks/vitaminc-local-1.5b-chain-t0"
