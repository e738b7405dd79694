"""The chain check: is an argument about the question, and does each link hold?

No model is involved (docs/orchestrator.md, *Chain check*, states the rules). The check has
three parts, one module each:

* :mod:`orchestrator.checks.links`: the ``supports`` links of an argument that do not count
  (bridge, look-alike names, the question's subject: :func:`failed_links`), the chains an
  argument's claims form (:func:`chain_parts`) and the graph without the failed links
  (:func:`without_links`);
* :mod:`orchestrator.checks.follows`: whether an answer follows from its argument
  (:func:`answer_follows`, :func:`clauses_follow`);
* :mod:`orchestrator.checks.asserted`: the facts a sentence asserts, not those it quotes,
  reports, supposes or denies (:func:`asserted_parts`).

This module holds what the checks need of a task (:class:`ChainContext`) and the rules on a
whole argument (:meth:`ChainContext.argument_problem`); it also keeps the names of the three
parts importable from here.

All functions are pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal

from graph_server.record_data import NodeData
from graph_server.similarity import claim_key
from orchestrator.checks.arithmetic import false_equation
from orchestrator.checks.asserted import asserted_parts
from orchestrator.checks.follows import answer_follows, clauses_follow
from orchestrator.checks.links import (
    LOOK_ALIKE,
    MIN_NAME_CHARS,
    NEAR_MISS_RATIO,
    NO_BRIDGE,
    OFF_SUBJECT,
    FailedLink,
    chain_parts,
    evidence_names,
    failed_links,
    without_links,
)
from orchestrator.checks.question import (
    asked,
    asks_yes_or_no,
    compared_options,
    named_things,
    offered,
    question_names,
    relation_terms,
    smaller_wins,
    stated_terms,
    subject_terms,
    terms,
    unaccented,
    whole_names,
)
from orchestrator.reply import NO, UNANSWERABLE, YES, is_entity, normalise_text

__all__ = [
    "ARGUMENT_ANSWER_NOT_CARRIED",
    "ARGUMENT_FALSE_ARITHMETIC",
    "ARGUMENT_NAME_FROM_OUTSIDE",
    "ARGUMENT_NOT_ONE_CHAIN",
    "ARGUMENT_NOT_READ",
    "ARGUMENT_OFF_QUESTION",
    "ARGUMENT_OFF_SUBJECT",
    "ARGUMENT_ONE_SIDED",
    "ARGUMENT_THING_NOT_CITED",
    "LOOK_ALIKE",
    "MIN_NAME_CHARS",
    "NEAR_MISS_RATIO",
    "NO_BRIDGE",
    "OFF_SUBJECT",
    "ChainContext",
    "FailedLink",
    "answer_follows",
    "asserted_parts",
    "chain_parts",
    "clauses_follow",
    "evidence_names",
    "failed_links",
    "without_links",
]

# Why a whole argument (a set of claims deriving the answer) does not count.
ARGUMENT_OFF_SUBJECT = "names_no_subject"
ARGUMENT_NAME_FROM_OUTSIDE = "name_from_outside"
ARGUMENT_OFF_QUESTION = "not_what_was_asked"
ARGUMENT_NOT_ONE_CHAIN = "not_one_chain"
ARGUMENT_ONE_SIDED = "one_sided"
ARGUMENT_NOT_READ = "statement_not_in_evidence"
ARGUMENT_FALSE_ARITHMETIC = "false_arithmetic"
ARGUMENT_THING_NOT_CITED = "named_thing_not_cited"
ARGUMENT_ANSWER_NOT_CARRIED = "answer_not_on_argument"


@dataclass(frozen=True)
class ChainContext:
    """What the checks need of a task, computed once: the question's subject terms and the
    names the evidence holds."""

    subject: frozenset[str]
    names: frozenset[str]
    options: frozenset[str] = frozenset()
    question_words: frozenset[str] = frozenset()
    relation: frozenset[str] = frozenset()
    """:func:`relation_terms` of the question."""
    compared: tuple[frozenset[str], ...] = ()
    """:func:`compared_options` of the question."""
    paired: frozenset[str] = frozenset()
    """:func:`question_names`: never look-alikes of each other."""
    smaller_wins: bool | None = None
    """:func:`orchestrator.checks.question.smaller_wins` of the question."""
    statement: frozenset[str] = frozenset()
    """:func:`orchestrator.checks.question.stated_terms`: the names and numbers of a statement the
    question quotes to have it checked."""
    yes_or_no: bool | None = None
    """:func:`orchestrator.checks.question.asks_yes_or_no` of the question."""
    things: tuple[frozenset[str], ...] = ()
    """:func:`orchestrator.checks.question.named_things`: the lower-case names of what the
    question asks about ("git switch")."""
    readings: Mapping[str, str] = field(default_factory=dict)
    """Span id -> what the checks read for that span (:attr:`corpus.evidence.Span.reading`:
    the title line cut off, the document's subject after an opening "It")."""

    @classmethod
    def of(
        cls,
        question: str,
        evidence_texts: Iterable[str],
        readings: Mapping[str, str] | None = None,
    ) -> ChainContext:
        """The context of ``question`` over the span texts as the checks read them
        (:attr:`corpus.evidence.Span.checked_text`); ``readings`` as :attr:`readings`."""
        proper = asked(question)
        return cls(
            subject_terms(question),
            evidence_names(evidence_texts),
            options=offered(proper),
            question_words=terms(proper),
            relation=relation_terms(question),
            compared=compared_options(question),
            paired=question_names(question),
            smaller_wins=smaller_wins(question),
            statement=stated_terms(question),
            yes_or_no=asks_yes_or_no(question),
            things=named_things(question),
            readings=dict(readings or {}),
        )

    def telling_apart(self, names: frozenset[str]) -> ChainContext:
        """This context with ``names`` among :attr:`paired` too: names the system found to be
        different things (:func:`orchestrator.checks.hops.compared_entities`)."""
        return self if names <= self.paired else replace(self, paired=self.paired | names)

    def read(self, nodes: Mapping[str, NodeData]) -> dict[str, NodeData]:
        """``nodes`` (id -> node) with each cited given's claim replaced by its span's reading
        (:attr:`readings`): "It was founded by Jonas Harrow" is checked as "It (Harrow Mill)
        was founded by Jonas Harrow". A given is stored under its span's id, so the id is the
        key. Other nodes are copied as they are. O(V)."""
        return {
            node_id: (
                {**node, "claim": self.readings[node_id]}
                if node_id in self.readings and node.get("source") == node_id
                else node.copy()
            )
            for node_id, node in nodes.items()
        }

    def against_comparison(self, answer_key: str, claims: Sequence[str]) -> bool:
        """Whether the numbers of an argument's ``claims`` decide the comparison against
        ``answer_key``: "Tamsin Morver was born in 1800" and "Aldo Harnsen was born in 1785"
        answer "Who was born earlier?" with Aldo Harnsen, so an argument for Tamsin Morver
        contradicts itself. Each option's numbers are those of the claims about it: a part of
        the argument (:func:`chain_parts`) that names that option alone, or, in a part naming
        both, the claims naming it alone. The answer stands for the option it names, or else
        for the option of the part that holds it ("the one that built the Marlgate Bridge":
        Dunhall Ironworks). False whenever anything is unclear: no direction, an answer
        standing for neither or both options, an option with no number or with two. O(c^2)
        link tests."""
        if self.smaller_wins is None or len(self.compared) != 2:
            return False
        direct = self._sides_named(answer_key)
        sides = set(direct)
        numbers: list[set[Decimal]] = [set(), set()]
        for part in chain_parts(claims, self.names, self.paired):
            texts = [claims[i] for i in part]
            # A part about one option lends it all its numbers; one about both, claim by claim.
            whole = " ".join(texts)
            for text in [whole] if len(self._sides_named(whole)) == 1 else texts:
                named = self._sides_named(text)
                if len(named) == 1:
                    numbers[named[0]] |= {Decimal(n) for n in claim_key(text).numbers}
                    if not direct and f" {answer_key} " in f" {normalise_text(text)} ":
                        sides.add(named[0])
        if len(sides) != 1 or any(len(found) != 1 for found in numbers):
            return False
        first, second = (found.pop() for found in numbers)
        if first == second:
            return False
        winner = int((first < second) != self.smaller_wins)
        return sides.pop() != winner

    def _sides_named(self, text: str) -> list[int]:
        words = terms(text)
        return [i for i, option in enumerate(self.compared) if words & option]

    def argument_problem(
        self,
        answer_key: str,
        claims: Sequence[str],
        cited: Sequence[str] = (),
        stated: Sequence[str] = (),
    ) -> str | None:
        """Why the claims of one argument for ``answer_key`` (its conclusion left out) do not
        count, or None when they do: none names the question's subject
        (:data:`ARGUMENT_OFF_SUBJECT`), a comparison's argument does not name both options
        (:data:`ARGUMENT_ONE_SIDED`: "Marrgard was settled in 1240" cannot tell whether
        Marrgard or Zarnmere was settled earlier), none carries what the question asks
        (:meth:`asks_about`, :data:`ARGUMENT_OFF_QUESTION`), they are not one chain
        (:func:`chain_parts`; a comparison may rest on one chain per option:
        :data:`ARGUMENT_NOT_ONE_CHAIN`), one of them writes out a false equation
        ("25 + 9 + 13 = 57": :func:`orchestrator.checks.arithmetic.false_equation`,
        :data:`ARGUMENT_FALSE_ARITHMETIC`), a step of the model's names what no sentence of the
        argument or the question names (:meth:`names_from_outside`; with ``cited`` given,
        :data:`ARGUMENT_NAME_FROM_OUTSIDE`), or they say "yes" to a quoted statement whose
        names and numbers the evidence they cite does not hold (:meth:`reads_statement`,
        :data:`ARGUMENT_NOT_READ`), or they do not carry the answer (:func:`answer_follows`,
        :data:`ARGUMENT_ANSWER_NOT_CARRIED`: "The Tamargate Bridge was built by Arlton
        Ironworks" names no town, however the run that drew it from there went on). ``cited``:
        the texts of the argument's claims that are cited evidence; ``stated``: the runs'
        conclusion sentences, which may write out the operation that gives a number answer.
        O(c^2) link tests."""
        words = [terms(claim) for claim in claims]
        if self.subject and not any(found & self.subject for found in words):
            return ARGUMENT_OFF_SUBJECT
        if self.things and not self.names_a_thing(cited):
            return ARGUMENT_THING_NOT_CITED
        named = frozenset().union(*words)
        if not all(option & named for option in self.compared):
            return ARGUMENT_ONE_SIDED
        if not self.asks_about(answer_key, claims):
            return ARGUMENT_OFF_QUESTION
        parts = chain_parts(claims, self.names, self.paired)
        # A comparison rests on one chain per option; anything else on one chain.
        per_option = all(
            any(words[i] & option for i in part for option in self.compared) for part in parts
        )
        if len(parts) > 1 and not (self.compared and per_option):
            return ARGUMENT_NOT_ONE_CHAIN
        if any(false_equation(claim) for claim in claims):
            return ARGUMENT_FALSE_ARITHMETIC
        if cited and self.names_from_outside(claims, cited):
            return ARGUMENT_NAME_FROM_OUTSIDE
        if answer_key == YES and not self.reads_statement(cited):
            return ARGUMENT_NOT_READ
        if not answer_follows(answer_key, claims, stated):
            return ARGUMENT_ANSWER_NOT_CARRIED
        return None

    def names_from_outside(self, claims: Sequence[str], cited: Sequence[str]) -> list[str]:
        """The names of the evidence (:attr:`names`) that a claim of the argument the model
        wrote (one not in ``cited``) holds, but that neither the argument's cited evidence nor
        the question names, sorted. Such a step brings its name in from a sentence the argument
        does not rest on: from "The Brommark Bridge spans the Hyvith River" to "The Hyvith
        River empties into the Wyrow River", a river another document's look-alike (the Hyvow)
        empties into. Names no document has (a capitalised "Therefore") are other rules'
        business. O(total length).

        >>> context = ChainContext.of("Into which river does the river crossed by the "
        ...     "Brommark Bridge flow?", ["The Brommark Bridge spans the Hyvith River.",
        ...     "The Hyvow River empties into the Wyrow River."])
        >>> context.names_from_outside(["The Brommark Bridge spans the Hyvith River.",
        ...     "The Hyvith River empties into the Wyrow River."],
        ...     ["The Brommark Bridge spans the Hyvith River."])
        ['wyrow river']
        """
        known = evidence_names(cited) | self.paired
        found = {
            name
            for claim in claims
            if claim not in cited
            for name in whole_names(claim)
            if name in self.names and name not in known
        }
        return sorted(found)

    def reads_statement(self, cited: Sequence[str]) -> bool:
        """Whether the ``cited`` evidence holds every name and number of the statement the
        question quotes (:attr:`statement`), as the evidence for "yes, it is true" must. A
        model's own sentence restating the claim proves nothing: "Catherine Hardwicke was born
        as Fiona Catherine Hardwicke" is not read in "Catherine Hardwicke (born Helen Catherine
        Hardwicke) is an American film director". True when the question quotes no statement.
        A lexical test: "more than 100" is not read in "150". O(total length)."""
        if not self.statement:
            return True
        return self.statement <= terms(unaccented(" ".join(cited)))

    def asks_about(self, answer_key: str, claims: Iterable[str]) -> bool:
        """Whether ``claims`` say something of what the question asks about its names
        (:attr:`relation`), as an argument for a named answer must: "Embstone Ironworks has its
        head office in Yselley" names the subject and the answer of "In which town was the
        founder of Embstone Ironworks born?" but not "founder" or "born", and "the Liskhaven
        Bridge spans the Yssra River" is no argument that the Yssra is the longer river. True
        for yes/no, numbers and refusals (no name to look up), or when the question has no
        such words. A lexical test: a paraphrase ("birthplace") does not count. O(total
        length)."""
        if not self.relation or not is_entity(answer_key):
            return True
        return any(terms(claim) & self.relation for claim in claims)

    def answers_another_kind(self, answer_key: str) -> bool:
        """Whether the answer (its cluster key) is a yes or a no to a question that asks for a
        thing: "Yes" to "In which Git release did that command learn 'add'?" answers nothing
        that was asked, however well its sentences are cited. False when the question's kind
        is unclear (:func:`orchestrator.checks.question.asks_yes_or_no` is None). O(1)."""
        return answer_key in (YES, NO) and self.yes_or_no is False

    def names_a_thing(self, cited: Sequence[str]) -> bool:
        """Whether the ``cited`` evidence (as the checks read it: a corpus sentence with the
        heading it stands under) holds every word of one of the question's lower-case names
        (:attr:`things`). "* "git branch --list" learned to ..." in the release notes of Git
        2.23 names Git, but not the git switch command that "Which Git release introduced the
        git switch command?" asks about, and a model's inference that says "git switch" proves
        nothing. True when the question gives no such name. O(total length)."""
        if not self.things:
            return True
        held = terms(" ".join(cited))
        return any(thing <= held for thing in self.things)

    def number_for_a_choice(self, answer_key: str) -> bool:
        """Whether the answer (its cluster key) is a number given to a comparison that asks to
        choose between two options (:attr:`compared`) and names neither: "484" for "Which river
        is longer, the Elvey River or the Elvra River?" is a length, not a river, however well
        its sentence is cited. An answer naming an option ("Bridge 7" for "... earlier, Bridge
        7 or Bridge 9?") or holding no number ("Dunhall Ironworks" for "... the one that built
        the Marlgate Bridge or ...") is left to the other rules. O(len(answer))."""
        if len(self.compared) != 2 or not claim_key(answer_key).numbers:
            return False
        words = terms(answer_key)
        return not any(words & option for option in self.compared)

    def restates_question(self, answer_key: str) -> bool:
        """Whether the answer (its cluster key) only repeats words of the question that the
        question does not offer as options: "The brundrum" for "On which river lies the town
        where the inventor of the brundrum was born?" names the question's subject, not an
        answer. Yes, no and unanswerable never restate. O(len(answer))."""
        if answer_key in (YES, NO, UNANSWERABLE):
            return False
        words = terms(answer_key)
        return bool(words) and words <= self.question_words and not words & self.options
