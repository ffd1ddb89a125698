"""One input through each door in process: MCP (the stdio server's tools, as `kyb mcp` serves them)
and the HTTP API (`kyb serve`'s ASGI app); the CLI is the `cli` fixture (tests/conftest.py)."""

from __future__ import annotations

import subprocess
from typing import Any

HOST = {"host": "127.0.0.1:8765"}


def head(store_path) -> str:
    return subprocess.run(["git", "-C", str(store_path), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def mcp_call(store_path, tool: str, arguments: dict[str, Any]):
    """(is_error, text, exit_code or None) of one MCP tool call."""
    import anyio

    from kyb_cli.mcp.server import build_server

    reply = anyio.run(build_server(str(store_path)).call_tool, tool, arguments)
    error = (reply.structured_content or {}).get("error") or {}
    return reply.is_error, reply.content[0].text if reply.content else "", error.get("exit_code")


def http(store_path):
    """A TestClient on `kyb serve`'s app (use as a context manager; pass headers=HOST)."""
    from starlette.testclient import TestClient

    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    app = build_app(Door(store_path), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    return TestClient(app, raise_server_exceptions=False, base_url="http://127.0.0.1:8765")
