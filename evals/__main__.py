"""``python -m evals``: the same as ``logic-graph eval`` (`evals.command`)."""

import sys

from evals.command import main

sys.exit(main())
