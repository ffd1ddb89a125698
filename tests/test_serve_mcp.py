"""MCP over streamable HTTP at /mcp, through the official SDK client: the tools of `kyb mcp`."""

from __future__ import annotations

from contextlib import asynccontextmanager

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("mcp.client.streamable_http")

from anyio.from_thread import start_blocking_portal  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from tests.support.serve_proc import Served  # noqa: E402
from tests.test_mcp_server import READ_ONLY, TOOLS  # noqa: E402
from tests.test_serve_http import Cli, world  # noqa: E402


@asynccontextmanager
async def _session(url: str, headers: dict[str, str] | None = None):
    import httpx2

    async with httpx2.AsyncClient(headers=headers or {}, timeout=60) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                yield session


class Client:
    def __init__(self, portal, session):
        self.portal, self.session = portal, session

    def tools(self) -> set[str]:
        return {t.name for t in self.portal.call(self.session.list_tools).tools}

    def call(self, name: str, **arguments):
        return self.portal.call(lambda: self.session.call_tool(name, arguments))


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp-http")
    env = world(root)
    store = root / "store"
    cli = Cli(store, env)
    assert cli("init", str(store)).returncode == 0
    server = Served.start(store, env=env)
    yield server, cli
    server.stop()


def connect(portal, url: str, headers: dict[str, str] | None = None):
    return portal.wrap_async_context_manager(_session(url, headers))


def test_mcp_over_http_lists_the_tools_of_kyb_mcp_and_writes_land_in_git(setup):
    server, cli = setup
    with start_blocking_portal() as portal:
        with connect(portal, f"{server.base}/mcp", {"X-Kyb-Agent": "http-mcp-agent"}) as session:
            client = Client(portal, session)
            assert client.tools() == TOOLS
            wrote = client.call("add", key="mcp-http-fact", title="Over MCP HTTP", body="written via /mcp")
            assert not wrote.is_error, wrote.content[0].text
            sha = wrote.structured_content["sha"]
            got = client.call("get", key="mcp-http-fact")
            assert got.structured_content["sha"] == sha
            missing = client.call("get", key="no-such-key")
            assert missing.is_error and missing.content[0].text.endswith("(exit 1: not_found)")
    row = cli.json("history", "mcp-http-fact")["versions"][0]
    assert (row["sha"], row["transport"], row["agent"]) == (sha, "mcp", "http-mcp-agent")
    cli.json("add", "--key", "mcp-http-fact", "--title", "From the CLI", "--body", "cli wins")
    with start_blocking_portal() as portal:
        with connect(portal, f"{server.base}/mcp") as session:
            assert Client(portal, session).call("get", key="mcp-http-fact").structured_content["title"] == "From the CLI"


def test_readonly_query_parameter_hides_the_write_tools(setup):
    server, _cli = setup
    with start_blocking_portal() as portal:
        with connect(portal, f"{server.base}/mcp?readonly=1") as session:
            client = Client(portal, session)
            assert client.tools() == READ_ONLY
            refused = client.call("add", key="sneaky", title="no")
            assert refused.is_error


def test_readonly_server_offers_only_read_tools_at_mcp(tmp_path):
    from kyb_cli.api import init_store

    init_store(tmp_path / "store")
    server = Served.start(tmp_path / "store", "--readonly", env=world(tmp_path))
    try:
        with start_blocking_portal() as portal:
            with connect(portal, f"{server.base}/mcp?readonly=0") as session:
                assert Client(portal, session).tools() == READ_ONLY
    finally:
        server.stop()
