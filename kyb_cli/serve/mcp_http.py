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
import functools
import json
from pathlib import Path
from urllib.parse import parse_qs

from kyb_cli.serve.door import caller_attribution
from kyb_cli.serve.guard import Headers, replay_body
from kyb_cli.serve.mcp_lean import LeanHttp
from kyb_cli.serve.refusal import json_media_problem, refusal


def _mcp_door(store_path: Path, default_workspace: str):
    from kyb_cli.mcp.server import Door

    class HttpMcpDoor(Door):
        """The MCP door on the served store, with the HTTP caller's labels; transport `mcp`, as for `kyb mcp`."""

        def attribution(self):
            return caller_attribution("mcp", default_workspace)

        wait = False  # a server never makes a request wait for a staged index's history

    return HttpMcpDoor(str(store_path))


class McpEndpoint:
    """ASGI app for /mcp: picks the full or the read-only server per request. The SDK is loaded by
    the first /mcp request, not at start: its imports (pydantic models of every protocol version)
    are ~0.9 s of CPU, most of a server's start, and a server whose clients never speak MCP never
    needs them. The servers run inside the app's lifespan, as the SDK's session manager requires."""

    def __init__(self, store_path: Path, *, readonly: bool, default_workspace: str = "") -> None:
        self.store_path, self.readonly, self.default_workspace = store_path, readonly, default_workspace
        self.servers: dict = {}
        self.lean: dict = {}
        self._wanted = self._ready = None
        self._failed: BaseException | None = None

    def _build(self) -> dict:
        from mcp.server.transport_security import TransportSecuritySettings

        from kyb_cli.mcp.server import build_server

        door = _mcp_door(self.store_path, self.default_workspace)
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        servers = {}
        for ro in (True, False) if not self.readonly else (True,):
            server = build_server(door=door, readonly=ro)
            server.streamable_http_app(stateless_http=True, json_response=True, transport_security=security)
            servers[ro] = server
        return servers

    @contextlib.asynccontextmanager
    async def running(self):
        import anyio

        self._wanted, self._ready = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._run_when_wanted)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()

    async def _run_when_wanted(self) -> None:
        """Wait for the first /mcp request; then import the SDK off the event loop (other routes
        keep answering), build both servers and keep their session managers running until the end."""
        import anyio

        await self._wanted.wait()
        try:
            await anyio.to_thread.run_sync(_import_sdk)
            servers = self._build()
        except Exception as exc:  # noqa: BLE001 - every /mcp request answers it (a 500 via the app's handler)
            self._failed = exc
            self._ready.set()
            return
        async with contextlib.AsyncExitStack() as stack:
            for server in servers.values():
                await stack.enter_async_context(server.session_manager.run())
            self.lean = {ro: LeanHttp(server, server.session_manager.max_request_body_size)
                         for ro, server in servers.items()}
            self.servers = servers
            self._ready.set()
            await anyio.sleep_forever()

    async def __call__(self, scope, receive, send):
        if not self.servers:
            if self._wanted is None:
                raise RuntimeError("the /mcp endpoint runs inside the app's lifespan")
            self._wanted.set()
            await self._ready.wait()
            if self._failed is not None:
                raise self._failed
        wants_ro = self.readonly or _readonly_asked(scope.get("query_string", b""))
        if scope.get("method") == "POST":
            screened = await _screened(scope, receive, send)
            if screened is None:
                return
            receive, frame, size = screened
            data = await self.lean[wants_ro].reply(scope, frame, size)
            if data is not None:  # a read tool's plain call: answered without the SDK's session (mcp_lean.py)
                await _json_response(send, 200, data)
                return
        await self.servers[wants_ro].session_manager.handle_request(scope, receive, send)


def _import_sdk() -> None:
    import mcp.server.mcpserver  # noqa: F401 - the import is the work
    import mcp.server.streamable_http_manager  # noqa: F401


def _readonly_asked(query: bytes) -> bool:
    """Whether the URL asks for the read-only server (`?readonly=1|true|yes`, the last one given)."""
    if not query:  # an agent's every call: no query string to parse
        return False
    return parse_qs(query.decode("latin-1")).get("readonly", ["0"])[-1].lower() in ("1", "true", "yes")


@functools.cache
def _frame_guard():
    """(frames.parse_body, server.argument_error), imported once: kyb_cli.mcp.server loads the SDK, so
    not at start, and imported inside every request they were ~7 us of it (issue 38)."""
    from kyb_cli.mcp.frames import parse_body
    from kyb_cli.mcp.server import argument_error

    return parse_body, argument_error


async def _screened(scope, receive, send):
    """(`receive` with the body for the SDK, the frame parsed, the body's size), or None when the
    frame guard answered it already."""
    parse_body, argument_error = _frame_guard()
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
    frame, passed, reply = (None, False, None) if media else parse_body(body, argument_error)
    if passed:
        return replay_body(body, receive), frame, len(body)
    if media:
        status, payload = 400, refusal(400, media)
    elif reply is None:
        status, payload = 400, refusal(400, "the body holds no JSON-RPC request to answer: send one JSON-RPC "
                                            "object with jsonrpc \"2.0\", a method and an id")
    else:
        status, payload = (200 if "result" in reply else 400), reply
    await _json_response(send, status, json.dumps(payload, ensure_ascii=False).encode())
    return None


async def _json_response(send, status: int, data: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})
