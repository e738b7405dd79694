"""Over real stdio, every request gets a JSON-RPC reply, hostile ones included.

Each payload the issue found unanswered (nesting deeper than the protocol parser
allows, a lone surrogate escape) and a few more (invalid UTF-8, broken JSON, a
batch, a non-object) is sent to a spawned ``python -m graph_server.server``. Each
must be answered, with the request's id when the line carries one, promptly (the
replies take milliseconds; the bound is generous for slow machines), and the server
must keep serving. A cancelled long ingest either applies completely or not at all,
and its reply says which.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from raw_server import HELLO, raw_server

PROMPT_REPLY_S = 10.0
"""Generous bound on one reply (they take milliseconds); the point is: a reply comes."""

HOSTILE: list[tuple[str, bytes, Any]] = [
    (
        "deep_nesting_inside_arguments",
        b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"list_graphs",'
        b'"arguments":{"x":' + b"[" * 5000 + b"]" * 5000 + b"}}}",
        11,
    ),
    (
        "deep_nesting_too_deep_for_any_parser",
        b'{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"a":'
        + b"[" * 200_000
        + b"]" * 200_000
        + b"}}",
        "deep",
    ),
    (
        "nesting_of_300_levels",
        b'{"jsonrpc":"2.0","id":12,"method":"ping","params":{"a":'
        + b'{"b":' * 300
        + b"1"
        + b"}" * 300
        + b"}}",
        12,
    ),
    (
        "lone_surrogate_in_an_argument",
        b'{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"assert_graph",'
        b'"arguments":{"graph_id":"\\ud800","nodes":[]}}}',
        13,
    ),
    (
        "lone_surrogate_in_a_key",
        b'{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"list_graphs",'
        b'"arguments":{"\\udfff":1}}}',
        14,
    ),
    ("invalid_utf8", b'{"jsonrpc":"2.0","id":15,"method":"ping","x":"\xff\xfe"}', 15),
    ("broken_json_with_an_id", b'{"jsonrpc":"2.0","id":16,"method":', 16),
    ("not_json", b"hello there", None),
    ("a_batch", b'[{"jsonrpc":"2.0","id":17,"method":"ping"}]', None),
    ("wrong_version", b'{"jsonrpc":"1.0","id":18,"method":"ping"}', 18),
    ("a_bare_number", b"42", None),
]


def test_every_hostile_line_gets_a_prompt_json_rpc_error_and_the_server_keeps_serving(
    tmp_path: Path,
) -> None:
    with raw_server(tmp_path) as server:
        for case, line, request_id in HOSTILE:
            started = time.monotonic()
            server.send_line(line)
            reply = server.reply(timeout=PROMPT_REPLY_S)
            assert time.monotonic() - started < PROMPT_REPLY_S, case
            assert reply["jsonrpc"] == "2.0" and reply["id"] == request_id, (case, reply)
            assert reply["error"]["code"] in (-32700, -32600), (case, reply)
            assert reply["error"]["message"], case
        server.send_call(99, "list_graphs", {})
        answer = server.reply()
        assert answer["id"] == 99 and answer["result"]["isError"] is False


def test_a_hostile_notification_is_not_answered_but_the_next_request_is(tmp_path: Path) -> None:
    with raw_server(tmp_path) as server:
        server.send_line(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"s":"\\ud800"}}')
        server.send({"jsonrpc": "2.0", "id": 5, "method": "ping"})
        assert server.reply()["id"] == 5


def test_server_info_names_the_package_version_and_only_tools_are_advertised(
    tmp_path: Path,
) -> None:
    from graph_server.server import package_version

    with raw_server(tmp_path) as server:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO})
        result = server.reply()["result"]
        server.send({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"})
        prompts = server.reply()
    assert result["serverInfo"]["version"] == package_version() != ""
    assert set(result["capabilities"]) == {"tools"}
    assert prompts["error"]["code"] == -32601  # not offered, so not found


def test_a_cancelled_ingest_applies_all_or_nothing_and_its_reply_says_which(
    tmp_path: Path,
) -> None:
    nodes = [
        {
            "id": f"n{i}",
            "claim": f"the {word} report of unit {i % 97} lists crate c{i} as checked",
            "type": "given",
        }
        for i, word in enumerate(["audit", "safety", "board", "annual"] * 5000)
    ]
    with raw_server(tmp_path) as server:
        server.send_call(1, "assert_graph", {"graph_id": "big", "nodes": nodes})
        time.sleep(0.3)
        server.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 1, "reason": "user pressed stop"},
            }
        )
        reply = server.reply()
        server.send_call(2, "list_graphs", {})
        listed = server.reply()["result"]["structuredContent"]["graphs"]
    assert reply["id"] == 1
    result = reply["result"]
    if result["isError"]:
        assert "cancelled" in result["content"][0]["text"]
        assert "nothing from this call was applied" in result["content"][0]["text"]
        assert listed == []
    else:  # the cancel arrived after the commit point: everything is in
        assert len(result["structuredContent"]["accepted_nodes"]) == len(nodes)
        assert listed[0]["nodes"] == len(nodes)
