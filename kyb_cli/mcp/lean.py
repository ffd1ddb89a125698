"""The lean path of `kyb mcp` on stdio: a read tool's call answered straight from the frame guard.

The SDK's way to a tool's answer — the frame validated into models, handed through memory streams
and a task per request, the reply validated and dumped again — cost ~2 ms on top of a 3.5 ms
lexical answer (issue 38). So a `tools/call` of a read-only tool, on a handshake-era connection
that is initialized, whose params are just `name`, `arguments` and `_meta`, is answered here, through the
SDK's own pieces: the same surface check of the params, the same `call_tool` (kyb's argument
checks, the tool's pydantic model, the tool), the same per-version sieve of the result, one line
on the same wire. Every other frame — initialize, tools/list, ping, writes (the SDK runs them on a
thread), the 2026 per-request envelope, resources, prompts, cancellations, anything malformed —
goes to the SDK as before, so the protocol stays the SDK's: this module only mirrors the state the
SDK keeps (the era, the handshake, the negotiated version) from the frames it is given.
`read_call` and `call_read` are also /mcp's lean path over HTTP (serve/mcp_lean.py).
"""

from __future__ import annotations

import json
import logging
from typing import Any

logger = logging.getLogger(__name__)

# The SDK's own middleware on an MCPServer: tracing (a no-op while no tracer provider is set: else
# this path is off, so every call keeps its span) and the request-state seal (acts on `requestState`
# and `input_required` only). Any other middleware turns this path off.
_PASSIVE = {"OpenTelemetryMiddleware", "RequestStateBoundary"}
_PARAMS = {"name", "arguments", "_meta"}  # `_meta`: a progress token, trace context (the 2026 envelope is not)


class Lean:
    """The read tools' calls of one stdio connection, answered without the SDK's dispatch."""

    def __init__(self, server: Any, wire: Any) -> None:
        from mcp_types.version import LATEST_HANDSHAKE_VERSION

        self.server, self.wire = server, wire
        self.reads, self.usable = read_tools(server), usable(server)
        self.era: str | None = None  # "legacy" or "modern", decided by the first request as the SDK does
        self.version = LATEST_HANDSHAKE_VERSION  # the SDK's seed until initialize negotiates one
        self.ready = False  # `notifications/initialized` taken on a handshake-era connection
        self.gone = False  # a reply could not be written: the client closed its end

    def observe(self, frame: dict) -> None:
        """Mirror what the SDK will do with a frame it is given (runner.py's era, initialize, initialized)."""
        from mcp.server.runner import ServerRunner, _has_modern_envelope
        from mcp_types import methods

        method, params, request = frame.get("method"), frame.get("params"), "id" in frame
        if method is None:
            return
        if request and self.era is None:
            self.era = "modern" if method != "initialize" and _has_modern_envelope(params) else "legacy"
        if self.era != "legacy":
            return
        try:
            if method == "initialize" and request:
                methods.validate_client_request(method, self.version, params)
                self.version = ServerRunner._negotiate_initialize(params)[1]
            elif method == "notifications/initialized" and not request:
                methods.validate_client_notification(method, self.version, params)
                self.ready = True
        except Exception:  # the SDK refuses it too (an error reply, or the notification dropped)
            pass

    async def answer(self, frame: dict) -> bool:
        """Answer `frame` on the wire and say True, or say False and leave it to the SDK."""
        if not (self.ready and self.usable and self.era == "legacy" and read_call(frame, self.reads, self.version)):
            return False
        params = frame["params"]
        reply = await call_read(self.server, self.version, frame["id"], params["name"], params.get("arguments") or {})
        try:
            self.wire.writer.write(json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
            await self.wire.flush()
        except (OSError, RuntimeError):  # the client is gone: the session ends, as the SDK's does
            logger.debug("dropped the reply to %r: the wire is closed", frame["id"])
            self.gone = True
        return True


def read_tools(server: Any) -> frozenset:
    """The names of `server`'s read-only tools: the only ones a lean path answers."""
    return frozenset(t.name for t in server._tool_manager.list_tools()
                     if t.annotations is not None and t.annotations.read_only_hint)


def usable(server: Any) -> bool:
    """Whether `server` runs only passive middleware, caches no tool call and no tracer records
    spans: else every call goes through the SDK, which does those things."""
    low = server._lowlevel_server
    return (all(type(m).__name__ in _PASSIVE for m in low.middleware)
            and "tools/call" not in low.cache_hints and not _tracing())


def read_call(frame: dict, reads: frozenset, version: str) -> bool:
    """Whether `frame` is a plain handshake-era `tools/call` of a read tool whose params the SDK
    accepts at `version`: the one frame a lean path answers (anything else is the SDK's)."""
    from mcp.server.runner import _has_modern_envelope
    from mcp_types import methods

    params = frame.get("params")
    if not (frame.get("method") == "tools/call" and "id" in frame and isinstance(params, dict)
            and set(params) <= _PARAMS and isinstance(params.get("name"), str) and params["name"] in reads
            and isinstance(params.get("arguments", {}), (dict, type(None)))
            and isinstance(params.get("_meta", {}), dict) and not _has_modern_envelope(params)):
        return False
    try:
        methods.validate_client_request("tools/call", version, params)
    except Exception:
        return False
    return True


async def call_read(server: Any, version: str, rid: Any, name: str, arguments: dict) -> dict:
    """The SDK's MCPServer._handle_call_tool and ServerRunner._serialize for a handshake-era call:
    the JSON-RPC reply (a result, or the error the SDK would send) as a dict."""
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from mcp.server.runner import _dump_result
    from mcp.shared.exceptions import MCPError
    from mcp.types import CallToolResult, TextContent
    from mcp_types import methods
    from pydantic import ValidationError

    try:
        result = await server.call_tool(name, arguments)
    except MCPError as exc:
        return _error(rid, exc.error)
    except Exception as exc:
        if not isinstance(exc, ToolError) or isinstance(exc, UnexpectedToolError):
            logger.exception("Tool %r raised an unexpected exception", name)
        result = CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
    try:
        body = methods.serialize_server_result("tools/call", version, _dump_result(result))
    except ValidationError:
        logger.exception("handler for 'tools/call' returned an invalid result")
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603,
                                                       "message": "Handler returned an invalid result"}}
    return {"jsonrpc": "2.0", "id": rid, "result": body}


def _tracing() -> bool:
    """Whether OpenTelemetry has a real tracer provider (the SDK's spans then record something)."""
    try:
        from opentelemetry import trace
    except ImportError:
        return False
    return type(trace.get_tracer_provider()).__name__ not in ("ProxyTracerProvider", "NoOpTracerProvider")


def _error(rid: Any, error: Any) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "error": error.model_dump(by_alias=True, mode="json", exclude_unset=True)}
