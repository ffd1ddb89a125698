"""Issue 37, item 2: every MCP door refuses an argument it does not know. A misspelled `att` on `get`
answered the current version as if the revision were honoured, `txt`/`limt` on `query` were dropped;
now each is an error result (exit 2: usage) naming the argument, the known ones and the close one,
and every tool's schema says so: `required` from the operation table, `additionalProperties: false`.

In process: the server `kyb mcp` serves over stdio, through the SDK's own client (in memory), and
`/mcp` of `kyb serve`, through JSON-RPC frames to the ASGI app."""

from __future__ import annotations

import json

import anyio
import pytest

pytest.importorskip("mcp")

from kyb_cli import api  # noqa: E402
from kyb_cli.api.operations import OPERATIONS  # noqa: E402

MISSPELLED = [  # (tool, arguments, the unknown name, the name it is close to)
    ("get", {"key": "redis-eviction", "att": "HEAD~1"}, "att", "at"),
    ("query", {"txt": "redis"}, "txt", "text"),
    ("query", {"text": "redis", "limt": 1}, "limt", "limit"),
    ("add", {"key": "k", "title": "T", "body": "b", "tag": ["x"]}, "tag", "tags"),
]
HEADERS = {"host": "127.0.0.1:8765", "content-type": "application/json",
           "accept": "application/json, text/event-stream"}


def _table_required(tool: str) -> list[str]:
    operation = next(op for op in OPERATIONS.values() if op.tool == tool)
    return [f.name for f in operation.fields_of("mcp") if f.required]


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "store"
    api.init_store(path)
    return path


def _stdio_server(store):
    from kyb_cli.mcp.server import build_server

    return build_server(str(store))  # what `kyb mcp --store …` serves over stdio


def _over_client(server, *calls):
    """Each (tool, arguments) through the SDK's client connected in memory; the results, and tools/list."""
    from mcp import Client

    async def run():
        async with Client(server) as client:
            listed = (await client.list_tools()).tools
            return listed, [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(run)


def _http(store):
    from starlette.testclient import TestClient

    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    return TestClient(build_app(Door(store), bind_host="127.0.0.1", port_of=lambda: 8765, token=None),
                      raise_server_exceptions=False)


def _frame(client, method: str, params: dict) -> dict:
    reply = client.post("/mcp", content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
                        headers=HEADERS)
    assert reply.status_code == 200, reply.text
    return reply.json()["result"]


def _assert_refused(text: str, error: dict, tool: str, name: str, close: str) -> None:
    assert error["exit_code"] == 2 and error["kind"] == "usage", error
    assert f"unknown argument '{name}'" in text and f"did you mean '{close}'" in text, text
    assert text.startswith(f"kyb: {tool}: ") and text.endswith("(exit 2: usage)"), text
    known = error["message"].split("Known: ", 1)[1]
    assert close in known.rstrip(".").split(", "), error["message"]


def _head(store) -> str | None:
    return api.open_store(str(store)).head_sha()


@pytest.mark.parametrize("tool,arguments,name,close", MISSPELLED, ids=[f"{c[0]}-{c[2]}" for c in MISSPELLED])
def test_stdio_mcp_refuses_a_misspelled_argument_naming_it_and_the_known_ones(store, tool, arguments, name, close):
    before = _head(store)
    _listed, [result] = _over_client(_stdio_server(store), (tool, arguments))
    assert result.is_error
    _assert_refused(result.content[0].text, result.structured_content["error"], tool, name, close)
    assert _head(store) == before  # nothing written, nothing answered


@pytest.mark.parametrize("tool,arguments,name,close", MISSPELLED, ids=[f"{c[0]}-{c[2]}" for c in MISSPELLED])
def test_http_mcp_refuses_a_misspelled_argument_naming_it_and_the_known_ones(store, tool, arguments, name, close):
    before = _head(store)
    with _http(store) as client:
        result = _frame(client, "tools/call", {"name": tool, "arguments": arguments})
    assert result["isError"]
    _assert_refused(result["content"][0]["text"], result["structuredContent"]["error"], tool, name, close)
    assert _head(store) == before


def test_an_unknown_argument_with_no_close_name_is_refused_listing_the_known_ones(store):
    _listed, [result] = _over_client(_stdio_server(store), ("history", {"key": "k", "zzzzzz": 1}))
    text = result.content[0].text
    assert result.is_error and "unknown argument 'zzzzzz'" in text and "did you mean" not in text
    assert "Known: key." in text and result.structured_content["error"]["exit_code"] == 2


def test_a_missing_required_argument_is_refused_as_a_usage_error_on_both_doors(store):
    _listed, [result] = _over_client(_stdio_server(store), ("get", {}))
    assert result.is_error and result.structured_content["error"]["exit_code"] == 2
    assert "key: required" in result.content[0].text
    with _http(store) as client:
        reply = _frame(client, "tools/call", {"name": "add", "arguments": {"key": "k", "body": "b"}})
    assert reply["isError"] and reply["structuredContent"]["error"]["exit_code"] == 2
    assert "title: required" in reply["content"][0]["text"]


def test_the_right_spelling_still_answers(store):
    _listed, results = _over_client(_stdio_server(store),
                                    ("add", {"key": "redis-eviction", "title": "T", "body": "b"}),
                                    ("query", {"text": "redis", "limit": 1}))
    assert not any(r.is_error for r in results), [r.content[0].text for r in results]


def test_every_tool_schema_has_the_tables_required_fields_and_no_additional_properties(store):
    listed, _ = _over_client(_stdio_server(store))
    with _http(store) as client:
        over_http = _frame(client, "tools/list", {})["tools"]
    assert len(listed) == len(over_http) >= 20
    for schema in [t.input_schema for t in listed] + [t["inputSchema"] for t in over_http]:
        name = schema["title"].removesuffix("Arguments")
        assert schema["additionalProperties"] is False, name
        assert schema["required"] == _table_required(name), name
        assert set(schema["required"]) <= set(schema["properties"]), name
