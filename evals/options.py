"""The settings of the evaluation library's entry points, one typed record each.

`RunOptions` is what `evals.run.evaluate` takes, `ReplayOptions` what `evals.replay.replay`
takes and `RecordOptions` what `evals.record.record` takes. The command line
(`evals.command`) only turns its flags into these; every default lives here, and the flags'
defaults are read from these records, so a library call and the command mean the same run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

REPO = Path(__file__).resolve().parents[1]
DEFAULT_MODELS_FILE = REPO / "models.json"
ALL_ARMS = (1, 2, 3, 4, 5, 6, 7)


@dataclass(frozen=True)
class RunOptions:
    """One evaluation invocation: which items, which arms, which model and arm settings.

    ``arms``: the arm numbers (arm 7 takes as many samples as arm 6 made calls per item);
    ``limit`` / ``skip``: the data set's first ``limit`` items without the first ``skip``;
    ``model``: None for ``default_model`` of ``models_file``; ``out`` / ``resume``: the
    results folder (None: a new runstamp folder); ``max_cost``: the USD cap of this
    invocation; ``n``, ``k``, ``budget_calls``, ``temp``: arm 6's interrogations, target
    width, calls per item and temperature; ``sample_temp``: arm 7's temperature when it
    differs from ``temp``; ``shape``: arm 6's interrogation shape (None: the model's own);
    ``diversity``, ``leave_out``, ``adaptive``, ``hops``: how arm 6 spends calls past its
    first run; ``prompt_layout``: where arm 6's prompts put the evidence; ``jobs``: items at
    a time against a server backend; ``context_tokens``: the context window arm 6 fits the
    documents into (None: the backend's, as ``orchestrator.run`` takes it; a resumed run
    keeps the window it recorded).
    """

    dataset: str
    format: str | None = None
    arms: tuple[int, ...] = ALL_ARMS
    limit: int | None = None
    skip: int = 0
    model: str | None = None
    base_url: str | None = None
    models_file: Path = DEFAULT_MODELS_FILE
    max_cost: float = 1.0
    allow_unknown_cost: bool = False
    out: Path | None = None
    resume: str | None = None
    max_tokens: int = 512
    temperature: float = 0.0
    seed: int = 0
    n: int = 3
    k: int = 2
    budget_calls: int = 12
    temp: float = 0.8
    sample_temp: float | None = None
    structured_output: str = "auto"
    jobs: int = 1
    shape: str | None = None
    greedy_first: bool = False
    think_first: bool = False
    diversity: str = "sample"
    leave_out: bool = False
    adaptive: bool = False
    hops: str = "off"
    prompt_layout: str = "classic"
    context_tokens: int | None = None


@dataclass(frozen=True)
class ReplayOptions:
    """One replay: the banks (the first supplies the data set, model and settings), the
    folder to write, and the settings that override the first bank's (None / False: the
    bank's own). ``backend`` makes the requests the banks lack live; without it they fail
    as *unavailable*."""

    banks: tuple[Path, ...]
    out: Path
    arms: tuple[int, ...] | None = None
    n: int | None = None
    k: int | None = None
    budget_calls: int | None = None
    seed: int | None = None
    temp: float | None = None
    sample_temp: float | None = None
    shape: str | None = None
    greedy_first: bool = False
    diversity: str | None = None
    leave_out: bool = False
    adaptive: bool = False
    hops: str | None = None
    prompt_layout: str | None = None
    backend: str | None = None
    base_url: str | None = None
    models_file: Path = DEFAULT_MODELS_FILE


@dataclass(frozen=True)
class RecordOptions:
    """A recording of reply banks for several sets, one item of each set at a time (see
    `evals.record`): ``items`` per set from item count ``start`` on, each set's first
    ``skip`` items left out; ``samples`` arm 6 interrogations at ``temp`` within
    ``budget_calls``; ``greedy`` (with ``hops``) records the one-greedy-run setting instead."""

    model: str
    sets: tuple[str, ...]
    items: int
    root: Path = Path("evals/banks")
    samples: int = 6
    budget_calls: int = 9
    temp: float = 0.8
    seed: int = 1
    max_tokens: int = 512
    start: int = 1
    skip: int = 0
    shape: str = "graph"
    greedy: bool = False
    hops: bool = False


Options = TypeVar("Options", bound="DataclassInstance")


def from_flags(kind: type[Options], values: Mapping[str, Any]) -> Options:
    """A ``kind`` record from parsed flags: the entries named like its fields (argparse's
    namespace also holds the subcommand's own entries)."""
    names = {f.name for f in fields(kind)}
    return kind(**{key: value for key, value in values.items() if key in names})
