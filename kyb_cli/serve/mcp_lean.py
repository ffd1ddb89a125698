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

import functools
import json
import os
from types import SimpleNamespace
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
        if not (self.on and isinstance(frame, dict) and size <= self.max_body
                and set(frame) <= {"jsonrpc", "id", "method", "params"}):
            return None
        sdk = _sdk()
        version = _plain_headers(scope)
        if version is None or not sdk.read_call(frame, self.reads, version):
            return None
        params = frame["params"]
        reply = await sdk.call_read(self.server, version, frame["id"], params["name"], params.get("arguments") or {})
        return json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode()


@functools.cache
def _sdk() -> SimpleNamespace:
    """The SDK's pieces this path calls, imported once: a LeanHttp exists only once /mcp has loaded
    the SDK, and the imports inside every call were ~10 us of a request (issue 38)."""
    from mcp.server.streamable_http import check_accept_headers
    from mcp_types import DEFAULT_NEGOTIATED_VERSION
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
    from starlette.requests import Request

    from kyb_cli.mcp.lean import call_read, read_call

    return SimpleNamespace(check_accept_headers=check_accept_headers, default_version=DEFAULT_NEGOTIATED_VERSION,
                           handshake_versions=HANDSHAKE_PROTOCOL_VERSIONS, Request=Request,
                           call_read=call_read, read_call=read_call)


def _plain_headers(scope: dict) -> str | None:
    """The protocol version a stateless SDK server would answer at, when the headers are ones it
    takes without a word (the checks of its manager and transport, held to their strictest
    reading); else None."""
    sdk = _sdk()
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
    if version is not None and version not in sdk.handshake_versions:
        return None
    if not sdk.check_accept_headers(sdk.Request(scope))[0]:
        return None
    return sdk.default_version if version is None else version
