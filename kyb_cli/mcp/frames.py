"""The frame guard in front of the `mcp` SDK: every malformed frame gets a JSON-RPC error reply.

The SDK's stdio reader drops a line it cannot validate (not JSON, not an object, no method, params
of the wrong type, a batch, a lone surrogate its JSON parser refuses): the client waits forever for
an answer. Over HTTP (`kyb serve` at /mcp) the SDK answers, but with a pydantic dump, the wrong
code, no id, or an empty 202 for a request whose id is not a string or integer. Each frame — a
stdio line, an HTTP body (`parse_body`) — is checked here first by the one rule below; what the
SDK would mishandle is answered here instead (on stdio, on the SDK's own outgoing stream, so
replies never interleave with its writes):

  -32700 parse error      not JSON, or nested deeper than the JSON limit (docs/guide/sharing.md "Limits")
  -32600 invalid request  not an object, a batch (MCP has none), no `jsonrpc: "2.0"`, no or a non-string method
  -32602 invalid params   params not an object; a lone surrogate anywhere in the frame — except in
                          a tools/call's arguments, which get the tool error every kyb door gives
                          for a bad argument, naming it (exit 2: usage)

A notification (no id) that is malformed gets no reply: JSON-RPC forbids one, and nobody waits.
On stdio a frame that passes may be answered by the lean path instead of the SDK (lean.py).
"""

from __future__ import annotations

import json
import os
from contextlib import asynccontextmanager
from typing import Any, Callable

from kyb_cli.api.limits import has_lone_surrogate

_NO_ID = object()


def bad_text(value: Any, where: str = "") -> tuple[str, str] | None:
    """(where, what) of the first string holding a NUL or a lone surrogate in `value` (keys too)."""
    if isinstance(value, str):
        if "\x00" in value:
            return where, "a NUL character"
        if has_lone_surrogate(value):
            return where, "a lone surrogate (not Unicode text)"
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            found = bad_text(k, where) or bad_text(v, f"{where}.{k}" if where else str(k))
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = bad_text(v, f"{where}[{i}]")
            if found:
                return found
    return None


def _surrogate(value: Any, where: str = "") -> str | None:
    found = bad_text(value, where)
    return found[0] if found and "surrogate" in found[1] else None


def _error(rid: Any, code: int, message: str) -> dict | None:
    if rid is _NO_ID:
        return None
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


ToolError = Callable[[str, str, str], dict]  # (tool, argument, what) -> the CallToolResult as a dict


def check(line: str, tool_error: ToolError) -> tuple[str | None, dict | None]:
    """(the line for the SDK, None) when it can take it, else (None, the reply to send; None for a
    malformed notification or a blank line). `tool_error` words a bad argument (server.py)."""
    return parse(line, tool_error)[1:]


def parse(line: str, tool_error: ToolError) -> tuple[Any, str | None, dict | None]:
    """`check`, with the frame it parsed first (the lean path reads it: lean.py)."""
    from kyb_cli import api

    frame = None
    if not line.strip(" \t\r\n"):  # JSON's whitespace only (a no-break space is a parse error)
        return frame, None, None
    surrogate = False
    try:
        frame = api.loads_json(line)
    except ValueError as exc:
        if "surrogate" not in str(exc):
            return frame, None, _error(None, -32700, f"Parse error: {str(exc)[:200]}")
        surrogate = True  # valid JSON, not text: answered below, with the id (never given to the SDK)
        frame = json.loads(line)
    if isinstance(frame, list):
        return frame, None, _error(None, -32600,
                                   "Invalid request: batches are not supported (send one JSON-RPC object)")
    if not isinstance(frame, dict):
        return frame, None, _error(None, -32600, "Invalid request: a frame must be a JSON object")
    rid = frame.get("id", _NO_ID)
    if rid is not _NO_ID and (isinstance(rid, bool) or not isinstance(rid, (str, int))):
        return frame, None, _error(None, -32600, "Invalid request: id must be a string or an integer")
    if frame.get("jsonrpc") != "2.0":
        return frame, None, _error(None if rid is _NO_ID else rid, -32600,
                                   'Invalid request: "jsonrpc" must be "2.0"')
    if "method" not in frame:
        if rid is not _NO_ID and ("result" in frame or "error" in frame):
            return (frame, *_passed(line, frame, rid, surrogate, tool_error))  # a response to a request of ours
        return frame, None, _error(None if rid is _NO_ID else rid, -32600, "Invalid request: no method")
    if not isinstance(frame["method"], str):
        return frame, None, _error(None if rid is _NO_ID else rid, -32600,
                                   "Invalid request: method must be a string")
    if "params" in frame and not isinstance(frame["params"], dict):
        return frame, None, _error(rid, -32602, "Invalid params: params must be an object")
    return (frame, *_passed(line, frame, rid, surrogate, tool_error))


def parse_body(raw: bytes, tool_error: ToolError) -> tuple[Any, bool, dict | None]:
    """The HTTP form of `parse`: (the frame, True, None) when the SDK can take the body as it is,
    else (the frame or None, False, the reply; None for a body that is blank or a malformed
    notification, which the caller refuses as a usage error since an HTTP request must get an
    answer). A body that is not UTF-8 is a parse error (over HTTP nothing is replaced: the bytes
    are what the client sent). The frame is what /mcp's lean path reads (serve/mcp_lean.py)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, False, _error(None, -32700,
                                   f"Parse error: the body is not UTF-8 ({exc.reason} at byte {exc.start})")
    frame, passed, reply = parse(text, tool_error)
    return frame, passed is not None, reply


def _passed(line: str, frame: dict, rid: Any, surrogate: bool,
            tool_error: ToolError) -> tuple[str | None, dict | None]:
    if not surrogate:
        return line, None
    try:
        where = _surrogate(frame) or "params"
    except RecursionError:
        return None, _error(None, -32700, "Parse error: JSON nested too deeply")
    params = frame.get("params") or {}
    if frame.get("method") == "tools/call" and where.startswith("params.arguments.") and rid is not _NO_ID:
        name = params.get("name") if isinstance(params.get("name"), str) else "tool"
        return None, {"jsonrpc": "2.0", "id": rid,
                      "result": tool_error(name, where[17:], "a lone surrogate (not Unicode text)")}
    return None, _error(rid, -32602, f"Invalid params: {where} holds a lone surrogate (not Unicode text)")


def argument_message(tool: str, argument: str, what: str) -> str:
    return f"{tool}: argument '{argument}' contains {what}; arguments are text — remove it"


class _GuardedStdin:
    """The lines of fd 0 that the SDK can take; the others are answered on `out` (set once the
    SDK's streams exist: `ready`), or by `lean` (lean.py) when it takes them. A stop asked by a
    signal (stop.py) ends the lines as the end of fd 0 does."""

    def __init__(self, raw, tool_error: ToolError, lean=None, stop=None) -> None:
        import anyio

        from kyb_cli.mcp.stop import Stop

        self.raw = raw
        self.stop = stop or Stop()
        self.stop.interrupt = getattr(raw, "interrupt", None)  # a pipe read on the loop: pipes.LoopLines
        self.tool_error = tool_error
        self.lean = lean
        self.ready = anyio.Event()
        self.out = None

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        import mcp_types as types

        from mcp.shared.message import SessionMessage

        await self.ready.wait()
        while True:
            raw = await self.stop.readline(self.raw)
            if not raw:
                raise StopAsyncIteration
            line = raw.decode("utf-8", errors="replace")
            frame, passed, reply = parse(line, self.tool_error)
            if reply is not None:
                await self.out.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(reply)))
            if passed is None:
                continue
            if self.lean is not None:
                if await self.lean.answer(frame):
                    if self.lean.gone:
                        raise StopAsyncIteration
                    continue
                self.lean.observe(frame)
            return passed


@asynccontextmanager
async def guarded_stdio(tool_error: ToolError, lean: Callable[[Any], Any] | None = None, stop=None):
    """The SDK's stdio transport with fd 0 read through the guard; fd 0 itself points at the null
    device meanwhile (as the SDK does), so no child process reads the protocol. `lean(wire)` makes
    the lean path (lean.py) when fd 1 is a pipe written on the loop (its replies share that writer);
    `stop` (stop.py), once asked, ends the reading of fd 0."""
    import fcntl

    import anyio

    from mcp.server.stdio import stdio_server

    from kyb_cli.mcp import pipes

    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    except OSError:
        private = None
    stream = os.fdopen(private if private is not None else 0, "rb", closefd=False)
    lines = await pipes.LoopLines.open(stream) if pipes.pipe_like(stream.fileno()) else anyio.wrap_file(stream)
    out_fd = pipes.divert_stdout()  # a pipe: written on the loop (pipes.py); else the SDK claims fd 1
    out = await pipes.LoopWriter.open(os.fdopen(out_fd, "wb", closefd=False)) if out_fd is not None else None
    guard = _GuardedStdin(lines, tool_error, lean(out) if lean is not None and out is not None else None, stop)
    try:
        async with stdio_server(stdin=guard, stdout=out) as (read_stream, write_stream):
            guard.out = write_stream
            guard.ready.set()
            yield read_stream, write_stream
    finally:
        if out is not None:
            try:
                await out.flush()
                out.close()
            except OSError:  # the client is gone: nothing left to tell it
                pass
            pipes.restore(1, out_fd)
        if private is not None:
            pipes.restore(0, private)

