"""What a model is asked, and how its reply is read.

- :mod:`.prompts`: the named, versioned prompt templates;
- :mod:`.schemas`: the bounded JSON schemas sent as ``response_format``;
- :mod:`.parse`: replies turned into validated graphs, chains, plans and verdicts, never a crash;
- :mod:`.fields`, :mod:`.top`: lenient readers of a reply's fields;
- :mod:`.graph_shape`, :mod:`.chain_shape`, :mod:`.hop_shape`, :mod:`.verdict_shape`: one
  module per reply shape;
- :mod:`.compliance`: per-model counts of how replies parsed.
"""
