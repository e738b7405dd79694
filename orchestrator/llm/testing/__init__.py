"""Test doubles for anything that talks to a model, shipped so every test suite can share them.

* :class:`FakeOpenAIServer` - a real OpenAI-compatible HTTP server on 127.0.0.1 (real sockets,
  real JSON, concurrent requests) whose answers a test scripts with :class:`FakeReply`
  (:mod:`._server`; the replies themselves in :mod:`._replies`).
* :func:`completion_body` - a well-formed chat-completions response body.
* :class:`ScriptedClient` - an in-process stand-in for :class:`orchestrator.llm.client.ChatClient`
  (same ``chat`` signature, a real :class:`CostLedger`), no sockets at all (:mod:`._scripted`);
  a :data:`Script` answers each call from its model, messages and :class:`ScriptedKwargs`.

Example::

    with FakeOpenAIServer(lambda req, headers: FakeReply(body=completion_body("hi"))) as srv:
        client = ChatClient(srv.base_url, backoff_base_s=0.01)
        assert client.chat("m", [{"role": "user", "content": "x"}]).text == "hi"
"""

from orchestrator.llm.testing._replies import FakeReply, FakeRequest, completion_body
from orchestrator.llm.testing._scripted import (
    Script,
    ScriptedClient,
    ScriptedKwargs,
    ScriptExhaustedError,
)
from orchestrator.llm.testing._server import FakeOpenAIServer

__all__ = [
    "FakeOpenAIServer",
    "FakeReply",
    "FakeRequest",
    "Script",
    "ScriptExhaustedError",
    "ScriptedClient",
    "ScriptedKwargs",
    "completion_body",
]
