"""The packages import each other one way only: a test that walks every import.

The layers, lowest first (docs/architecture.md draws them):

1. ``corpus`` - the evidence: documents cut into citation spans, and document corpora
   (readers, chunking, the index, retrieval, embeddings). It imports nothing from the project.
2. ``graph_server`` - the argument-graph engine and its MCP server (whose ``search_evidence``
   tool searches a corpus). It may import ``corpus``, never the orchestrator or the evals.
3. ``orchestrator`` - the loop around the engine. It may import ``corpus`` and
   ``graph_server``, never ``evals``.
4. ``evals`` - the evaluation harness. It may import every layer below.
5. ``screen.py`` - the grounding screen, an application on top. It may import
   ``graph_server`` and ``orchestrator``, and from ``evals`` only the screen's own modules:
   :mod:`evals.grounding`, its grading (pure functions), over :mod:`evals.grounding_items`,
   its items; :mod:`evals.grounding_tables`, its Markdown tables; :mod:`evals.grounding_files`,
   its results file; :mod:`evals.grounding_models`, the models it screens and their prices;
   and :mod:`evals.cli`, how a command ends on an expected error; never the harness (runs,
   arms, banks, replay, summaries).
   The items import nothing from the project, the grading only the items, the tables and the
   files only the grading, and the models only the grading and ``orchestrator.llm`` (the
   models.json reader and the token estimate the screen uses itself), so the screen does not
   reach the harness through them.

So an arrow may only point down a layer, and there is no import cycle between packages. Two
downward arrows are ruled out too: nothing outside the command line imports the CLI package
``orchestrator.cli`` or its alias ``orchestrator.run`` (the library entry point is
``orchestrator.api``), and ``evals`` takes
the facts about built-in models from ``orchestrator.llm.local_models``, not from the llama.cpp
server ``orchestrator.llm.local``.
Every ``import`` and ``from ... import`` is read with :mod:`ast`, at any depth (imports made
inside functions count), relative ones resolved; ``importlib.import_module`` and
``__import__`` calls with a literal name count too. There are no exceptions: every
wrong-way arrow fails the test.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("corpus", "graph_server", "orchestrator", "evals")
APPS = ("screen",)
LAYER = {"corpus": 1, "graph_server": 2, "orchestrator": 3, "evals": 4, "screen": 5}
SCREEN_MAY_USE_FROM_EVALS = (
    "evals.cli",
    "evals.grounding",
    "evals.grounding_files",
    "evals.grounding_items",
    "evals.grounding_models",
    "evals.grounding_tables",
)
ONLY_FROM: dict[str, tuple[str, ...]] = {
    "evals.cli": (),
    "evals.grounding_items": (),
    "evals.grounding": ("evals.grounding_items",),
    "evals.grounding_files": ("evals.grounding",),
    "evals.grounding_models": ("evals.grounding", "orchestrator.llm"),
    "evals.grounding_tables": ("evals.grounding",),
}
"""Modules that may import only the listed project modules (so importing them pulls in
nothing else): the screen's items, grading, results file, models and tables (the models take
the models.json reader and the token estimate from ``orchestrator.llm``, as screen.py does)."""
NOT_FROM = (
    ("evals", "orchestrator.cli", "orchestrator.api"),
    ("evals", "orchestrator.run", "orchestrator.api"),
    ("screen", "orchestrator.cli", "orchestrator.api"),
    ("screen", "orchestrator.run", "orchestrator.api"),
    ("evals", "orchestrator.llm.local", "orchestrator.llm.local_models"),
)
"""(package, module, where instead): downward arrows that are still wrong. ``orchestrator.cli.run``
is the command line (the library entry point is ``orchestrator.api``); ``orchestrator.llm.local``
serves models with llama.cpp (the facts about built-in models are in
``orchestrator.llm.local_models``)."""

Arrow = tuple[str, str, int]
"""(importing module, imported module, line)."""


def module_name(path: Path, root: Path) -> str:
    """``orchestrator/loop/stages/merge.py`` -> ``orchestrator.loop.stages.merge``; a package's
    ``__init__.py`` is the package itself."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files(root: Path) -> list[Path]:
    """Every Python module of the packages and the top-level applications."""
    files = [p for package in PACKAGES for p in sorted((root / package).rglob("*.py"))]
    return files + [root / f"{app}.py" for app in APPS if (root / f"{app}.py").exists()]


def imports_of(path: Path, root: Path) -> Iterator[Arrow]:
    """Every module ``path`` imports, with its line; relative imports resolved."""
    module = module_name(path, root)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield module, alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from pkg import sub`` may name a submodule: record both, the rules use prefixes.
            yield module, target, node.lineno
            for alias in node.names:
                yield module, f"{target}.{alias.name}", node.lineno
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Name) and node.func.id == "__import__")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
            )
        ):
            yield module, node.args[0].value, node.lineno


def top(module: str) -> str:
    return module.split(".")[0]


def within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def project_arrows(root: Path) -> list[Arrow]:
    """The imports from one project package (or application) into another."""
    units = set(PACKAGES) | set(APPS)
    return [
        (src, dst, line)
        for path in source_files(root)
        for src, dst, line in imports_of(path, root)
        if top(dst) in units and top(dst) != top(src)
    ]


def wrong_way(arrows: list[Arrow]) -> list[str]:
    """Each arrow that breaks a rule of the module docstring, as ``src -> dst (line N): why``."""
    found = []
    for src, dst, line in arrows:
        why = None
        if LAYER[top(dst)] > LAYER[top(src)]:
            why = f"{top(src)} may not import {top(dst)} (a higher layer)"
        elif (
            top(src) == "screen"
            and top(dst) == "evals"
            and not any(within(dst, allowed) for allowed in SCREEN_MAY_USE_FROM_EVALS)
        ):
            why = "screen.py may use only evals.grounding, its tables and evals.cli from evals"
        for user, used, instead in NOT_FROM:
            if top(src) == user and within(dst, used):
                why = f"{user} takes this from {instead}, not {used}"
        for leaf, allowed in ONLY_FROM.items():
            if within(src, leaf) and not any(within(dst, ok) for ok in allowed):
                why = f"{src} may import only {', '.join(allowed) or 'nothing'} from the project"
        if why is not None:
            found.append(f"{src} -> {dst} (line {line}): {why}")
    return sorted(set(found))


def package_cycles(arrows: list[Arrow]) -> list[list[str]]:
    graph = nx.DiGraph((top(src), top(dst)) for src, dst, _ in arrows)
    return sorted(sorted(cycle) for cycle in nx.simple_cycles(graph))


@pytest.fixture(scope="module")
def arrows() -> list[Arrow]:
    return project_arrows(ROOT)


def test_no_arrow_points_up_a_layer(arrows: list[Arrow]) -> None:
    assert wrong_way(arrows) == []


def test_no_import_cycle_between_packages(arrows: list[Arrow]) -> None:
    assert package_cycles(arrows) == []


def test_the_walk_sees_the_arrows_it_should(arrows: list[Arrow]) -> None:
    """A walker that read nothing would pass the rules: it must see known arrows."""
    pairs = {(src, dst) for src, dst, _ in arrows}
    assert ("orchestrator.loop.stages.context", "graph_server.store") in pairs  # top-level
    assert ("graph_server.tools", "corpus.documents") in pairs  # inside a function
    assert ("orchestrator.loop.driver", "corpus.evidence") in pairs
    assert ("evals.arms", "orchestrator.api") in pairs
    assert ("screen", "evals.grounding") in pairs
    assert len(source_files(ROOT)) > 60


ROOMS = ("llm", "reply", "records", "checks", "loop", "report", "api", "cli", "run")
"""orchestrator's rooms (its subpackages, then the top-level modules ``api`` and ``run``),
lowest first, as docs/architecture.md lists them: a room imports only rooms before it."""


def room(module: str) -> str:
    """``orchestrator.loop.stages.merge`` -> ``loop``; the package itself is ``orchestrator``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def rooms_out_of_order(root: Path) -> list[str]:
    """Each import between two of orchestrator's rooms that does not point to a lower room."""
    rank = {name: i for i, name in enumerate(ROOMS)}
    found = []
    for path in sorted((root / "orchestrator").rglob("*.py")):
        for src, dst, line in imports_of(path, root):
            if top(dst) != "orchestrator" or room(dst) == room(src) or room(dst) == "orchestrator":
                continue
            if rank.get(room(dst), len(ROOMS)) >= rank.get(room(src), -1):
                found.append(f"{src} -> {dst} (line {line})")
    return sorted(set(found))


def test_orchestrator_rooms_import_only_lower_rooms() -> None:
    assert rooms_out_of_order(ROOT) == []


def test_every_orchestrator_room_is_ranked_and_has_a_public_surface() -> None:
    rooms = {p.name for p in (ROOT / "orchestrator").iterdir() if (p / "__init__.py").exists()}
    assert rooms == set(ROOMS) - {"api", "run"}
    for name in sorted(rooms):
        init = (ROOT / "orchestrator" / name / "__init__.py").read_text()
        assert "__all__" in init, name


def public_names(root: Path, name: str) -> set[str]:
    """What room ``name`` offers the other rooms: the names its face's ``__all__`` lists (its
    ``__init__.py``, or the module itself for ``api`` and ``run``); none without a face."""
    face = root / "orchestrator" / name / "__init__.py"
    if not face.exists():
        face = root / "orchestrator" / f"{name}.py"
    if not face.exists():
        return set()
    for node in ast.parse(face.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


def reaches_past_a_face(root: Path) -> list[str]:
    """Each import from one of orchestrator's rooms into another that names more than the room
    and a name its face lists: an inner module, or a name taken from one. A module the face
    lists (a catalogue like ``orchestrator.reply.prompts``) may be imported whole."""
    public = {name: public_names(root, name) for name in ROOMS}
    found = []
    for path in sorted((root / "orchestrator").rglob("*.py")):
        for src, dst, line in imports_of(path, root):
            if top(dst) != "orchestrator" or room(dst) in (room(src), "orchestrator"):
                continue
            inner = dst.split(".")[2:]
            if inner and (len(inner) > 1 or inner[0] not in public.get(room(dst), set())):
                found.append(f"{src} -> {dst} (line {line})")
    return sorted(set(found))


def test_a_room_reaches_another_room_only_through_its_public_face() -> None:
    assert reaches_past_a_face(ROOT) == []


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Write a made-up source tree under ``root``: ``files`` maps each path to its text."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


UPWARD_IMPORT = {
    "orchestrator/__init__.py": "",
    "orchestrator/llm/__init__.py": "",
    "orchestrator/llm/client.py": "from orchestrator.loop.driver import run_loop\n",
    "orchestrator/loop/__init__.py": "",
    "orchestrator/loop/driver.py": "from orchestrator.llm.client import x\n",
}
INNER_MODULE_IMPORT = {
    "orchestrator/__init__.py": "",
    "orchestrator/reply/__init__.py": '__all__ = ["parse_graph", "prompts"]\n',
    "orchestrator/loop/__init__.py": "",
    "orchestrator/loop/driver.py": (
        "from orchestrator.reply import parse_graph, prompts\n"
        "from orchestrator.reply.parse import parse_graph\n"
        "from orchestrator.loop.calls import call\n"
        "def f():\n"
        "    from orchestrator.reply import schemas\n"
    ),
}


@pytest.mark.parametrize(
    ("rule", "files", "expected"),
    [
        pytest.param(
            rooms_out_of_order,
            UPWARD_IMPORT,
            [
                "orchestrator.llm.client -> orchestrator.loop.driver (line 1)",
                "orchestrator.llm.client -> orchestrator.loop.driver.run_loop (line 1)",
            ],
            id="room-rule-upward-import",
        ),
        pytest.param(
            reaches_past_a_face,
            INNER_MODULE_IMPORT,
            [
                "orchestrator.loop.driver -> orchestrator.reply.parse (line 2)",
                "orchestrator.loop.driver -> orchestrator.reply.parse.parse_graph (line 2)",
                "orchestrator.loop.driver -> orchestrator.reply.schemas (line 5)",
            ],
            id="face-rule-inner-module",
        ),
    ],
)
def test_a_rule_catches_its_kind_of_import_in_a_made_up_tree(
    tmp_path: Path,
    rule: Callable[[Path], list[str]],
    files: dict[str, str],
    expected: list[str],
) -> None:
    write_tree(tmp_path, files)
    assert rule(tmp_path) == expected


def corpus_modules_loaded_by(module: str) -> list[str]:
    code = f"import {module}, sys; print(*sorted(m for m in sys.modules if m.startswith('corpus')))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return done.stdout.split()


def test_the_corpus_package_loads_only_what_is_imported() -> None:
    """``corpus/__init__`` imports nothing up front: the graph server (its stopwords) and the
    loop (citation spans and how a sentence reads) do not load the index, the readers or
    retrieval. Both also load ``corpus.views``, type definitions only: the retrieved chunk
    the graph server's ``search_evidence`` answer is validated against and drawn from."""
    assert corpus_modules_loaded_by("graph_server.server") == [
        "corpus",
        "corpus.limits",
        "corpus.views",
        "corpus.words",
    ]
    assert corpus_modules_loaded_by("orchestrator.loop.driver") == [
        "corpus",
        "corpus.evidence",
        "corpus.limits",
        "corpus.reference",
        "corpus.views",
        "corpus.words",
    ]
    loaded = corpus_modules_loaded_by("corpus")
    assert loaded == ["corpus"]


def test_the_corpus_package_still_names_its_public_api() -> None:
    import corpus
    from corpus.retrieval import search

    assert corpus.search is search
    assert corpus.ingest is corpus.index.ingest_directory
    assert set(corpus.__all__) <= set(dir(corpus))
    with pytest.raises(AttributeError):
        _ = corpus.no_such_name


def test_the_rules_catch_a_wrong_way_arrow(tmp_path: Path) -> None:
    """The checker on a made-up tree: each kind of wrong-way arrow is reported, once."""
    files = {
        "corpus/__init__.py": "",
        "corpus/retrieval.py": "from graph_server.similarity import STOPWORDS\n",
        "graph_server/__init__.py": "",
        "graph_server/store.py": "def f():\n    from orchestrator import loop\n",
        "graph_server/server.py": "from corpus.documents import search_evidence\n",
        "orchestrator/__init__.py": "",
        "orchestrator/loop/driver.py": "from ...evals import run\nfrom graph_server import store\n",
        "evals/__init__.py": "",
        "evals/grounding_items.py": (
            "import importlib\nimportlib.import_module('orchestrator.records.task')\n"
        ),
        "evals/run.py": (
            "from orchestrator.loop.driver import x\nfrom orchestrator.cli.run import main\n"
        ),
        "screen.py": "from evals.run import main\nfrom evals.grounding import load_items\n",
    }
    write_tree(tmp_path, files)
    found = wrong_way(project_arrows(tmp_path))
    assert found == [
        "corpus.retrieval -> graph_server.similarity (line 1): corpus may not import "
        "graph_server (a higher layer)",
        "corpus.retrieval -> graph_server.similarity.STOPWORDS (line 1): corpus may not import "
        "graph_server (a higher layer)",
        "evals.grounding_items -> orchestrator.records.task (line 2): evals.grounding_items may "
        "import only nothing from the project",
        "evals.run -> orchestrator.cli.run (line 2): evals takes this from orchestrator.api, not "
        "orchestrator.cli",
        "evals.run -> orchestrator.cli.run.main (line 2): evals takes this from orchestrator.api, "
        "not orchestrator.cli",
        "graph_server.store -> orchestrator (line 2): graph_server may not import orchestrator "
        "(a higher layer)",
        "graph_server.store -> orchestrator.loop (line 2): graph_server may not import "
        "orchestrator (a higher layer)",
        "orchestrator.loop.driver -> evals (line 1): orchestrator may not import evals (a "
        "higher layer)",
        "orchestrator.loop.driver -> evals.run (line 1): orchestrator may not import evals (a "
        "higher layer)",
        "screen -> evals.run (line 1): screen.py may use only evals.grounding, its tables and "
        "evals.cli from evals",
        "screen -> evals.run.main (line 1): screen.py may use only evals.grounding, its tables "
        "and evals.cli from evals",
    ]
    assert package_cycles(project_arrows(tmp_path)) == [
        ["corpus", "graph_server"],
        ["evals", "orchestrator"],
        ["graph_server", "orchestrator"],
    ]
