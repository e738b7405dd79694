"""Reading a document's sentences as a person does: a title line is a title, and a sentence
that opens with "It", "She" or "The yard" may be about the document's subject.

Encyclopedic prose names its subject once, in a title line and a first sentence, and then
refers back to it: "Title: Harrow Mill / The Harrow Mill is a watermill. It was founded in 1790
by Jonas Harrow. The mill ...". Read word by word, "It was founded in 1790 by Jonas Harrow"
says nothing about Harrow Mill, and "Title: Harrow Mill The Harrow Mill is a watermill" holds
one long name. The functions here give each sentence a *reading* for the mechanical checks:

* the title line is cut off the sentence it runs into (:func:`title_line`): a line marked
  ``Title:``, in title case, or named again at the start of the text after it;
* an opening reference that may stand for the document's subject (:func:`document_subject`)
  gets the subject in brackets after it: "It (Harrow Mill) was founded in 1790 by Jonas
  Harrow." (:func:`opening_reference`).

The sentence itself, what a prompt shows, is never changed. The checks read the reading; a
given that cites the sentence states it on its own (:func:`statements`: the reading without a
retrieved chunk's heading), so that a graph says whose founding year "It was founded in 1790"
gives. The rules are deliberately narrow:

* only a reference that *opens* a sentence is read, never one inside it;
* "it"/"its" stand for the subject; "he", "she", "his", "her" and the subject's surname alone
  ("Korelm was born ...") only when the subject looks like a person's name (no organisation
  or place word in it, :data:`NOT_PERSON_WORDS`);
* "The <noun>" only when the noun is a word of the title or of the document's first sentence
  ("The Harrow Mill is a watermill. ... The mill ..."; "... is a shipbuilding yard. ... The
  yard ...").

A reference resolved to a look-alike of the question's entity stays a look-alike: "It
(Rookcombe Foundry) was founded by Vidar Tarvard" does not answer a question about Rookton
Foundry, and the chain check still says so. All functions are pure and deterministic.
"""

from __future__ import annotations

import re
from typing import NamedTuple

TITLE_MARK = re.compile(r"^\s*title\s*:\s*", re.IGNORECASE)
SETEXT_UNDERLINE = re.compile(r"[ \t]*(?:=+|-+)[ \t]*(?:\n|$)")
"""A line of ``=`` or ``-`` under the first line (reStructuredText, Markdown's setext
headings, plain-text release notes) marks it as a title, as ``Title:`` does."""
MAX_TITLE_WORDS = 10
"""A longer first line is a sentence that wraps, not a title."""
_TITLE_SMALL_WORDS = frozenset(
    ["a", "an", "and", "at", "de", "for", "in", "of", "on", "or", "the", "to", "von", "van"]
)
IT_PRONOUNS = frozenset(["it", "its"])
PERSON_PRONOUNS = frozenset(["he", "she", "his", "her"])
POSSESSIVES = frozenset(["its", "his", "her"])
NOT_PERSON_WORDS = frozenset([
    "works", "foundry", "ironworks", "engineering", "bridgeworks", "steel", "company", "co",
    "corp", "corporation", "ltd", "inc", "plc", "llc", "group", "mill", "yard", "shipwrights",
    "construction", "bridge", "river", "lake", "sea", "mountain", "town", "city", "village",
    "county", "district", "station", "railway", "line", "road", "street", "hall", "house",
    "castle", "church", "abbey", "school", "college", "university", "museum", "club", "fc",
    "team", "band", "orchestra", "society", "association", "institute", "press", "records",
    "studio", "studios", "hotel", "theatre", "theater", "park", "airport", "hospital", "bank",
    "council", "party",
])  # fmt: skip
"""Words that make a subject an organisation or a place, never a "he" or a "she"."""
_ABBREVIATED_END = re.compile(r"(?:^|\s|\.)[^\W\d_]{1,3}\.$")
"""A title may end on a short abbreviation ("Co.", "Ltd.", "F.C."), never on a full stop."""
_WORD = re.compile(r"[^\W_]+(?:['’.][^\W_]+)*\.?")
_LEADING_NAME = re.compile(
    r"^(?:The\s+)?((?:[A-Z][\w'’.&-]*\s+)*?[A-Z][\w'’.&-]*)(?=\s+[a-z(,]|[,.]?$)"
)
_OPENING = re.compile(r"^(?P<ref>(?P<head>[A-Za-z]+)(?:\s+(?P<noun>[a-z]+))?)(?P<rest>\W.*)$", re.S)


def title_line(document: str) -> tuple[str, int] | None:
    """The document's title and the offset where the text after its line starts, when its
    first line is a title: at most :data:`MAX_TITLE_WORDS` words, no sentence punctuation at
    its end, more text after it, and either marked (``Title:``, or underlined by
    :data:`SETEXT_UNDERLINE`, whose line is then skipped too), in title case ("History of the
    Harrow Mill") or named again at the start of the text after it. None otherwise.
    O(len(first two lines)).

    >>> title_line("Title: Harrow Mill\\nThe Harrow Mill is a watermill.")
    ('Harrow Mill', 19)
    >>> title_line("The mill was built in 1790\\nby Jonas Harrow.") is None
    True
    >>> title_line("Duncombe Steel Co.\\nIt was founded in 1879.")
    ('Duncombe Steel Co.', 19)
    >>> title_line("dresselpipe\\nThe dresselpipe is a folk instrument.")
    ('dresselpipe', 12)
    >>> title_line("Git v2.23 Release Notes\\n=====\\n\\nFixes since v2.22")
    ('Git v2.23 Release Notes', 30)
    """
    stripped = len(document) - len(document.lstrip())
    first, newline, rest = document[stripped:].partition("\n")
    after = stripped + len(first) + 1
    underline = SETEXT_UNDERLINE.match(rest)
    if underline is not None:  # the title's own line, not text after it
        rest, after = rest[underline.end() :], after + underline.end()
    if not newline or not rest.strip():
        return None
    line = first.strip()
    marked = TITLE_MARK.match(line)
    name = line[marked.end() :].strip() if marked else line
    words = name.split()
    if not words or len(words) > MAX_TITLE_WORDS or name[-1] in "!?;:,":
        return None
    if name.endswith(".") and not _ABBREVIATED_END.search(name):
        return None  # a sentence; "Duncombe Steel Co." and "Harrow F.C." are names
    titled = all(
        word[0].isupper() or word.casefold() in _TITLE_SMALL_WORDS or not word[0].isalpha()
        for word in words
    )
    # "dresselpipe" above "The dresselpipe is a traditional instrument." is a title too: the
    # text after it opens by naming it.
    repeated = name.casefold() in rest.strip()[: len(name) + 40].casefold()
    if not (marked or underline or titled or repeated):
        return None
    return name, after


def document_subject(title: str | None, first_sentence: str) -> str | None:
    """What the document is about: its title, else the name that opens its first sentence
    ("The Harrow Mill is a watermill." -> "Harrow Mill"); None when the first sentence opens
    with something else ("It was ...", "In 1790 ..."). O(len(first_sentence)).

    >>> document_subject(None, "Vantley Works is an engineering works.")
    'Vantley Works'
    >>> document_subject(None, "In 1790 a mill was built.") is None
    True
    """
    if title:
        return title
    match = _LEADING_NAME.match(first_sentence.strip())
    if match is None:
        return None
    name = match.group(1)
    first_word = name.split()[0].casefold()
    if first_word in IT_PRONOUNS | PERSON_PRONOUNS or first_word in _TITLE_SMALL_WORDS:
        return None
    return name


def looks_like_person(subject: str) -> bool:
    """Whether ``subject`` may be called "he" or "she": two or more words, none of them an
    organisation or place word (:data:`NOT_PERSON_WORDS`). "Ulla Ellelm" yes, "Vantley Works"
    and "Harrow" no."""
    words = [w.casefold().strip(".") for w in subject.split()]
    return len(words) >= 2 and not any(w in NOT_PERSON_WORDS for w in words)


def opening_reference(
    sentence: str, subject: str, introduction: str, *, descriptions: bool = True
) -> str | None:
    """``sentence`` with ``subject`` in brackets after the reference it opens with, when that
    reference may stand for the subject (see the module rules); None when it opens with
    anything else. ``introduction`` is the text that may name the subject's kind: the title
    and the document's first sentence. ``descriptions=False`` reads pronouns and the surname
    only, not "The <noun>" (which may open a longer name: "The survey team ...").
    O(len(sentence) + len(introduction)).

    >>> opening_reference("It was founded in 1790.", "Harrow Mill", "Harrow Mill is a mill.")
    'It (Harrow Mill) was founded in 1790.'
    >>> opening_reference("Its owner was Jonas Harrow.", "Harrow Mill", "")
    "Its (Harrow Mill's) owner was Jonas Harrow."
    >>> opening_reference("The yard closed in 1901.", "Rookton Shipwrights", "a shipbuilding yard")
    'The yard (Rookton Shipwrights) closed in 1901.'
    >>> opening_reference("The river floods.", "Quelheim", "Quelheim is a town.") is None
    True
    >>> opening_reference("Korelm was born in Thorvford.", "Odile Korelm", "")
    'Korelm (Odile Korelm) was born in Thorvford.'
    """
    match = _OPENING.match(sentence.strip())
    if match is None:
        return None
    head = match.group("head").casefold()
    surname = subject.split()[-1]
    if looks_like_person(subject) and match.group("head") == surname:
        # "Korelm was born in Thorvford." in the article on Odile Korelm.
        return f"{surname} ({subject}){sentence.strip()[len(surname) :]}"
    if head in IT_PRONOUNS or (head in PERSON_PRONOUNS and looks_like_person(subject)):
        reference, rest = match.group("head"), sentence.strip()[len(match.group("head")) :]
    elif head == "the" and match.group("noun") and descriptions:
        kind_words = {w.casefold().strip(".") for w in _WORD.findall(f"{subject} {introduction}")}
        if match.group("noun") not in kind_words or match.group("noun") == subject.casefold():
            return None  # another kind of thing, or the subject by its own name
        reference, rest = match.group("ref"), match.group("rest")
    else:
        return None
    referent = f"{subject}'s" if head in POSSESSIVES else subject
    return f"{reference} ({referent}){rest}"


class SentenceReading(NamedTuple):
    """One sentence as the checks read it and as a given citing it states it (each None where
    that is the sentence as written): :func:`readings` and :func:`statements`."""

    reading: str | None
    statement: str | None


def sentence_readings(
    document: str, pieces: list[tuple[int, int]], heading: str = ""
) -> list[SentenceReading]:
    """:func:`readings` and :func:`statements` of every sentence of ``document`` in one pass:
    the title line and the subject are found once. O(len(document)).

    >>> text = "Title: Harrow Mill\\nThe mill is a watermill. It was founded in 1790."
    >>> from corpus.evidence import split_sentences
    >>> first = sentence_readings(text, split_sentences(text))[0]
    >>> first.reading, first.statement
    ('The mill (Harrow Mill) is a watermill.', 'The mill is a watermill.')
    """
    title = title_line(document)
    texts = [" ".join(document[start:end].split()) for start, end in pieces]
    cut = list(texts)
    if title is not None and pieces and pieces[0][0] < title[1]:
        # A first sentence that is the title line itself reads as it stands.
        cut[0] = " ".join(document[title[1] : pieces[0][1]].split()) or texts[0]
    named = title[0] if title else heading.rpartition(" > ")[2]
    subject = document_subject(named or None, cut[0] if cut else "")
    introduction = f"{named} {cut[0] if cut else ''}"
    found: list[SentenceReading] = []
    for text, shown in zip(cut, texts, strict=True):
        read = own = text
        if subject and text:
            read = opening_reference(text, subject, introduction) or text
            own = opening_reference(text, subject, introduction, descriptions=False) or text
        if heading:  # read under its heading, as the model sees it
            read = f"{read} ({heading})"
        found.append(
            SentenceReading(read if read != shown else None, own if own != shown else None)
        )
    return found


def statements(document: str, pieces: list[tuple[int, int]], heading: str = "") -> list[str | None]:
    """What each sentence of ``document`` states on its own (``pieces``: its sentence offsets,
    as :func:`corpus.evidence.split_sentences` gives them), None where that is the sentence as
    it stands: the first loses the title line it runs into, and an opening pronoun (or the
    subject's surname) gets the subject after it. O(len(document)).

    This is what a given citing the sentence says in a graph: two documents' "It was founded
    in 1790." and "It was founded in 1815." are about two subjects, not one claim with two
    years. Unlike :func:`readings`, an opening "The <noun>" stays as written: the checks may
    try it as the subject, but a graph shown to a person must not say "The survey
    (Infrastructure) team". ``heading`` (see :func:`readings`) only names the subject of a
    document without a title line.

    >>> text = "Title: Harrow Mill\\nThe mill is a watermill. It was founded in 1790. Mills grind."
    >>> from corpus.evidence import split_sentences
    >>> statements(text, split_sentences(text))
    ['The mill is a watermill.', 'It (Harrow Mill) was founded in 1790.', None]
    """
    return [read.statement for read in sentence_readings(document, pieces, heading)]


def readings(document: str, pieces: list[tuple[int, int]], heading: str = "") -> list[str | None]:
    """The reading of each sentence of ``document`` (``pieces``: its sentence offsets, as
    :func:`corpus.evidence.split_sentences` gives them), None where a sentence reads as it
    stands: the first loses the title line it runs into, and any may get the subject after
    its opening reference. O(len(document)).

    ``heading`` is what the document stands under when it is a piece of a longer file (a
    retrieved chunk's section trail or file title, :attr:`corpus.retrieval.Hit.heading`):
    every reading then ends with it in brackets, and without a title line of its own the
    document is about the heading's last element ("Net > socket.end()": "socket.end()").

    >>> text = "Title: Harrow Mill\\nThe mill is a watermill. It was founded in 1790."
    >>> from corpus.evidence import split_sentences
    >>> readings(text, split_sentences(text))
    ['The mill (Harrow Mill) is a watermill.', 'It (Harrow Mill) was founded in 1790.']
    >>> text = "Added in: v18.3.0. It closes the socket."
    >>> for reading in readings(text, split_sentences(text), "Net > socket.end()"):
    ...     print(reading)
    Added in: v18.3.0. (Net > socket.end())
    It (socket.end()) closes the socket. (Net > socket.end())
    """
    return [read.reading for read in sentence_readings(document, pieces, heading)]
