"""The mechanical chain check: bridges, look-alike entities, the question's subject, answers."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.checks.chain import (
    LOOK_ALIKE,
    NO_BRIDGE,
    OFF_SUBJECT,
    ChainContext,
    answer_follows,
    chain_parts,
    evidence_names,
    failed_links,
    without_links,
)
from orchestrator.checks.question import subject_terms

DOCS = [
    "Embstone Ironworks was founded by Mara Vance in 1921.",
    "Embstone Foundry was founded by Oren Vane in 1934.",
    "Mara Vance was born in Tull.",
]
NAMES = evidence_names(DOCS)


def links(
    claims: dict[str, str], pairs: list[tuple[str, str]], subject: frozenset[str] = frozenset()
) -> list[tuple[str, str, str]]:
    nodes = {node_id: {"claim": claim} for node_id, claim in claims.items()}
    # Each link drawn by a run of its own: no two reasons are joint premises here.
    edges = [
        {"src": a, "dst": b, "relation": "supports", "run_ids": [f"r{i}"]}
        for i, (a, b) in enumerate(pairs)
    ]
    return [(f.src, f.dst, f.reason) for f in failed_links(nodes, edges, "z", subject, NAMES)]


def test_the_look_alike_chain_is_flagged() -> None:
    claims = {
        "a": DOCS[0],
        "b": "Embstone Foundry was founded in 1921",
        "z": "Embstone Foundry was founded in 1921.",
    }
    assert links(claims, [("a", "b"), ("b", "z")]) == [("a", "b", LOOK_ALIKE)]


def test_a_near_miss_name_is_a_look_alike_even_with_a_shared_word() -> None:
    claims = {"a": DOCS[0], "b": "Vane founded the works in 1921", "z": "Vane in 1921"}
    assert links(claims, [("a", "b"), ("b", "z")]) == [("a", "b", LOOK_ALIKE)]


def test_a_possessive_is_the_same_name_not_a_look_alike() -> None:
    docs = ["Tamsin Morver's year of birth was 1800.", "Tamsin Morver lived in Tull."]
    claims = {"a": docs[0], "b": "Tamsin Morver was born in 1800", "z": "Tamsin Morver"}
    nodes = {node_id: {"claim": claim} for node_id, claim in claims.items()}
    edges = [{"src": "a", "dst": "b", "relation": "supports", "run_ids": ["r1"]}]
    assert failed_links(nodes, edges, "b", frozenset(), evidence_names(docs)) == []


def test_a_link_whose_ends_share_no_word_or_number_has_no_bridge() -> None:
    claims = {"a": DOCS[2], "b": "the harbour froze every winter", "z": "the harbour froze"}
    assert links(claims, [("a", "b"), ("b", "z")]) == [("a", "b", NO_BRIDGE)]


def test_a_sound_chain_passes() -> None:
    claims = {
        "a": DOCS[0],
        "b": DOCS[2],
        "c": "The founder of Embstone Ironworks, Mara Vance, was born in Tull",
        "z": "The founder of Embstone Ironworks was born in Tull.",
    }
    assert links(claims, [("a", "c"), ("b", "c"), ("c", "z")]) == []


def test_a_line_that_never_touches_the_subject_is_not_support() -> None:
    subject = subject_terms("Can server x9 be used for the nightly cron job?")
    claims = {
        "survey": "The survey team inventoried every server in rack 7.",
        "row": "Rack 7 survey, row 9: server x9; operating system: Linux.",
        "cron": "The cron scheduler runs only on Linux hosts.",
        "infer": "server x9 runs Linux so it can run the cron scheduler",
        "z": "server x9 can be used for the nightly cron job",
    }
    pairs = [("survey", "z"), ("row", "infer"), ("cron", "infer"), ("infer", "z")]
    assert links(claims, pairs, subject) == [("survey", "z", OFF_SUBJECT)]


def test_reasons_one_run_gave_together_reach_the_subject_together() -> None:
    subject = subject_terms("Where was the founder of Embstone Ironworks born?")
    nodes = {
        "a": {"claim": DOCS[0]},
        "b": {"claim": DOCS[2]},
        "z": {"claim": "The founder of Embstone Ironworks was born in Tull."},
    }
    joint = [
        {"src": "a", "dst": "z", "relation": "supports", "run_ids": ["r1"]},
        {"src": "b", "dst": "z", "relation": "supports", "run_ids": ["r1"]},
    ]
    assert failed_links(nodes, joint, "z", subject, NAMES) == []
    apart = [{**joint[0]}, {**joint[1], "run_ids": ["r2"]}]
    failed = failed_links(nodes, apart, "z", subject, NAMES)
    assert [(f.src, f.reason) for f in failed] == [("b", OFF_SUBJECT)]


@pytest.mark.parametrize(
    ("key", "argument", "stated", "follows"),
    [
        ("tull", [DOCS[2]], [], True),
        ("braskmere", [DOCS[2]], [], False),
        ("1921", [DOCS[0]], [], True),
        ("13", ["Embstone Foundry came 13 years later: 1934 - 1921"], [], True),
        ("13", [DOCS[0], DOCS[1]], ["1934 minus 1921 is 13"], True),
        ("14", [DOCS[0], DOCS[1]], ["1934 minus 1921 is 14"], False),
        ("3855", [DOCS[0], DOCS[1]], ["1921 + 1934"], True),
        ("5", [DOCS[0]], ["1921 + 7 - 1923"], False),  # 7 and 1923 are in no claim
        ("yes", [], [], True),
    ],
)
def test_the_answer_must_occur_on_its_argument_or_be_recomputed_from_it(
    key: str, argument: list[str], stated: list[str], follows: bool
) -> None:
    assert answer_follows(key, argument, stated) is follows


def test_without_links_drops_only_the_failed_supports_edges() -> None:
    graph: dict[str, Any] = {
        "nodes": [
            {"id": n, "claim": n, "type": "given", "confidence": 1.0, "run_ids": ["r1"]}
            for n in "ab"
        ],
        "edges": [
            {"src": "a", "dst": "b", "relation": rel, "confidence": 1.0, "run_ids": ["r1"]}
            for rel in ("supports", "attacks")
        ],
    }
    nodes = {"a": {"claim": "x"}, "b": {"claim": "y"}}
    failed = failed_links(nodes, graph["edges"], "b", frozenset(), NAMES)
    rebuilt = without_links(graph, failed)
    assert list(rebuilt.edges(keys=True)) == [("a", "b", "attacks")]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40), min_size=2, max_size=5), st.text(max_size=40))
def test_the_chain_check_never_crashes_on_any_text(claims: list[str], question: str) -> None:
    context = ChainContext.of(question, claims)
    nodes = {str(i): {"claim": claim} for i, claim in enumerate(claims)}
    edges = [
        {"src": str(i), "dst": str(i + 1), "relation": "supports"} for i in range(len(claims) - 1)
    ]
    found = failed_links(nodes, edges, str(len(claims) - 1), context.subject, context.names)
    assert all(f.reason in (NO_BRIDGE, LOOK_ALIKE, OFF_SUBJECT) for f in found)
    assert answer_follows("7", claims, [question]) in (True, False)


def test_an_answer_that_only_repeats_the_question_is_no_answer_unless_it_is_offered() -> None:
    brundrum = ChainContext.of(
        "On which river lies the town where the inventor of the brundrum was born?", []
    )
    assert brundrum.restates_question("brundrum")  # the 1.5B's top answer, at width 2
    assert not brundrum.restates_question("volen river")
    listed = ChainContext.of("Which one finished second: Amy, Dan, Mel? Answer with the name.", [])
    assert not listed.restates_question("amy")
    either = ChainContext.of("Was the bridge built by Amy or by Dan?", [])
    assert not either.restates_question("dan")
    assert not brundrum.restates_question("yes")


def test_joint_premises_hang_together_only_when_linked_to_each_other() -> None:
    founded, born = DOCS[0], DOCS[2]  # Embstone Ironworks -> Mara Vance -> Tull

    def one_chain(claims: list[str]) -> bool:
        return len(chain_parts(claims, NAMES)) <= 1

    assert one_chain([founded, born])
    assert one_chain([born]) and one_chain([])
    # Each premise may share words with the conclusion, but a hop is missing between them.
    assert chain_parts(["Embstone Ironworks opened in 1921.", born], NAMES) == [[0], [1]]
    # A shared word across look-alike names is no link (Vance / Vane) ...
    assert not one_chain(["Oren Vane was born in Tull.", founded])
    both = ["Oren Vane was born in Tull.", born]
    assert not one_chain(both)
    # ... unless the question names both and so tells them apart itself.
    paired = frozenset({"oren vane", "mara vance", "oren", "vane", "mara", "vance"})
    assert len(chain_parts(both, NAMES, paired)) == 1
    # Order does not matter: a chain a-b-c is connected through b wherever it is listed.
    assert one_chain([born, "Tull lies on the river Irra.", founded])


def test_an_argument_for_a_name_must_carry_what_the_question_asks_about_it() -> None:
    context = ChainContext.of("In which town was the founder of Embstone Ironworks born?", DOCS)
    head_office = ["Embstone Ironworks has its head office in Yselley."]
    assert not context.asks_about("yselley", head_office)
    assert context.asks_about("tull", [DOCS[0], DOCS[2]])  # "born"
    # Yes/no and numbers name nothing to look up.
    assert context.asks_about("yes", head_office) and context.asks_about("1921", head_office)


def test_which_is_longer_is_argued_by_lengths_the_evidence_states_as_long() -> None:
    rivers = ["The Arl River is 907 kilometres long.", "The Kest River is 571 kilometres long."]
    context = ChainContext.of("Which river is longer, the Arl River or the Kest River?", rivers)
    assert context.asks_about("arl river", rivers)
    # A bridge over each river says nothing of their lengths.
    crossings = ["The Faldhaven Bridge spans the Arl River.", "The Kest River rises in Tull."]
    assert not context.asks_about("arl river", crossings)


def test_an_argument_that_does_not_count_says_which_rule_it_fails() -> None:
    context = ChainContext.of("In which town was the founder of Embstone Ironworks born?", DOCS)
    assert context.argument_problem("tull", [DOCS[0], DOCS[2]]) is None
    assert context.argument_problem("tull", [DOCS[2]]) == "names_no_subject"
    office = "Embstone Ironworks has its head office in Yselley."
    assert context.argument_problem("yselley", [office]) == "not_what_was_asked"
    apart = ["Embstone Ironworks opened in 1921.", DOCS[2]]
    assert context.argument_problem("tull", apart) == "not_one_chain"
    towns = ["Marrgard was first settled in 1240.", "Zarnmere was settled in 1310."]
    which = ChainContext.of("Which town was settled earlier, Marrgard or Zarnmere?", towns)
    assert which.argument_problem("marrgard", towns[:1]) == "one_sided"
    assert which.argument_problem("marrgard", towns) is None


def test_a_step_that_brings_in_a_name_no_cited_sentence_holds_is_no_argument() -> None:
    """The model's step names the town from a sentence the argument does not cite: the
    argument stands only once that sentence is cited."""
    question = "In which town was the founder of Embstone Ironworks born?"
    context = ChainContext.of(question, DOCS)
    founder, born = DOCS[0], DOCS[2]
    step = "So Mara Vance, the founder, was born in Tull."
    assert context.names_from_outside([founder, step], [founder]) == ["tull"]
    assert context.argument_problem("tull", [founder, step], [founder]) == "name_from_outside"
    assert context.argument_problem("tull", [founder, born, step], [founder, born]) is None


BUILDERS = [
    "The Garrgate Bridge was built by Arlcombe Ironworks.",
    "Arlcombe Ironworks was founded in 1850.",
    "The Marlgate Bridge was built by Dunhall Ironworks.",
    "Dunhall Ironworks was founded in 1820.",
]
"""Two hops per side: each bridge's builder, then the builder's founding year."""


def bridge_builders(comparative: str) -> ChainContext:
    question = (
        f"Which company was founded {comparative}: the one that built the Garrgate Bridge or "
        "the one that built the Marlgate Bridge?"
    )
    return ChainContext.of(question, BUILDERS)


def test_a_comparison_rests_on_both_options_even_when_their_names_look_alike() -> None:
    foundries = ["Carrworth Foundry was founded in 1850.", "Inglridge Foundry was founded in 1820."]
    question = "Which was founded earlier, Carrworth Foundry or Inglridge Foundry?"
    assert ChainContext.of(question, foundries).argument_problem("inglridge", foundries) is None
    # Two hops per side: the builders' names look alike, so each side is a chain of its own.
    builders = bridge_builders("earlier")
    assert builders.argument_problem("dunhall ironworks", BUILDERS) is None
    stray = [*BUILDERS, "Tull holds a market on Thursdays."]
    assert builders.argument_problem("dunhall ironworks", stray) == "not_one_chain"


def test_the_numbers_of_an_argument_can_decide_a_comparison_against_its_answer() -> None:
    born = ["Tamsin Morver's year of birth was 1800.", "Aldo Harnsen was born in the year 1785."]
    earlier = ChainContext.of("Who was born earlier, Aldo Harnsen or Tamsin Morver?", born)
    assert earlier.against_comparison("tamsin morver", born)
    assert not earlier.against_comparison("aldo harnsen", born)
    # Two hops per side: each builder's year counts for the bridge it built.
    builders = bridge_builders("later")
    # The answer names the company, which stands for the bridge its part of the argument names.
    assert builders.against_comparison("dunhall ironworks", BUILDERS)
    assert not builders.against_comparison("arlcombe ironworks", BUILDERS)


def test_a_comparison_the_numbers_do_not_settle_flags_nothing() -> None:
    earlier = ChainContext.of("Who was born earlier, Aldo Harnsen or Tamsin Morver?", [])
    one_side = ["Aldo Harnsen was born in the year 1785."]
    two_years = ["Aldo Harnsen was born in 1785 and died in 1850.", "Tamsin Morver: born 1800."]
    for claims in (one_side, two_years, []):
        assert not earlier.against_comparison("tamsin morver", claims)
    assert not earlier.against_comparison("yes", one_side)  # names neither option


HARDWICKE = (
    'Claim: "Catherine Hardwicke was born as Fiona Catherine Hardwicke ." According to the '
    "passage about Catherine Hardwicke, is the claim true?"
)
BORN_HELEN = "Catherine Hardwicke (born Helen Catherine Hardwicke) is an American film director."


def test_a_yes_to_a_quoted_statement_must_rest_on_evidence_that_holds_its_names() -> None:
    context = ChainContext.of(HARDWICKE, [BORN_HELEN])
    restated = "The passage states that Catherine Hardwicke was born as Fiona Catherine Hardwicke."
    # The model's own sentence names Fiona; the sentence it cites does not.
    assert context.argument_problem("yes", [BORN_HELEN, restated], [BORN_HELEN]) == (
        "statement_not_in_evidence"
    )
    born_fiona = BORN_HELEN.replace("Helen", "Fiona")
    assert context.argument_problem("yes", [born_fiona, restated], [born_fiona]) is None
    # "No" needs no such reading: the evidence contradicts the statement instead.
    assert context.argument_problem("no", [BORN_HELEN, restated], [BORN_HELEN]) is None


def test_a_question_without_a_quoted_statement_asks_nothing_of_the_cited_evidence() -> None:
    context = ChainContext.of("Can server x9 be used for the nightly cron job?", DOCS)
    assert context.reads_statement([])
    claims = ["server x9 runs linux", "x9 can run the nightly cron job"]
    assert context.argument_problem("yes", claims, []) is None


STATEMENT_TEXT = st.lists(
    st.sampled_from([*"AaBbEeÉéZz019 ,.$%-'", "Fiona ", "more than ", "River ", "Séguin "]),
    min_size=8,
    max_size=40,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(STATEMENT_TEXT, st.text(max_size=30).filter(lambda t: '"' not in t and "?" not in t))
def test_a_quoted_statement_is_always_read_in_itself(statement: str, topic: str) -> None:
    # Whatever the statement says, citing it word for word carries every name and number
    # the rule asks for: the rule can refuse a restatement, never the evidence itself. The
    # topic is named outside the statement, so the rules about it (no subject, a quoted
    # thing such as "'0'" left uncited) may still refuse.
    question = f'Claim: "{statement}" According to the passage about {topic}, is it true?'
    context = ChainContext.of(question, [statement])
    assert context.reads_statement([statement])
    topic_rules = (None, "names_no_subject", "named_thing_not_cited")
    assert context.argument_problem("yes", [statement], [statement]) in topic_rules
