"""What a question asks, read mechanically: its subject, the options it lists, what it asks
about them, and whether it compares two of them.

The chain check (:mod:`orchestrator.checks.chain`) holds an argument against these; anchoring uses
the subject to choose the sentence shown for an answer. Words are compared in :func:`terms`
form: stemmed, without stopwords, auxiliaries or the joining words of :data:`FILLERS`, so
"founded" and "found" meet and "only" or "which" never bridge anything.

All functions are pure and deterministic.
"""

from __future__ import annotations

import re
import unicodedata

from corpus.evidence import split_sentences
from graph_server.citation import name_words
from graph_server.similarity import AUXILIARIES, STOPWORDS, claim_key, collapse_initialisms
from orchestrator.reply import asked_category

_COMPARATIVES = frozenset(
    [
        "earlier",
        "later",
        "older",
        "younger",
        "longer",
        "shorter",
        "larger",
        "smaller",
        "bigger",
        "higher",
        "lower",
        "taller",
        "wider",
        "deeper",
        "heavier",
        "lighter",
        "faster",
        "slower",
        "closer",
        "nearer",
        "farther",
        "further",
        "greater",
        "more",
        "less",
        "fewer",
        "first",
        "last",
    ]
)
"""Words that make a question with two options a comparison (:func:`compared_options`)."""
FILLERS = frozenset(
    [
        "about",
        "after",
        "all",
        "also",
        "any",
        "as",
        "because",
        "before",
        "both",
        "by",
        "each",
        "every",
        "for",
        "from",
        "here",
        "how",
        "its",
        "only",
        "or",
        "so",
        "some",
        "such",
        "than",
        "their",
        "then",
        "there",
        "these",
        "they",
        "those",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "with",
        "yes",
    ]
)
"""Words that join sentences without naming anything: sharing one is no bridge."""
_QUESTION_WORDS = frozenset(
    ["what", "which", "who", "whom", "whose", "when", "where", "why", "how"]
)
_SMALLER_WINS = frozenset(
    [
        "earlier",
        "older",
        "first",
        "shorter",
        "smaller",
        "lower",
        "fewer",
        "less",
        "closer",
        "nearer",
    ]
)
"""Comparatives answered by the option with the smaller number (an earlier year, fewer km)."""
_LARGER_WINS = frozenset(
    [
        "later",
        "younger",
        "last",
        "longer",
        "larger",
        "bigger",
        "higher",
        "taller",
        "wider",
        "deeper",
        "heavier",
        "greater",
        "more",
        "farther",
        "further",
    ]
)
"""Comparatives answered by the option with the larger number."""
_COMPARED_QUALITY = {
    "longer": "long",
    "shorter": "short",
    "taller": "tall",
    "higher": "high",
    "lower": "low",
    "wider": "wide",
    "deeper": "deep",
    "heavier": "heavy",
    "larger": "large",
    "bigger": "big",
    "smaller": "small",
    "older": "old",
    "younger": "young",
}
"""The quality a comparative compares, as evidence states it ("907 kilometres long").
"Earlier" and "later" compare dates, which no one word states."""


def terms(text: str) -> frozenset[str]:
    """The words and numbers of ``text`` that can bridge two claims. O(len(text))."""
    key = claim_key(text)
    return frozenset(w for w in key.content if w not in FILLERS) | frozenset(key.numbers)


def asked(question: str) -> str:
    """The question itself, without the answer-format instructions that follow it: the text
    up to its last ``?`` ("Which one finished second: Amy, Dan, Mel? Answer with the name
    only." -> "Which one finished second: Amy, Dan, Mel?"); the whole text when it has no
    ``?`` or nothing follows it. O(len(question))."""
    end = question.rfind("?")
    return question[: end + 1] if end >= 0 else question


def offered(question: str) -> frozenset[str]:
    """The words of the options a question lists: after its last ``:`` ("Which one finished
    second: Amy, Dan, Mel?") or on either side of an "or" ("Was it Amy or Dan?"), in
    :func:`terms` form; empty when it lists none. O(len(question))."""
    listed = question.rsplit(":", 1)[1] if ":" in question else ""
    if re.search(r"\bor\b", question):
        listed += " " + question
    return terms(listed) if listed else frozenset()


_OBJECT = r"(?:(?:the\s+)?(?:#\d+|[A-Z][\w'’.&-]*(?:\s+[A-Z][\w'’.&-]*)*)|the\s+[a-z][\w-]*)"
DESCRIPTIONS = (
    re.compile(rf"\bthe (\w+) (?:that|which|who) (\w+) ({_OBJECT})"),
    re.compile(rf"\bthe (\w+) (\w+ed) by ({_OBJECT})"),
    re.compile(rf"\bthe (\w+) of ({_OBJECT})"),
)
"""The definite descriptions a question nests, each ending on its object (the last group): "the
company that built X", "the river crossed by X", "the founder of X". The object is a name or a
``#k`` (after an optional "the"), or "the" and a lower-case word
(:mod:`orchestrator.checks.decompose`): a lower-case word without "the" is no thing ("the
feature that got a dedicated command", "the management of sparsely checked-out trees", "the
first of them")."""


def subject_terms(question: str) -> frozenset[str]:
    """What an argument must reach: the question's names and numbers (in :func:`terms`
    form); for a question with neither, the objects of its descriptions that are lower-case
    ones ("the velldrum" in "In which town was the inventor of the velldrum born?":
    :func:`described_objects`), else its content words but the kind of thing it asks for
    (:func:`_asked_for`). Only the question proper
    counts (:func:`asked`): a sentence-initial word of a format instruction ("Answer with the
    name only", "Respond only with ...") looks like a name, but no evidence mentions it."""
    question = asked(question)
    named = " ".join(
        word
        for word in name_words(question)
        if word.casefold() not in STOPWORDS | AUXILIARIES | FILLERS | _QUESTION_WORDS
    )
    found = terms(named) | frozenset(claim_key(question).numbers)
    if not found:
        found = terms(" ".join(described_objects(question)))
    return found or (terms(question) - _QUESTION_WORDS - _asked_for(question))


def described_objects(question: str) -> list[str]:
    """The objects of the descriptions of ``question`` (:data:`DESCRIPTIONS`) that are
    lower-case definite descriptions, in order: "the velldrum" for "In which town was the
    inventor of the velldrum born?"; both instruments for "Who was born earlier: the inventor
    of the quarzither or the inventor of the silpipe?". An object is the end of its
    description, so it holds no other. Objects that are names, ``#k`` or a word without "the"
    ("the statements that no reptiles ..." describes no thing) are left out. O(len(question))."""
    matches = [match for pattern in DESCRIPTIONS for match in pattern.finditer(question)]
    objects = [match.groups()[-1] for match in sorted(matches, key=lambda match: match.start())]
    return [found for found in objects if re.fullmatch(r"the\s+[a-z][\w-]*", found)]


_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”')
MIN_STATEMENT_WORDS = 3
"""A quoted passage shorter than this is a title or a term ("the word "quay""), no
statement."""
_BOUNDED_NUMBER = re.compile(
    r"\b(?:(?:more|less|fewer|greater|higher|lower|other)\s+than|over|under|above|below|"
    r"at\s+least|at\s+most|up\s+to|nearly|almost|about|around|approximately|roughly)"
    r"\s+(?:[$€£¥]\s*)?-?\d[\d,]*(?:\.\d+)?",
    flags=re.IGNORECASE,
)
"""A number after a bound ("more than $ 257 million") is a limit, not a value to find."""


_QUOTED_NAME = re.compile(r"(?<![\w'])'([^'\n]+)'(?![\w'])|`([^`\n]+)`|\"([^\"\n]+)\"|“([^”\n]+)”")
_TECHNICAL_KINDS = (
    "command|subcommand|option|flag|function|method|property|event|module|class|package|"
    "hook|variable|setting|field|keyword|parameter|argument|api|tool"
)
_KIND_NAMED = re.compile(
    rf"\bthe\s+((?:[a-z][\w.+/-]*\s+){{0,2}}[a-z][\w.+/()-]*)\s+(?:{_TECHNICAL_KINDS})s?\b"
)
MAX_THING_WORDS = 3
"""A quoted passage longer than this is a statement (:func:`stated_terms`), not a name."""


def named_things(question: str) -> tuple[frozenset[str], ...]:
    """The lower-case names a question gives the thing it asks about, each in :func:`terms`
    form, in order: a short passage in quotes or backticks ("'git gc'", "`fs.rm`", at most
    :data:`MAX_THING_WORDS` words, none capitalised: "'Logan is a sinner'" quotes a statement)
    and the words between "the" and a technical kind ("the git switch command", "the recursive
    option"). Capitalised names are :func:`subject_terms`' already; these are the names that
    programs and their documentation write in lower case, and the capitalised name beside
    them ("Git") is shared by every sentence of the documentation. O(len(question)).

    Examples
    --------
    >>> [sorted(t) for t in named_things("Which Git release introduced the git switch command?")]
    [['git', 'switch']]
    >>> [sorted(t) for t in named_things("When did 'git stash' learn the 'push' subcommand?")]
    [['git', 'stash'], ['push']]
    >>> named_things("Aiden said 'Logan is a sinner'. Who is a knight?")
    ()
    """
    proper = asked(question)
    found: list[tuple[int, str]] = []
    for match in _QUOTED_NAME.finditer(proper):
        text = next(group for group in match.groups() if group is not None).strip()
        words = text.split()
        if 0 < len(words) <= MAX_THING_WORDS and not any(w[0].isupper() for w in words):
            found.append((match.start(), text))
    found += [(match.start(), match.group(1)) for match in _KIND_NAMED.finditer(proper)]
    things: list[frozenset[str]] = []
    for _, text in sorted(found):
        thing = terms(text)
        if thing and thing not in things:
            things.append(thing)
    return tuple(things)


def stated_terms(question: str) -> frozenset[str]:
    """What the evidence for "yes" must hold of the statement a question quotes to have it
    checked (the longest passage in double quotes of the question proper, :func:`asked`, with
    at least :data:`MIN_STATEMENT_WORDS` words): its names and numbers in :func:`terms`
    form, less the names and numbers the question gives outside the quote (its topic: "the
    passage about Catherine Hardwicke") and the numbers after a bound ("more than 25
    million": any larger figure bears it out). 'Claim: "Catherine Hardwicke was born as
    Fiona Catherine Hardwicke ." According to the passage about Catherine Hardwicke, is the
    claim true?' -> ``{"fiona"}``. The statement's first word counts as a name only inside a
    run of names ("Rachel Riley joined ..." yes, "More than one judge ..." no): any sentence
    opens on a capital. Accents are dropped (:func:`unaccented`). Empty when the question
    quotes no statement. O(len(question))."""
    proper = unaccented(asked(question))
    passages = [a or b for a, b in _QUOTED.findall(proper)]
    statements = [p for p in passages if len(p.split()) >= MIN_STATEMENT_WORDS]
    if not statements:
        return frozenset()
    statement = max(statements, key=len).strip()
    words = name_words(statement)
    if words and words[0] == statement.split()[0] and not _opens_name_run(statement):
        words = words[1:]
    named = " ".join(
        word for word in words if word.casefold() not in STOPWORDS | AUXILIARIES | FILLERS
    )
    outside = proper.replace(statement, " ")
    topic = terms(" ".join(name_words(outside))) | frozenset(claim_key(outside).numbers)
    values = frozenset(claim_key(_BOUNDED_NUMBER.sub(" ", statement)).numbers)
    # Names are cut out of the statement, which can tokenise them apart ("A'0%" gives "0",
    # the whole statement "0%"): only terms of the whole statement are asked for.
    return ((terms(named) | values) & terms(statement)) - topic


def unaccented(text: str) -> str:
    """``text`` without accents: a claim quoting "Edouard Seguin" names the "Édouard Séguin"
    of the evidence. O(len(text))."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def _opens_name_run(statement: str) -> bool:
    """Whether the statement's first word is followed by another name-like word."""
    first = statement.split()[0].casefold()
    return any(run.startswith(first + " ") for run in name_runs(statement))


def compared_options(question: str) -> tuple[frozenset[str], ...]:
    """The two options of a comparison, each as the terms that tell it from the other:
    "Which town was settled earlier, Marrgard or Zarnmere?" -> ``({"marrgard"},
    {"zarnmere"})``; "... earlier: the one that built the Paskham Bridge or the one that built
    the Bromgate Bridge?" -> ``({"paskham"}, {"bromgate"})``. A comparison lists two options
    joined by "or" after its last ``,`` or ``:``, with a word of :data:`_COMPARATIVES` before
    them. ``()`` for any other question. O(len(question))."""
    proper = asked(question).rstrip("?")
    cut = max(proper.rfind(","), proper.rfind(":"))
    head, listed = proper[: max(cut, 0)], proper[cut + 1 :]
    if cut < 0 or not set(re.findall(r"[a-z]+", head.casefold())) & _COMPARATIVES:
        return ()
    sides = re.split(r"\bor\b", listed)
    if len(sides) != 2:
        return ()
    first, second = terms(sides[0]), terms(sides[1])
    if not first - second or not second - first:
        return ()
    return (first - second, second - first)


def relation_terms(question: str) -> frozenset[str]:
    """What a question asks about its names, in :func:`terms` form: its words but its names
    and numbers (:func:`subject_terms`), the options it lists after a ``:``, the question
    words and the kind of thing asked for. "Which town was settled earlier, Marrgard or
    Zarnmere?" -> ``{"settl", "earlier"}`` (stemmed); "In which town was the inventor of the
    velldrum born?" -> ``{"inventor", "born"}``. A comparative that names a measured quality adds
    the quality: "Which river is longer, ...?" -> ``{"longer", "long"}``. Empty for a question
    with neither names nor a lower-case description, whose subject already holds all its words.
    O(len(question)).

    >>> sorted(relation_terms("Which river is longer, the Arl River or the Kest River?"))
    ['long', 'longer']
    """
    proper = asked(question)
    listed = terms(proper.rsplit(":", 1)[1]) if ":" in proper else frozenset()
    words = terms(proper) - subject_terms(question) - listed - _QUESTION_WORDS
    words -= _asked_for(question)
    # Evidence states a quality, not the comparison: "907 kilometres long" for "longer".
    found = re.findall(r"[a-z]+", proper.casefold())
    return words | terms(" ".join(_COMPARED_QUALITY.get(word, "") for word in found))


def _asked_for(question: str) -> frozenset[str]:
    """The kind of thing a question asks for, in :func:`terms` form: the word after "which",
    "what" or "whose" ("On which river lies the town ..." -> ``{"river"}``). It is the answer's
    category, not the question's subject: any sentence about some river would carry it."""
    return terms(" ".join(sorted(asked_category(question))))


def question_names(question: str) -> frozenset[str]:
    """The names of the question proper (:func:`asked`), folded as :func:`name_runs` folds them.
    O(len(question))."""
    return frozenset(name_runs(asked(question)))


def smaller_wins(question: str) -> bool | None:
    """For a comparison (:func:`compared_options`), whether the option with the smaller number
    answers it ("born earlier": the smaller year; "longer": the larger length); None when the
    question compares nothing or its comparative has no such direction ("lighter", "faster":
    a number might be a weight or a time). O(len(question))."""
    if not compared_options(question):
        return None
    words = set(re.findall(r"[a-z]+", asked(question).casefold()))
    smaller, larger = bool(words & _SMALLER_WINS), bool(words & _LARGER_WINS)
    return smaller if smaller != larger else None


_POLAR_OPENERS = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "am",
        "do",
        "does",
        "did",
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "has",
        "have",
        "had",
    ]
)
_WH_WORDS = frozenset(["which", "what", "who", "whom", "whose", "where", "when", "why", "how"])
_LEAD_INS = frozenset(["so", "and", "but", "then", "now"])


def asks_yes_or_no(question: str) -> bool | None:
    """Whether the question proper asks for a yes or a no: True when its last question
    sentence opens with an auxiliary ("Does it follow ...?", "Can x9 run the job?"), False
    when it opens with a wh-word, after a preposition or a lead-in if any ("In which release
    ...?", "How many ...?", "So who is a knight?"), and None when it opens otherwise ("If tea
    has 6 calories, how many ...?", "Claim: ...") or lists yes or no as options. O(len).

    Examples
    --------
    >>> asks_yes_or_no("Git 2.25 gave it a command. In which release did it learn 'add'?")
    False
    >>> asks_yes_or_no("Does it follow that some cats are lions?")
    True
    >>> asks_yes_or_no("Which is it: yes or no?") is None
    True
    """
    proper = asked(question)
    if re.search(r"\b(?:yes|no)\b", proper, re.IGNORECASE):
        return None
    spans = split_sentences(proper)
    last = proper[spans[-1][0] : spans[-1][1]] if spans else ""
    words = re.findall(r"[a-z']+", last.casefold())
    while words and words[0] in _LEAD_INS:
        words = words[1:]
    if not words:
        return None
    if words[0] in _POLAR_OPENERS:
        return True
    if words[0] in _WH_WORDS or (len(words) > 1 and words[1] in _WH_WORDS):
        return False
    return None


def name_runs(text: str) -> list[str]:
    """Runs of consecutive name-like words of ``text``, folded ("embstone foundry") without
    possessive endings, and each word of a longer run alone ("embstone"): a surname is a name
    too. A bracket ends a run: in "Korelm (Odile Korelm) was born", a reading
    (:mod:`corpus.reference`), "korelm" and "odile korelm" are two mentions, not one name."""
    collapsed = collapse_initialisms(text)
    marked = set(name_words(text))
    runs: list[list[str]] = []
    previous = False
    end = 0
    for match in re.finditer(r"[^\W_]+(?:['’][^\W_]+)*", collapsed):
        word = match.group(0)
        is_name = word in marked
        bracketed = any(char in "()[]" for char in collapsed[end : match.start()])
        if is_name and previous and not bracketed:
            runs[-1].append(word)
        elif is_name:
            runs.append([word])
        previous, end = is_name, match.end()
    whole = [" ".join(map(_unpossessed, run)) for run in runs]
    return whole + [_unpossessed(word) for run in runs if len(run) > 1 for word in run]


def whole_names(text: str) -> list[str]:
    """The whole runs of name-like words of ``text``, folded ("faldhaven bridge"), without
    the single words of a longer run (:func:`name_runs`)."""
    runs = name_runs(text)
    return [run for run in runs if not any(run != other and run in other.split() for other in runs)]


def _unpossessed(word: str) -> str:
    """``word`` folded, without a possessive ending: "Morver's" is the name "morver"."""
    folded = word.casefold().replace("’", "'")
    return folded.removesuffix("'s").removesuffix("'")
