"""One HTTP request to an ASGI app in-process (no server, no httpx): the status and the JSON body."""

from __future__ import annotations

import asyncio
import json
from typing import Any


def asgi_call(app, method: str, path: str, *, query: str = "", body: Any = None,
              host: str = "127.0.0.1:8765") -> tuple[int, Any]:
    raw = b"" if body is None else json.dumps(body).encode()
    headers = [(b"host", host.encode())]
    if raw:
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "path": path,
             "raw_path": path.encode(), "query_string": query.encode(), "headers": headers, "scheme": "http",
             "server": ("127.0.0.1", 8765), "client": ("127.0.0.1", 50000), "root_path": ""}
    sent: list[dict] = []
    messages = [{"type": "http.request", "body": raw, "more_body": False}]

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    data = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    try:
        return status, json.loads(data)
    except ValueError:
        return status, data.decode()
