"""Mechanical chain checks: is an argument about the question, and does each link hold?

The citation check (:mod:`graph_server.citation`) sees every given alone. These checks look at
the links between claims of the merged graph, with no model involved (docs/orchestrator.md,
*Chain check*, states the rules):

* **bridge**: the two ends of a ``supports`` link share a content word or a number
  (:func:`orchestrator.checks.question.terms`). A link whose ends share nothing is ``no_bridge``;
* **look-alike**: a link is ``look_alike`` when its ends name two different entities of the
  evidence that look alike: a shared name word inside two different names ("Embstone
  Ironworks" / "Embstone Foundry"), or two names of the evidence that differ by a near miss
  (rapidfuzz ratio >= :data:`NEAR_MISS_RATIO`, "Vance" / "Vane");
* **subject**: a link into the conclusion is ``off_subject`` when nothing upstream of it,
  over links that passed, mentions the question's subject
  (:func:`orchestrator.checks.question.subject_terms`: its names and numbers, else its content
  words), nor anything upstream of a reason the same run gave
  with it (joint premises reach the subject together). A line of evidence that never touches
  "x9" does not support "x9 can run the job", however true its sentences are.

A flagged link stays in the graph and in the report; it only stops counting toward width
(:func:`without_links`). :func:`answer_follows` checks that a candidate's answer occurs in a
claim of its argument, or is recomputed from an operation one of them states; a compound answer
("X is a knight, and Y is a knave") clause by clause, where a clause counts only when a claim
asserts it, not when it stands in a quotation or a report of what someone said
(:func:`clauses_follow`, :func:`asserted_parts`).

All functions are pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, DivisionByZero, InvalidOperation
from typing import Any

import networkx as nx
from rapidfuzz import fuzz

from graph_server.similarity import claim_key
from orchestrator.checks.arithmetic import false_equation
from orchestrator.checks.question import (
    asked,
    compared_options,
    name_runs,
    offered,
    question_names,
    relation_terms,
    smaller_wins,
    stated_terms,
    subject_terms,
    terms,
    unaccented,
)
from orchestrator.reply.answers import (
    NO,
    UNANSWERABLE,
    YES,
    answer_clauses,
    clause_sides,
    is_entity,
    normalise_text,
)

NO_BRIDGE = "no_bridge"
LOOK_ALIKE = "look_alike"
OFF_SUBJECT = "off_subject"
# Why a whole argument (a set of claims deriving the answer) does not count.
ARGUMENT_OFF_SUBJECT = "names_no_subject"
ARGUMENT_OFF_QUESTION = "not_what_was_asked"
ARGUMENT_NOT_ONE_CHAIN = "not_one_chain"
ARGUMENT_ONE_SIDED = "one_sided"
ARGUMENT_NOT_READ = "statement_not_in_evidence"
ARGUMENT_FALSE_ARITHMETIC = "false_arithmetic"
NEAR_MISS_RATIO = 80.0
"""rapidfuzz ``ratio`` from which two different names count as look-alikes ("vance"/"vane"
scores 88.9; "braskthorpe"/"braskmere" 60)."""
MIN_NAME_CHARS = 4
"""Shorter names are too short for a ratio to mean anything."""
_NUMBER = r"-?\d+(?:\.\d+)?"
_OPERATORS = {
    "+": "+",
    "plus": "+",
    "-": "-",
    "minus": "-",
    "*": "*",
    "x": "*",
    "×": "*",
    "times": "*",
    "multiplied by": "*",
    "/": "/",
    "÷": "/",
    "divided by": "/",
}
_OPERATION = re.compile(
    rf"({_NUMBER})((?:\s*(?:divided by|multiplied by|plus|minus|times|[+\-*/x×÷])\s*{_NUMBER})+)",
    re.IGNORECASE,
)
_STEP = re.compile(
    rf"\s*(divided by|multiplied by|plus|minus|times|[+\-*/x×÷])\s*({_NUMBER})", re.IGNORECASE
)
_QUOTATION = re.compile(r'"[^"]*"|“[^”]*”|‘[^’]*’|(?<!\w)\'[^\']*\'(?!\w)')
_STRAY_QUOTE = re.compile(r'["“”‘]')
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_REPORTS = re.compile(
    r"\b(?:sa(?:y|ys|id|ying)|stat(?:e|es|ed|ing|ement|ements)|claim\w*|t(?:ell|ells|old|elling)"
    r"|assert\w*|declar\w*|not(?:e|es|ed|ing)|remark\w*|mention\w*|comment\w*|express\w*"
    r"|put it|according|words?|repl(?:y|ies|ied)|insist\w*|argu\w*|explain\w*|exclaim\w*"
    r"|suggest\w*|think\w*|thought|believ\w*|wr(?:ote|ites?|itten))\b",
    re.IGNORECASE,
)
"""Words that make a sentence report what someone says or thinks."""
_SUPPOSES = re.compile(
    r"\b(?:if|unless|whether|suppos\w*|assum\w*|or|either|neither|nor|not|never|no|cannot"
    r"|\w+n['’]t|false that|untrue that)\b",
    re.IGNORECASE,
)
"""Words that make a sentence suppose, offer alternatives or deny."""
_PARTS = re.compile(r"[;,]|\b(?:and|but|so|because|since|therefore|thus|hence)\b", re.IGNORECASE)
"""Where a sentence joins the facts it asserts."""


@dataclass(frozen=True)
class FailedLink:
    """One support link that does not count, and why (one of the reasons above)."""

    src: str
    dst: str
    reason: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready."""
        return {"src": self.src, "dst": self.dst, "reason": self.reason, "detail": self.detail}


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
            readings=dict(readings or {}),
        )

    def read(self, nodes: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        """``nodes`` (id -> node) with each cited given's claim replaced by its span's reading
        (:attr:`readings`): "It was founded by Jonas Harrow" is checked as "It (Harrow Mill)
        was founded by Jonas Harrow". A given is stored under its span's id, so the id is the
        key. Other nodes are copied as they are. O(V)."""
        return {
            node_id: (
                {**node, "claim": self.readings[node_id]}
                if node_id in self.readings and node.get("source") == node_id
                else dict(node)
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
        self, answer_key: str, claims: Sequence[str], cited: Sequence[str] = ()
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
        :data:`ARGUMENT_FALSE_ARITHMETIC`), or they say "yes" to a quoted statement whose
        names and numbers the evidence they cite does not hold (:meth:`reads_statement`,
        :data:`ARGUMENT_NOT_READ`). ``cited``: the texts of the argument's claims that are
        cited evidence. O(c^2) link tests."""
        words = [terms(claim) for claim in claims]
        if self.subject and not any(found & self.subject for found in words):
            return ARGUMENT_OFF_SUBJECT
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
        if answer_key == YES and not self.reads_statement(cited):
            return ARGUMENT_NOT_READ
        return None

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

    def restates_question(self, answer_key: str) -> bool:
        """Whether the answer (its cluster key) only repeats words of the question that the
        question does not offer as options: "The brundrum" for "On which river lies the town
        where the inventor of the brundrum was born?" names the question's subject, not an
        answer. Yes, no and unanswerable never restate. O(len(answer))."""
        if answer_key in (YES, NO, UNANSWERABLE):
            return False
        words = terms(answer_key)
        return bool(words) and words <= self.question_words and not words & self.options


def evidence_names(texts: Iterable[str]) -> frozenset[str]:
    """Every name in ``texts``, folded (see :func:`orchestrator.checks.question.name_runs`)."""
    found: set[str] = set()
    for text in texts:
        found.update(name_runs(text))
    return frozenset(found)


def failed_links(
    nodes: Mapping[str, Mapping[str, Any]],
    edges: Sequence[Mapping[str, Any]],
    conclusion: str,
    subject: frozenset[str],
    names: frozenset[str],
    paired: frozenset[str] = frozenset(),
) -> list[FailedLink]:
    """The ``supports`` links of the argument for ``conclusion`` that do not count.

    ``nodes`` maps id -> node with ``claim``; ``edges`` have ``src``, ``dst``, ``relation``
    and optionally ``run_ids`` (as ``get_graph`` exports them);
    ``subject`` is :func:`subject_terms` of the question (empty: no subject rule);
    ``names`` is :func:`evidence_names` of the evidence; ``paired``, the names the question
    itself holds (:func:`question_names`), are never look-alikes of each other: the question
    tells them apart ("Carrworth Foundry or Inglridge Foundry"). Links are checked upstream of the
    conclusion only. Sorted by (src, dst). Cost: O(E * claim length), plus the near-miss test
    over each link's differing names.
    """
    support = [
        (str(e["src"]), str(e["dst"]))
        for e in edges
        if e["relation"] == "supports" and e["src"] in nodes and e["dst"] in nodes
    ]
    upstream = _upstream(support, conclusion)
    premises = _premise_sets(edges)
    partners = _co_premises(edges, premises)
    failed: dict[tuple[str, str], FailedLink] = {}
    for src, dst in support:
        if dst not in upstream:
            continue
        problem = _link_problem(nodes[src]["claim"], nodes[dst]["claim"], names, paired)
        if problem is not None and problem[0] == NO_BRIDGE:
            # A middle hop listed with other reasons bridges to them, not to the claim
            # they support together ("founded by Vidar Tarvard" between "Rookcombe Foundry
            # built the bridge" and "Vidar Tarvard was born in Quelheim").
            for partner in sorted(partners.get((src, dst), ())):
                partner_claim = nodes[partner]["claim"]
                if _link_problem(nodes[src]["claim"], partner_claim, names, paired) is None:
                    problem = None
                    break
        if problem is not None:
            failed[(src, dst)] = FailedLink(src, dst, *problem)
    if subject:
        reached = {n for n in upstream if terms(nodes[n]["claim"]) & subject and n != conclusion}
        _spread(reached, [link for link in support if link not in failed], conclusion)
        # Reasons one run gave together are joint premises: the set reaches the subject when
        # one of its members does ("x9 runs Linux" and "cron needs Linux", jointly).
        joint = [members for (claim, _), members in premises.items() if claim == conclusion]
        carried = set().union(*(members for members in joint if members & reached))
        for src, dst in support:
            if dst == conclusion and src not in carried and (src, dst) not in failed:
                detail = f"nothing on this line mentions the question's {sorted(subject)}"
                failed[(src, dst)] = FailedLink(src, dst, OFF_SUBJECT, detail)
    return [failed[key] for key in sorted(failed)]


def chain_parts(
    claims: Sequence[str], names: frozenset[str], paired: frozenset[str] = frozenset()
) -> list[list[int]]:
    """The connected parts of the claims of one argument (its conclusion left out), each a
    sorted list of indices, in order of their first claim. Two claims are linked by the rule
    of a support link: a shared content word or number, and no look-alike names but those
    ``paired`` (as in :func:`failed_links`). One part is one chain; "Vidar Tarvelm was born in
    Quelmere" with "Rookcombe Foundry built the Faldcrest Bridge" is two facts with a hop
    missing between them, even when each shares words with the conclusion. O(c^2) link
    tests for ``c`` claims."""
    parts: list[list[int]] = []
    seen: set[int] = set()
    for start in range(len(claims)):
        if start in seen:
            continue
        part, frontier = {start}, [start]
        while frontier:
            i = frontier.pop()
            for j in range(len(claims)):
                if j not in part and _link_problem(claims[i], claims[j], names, paired) is None:
                    part.add(j)
                    frontier.append(j)
        seen |= part
        parts.append(sorted(part))
    return parts


def without_links(graph: Mapping[str, Any], links: Iterable[FailedLink]) -> nx.MultiDiGraph:
    """The store's multigraph rebuilt from its export (``get_graph``), minus the ``supports``
    edges of ``links``, for the engine's width measures. O(V + E)."""
    dropped = {(link.src, link.dst) for link in links}
    rebuilt = nx.MultiDiGraph()
    for node in graph["nodes"]:
        rebuilt.add_node(node["id"], **{**node, "run_ids": set(node["run_ids"])})
    for edge in graph["edges"]:
        if edge["relation"] == "supports" and (edge["src"], edge["dst"]) in dropped:
            continue
        rebuilt.add_edge(
            edge["src"],
            edge["dst"],
            key=edge["relation"],
            confidence=edge["confidence"],
            run_ids=set(edge["run_ids"]),
        )
    return rebuilt


def answer_follows(key: str, argument: Sequence[str], stated: Sequence[str] = ()) -> bool:
    """Whether answer ``key`` (:func:`orchestrator.reply.answers.answer_key`) is carried by the
    ``argument`` claims: a name must occur in one of them; a number must occur in one, or be
    the value of an operation written in an argument claim or in ``stated`` (the runs'
    conclusion sentences) whose operands all occur in the argument. Yes/no and refusals are
    not looked up (True)."""
    if not key or not (is_entity(key) or re.fullmatch(_NUMBER, key)):
        return True
    clauses = answer_clauses(key)
    if clauses:
        return clauses_follow(clauses, argument, stated)
    padded = [f" {normalise_text(claim)} " for claim in argument]
    if any(f" {key} " in text for text in padded):
        return True
    if is_entity(key):
        return False
    target = Decimal(key)
    known = {number for claim in argument for number in claim_key(claim).numbers}
    for text in [*argument, *stated]:
        for operands, value in _operations(text):
            if value == target and all(claim_key(o).numbers[0] in known for o in operands):
                return True
    return False


def clauses_follow(clauses: Sequence[str], argument: Sequence[str], stated: Sequence[str]) -> bool:
    """Whether every clause of a compound answer (:func:`orchestrator.reply.answers.answer_clauses`)
    is reached by the ``argument`` claims: a claim, or a run's conclusion sentence in
    ``stated``, asserts the clause (:func:`asserted_parts`: not inside a quotation, a report of
    what someone said, a supposition, an alternative or a denial), and a claim of the argument
    names the clause's subject. "Logan told you that Aiden is a sinner" names Aiden and holds
    the words "Aiden is a sinner", but asserts nothing about him. O(total length)."""
    said = {part for text in [*argument, *stated] for part in asserted_parts(text)}
    named = [terms(claim) for claim in argument]
    for clause in clauses:
        subject = terms(clause_sides(clause)[0])
        if clause not in said or not any(subject <= found for found in named):
            return False
    return True


def asserted_parts(text: str) -> list[str]:
    """The facts ``text`` asserts, each folded as an answer is (:func:`orchestrator.reply.answers.
    normalise_text`): its sentences with every quotation cut out (an unclosed one runs to the
    end of its sentence), split at commas, semicolons and joining words (and, but, so,
    because, since, therefore, thus, hence). A sentence that reports what someone says or
    thinks (said, claimed, told, according to, in X's words ...), supposes (if, unless,
    assume), offers alternatives (or, either) or denies (not, never, n't) asserts nothing.
    "Aiden is a sinner, and Logan is a saint" -> ``["aiden is sinner", "logan is saint"]``;
    'Aiden asserted: "Logan is a saint"' -> ``[]``. A lexical reading, deliberately strict: a
    fact it misses only leaves an answer ungrounded. O(len(text))."""
    found: list[str] = []
    for sentence in _SENTENCE_END.split(_QUOTATION.sub(" ", text)):
        sentence = _STRAY_QUOTE.split(sentence)[0]
        if _REPORTS.search(sentence) or _SUPPOSES.search(sentence):
            continue
        found += [normalise_text(part) for part in _PARTS.split(sentence)]
    return [part for part in found if part]


# -- helpers --------------------------------------------------------------------------------


def _link_problem(
    src: str, dst: str, names: frozenset[str], paired: frozenset[str] = frozenset()
) -> tuple[str, str] | None:
    shared = terms(src) & terms(dst)
    if not shared:
        return NO_BRIDGE, "the two claims share no content word or number"
    src_names, dst_names = set(name_runs(src)), set(name_runs(dst))
    for a in sorted(src_names - dst_names):
        for b in sorted(dst_names - src_names):
            if a not in names or b not in names:
                continue  # a look-alike is two entities the evidence really has
            if a in paired and b in paired:
                continue  # the question names both: it tells them apart itself
            if set(a.split()) & set(b.split()):
                return LOOK_ALIKE, f"{a!r} and {b!r} are different names sharing a word"
            if min(len(a), len(b)) >= MIN_NAME_CHARS and fuzz.ratio(a, b) >= NEAR_MISS_RATIO:
                return LOOK_ALIKE, f"{a!r} and {b!r} are different names that look alike"
    return None


def _premise_sets(edges: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], set[str]]:
    """(claim, run) -> the sources of the ``supports`` edges that run drew into the claim: its
    joint premises. Edges without provenance form one set under run ``""``. O(E)."""
    sets: dict[tuple[str, str], set[str]] = {}
    for edge in edges:
        if edge["relation"] == "supports":
            for run in edge.get("run_ids") or ("",):
                sets.setdefault((str(edge["dst"]), str(run)), set()).add(str(edge["src"]))
    return sets


def _co_premises(
    edges: Sequence[Mapping[str, Any]], premises: Mapping[tuple[str, str], set[str]]
) -> dict[tuple[str, str], set[str]]:
    """(src, dst) of each supports edge a run drew -> the other sources that run gave for
    ``dst`` too (``premises`` is :func:`_premise_sets`). An edge without provenance has none.
    O(E) set unions."""
    partners: dict[tuple[str, str], set[str]] = {}
    for edge in edges:
        if edge["relation"] == "supports":
            src, dst = str(edge["src"]), str(edge["dst"])
            for run in edge.get("run_ids") or ():
                partners.setdefault((src, dst), set()).update(premises[(dst, str(run))] - {src})
    return partners


def _upstream(support: list[tuple[str, str]], conclusion: str) -> set[str]:
    """``conclusion`` and every claim with a support path to it."""
    into: dict[str, list[str]] = {}
    for src, dst in support:
        into.setdefault(dst, []).append(src)
    seen, stack = {conclusion}, [conclusion]
    while stack:
        for src in into.get(stack.pop(), []):
            if src not in seen:
                seen.add(src)
                stack.append(src)
    return seen


def _spread(reached: set[str], support: list[tuple[str, str]], conclusion: str) -> None:
    """Add to ``reached`` every claim a reached claim supports (not the conclusion itself:
    its own sentence always names the subject)."""
    out: dict[str, list[str]] = {}
    for src, dst in support:
        out.setdefault(src, []).append(dst)
    stack = list(reached)
    while stack:
        for dst in out.get(stack.pop(), []):
            if dst not in reached and dst != conclusion:
                reached.add(dst)
                stack.append(dst)


def _operations(text: str) -> list[tuple[list[str], Decimal]]:
    """Each arithmetic chain written in ``text`` ("12 + 30 - 2"), evaluated left to right:
    (operand texts, value). Division by zero and malformed numbers are skipped."""
    found: list[tuple[list[str], Decimal]] = []
    for match in _OPERATION.finditer(text):
        operands = [match.group(1)]
        try:
            value = Decimal(match.group(1))
            for word, number in _STEP.findall(match.group(2)):
                operand = Decimal(number)
                operands.append(number)
                op = _OPERATORS[" ".join(word.casefold().split())]
                if op == "+":
                    value += operand
                elif op == "-":
                    value -= operand
                elif op == "*":
                    value *= operand
                else:
                    value /= operand
        except (InvalidOperation, DivisionByZero):
            continue
        found.append((operands, value.normalize()))
    return found
