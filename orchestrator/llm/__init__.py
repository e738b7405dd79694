"""Talking to a model: the chat seam, the HTTP client and its guard, pricing, built-in models.

Everything that sends a request to a model or serves one lives here, and nothing here knows
about graphs, questions or reports:

- :mod:`.chat`: the one chat seam (request type, client base class, middleware);
- :mod:`.client` with :mod:`._transport`, :mod:`._request`, :mod:`._response`, :mod:`._guard`,
  :mod:`._ledger`: the OpenAI-compatible client, its retries, watchdog and cost ledger;
- :mod:`.errors`: the typed exception tree;
- :mod:`._pricing`: per-token prices from models.json;
- :mod:`.backend`: a model name turned into a ready client; :mod:`.probe`: the server's window;
- :mod:`.local`, :mod:`.local_models`, :mod:`.serve_front`: the built-in llama.cpp models and
  ``logic-graph serve``;
- :mod:`.testing`: scripted clients and a fake server for tests.
"""
