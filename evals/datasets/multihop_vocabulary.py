"""The words of the multi-hop items (:mod:`evals.datasets.build_multihop`): name parts, the
relations between entities and their phrasings, colour sentences, and the question families.

Changing any of them changes the committed ``multihop.jsonl`` and ``prose.jsonl``.
"""

from __future__ import annotations

from typing import NamedTuple

# Name parts. A name's "key" (head + tail) identifies the entity; near-miss names keep the head
# and change the tail. Parts were picked to sound plausible yet name nothing well known.
HEADS = {
    "town": ("Varn", "Quel", "Brask", "Thorv", "Ysel", "Drom", "Kelv", "Ostr", "Marr", "Fenn",
             "Gald", "Hurl", "Isk", "Jorv", "Lunn", "Nesk", "Prav", "Rusk", "Sted", "Tolv",
             "Vesk", "Wend", "Zarn", "Abr", "Cald", "Ebr", "Hask", "Karn", "Orm", "Pell"),
    "bridge": ("Hollen", "Kest", "Marl", "Orrin", "Pask", "Selv", "Tamar", "Yarl", "Brom",
               "Dell", "Fald", "Garr", "Lisk", "Nord", "Ulm", "Wist"),
    "river": ("Elv", "Ask", "Bryn", "Dwal", "Ferr", "Gell", "Hyv", "Irr", "Lom", "Mev", "Nar",
              "Oth", "Sab", "Tev", "Urr", "Vol", "Wyr", "Yss"),
    "company": ("Arl", "Bex", "Carr", "Dun", "Emb", "Falk", "Gorr", "Hest", "Ingl", "Jarr",
                "Kell", "Lorr", "Merr", "Nox", "Ost", "Pryd", "Rook", "Sarr", "Tull", "Vant"),
    "person": ("Bren", "Corv", "Dask", "Ell", "Fors", "Harn", "Ivel", "Jast", "Kor", "Lind",
               "Morv", "Nyl", "Oss", "Quin", "Rav", "Sol", "Tarv", "Ulv", "Vad", "Wex", "Yor"),
    "instrument": ("dressel", "kor", "vell", "tam", "brun", "sil", "orm", "quar", "fen", "gal",
                   "hol", "ister"),
}  # fmt: skip
TAILS = {
    "town": ("holt", "mere", "wick", "stad", "by", "ford", "heim", "ness", "moor", "vale",
             "dal", "gard", "thorpe", "ley", "brook"),
    "bridge": ("gate", "stead", "ham", "wald", "berg", "mark", "crest", "haven"),
    "river": ("ra", "en", "ith", "a", "ow", "ey", "ine", "ul"),
    "company": ("ton", "ley", "worth", "ridge", "field", "combe", "stone", "hall"),
    "person": ("ath", "ick", "ow", "er", "sen", "ard", "ing", "ane", "elm", "ist"),
    "instrument": ("horn", "vina", "lute", "pipe", "harp", "drum", "fife", "zither"),
}  # fmt: skip
FIRST_NAMES = ("Ilsa", "Tamsin", "Oren", "Berit", "Caspar", "Dagny", "Edvin", "Fenna", "Gorm",
                "Halla", "Isolde", "Jory", "Kestrel", "Malin", "Nils", "Odile", "Runa", "Sigrid",
                "Torvald", "Ulla", "Vidar", "Wenna", "Yrsa", "Aldo", "Brisa", "Corin", "Dorit",
                "Emrys")  # fmt: skip
COMPANY_KINDS = ("Works", "Foundry", "Ironworks", "Engineering", "Bridgeworks", "Steel Company",
                  "Construction", "Shipwrights")  # fmt: skip
NAME_FORMAT = {
    "town": "{key}",
    "bridge": "{key} Bridge",
    "river": "{key} River",
    "company": "{key} {extra}",
    "person": "{extra} {key}",
    "instrument": "{key}",
}
WITH_ARTICLE = ("bridge", "river", "instrument")  # written "the Varnholt Bridge"


class Relation(NamedTuple):
    """A relation between entities: its subject's kind, its object's kind ("year" and "km"
    objects are numbers) and its phrasings in text, ``{s}`` the subject and ``{o}`` the object
    as written."""

    subject: str
    target: str
    phrasings: tuple[str, ...]


RELATIONS = {
    "born_in": Relation("person", "town",
        ("{s} was born in {o}.", "{s} was born in the town of {o}.")),
    "birth_year": Relation("person", "year",
        ("{s} was born in the year {o}.", "{s}'s year of birth was {o}.")),
    "founded_by": Relation("company", "person",
        ("{s} was founded by {o}.", "{o} founded {s}.")),
    "founded_year": Relation("company", "year",
        ("{s} was founded in {o}.", "{s} was established in {o}.")),
    "headquartered_in": Relation("company", "town",
        ("{s} is headquartered in {o}.", "{s} has its head office in {o}.")),
    "built_by": Relation("bridge", "company",
        ("{s} was built by {o}.", "{o} built {s}.")),
    "spans": Relation("bridge", "river",
        ("{s} spans {o}.", "{s} crosses {o}.")),
    "opened_year": Relation("bridge", "year",
        ("{s} opened in {o}.", "{s} was opened to traffic in {o}.")),
    "lies_on": Relation("town", "river",
        ("{s} lies on {o}.", "{s} is a town on {o}.")),
    "town_founded_year": Relation("town", "year",
        ("{s} was first settled in {o}.", "{s} received its charter in {o}.")),
    "flows_into": Relation("river", "river",
        ("{s} flows into {o}.", "{s} empties into {o}.")),
    "length_km": Relation("river", "km",
        ("{s} is {o} kilometres long.", "{s} runs for {o} kilometres.")),
    "invented_by": Relation("instrument", "person",
        ("{s} was invented by {o}.", "{o} invented {s}.")),
}  # fmt: skip
KIND_RELATIONS = {
    kind: [name for name, relation in RELATIONS.items() if relation.subject == kind]
    for kind in HEADS
}
# Relations pointing at each kind, used to invent entities that share a gold entity.
INCOMING = {
    kind: [name for name, relation in RELATIONS.items() if relation.target == kind]
    for kind in HEADS
}
# Colour sentences that state no relation, so paragraphs read like prose.
FILLERS = {
    "person": ("{s} trained as a surveyor.", "{s} kept detailed workshop journals.",
               "{s} later taught drafting to apprentices.", "{s} was a keen amateur astronomer."),
    "company": ("{s} is known for riveted steel trusses.", "{s} once employed several hundred "
                "workers.", "{s} also made railway signals.", "{s} won a medal at a trade fair."),
    "bridge": ("{s} carries two lanes of traffic.", "{s} is a stone arch crossing.",
               "{s} was repainted green after a storm.", "{s} is popular with walkers at dusk."),
    "town": ("{s} holds a market every Thursday.", "{s} is known for its slate roofs.",
             "{s} has a small museum of local crafts."),
    "river": ("{s} is popular with anglers.", "{s} freezes in hard winters.",
              "{s} was once used to float timber."),
    "instrument": ("{s} has seven strings.", "{s} is played with a curved bow.",
                   "{s} is often heard at harvest festivals.", "{s} is carved from pear wood."),
}  # fmt: skip

# Chain families: (start kind, relations followed, question with {start}).
CHAINS = {
    "bridge_founder_birthplace": (
        "bridge",
        ("built_by", "founded_by", "born_in"),
        "In which town was the founder of the company that built {start} born?",
    ),
    "instrument_birthplace_river": (
        "instrument",
        ("invented_by", "born_in", "lies_on"),
        "On which river lies the town where the inventor of {start} was born?",
    ),
    "bridge_headquarters_river": (
        "bridge",
        ("built_by", "headquartered_in", "lies_on"),
        "On which river lies the town where the company that built {start} is headquartered?",
    ),
    "company_founder_birthplace": (
        "company",
        ("founded_by", "born_in"),
        "In which town was the founder of {start} born?",
    ),
    "instrument_inventor_birthplace": (
        "instrument",
        ("invented_by", "born_in"),
        "In which town was the inventor of {start} born?",
    ),
    "bridge_builder_founder": (
        "bridge",
        ("built_by", "founded_by"),
        "Who founded the company that built {start}?",
    ),
    "bridge_river_outflow": (
        "bridge",
        ("spans", "flows_into"),
        "Into which river does the river crossed by {start} flow?",
    ),
    "company_headquarters_river": (
        "company",
        ("headquartered_in", "lies_on"),
        "On which river lies the town where {start} is headquartered?",
    ),
}
# Comparison families: (operand kind, hops before the attribute, attribute, pick, question).
COMPARISONS = {
    "company_founded_earlier": (
        "company",
        (),
        "founded_year",
        "min",
        "Which was founded earlier, {a} or {b}?",
    ),
    "person_born_earlier": ("person", (), "birth_year", "min", "Who was born earlier, {a} or {b}?"),
    "river_longer": ("river", (), "length_km", "max", "Which river is longer, {a} or {b}?"),
    "town_settled_earlier": (
        "town",
        (),
        "town_founded_year",
        "min",
        "Which town was settled earlier, {a} or {b}?",
    ),
    "bridge_builders_founded_earlier": (
        "bridge",
        ("built_by",),
        "founded_year",
        "min",
        "Which company was founded earlier: the one that built {a} or the one that built {b}?",
    ),
    "instrument_inventors_born_earlier": (
        "instrument",
        ("invented_by",),
        "birth_year",
        "min",
        "Who was born earlier: the inventor of {a} or the inventor of {b}?",
    ),
}
FAMILIES = (*CHAINS, *COMPARISONS)
# Value ranges of numeric attributes when nothing constrains them.
RANGES = {
    "birth_year": (1760, 1890),
    "founded_year": (1790, 1925),
    "opened_year": (1820, 1960),
    "town_founded_year": (880, 1480),
    "length_km": (35, 940),
}
