"""The corpus retrieval stage flags (docs/corpus.md, "Retrieval"), defined once for the run
commands (``python -m orchestrator.run``, ``logic-graph ask``) and ``logic-graph search``:
dense rankings, sub-questions, the entity graph's weight, the cross-encoder reranker, and, for
the run commands only (they need a model), the LLM reranker, HyDE and chunk headings."""

from __future__ import annotations

import argparse
from typing import Any

from corpus.rerank import RerankerUnavailable, check_cross_encoder
from orchestrator.records import RunConfig, TaskError


def add_stage_flags(
    parser: argparse.ArgumentParser, defaults: RunConfig, *, model_stages: bool
) -> None:
    """Add ``--dense``, ``--subquestions``, ``--entity-weight``, ``--reranker PATH`` and,
    with ``model_stages``, ``--rerank``, ``--hyde`` and ``--chunk-headings``."""
    _on_off(
        parser,
        "--dense",
        defaults.dense,
        "fuse the dense rankings of an index that holds vectors with the keyword (BM25) ones; "
        "keyword alone retrieved as well or better where measured",
    )
    _on_off(
        parser,
        "--subquestions",
        defaults.subquestions,
        "retrieve a question whose grammar gives a plan hop by hop, each sub-question filled "
        "with the bridge the hop before it found, no model call",
    )
    parser.add_argument(
        "--entity-weight",
        type=float,
        metavar="W",
        default=defaults.entity_weight,
        help="weight of the entity-graph ranking in the fusion, 0 to 100 "
        f"(default {defaults.entity_weight:g}: off)",
    )
    parser.add_argument(
        "--reranker",
        metavar="PATH",
        help="rerank a pool of twice the chunks asked for with the cross-encoder model in "
        "this folder (one you have: nothing is downloaded; needs the corpus-rerank extra)",
    )
    if not model_stages:
        return
    parser.add_argument(
        "--rerank",
        choices=("off", "llm"),
        default=defaults.rerank,
        help="'llm' reorders each round's pool of twice --retrieval-k chunks with one model "
        "call, keeping the fused order when the reply is not a valid ordering "
        f"(default {defaults.rerank})",
    )
    parser.add_argument(
        "--hyde",
        action="store_true",
        help="one model call writes a hypothetical answer passage whose dense ranking joins "
        "round 1 (needs --dense on; default off)",
    )
    _on_off(
        parser,
        "--chunk-headings",
        defaults.chunk_headings,
        "show and read each retrieved chunk under its heading (its section trail, else its "
        "file's title line)",
    )


def _on_off(parser: argparse.ArgumentParser, flag: str, default: bool, help_text: str) -> None:
    """Add ``flag`` taking ``on`` or ``off``, its default and ``help_text`` shown."""
    shown = "on" if default else "off"
    parser.add_argument(
        flag, choices=("on", "off"), default=shown, help=f"{help_text} (default {shown})"
    )


def stage_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`~orchestrator.records.RunConfig` fields the stage flags set. Raises
    :class:`~orchestrator.records.TaskError` when ``--rerank llm`` and ``--reranker`` are
    both given, or the cross-encoder cannot be used (no folder, no library), before any
    model is started."""
    rerank = getattr(args, "rerank", "off")
    if args.reranker is not None and rerank != "off":
        raise TaskError(f"--rerank {rerank} and --reranker PATH are both given; give one reranker")
    if args.reranker is not None:
        try:
            check_cross_encoder(args.reranker)
        except (ValueError, RerankerUnavailable) as exc:
            raise TaskError(f"--reranker: {exc}") from exc
    return {
        "dense": args.dense == "on",
        "subquestions": args.subquestions == "on",
        "entity_weight": args.entity_weight,
        "rerank": "cross-encoder" if args.reranker is not None else rerank,
        "reranker_path": args.reranker,
        "hyde": getattr(args, "hyde", False),
        "chunk_headings": getattr(args, "chunk_headings", "off") == "on",
    }
