"""The mechanical checks on an argument: no model is asked anything here.

- :mod:`.question`: what a question asks, read from its words;
- :mod:`.arithmetic`: equations a claim writes out, and whether they hold (and their LaTeX
  as plain text, for a person to read);
- :mod:`.derivation`: the argument graph of plain-text working (the worked shape);
- :mod:`.anchor`: a parsed run anchored to the evidence (citations, givens);
- :mod:`.chain`: is an argument about the question, and does each link hold; its parts
  :mod:`.links` (the links), :mod:`.follows` (an answer on its argument) and :mod:`.asserted`
  (what a sentence asserts);
- :mod:`.decompose`, :mod:`.hops`: a multi-hop question's plan, and the hop-by-hop rules;
- :mod:`.assess`: what the merged graph says now (ranked candidates, disputed claims).

Other rooms take what they use from here by name, except the hop rules: ``hops`` comes whole,
read as ``hops.Hop``, ``hops.FOUND``, ``hops.plan_problem``.
"""

from orchestrator.checks import hops
from orchestrator.checks.anchor import ANSWER_PREFIX, AnchoredRun, anchor_run
from orchestrator.checks.arithmetic import readable_latex
from orchestrator.checks.assess import Assessment, Candidate, assess
from orchestrator.checks.chain import ChainContext
from orchestrator.checks.decompose import decompose, hops_in_force
from orchestrator.checks.derivation import parse_worked

__all__ = [
    "ANSWER_PREFIX",
    "AnchoredRun",
    "Assessment",
    "Candidate",
    "ChainContext",
    "anchor_run",
    "assess",
    "decompose",
    "hops",
    "hops_in_force",
    "parse_worked",
    "readable_latex",
]
