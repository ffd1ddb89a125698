"""MCP over streamable HTTP at /mcp: the tools of `kyb mcp`, registered by the MCP door itself.

Two servers share the registration: every tool, and the read-only subset (for `--readonly`, or
`?readonly=1` on the URL). Both are stateless (each POST is a whole exchange, no session to keep)
and answer JSON. Host, Origin and token are checked by the guard in front of them, so the SDK's own
DNS-rebinding check is off here rather than done twice with other rules. Every POST body passes
the frame guard the stdio door uses (mcp/frames.py) before the SDK sees it: a malformed frame gets
a JSON-RPC error (HTTP 400), a lone surrogate in a tool's argument the tool error naming it (200),
and a body with nothing to answer (blank, a malformed notification) the usage refusal every other
route gives — never a 500, an empty reply or a pydantic dump.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from kyb_cli.serve.door import caller_attribution


def _mcp_door(store_path: Path, default_workspace: str):
    from kyb_cli.mcp.server import Door

    class HttpMcpDoor(Door):
        """The MCP door on the served store, with the HTTP caller's labels; transport `mcp`, as for `kyb mcp`."""

        def attribution(self):
            return caller_attribution("mcp", default_workspace)

        wait = False  # a server never makes a request wait for a staged index's history

    return HttpMcpDoor(str(store_path))


class McpEndpoint:
    """ASGI app for /mcp: picks the full or the read-only server per request."""

    def __init__(self, store_path: Path, *, readonly: bool, default_workspace: str = "") -> None:
        from mcp.server.transport_security import TransportSecuritySettings

        from kyb_cli.mcp.server import build_server

        self.readonly = readonly
        door = _mcp_door(store_path, default_workspace)
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self.servers = {}
        for ro in (True, False) if not readonly else (True,):
            server = build_server(door=door, readonly=ro)
            server.streamable_http_app(stateless_http=True, json_response=True, transport_security=security)
            self.servers[ro] = server

    @contextlib.asynccontextmanager
    async def running(self):
        async with contextlib.AsyncExitStack() as stack:
            for server in self.servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield

    async def __call__(self, scope, receive, send):
        from urllib.parse import parse_qs

        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        wants_ro = self.readonly or query.get("readonly", ["0"])[-1].lower() in ("1", "true", "yes")
        if scope.get("method") == "POST":
            receive = await _screened(scope, receive, send)
            if receive is None:
                return
        await self.servers[wants_ro].session_manager.handle_request(scope, receive, send)


async def _screened(scope, receive, send):
    """`receive` with the body for the SDK, or None when the frame guard answered it already."""
    import json

    from kyb_cli.mcp.frames import check_body
    from kyb_cli.mcp.server import argument_error
    from kyb_cli.serve.guard import Headers, replay_body
    from kyb_cli.serve.refusal import json_media_problem, refusal

    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    media = json_media_problem(Headers(scope).get("content-type"))
    passed, reply = (False, None) if media else check_body(body, argument_error)
    if passed:
        return replay_body(body, receive)
    if media:
        status, payload = 400, refusal(400, media)
    elif reply is None:
        status, payload = 400, refusal(400, "the body holds no JSON-RPC request to answer: send one JSON-RPC "
                                            "object with jsonrpc \"2.0\", a method and an id")
    else:
        status, payload = (200 if "result" in reply else 400), reply
    data = json.dumps(payload, ensure_ascii=False).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})
    return None
