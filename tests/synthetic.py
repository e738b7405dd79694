"""Deterministic synthetic argument claims and argument graphs for the benchmarks.

Claims read like what an LLM writes when it argues from documents: organisations,
people, places, products and substances, with years, counts, money and
percentages. A claim set mixes distinct statements with paraphrases (case,
punctuation, articles, thousands separators, reordered clauses, a typo),
negations and numeric variants, each attributed to one of several runs.

Graphs are layered like real arguments: givens at the bottom, inferences and a
few assumptions in between, one conclusion on top; support edges mostly climb
one layer, some skip layers, a few point back down (cycles), and a small share
are attacks, some of them mutual. Everything is a pure function of the seed.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass

from graph_server.similarity import claim_key, similar_pairs

ORG_HEADS = (
    "Northwind", "Bluefield", "Acme", "Halvorsen", "Kestrel", "Meridian", "Orchid",
    "Pinecrest", "Quantix", "Redwater", "Silverline", "Tamarack", "Umbra", "Vantage",
    "Westmark", "Yellowtail", "Zephyr", "Aldgate", "Brightwave", "Cobalt", "Dunmore",
    "Everfield", "Foxglove", "Granite", "Harbor", "Ironbridge", "Juniper", "Kingsley",
)  # fmt: skip
ORG_TAILS = (
    "Logistics", "Pharma", "Holdings", "Energy", "Foods", "Robotics", "Textiles",
    "Mining", "Capital", "Analytics", "Shipping", "Biotech", "Software", "Steel",
    "Airlines", "Insurance", "Telecom", "Motors", "Labs", "Retail",
)  # fmt: skip
SURNAMES = (
    "Müller", "Okafor", "Nakamura", "Lindqvist", "García", "Novak", "Haddad", "Kowalski",
    "Fitzgerald", "Ivanova", "Achebe", "Moreau", "Sato", "Brennan", "Castellanos",
    "Dubois", "Eriksen", "Fontaine", "Gallagher", "Horvath", "Iqbal", "Jansen", "Kaur",
    "Laurent", "Mbeki", "Nilsson", "Osei", "Petrov", "Quinn", "Rossi", "Schmidt", "Tanaka",
)  # fmt: skip
CITIES = (
    "Lyon", "Oslo", "Zürich", "Porto", "Gdańsk", "Osaka", "Lagos", "Denver", "Leeds",
    "Tampere", "Valencia", "Brno", "Graz", "Cork", "Malmö", "Bilbao", "Turin", "Ghent",
    "Aarhus", "Nantes", "Kraków", "Sevilla", "Utrecht", "Bergen",
)  # fmt: skip
SUBSTANCES = (
    "trellium", "cobalt alloy", "compound K-7", "polymer resin", "sodium azide",
    "ceramic coating", "graphene film", "platinum catalyst", "lithium brine", "acetone solvent",
    "zinc oxide", "nitrile rubber", "carbon fibre", "boron nitride", "vanadium steel",
)  # fmt: skip
PRODUCT_MAKES = (
    "flagship", "budget", "portable", "industrial", "second-generation", "wireless",
    "modular", "rugged", "compact", "premium", "low-power", "medical",
)  # fmt: skip
PRODUCTS = (
    "router", "insulin pump", "delivery drone", "billing platform", "solar inverter",
    "battery pack", "payroll app", "water filter", "braking module", "vaccine candidate",
    "heat exchanger", "smart meter", "forklift", "ventilator", "turbine blade",
)  # fmt: skip
DOCUMENTS = (
    "annual report", "audit memo", "merger agreement", "safety review", "board minutes",
    "court filing", "press release", "inspection log", "supplier contract", "tax return",
    "due-diligence file", "patent application", "insurance claim", "customs declaration",
)  # fmt: skip
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
SYSTEMS = ("Linux", "FreeBSD", "Windows Server", "Solaris", "OpenBSD", "AIX", "HP-UX")

TEMPLATES = (
    "{org} reported revenue of {money} dollars for its {product} line in {year}",
    "{org} employs {count} people at its {city} site, according to {person}",
    "{person} signed the {doc} with {org} on {month} {day}, {year}",
    "{substance} supplied by {org} melts at {temp} degrees Celsius",
    "the {city} plant of {org} was inspected by {person} in {month} {year}",
    "server {server} at {org} runs {system} and is listed in the rack {rack} survey",
    "the {product} made by {org} failed the {year} stress test in {city}",
    "the {doc} states that {org} owns {pct} of {org2}",
    "{person} was chief executive of {org} until {month} {year}",
    "the {org} shipment of {substance} from {city} to {city2} arrived {small} days late",
    "the {product} from {org} cut maintenance costs by {pct} in the {year} trial",
    "{org} moved its headquarters from {city} to {city2} in {year} under {person}",
    "according to the {doc}, {person} approved a {money} dollar budget for the {product}",
    "{substance} was detected at {temp} parts per million in samples from the {org} site",
    "{org2} acquired {org} for {money} dollars in {month} {year}",
    "the {year} {doc} of {org} lists {count} open safety incidents",
    "{person} testified that the {product} built by {org} passed every inspection",
    "the {city} warehouse of {org} stores {count} pallets of {substance}",
    "{person} left {org} to join {org2} as head of {product} sales in {year}",
    "the {doc} dated {month} {day} shows {org} paid {money} dollars in fines",
    "{org} recalled {count} units of its {product} after complaints in {city}",
    "the {product} prototype developed by {person} weighs {small} kilograms",
    "{org2} sued {org} in {city} over the {product} patent in {year}",
    "{person} audited the {city} accounts of {org} and found {count} missing invoices",
)
PARAPHRASES = ("case", "period", "article", "separator", "clause", "typo", "spacing")


@dataclass(frozen=True)
class Claim:
    text: str
    run_id: str
    kind: str
    """``base``, ``paraphrase``, ``negated`` or ``numeric``."""
    origin: int
    """Number of the base claim this one was made from (its own number for a base)."""


def _fill(template: str, rng: random.Random) -> str:
    orgs = rng.sample(range(len(ORG_HEADS) * len(ORG_TAILS)), 2)
    names = [f"{ORG_HEADS[i % len(ORG_HEADS)]} {ORG_TAILS[i // len(ORG_HEADS)]}" for i in orgs]
    cities = rng.sample(CITIES, 2)
    values = {
        "org": names[0],
        "org2": names[1],
        "person": (
            f"{rng.choice(('Dr.', 'Ms.', 'Mr.', 'Prof.'))} "
            f"{rng.choice('ABCDEFGHJKLMNPRSTVW')}. {rng.choice(SURNAMES)}"
        ),
        "city": cities[0],
        "city2": cities[1],
        "substance": rng.choice(SUBSTANCES),
        "product": f"{rng.choice(PRODUCT_MAKES)} {rng.choice(PRODUCTS)}",
        "doc": rng.choice(DOCUMENTS),
        "month": rng.choice(MONTHS),
        "system": rng.choice(SYSTEMS),
        "money": f"{rng.randint(1, 999) * 10 ** rng.randint(3, 6):,}",
        "year": str(rng.randint(1988, 2024)),
        "count": f"{rng.randint(12, 48_000):,}",
        "small": str(rng.randint(2, 40)),
        "day": str(rng.randint(1, 28)),
        "temp": str(rng.randint(40, 1_600)),
        "pct": f"{rng.randint(3, 97)}%",
        "server": f"{rng.choice('abcdkmqxz')}{rng.randint(1, 99)}",
        "rack": str(rng.randint(1, 40)),
    }
    return template.format(**values)


def _paraphrase(text: str, rng: random.Random) -> str:
    kind = rng.choice(PARAPHRASES)
    if kind == "case":
        return text[0].upper() + text[1:] if text[0].islower() else text.lower()
    if kind == "period":
        return text + rng.choice((".", ".", "!", " ."))
    if kind == "article":
        return text[4:] if text.startswith("the ") else "the " + text
    if kind == "separator":
        # 84,200 <-> 84200: the normaliser must see these as one number.
        if re.search(r"\d,\d", text):
            return re.sub(r"(\d),(\d)", r"\1\2", text)
        return re.sub(r"\b(\d+)(\d{3})\b", r"\1,\2", text)
    if kind == "clause":
        words = text.split()
        cut = rng.randint(1, len(words) - 1)
        return " ".join(words[cut:] + words[:cut])
    if kind == "typo":
        words = text.split()
        spots = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
        if spots:
            i = rng.choice(spots)
            j = rng.randint(1, len(words[i]) - 2)
            w = words[i]
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
        return " ".join(words)
    return text.replace(" ", "  ", 1) + " "


_NEGATABLE = (
    (" reported ", " did not report "),
    (" employs ", " does not employ "),
    (" signed ", " never signed "),
    (" melts ", " does not melt "),
    (" cut ", " did not cut "),
    (" recalled ", " did not recall "),
    (" weighs ", " does not weigh "),
    (" sued ", " never sued "),
    (" left ", " never left "),
    (" audited ", " never audited "),
    (" shows ", " does not show "),
    (" was ", " was not "),
    (" runs ", " does not run "),
    (" failed ", " did not fail "),
    (" states ", " does not state "),
    (" arrived ", " never arrived "),
    (" moved ", " never moved "),
    (" approved ", " did not approve "),
    (" acquired ", " did not acquire "),
    (" lists ", " lists no "),
    (" passed ", " never passed "),
    (" stores ", " does not store "),
)


def _negate(text: str) -> str:
    for plain, negated in _NEGATABLE:
        if plain in text:
            return text.replace(plain, negated, 1)
    return "it is false that " + text


def _renumber(text: str, rng: random.Random) -> str:
    numbers = list(re.finditer(r"\d[\d,]*", text))
    if not numbers:
        return text + f" in {rng.randint(1988, 2024)}"
    match = rng.choice(numbers)
    original = int(match.group().replace(",", ""))
    changed = original + rng.randint(1, 9) * max(1, original // 10)
    return text[: match.start()] + str(changed) + text[match.end() :]


def claims(
    count: int,
    seed: int = 0,
    *,
    paraphrase_share: float = 0.30,
    negated_share: float = 0.05,
    numeric_share: float = 0.05,
    runs: int = 6,
) -> list[Claim]:
    """``count`` claims: distinct bases plus paraphrased, negated and numeric variants.

    Variants copy a random earlier base claim and come from a different run than it,
    as when several sampled runs restate the same evidence. Order is shuffled.
    """
    rng = random.Random(seed)
    paraphrases = round(count * paraphrase_share)
    negated = round(count * negated_share)
    numeric = round(count * numeric_share)
    bases = [
        Claim(_fill(rng.choice(TEMPLATES), rng), f"r{rng.randint(1, runs)}", "base", origin)
        for origin in range(count - paraphrases - negated - numeric)
    ]
    result = list(bases)
    for kind in ["paraphrase"] * paraphrases + ["negated"] * negated + ["numeric"] * numeric:
        base = rng.choice(bases)
        other_runs = [f"r{i}" for i in range(1, runs + 1) if f"r{i}" != base.run_id]
        run_id = rng.choice(other_runs or [base.run_id])
        if kind == "paraphrase":
            text = _paraphrase(base.text, rng)
        elif kind == "negated":
            text = _negate(base.text)
        else:
            text = _renumber(base.text, rng)
        result.append(Claim(text, run_id, kind, base.origin))
    rng.shuffle(result)
    return result


def distinct_claims(count: int, seed: int = 0) -> list[str]:
    """``count`` claims of which no two would merge or trip a dedup guard.

    Graph benchmarks need an exact node count, so a candidate similar to a kept
    claim (at the default thresholds) or sharing its content words is skipped.
    """
    rng = random.Random(seed)
    kept: list[str] = []
    while len(kept) < count:
        pool = kept + [_fill(rng.choice(TEMPLATES), rng) for _ in range(count - len(kept) + 16)]
        keys = [claim_key(text) for text in pool]
        earlier: dict[int, set[int]] = defaultdict(set)
        for i, j in similar_pairs(keys, 0.7, 0.85):
            earlier[j].add(i)
        chosen: set[int] = set()
        contents: set[frozenset[str]] = set()
        for j, key in enumerate(keys):
            if len(chosen) == count:
                break
            if key.content not in contents and not earlier[j] & chosen:
                chosen.add(j)
                contents.add(key.content)
        # Earlier keepers never clash with each other, so they stay chosen.
        kept = [pool[j] for j in sorted(chosen)]
    return kept


@dataclass(frozen=True)
class ArgumentGraph:
    nodes: list[dict[str, object]]
    edges: list[dict[str, object]]
    conclusion: str


TEMPLATED = (
    "{person} approved the {doc} for {org}",
    "the {product} made by {org} failed inspection in {city}",
    "{org} ships {substance} from its {city} plant",
    "{person} audited the {product} line of {org}",
)
"""Word-slot templates without numbers: claims that differ in one slot look alike to the
similarity scores and are kept apart only by the slot guard (the costly case)."""


def templated_claims(count: int, seed: int = 0) -> list[str]:
    """``count`` claims filled into a few fixed templates, the way an agent restates
    one finding per row of a table: about half from the word-slot templates above
    (many near-identical pairs that must not merge, a few true repeats), the rest
    numbered rows such as "invoice 1042 from Acme Labs lists 18 pallets of zinc oxide".
    Deterministic for a seed.
    """
    rng = random.Random(seed)
    out: list[str] = []
    for index in range(count):
        if index % 2:
            org = f"{rng.choice(ORG_HEADS)} {rng.choice(ORG_TAILS)}"
            out.append(
                f"invoice {1000 + index} from {org} lists {rng.randint(2, 90)} pallets of "
                f"{rng.choice(SUBSTANCES)}"
            )
        else:
            out.append(_fill(rng.choice(TEMPLATED), rng))
    return out


def argument_graph(
    node_count: int,
    edge_count: int,
    seed: int = 0,
    *,
    layers: int = 8,
    attack_share: float = 0.05,
    back_share: float = 0.01,
) -> ArgumentGraph:
    """A layered argument graph with ``node_count`` nodes and ``edge_count`` distinct edges.

    Layer 0 holds the givens (about a quarter of the nodes), the top layer the single
    conclusion ``n0``; about 5% of the middle nodes are assumptions, fed through
    ``assumes`` edges. Confidences are drawn from 0.5-0.99.
    """
    rng = random.Random(seed)
    texts = distinct_claims(node_count, seed)
    givens = max(1, node_count // 4)
    layer_of = {0: layers - 1}
    for index in range(1, node_count):
        layer_of[index] = 0 if index > node_count - 1 - givens else 1 + index % (layers - 2)
    by_layer: dict[int, list[int]] = {}
    for index, layer in layer_of.items():
        by_layer.setdefault(layer, []).append(index)

    nodes: list[dict[str, object]] = []
    for index in range(node_count):
        layer = layer_of[index]
        node_type = (
            "conclusion"
            if index == 0
            else "given"
            if layer == 0
            else "assumption"
            if rng.random() < 0.05
            else "inference"
        )
        nodes.append(
            {
                "id": f"n{index}",
                "claim": texts[index],
                "type": node_type,
                "confidence": round(rng.uniform(0.5, 0.99), 2),
                "run_ids": [f"r{rng.randint(1, 6)}"],
            }
        )

    edges: dict[tuple[int, int, str], dict[str, object]] = {}
    while len(edges) < edge_count:
        roll = rng.random()
        if roll < attack_share:
            src, dst = rng.sample(range(node_count), 2)
            relation = "attacks"
        else:
            dst = rng.randrange(node_count)
            while layer_of[dst] == 0:
                dst = rng.randrange(node_count)
            if roll < attack_share + back_share:
                lower = [layer for layer in by_layer if layer > layer_of[dst]]
            else:
                below = layer_of[dst] - 1
                lower = [below] if rng.random() < 0.7 else list(range(0, layer_of[dst]))
            if not lower:
                continue
            src = rng.choice(by_layer[rng.choice(lower)])
            relation = "assumes" if nodes[src]["type"] == "assumption" else "supports"
        if src == dst:
            continue
        edges[(src, dst, relation)] = {
            "src": f"n{src}",
            "dst": f"n{dst}",
            "relation": relation,
            "confidence": round(rng.uniform(0.5, 0.99), 2),
        }
    return ArgumentGraph(nodes, list(edges.values()), "n0")
