"""The lean path of `kyb mcp` (mcp/lean.py) gives the SDK's replies: the same frames through both,
in process, then through two real `kyb mcp` processes (lean, and KYB_MCP_SDK=1), malformed frames too."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402


def _init(version: str = "2025-06-18", rid: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(rid, name, arguments=..., **params) -> dict:
    body = {"name": name, **params} | ({} if arguments is ... else {"arguments": arguments})
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": body}


# Frames the lean path answers: a query, a bad type, an unknown argument, a NUL, no or null arguments,
# a KybError (not found), the core's bound check, a string id, a progress token.
TAKEN = [
    _call(10, "query", {"text": "port", "semantic": False}),
    _call(11, "query", {"text": "x", "limit": "many"}),
    _call(12, "query", {"txt": "x"}),
    _call(13, "query", {"text": "a\x00b"}),
    _call(14, "query"),
    _call(15, "query", None),
    _call(16, "get", {"key": "no-such-key"}),
    _call(17, "query", {"text": "x", "limit": 0, "semantic": False}),
    _call("s", "get", {"key": "port"}),
    _call(18, "query", {"text": "port", "semantic": False}, _meta={"progressToken": 1}),
]
# Frames it leaves to the SDK: not a read tool's plain call.
LEFT = [
    {"jsonrpc": "2.0", "id": 20, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 21, "method": "ping"},
    {"jsonrpc": "2.0", "id": 22, "method": "no/such"},
    {"jsonrpc": "2.0", "id": 23, "method": "resources/list"},
    _call(24, "nope", {}),
    _call(25, "add", {"key": "k", "title": "T", "body": "b"}),
    _call(26, "query", {"text": "port"}, _meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
    _call(27, ["query"], {}),
    _call(28, "query", {"text": "x"}, extra=1),
    _call(29, "query", [1]),
]


class _Wire:
    """The lean path's writer, keeping each reply."""

    def __init__(self) -> None:
        self.writer, self.replies = self, []

    def write(self, data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1  # one line per reply
        self.replies.append(json.loads(data))

    async def flush(self) -> None:
        pass


def _server(store_path):
    from kyb_cli.mcp.server import answer_reads_inline, build_server

    server = build_server(str(store_path))
    answer_reads_inline(server)
    return server


async def _sdk(server, frames: list[dict]) -> dict:
    """The SDK's replies to `frames`, by id (its own loop over memory streams)."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    send_in, receive_in = anyio.create_memory_object_stream(100)
    send_out, receive_out = anyio.create_memory_object_stream(100)
    low = server._lowlevel_server
    replies = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(low.run, receive_in, send_out, low.create_initialization_options())
        for frame in frames:
            await send_in.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(frame)))
            if "id" in frame:
                message = (await receive_out.receive()).message
                reply = json.loads(message.model_dump_json(by_alias=True, exclude_unset=True))
                replies[json.dumps(reply["id"])] = reply
        await send_in.aclose()
    return replies


async def _lean(server, frames: list[dict]) -> tuple[dict, list[dict]]:
    """The lean path's replies by id, and the frames it left to the SDK."""
    from kyb_cli.mcp.lean import Lean

    wire = _Wire()
    lean, left = Lean(server, wire), []
    for frame in frames:
        if await lean.answer(frame):
            continue
        lean.observe(frame)
        left.append(frame)
    return {json.dumps(r["id"]): r for r in wire.replies}, left


@pytest.fixture
def stocked(store):
    from kyb_cli import api

    api.add_knowledge(store, key="port", title="Port", body="The port is 9090.", tags=[], refs=[],
                      attribution=api.attribution("test"))
    return store


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_the_lean_path_answers_a_read_tools_call_as_the_sdk_does(stocked, monkeypatch, version):
    monkeypatch.setenv("KYB_DEADLINES", "off")
    server = _server(stocked.path)
    opening = [_init(version), INITIALIZED]
    sdk = anyio.run(_sdk, server, opening + TAKEN)
    lean, left = anyio.run(_lean, server, opening + TAKEN + LEFT)
    assert left == opening + LEFT  # every frame it does not know is the SDK's, as is the handshake
    assert set(lean) == {json.dumps(f["id"]) for f in TAKEN}
    for rid, reply in lean.items():
        assert reply == sdk[rid], rid
    assert lean["10"]["result"]["structuredContent"]["hits"][0]["key"] == "port"
    assert lean["12"]["result"]["isError"] and "txt" in lean["12"]["result"]["content"][0]["text"]


def test_no_lean_answer_before_the_handshake_or_on_a_2026_connection(stocked):
    from kyb_cli.mcp.lean import Lean

    server = _server(stocked.path)
    query = _call(2, "query", {"text": "port"})
    _, left = anyio.run(_lean, server, [_init(), query])  # initialize given, initialized not yet
    assert left[-1] == query
    modern = {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
              "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}
    _, left = anyio.run(_lean, server, [modern, _init(rid=2), INITIALIZED, query])
    assert left[-1] == query
    lean = Lean(server, _Wire())
    lean.observe({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 5}})
    lean.observe(INITIALIZED)  # a refused initialize leaves the SDK's seed version, as the SDK does
    assert lean.ready and lean.version == "2025-11-25"


def _spawn_replies(store_path, data: bytes, sdk: bool) -> list[dict]:
    env = {k: v for k, v in os.environ.items() if k not in ("KYB_STORE", "KYB_MCP_SDK")} | {"KYB_DEADLINES": "off"}
    if sdk:
        env["KYB_MCP_SDK"] = "1"
    proc = subprocess.run([sys.executable, "-m", "kyb_cli", "mcp", "--store", str(store_path)], input=data,
                          capture_output=True, env=env, timeout=120)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.slow  # two real servers (the process boundary is the contract: fd 0 and fd 1 are pipes)
def test_kyb_mcp_answers_every_frame_as_its_sdk_path_does(stocked):
    frames = [_init(), INITIALIZED, *TAKEN, *[f for f in LEFT if f.get("params", {}).get("name") != "add"],
              {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10}}]
    raw = [b"not json\n", b"[1]\n", b'{"jsonrpc":"2.0","id":40}\n',  # the frame guard's answers, then a ping
           b'{"jsonrpc":"2.0","id":41,"method":"x","params":[]}\n', b'{"jsonrpc":"2.0","method":"x","params":[]}\n',
           b'{"jsonrpc":"2.0","id":42,"method":"ping"}\n']
    data = b"".join(json.dumps(f).encode() + b"\n" for f in frames) + b"".join(raw)
    lean, sdk = _spawn_replies(stocked.path, data, False), _spawn_replies(stocked.path, data, True)
    by_id = {json.dumps(r.get("id")): r for r in sdk}
    assert len(lean) == len(sdk) == len(by_id) + 1  # two replies without an id (not JSON, a batch)
    for reply in lean:  # the same reply to every frame; the order may differ (the SDK answers concurrently)
        if reply.get("id") is not None:
            assert reply == by_id[json.dumps(reply["id"])]
    assert sorted(json.dumps(r) for r in lean if r.get("id") is None) == sorted(
        json.dumps(r) for r in sdk if r.get("id") is None)


def test_no_lean_path_while_a_tracer_records_the_sdks_spans(stocked, monkeypatch):
    from opentelemetry import trace

    from kyb_cli.mcp.lean import Lean

    class Recording(trace.TracerProvider):
        def get_tracer(self, *args, **kwargs):
            return trace.NoOpTracer()

    server = _server(stocked.path)
    assert Lean(server, _Wire()).usable
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: Recording())
    assert not Lean(server, _Wire()).usable
