"""The control loop: a driver over named stages, its rules, and the calls it makes.

- :mod:`.driver`: fan out, merge, assess, re-interrogate, stop, decide;
- :mod:`.stages`: each stage with typed input and output;
- :mod:`.policy`: the loop's rules as pure functions; :mod:`.budget`: the call cap;
- :mod:`.calls`: the one place a model call is made and recorded; :mod:`.trace`: the trace;
- :mod:`.context_window`: evidence fitted into the model's window;
- :mod:`.corpus_mode`: retrieval rounds around the loop for corpus tasks, over
  :mod:`.corpus_search` (what a round retrieves) and :mod:`.corpus_calls` (its model calls:
  the rewrite, the LLM reranker, the HyDE passage).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from orchestrator.loop.context_window import fit_documents
from orchestrator.loop.driver import LoopResult, Progress, run_loop
from orchestrator.loop.trace import Trace, TraceEvent

if TYPE_CHECKING:
    from orchestrator.loop.corpus_calls import hypothetical_passage, rerank_by_model
    from orchestrator.loop.corpus_mode import CorpusRun, check_corpus, run_corpus_task
    from orchestrator.loop.corpus_search import Reranker, first_round, search_question

# The corpus rounds load the corpus index, its readers and retrieval; a run over inline
# documents never needs them, so their names are imported on first use (PEP 562).
_CORPUS_NAMES = {
    "CorpusRun": "corpus_mode",
    "check_corpus": "corpus_mode",
    "run_corpus_task": "corpus_mode",
    "Reranker": "corpus_search",
    "first_round": "corpus_search",
    "search_question": "corpus_search",
    "hypothetical_passage": "corpus_calls",
    "rerank_by_model": "corpus_calls",
}


def __getattr__(name: str) -> Any:
    if name in _CORPUS_NAMES:
        return getattr(import_module(f"orchestrator.loop.{_CORPUS_NAMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CorpusRun",
    "LoopResult",
    "Progress",
    "Reranker",
    "Trace",
    "TraceEvent",
    "check_corpus",
    "first_round",
    "fit_documents",
    "hypothetical_passage",
    "rerank_by_model",
    "run_corpus_task",
    "run_loop",
    "search_question",
]
