"""Issue 24 failure 8 over HTTP: `/mcp` of `kyb serve` answers every malformed JSON-RPC body with
the JSON-RPC error the stdio door gives (the one frame guard, mcp/frames.py), or a 4xx with
{error, exit_code, kind} when there is no request to answer — never a 500, an empty reply or a hang.
In process, through Starlette's TestClient (the app's lifespan starts the MCP session managers)."""

from __future__ import annotations

import pytest

from test_hostile_round_two_more import MALFORMED  # the stdio door's malformed frames: the same answers here

pytest.importorskip("starlette")
pytest.importorskip("mcp")

HEADERS = {"host": "127.0.0.1:8765", "content-type": "application/json",
           "accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from starlette.testclient import TestClient

    from kyb_cli import api
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    store = tmp_path_factory.mktemp("mcp-frames") / "store"
    api.init_store(store)
    app = build_app(Door(store), bind_host="127.0.0.1", port_of=lambda: 8765, token=None)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def _post(client, body: bytes):
    reply = client.post("/mcp", content=body, headers=HEADERS)
    assert reply.status_code < 500 and reply.content, (body[:80], reply.status_code, reply.text[:300])
    assert "Traceback" not in reply.text and "validation error" not in reply.text.lower(), reply.text[:300]
    return reply.status_code, reply.json()


def test_failure_8_http_mcp_every_malformed_frame_gets_the_json_rpc_error_stdio_gives(client):
    for frame, code, rid in MALFORMED:
        status, reply = _post(client, frame)
        assert status == 400 and reply["error"]["code"] == code and reply["id"] == rid, (frame[:80], reply)
    status, reply = _post(client, b'{"jsonrpc":"2.0","id":99,"method":"tools/list"}')
    assert status == 200 and "tools" in reply["result"]


@pytest.mark.parametrize("body,code", [
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"\xff"}}', -32700),  # not UTF-8
    (b'{"a":' * 1000 + b'1' + b'}' * 1000, -32700),  # deep nesting inside an object
    (b'[1, "garbage", {"x": []}]', -32600),  # a batch of garbage
    (b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"get"}', -32602),
])
def test_failure_8_http_mcp_bodies_of_any_shape_get_a_json_rpc_error(client, body, code):
    status, reply = _post(client, body)
    assert status == 400 and reply["error"]["code"] == code, reply


@pytest.mark.parametrize("body", [b"", b"  \r\n", b'{"jsonrpc":"2.0","method":"notifications/x","params":3}'])
def test_failure_8_http_mcp_a_body_with_no_request_to_answer_is_a_usage_refusal_not_an_empty_reply(client, body):
    status, reply = _post(client, body)
    assert status == 400 and reply["exit_code"] == 2 and reply["kind"] == "usage" and reply["error"], reply


def test_failure_8_http_mcp_a_lone_surrogate_in_a_tool_argument_is_the_tool_error_naming_it(client):
    body = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get","arguments":{"key":"a\\ud800"}}}'
    status, reply = _post(client, body)
    assert status == 200 and reply["id"] == 5 and reply["result"]["isError"] is True, reply
    error = reply["result"]["structuredContent"]["error"]
    assert error["exit_code"] == 2 and "argument 'key'" in error["message"] and "surrogate" in error["message"]


@pytest.mark.parametrize("media", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_failure_8_http_mcp_a_body_not_sent_as_json_is_the_usage_refusal_every_route_gives(client, media):
    headers = {**HEADERS, "content-type": media} if media else {k: v for k, v in HEADERS.items() if k != "content-type"}
    reply = client.post("/mcp", content=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', headers=headers)
    assert reply.status_code == 400, reply.text
    body = reply.json()
    assert body["exit_code"] == 2 and body["kind"] == "usage" and "application/json" in body["error"], body


def test_bad_text_finds_a_surrogate_as_the_per_character_rule_does():
    """bad_text asks the UTF-8 encoder (C) instead of testing each character: the same answer for
    ASCII, other scripts, emoji, NUL and every surrogate, alone or paired, anywhere in the text."""
    from kyb_cli.mcp.frames import bad_text

    def rule(text: str):
        if "\x00" in text:
            return "", "a NUL character"
        if any("\ud800" <= ch <= "\udfff" for ch in text):
            return "", "a lone surrogate (not Unicode text)"
        return None

    texts = ["", "plain", "café", "日本語", "🙂 ok", "a\x00b", "\ud800", "x\udfffy", "\ud83d\ude42", "\ud7ff\ue000",
             "é\ud800", "\x00\ud800"]
    for text in texts:
        assert bad_text(text) == rule(text), repr(text)
