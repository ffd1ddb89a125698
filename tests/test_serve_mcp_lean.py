"""The lean path of `/mcp` over HTTP (serve/mcp_lean.py) answers as the SDK's stateless server does:
the same requests posted to an app with the path on and to one with KYB_MCP_SDK=1 get the same
status, content type and JSON; and it takes only what it should (in process, Starlette's TestClient)."""

from __future__ import annotations

import json

import pytest

from test_mcp_lean import LEFT, TAKEN  # the stdio lean path's frames: what it answers and what it leaves

pytest.importorskip("starlette")
pytest.importorskip("mcp")

HEADERS = {"host": "127.0.0.1:8765", "content-type": "application/json",
           "accept": "application/json, text/event-stream"}
# Header sets: the first four the lean path takes; the others it leaves to the SDK (a 2026 or unknown
# version, JSON not accepted, a content type the SDK's two checks read differently).
TAKEN_HEADERS = [
    {},
    {"mcp-protocol-version": "2025-06-18"},
    {"mcp-protocol-version": "2024-11-05", "accept": "*/*"},
    {"accept": "application/json", "content-type": "application/json; charset=utf-8"},
]
LEFT_HEADERS = [
    {"mcp-protocol-version": "2026-07-28"},
    {"mcp-protocol-version": "1999-01-01"},
    {"accept": "text/event-stream"},
    {"content-type": "application/JSON"},
]


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    """Two apps on one stocked store: the lean path on, and off (KYB_MCP_SDK=1 when /mcp starts)."""
    from starlette.testclient import TestClient

    from kyb_cli import api
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    store = tmp_path_factory.mktemp("mcp-lean") / "store"
    api.init_store(store)
    api.add_knowledge(api.open_store(str(store)), key="port", title="Port", body="The port is 9090.", tags=[],
                      refs=[], attribution=api.attribution("test"))
    mp = pytest.MonkeyPatch()
    mp.setenv("KYB_DEADLINES", "off")
    clients = {}
    try:
        for sdk in (False, True):
            app = build_app(Door(store), bind_host="127.0.0.1", port_of=lambda: 8765, token=None)
            client = TestClient(app, raise_server_exceptions=False).__enter__()
            if sdk:
                mp.setenv("KYB_MCP_SDK", "1")
            client.post("/mcp", content=b'{"jsonrpc":"2.0","id":0,"method":"ping"}', headers=HEADERS)  # SDK starts
            mp.delenv("KYB_MCP_SDK", raising=False)
            clients["sdk" if sdk else "lean"] = client
        yield clients
    finally:
        for client in clients.values():
            client.__exit__(None, None, None)
        mp.undo()


def _post(client, frame: dict, headers: dict) -> tuple[int, str, object]:
    reply = client.post("/mcp", content=json.dumps(frame).encode(), headers=HEADERS | headers)
    body = reply.json() if reply.content and reply.headers.get("content-type", "").startswith("application/json") \
        else reply.text
    return reply.status_code, reply.headers.get("content-type", ""), body


def _taken(apps, monkeypatch) -> list:
    """Records each request the lean path answered (its reply was not None)."""
    from kyb_cli.serve.mcp_lean import LeanHttp

    seen, real = [], LeanHttp.reply

    async def spy(self, scope, frame, size):
        data = await real(self, scope, frame, size)
        if data is not None:
            seen.append(frame.get("id"))
        return data

    monkeypatch.setattr(LeanHttp, "reply", spy)
    return seen


@pytest.mark.parametrize("headers", TAKEN_HEADERS + LEFT_HEADERS)
def test_the_lean_path_of_mcp_over_http_answers_as_the_sdk_does(apps, monkeypatch, headers):
    seen = _taken(apps, monkeypatch)
    frames = [f for f in TAKEN + LEFT if f.get("params", {}).get("name") != "add"]
    for frame in frames:
        lean, sdk = _post(apps["lean"], frame, headers), _post(apps["sdk"], frame, headers)
        assert lean == sdk, (frame, headers)
    took = [f["id"] for f in TAKEN] if headers in TAKEN_HEADERS else []
    assert seen == took  # only the SDK path of the second app: it never took one
    if took:
        status, _type, body = _post(apps["lean"], TAKEN[0], headers)
        assert status == 200 and body["result"]["structuredContent"]["hits"][0]["key"] == "port"


def test_the_lean_path_leaves_writes_and_notifications_to_the_sdk(apps, monkeypatch):
    seen = _taken(apps, monkeypatch)
    write = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
             "params": {"name": "add", "arguments": {"key": "k2", "title": "T", "body": "b"}}}
    status, _type, body = _post(apps["lean"], write, {})
    assert status == 200 and not body["result"]["isError"], body
    status, _type, _body = _post(apps["lean"], {"jsonrpc": "2.0", "method": "notifications/initialized"}, {})
    assert status == 202
    assert seen == []
