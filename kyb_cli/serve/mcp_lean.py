"""The lean path of `/mcp` over HTTP: a read tool's plain call answered without a per-request session.

In stateless mode the SDK answers each POST by building a transport, a dispatcher, a connection and
a task for it, then handing the message through memory streams: ~1.6 ms of a 5 ms lexical answer
on the runbooks (issue 38; `/search`, the same query without MCP, cost that much less). A POST that
is one handshake-era `tools/call` of a read tool, with headers the SDK takes without a word (JSON
accepted, `Content-Type: application/json` exactly, no protocol version or one of the handshake
versions), is answered here by the stdio lean path's own pieces (mcp/lean.py: the same params check,
the same `call_tool` on a worker thread as the SDK runs it, the same serialisation). Anything else —
another method, a write, a notification, a 2026 envelope or version header, an odd header — goes to
the SDK as before, so what the protocol answers stays the SDK's (tests/test_serve_mcp_lean.py
compares the two on the same requests). KYB_MCP_SDK=1 turns this path off, as on stdio.
"""

from __future__ import annotations

import json
import os
from typing import Any


class LeanHttp:
    """One MCP server's read calls over HTTP (the full or the read-only server of /mcp)."""

    def __init__(self, server: Any, max_body: int) -> None:
        from kyb_cli.mcp.lean import read_tools, usable

        self.server, self.max_body = server, max_body
        self.reads = read_tools(server)
        self.on = usable(server) and os.environ.get("KYB_MCP_SDK") != "1"

    async def reply(self, scope: dict, frame: Any, size: int) -> bytes | None:
        """The response body for `frame` (the POST's JSON, already through the frame guard), or None
        when the SDK must answer it."""
        from kyb_cli.mcp.lean import call_read, read_call

        if not (self.on and isinstance(frame, dict) and size <= self.max_body
                and set(frame) <= {"jsonrpc", "id", "method", "params"}):
            return None
        version = _plain_headers(scope)
        if version is None or not read_call(frame, self.reads, version):
            return None
        params = frame["params"]
        reply = await call_read(self.server, version, frame["id"], params["name"], params.get("arguments") or {})
        return json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode()


def _plain_headers(scope: dict) -> str | None:
    """The protocol version a stateless SDK server would answer at, when the headers are ones it
    takes without a word (the checks of its manager and transport, held to their strictest
    reading); else None."""
    from mcp.server.streamable_http import check_accept_headers
    from mcp_types import DEFAULT_NEGOTIATED_VERSION
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
    from starlette.requests import Request

    version = content_type = None
    for name, value in scope.get("headers", ()):
        if name == b"mcp-protocol-version":
            if version is not None:
                return None
            version = value.decode("latin-1")
        elif name == b"content-type":
            if content_type is not None:
                return None
            content_type = value.decode("latin-1")
    if content_type is None or content_type.split(";")[0].strip() != "application/json":
        return None
    if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    if not check_accept_headers(Request(scope))[0]:
        return None
    return DEFAULT_NEGOTIATED_VERSION if version is None else version
