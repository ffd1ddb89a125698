"""The rules every request passes before a route sees it, and the audit line it leaves after.

In order: the `Host` must name the bound address or `localhost` (a page on another name that
resolves here — DNS rebinding — is refused, 421); with a token, `Authorization: Bearer …` must
carry it (401; the console page and its assets are open, they hold no data); a write from a browser
must come from the console's own origin (403: `Origin` and `Sec-Fetch-Site` are what browsers send,
other clients send neither); a read-only server refuses every write route (403); a body is at most
MAX_BODY bytes (413). Then one line per request goes to `.git/kyb/audit.jsonl`:
`{ts, method, path, status, ms, agent}` — the path without its query string, never the body.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import threading
import time
from datetime import datetime, timezone
from json.encoder import encode_basestring as _quoted  # json.dumps's own string encoder (ensure_ascii=False)
from pathlib import Path
from typing import Any

from kyb_cli.api import audit_label
from kyb_cli.serve.refusal import refusal as refusal_body
from kyb_cli.serve.door import CALLER, caller_from_headers
from kyb_cli.serve.routes import WRITE_METHODS

MAX_BODY = 4 * 1024 * 1024  # a record is at most 1 MiB; JSON escaping and the other fields fit in 4
OPEN_PATHS = ("/", "/favicon.ico")  # the console shell: no data, loaded by a browser without headers
OPEN_PREFIXES = ("/static/",)
BODILESS = ("GET", "HEAD")  # methods whose request has a body only when its headers say so
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


class Headers:
    """Lower-cased request headers of an ASGI scope (the last value wins)."""

    def __init__(self, scope: dict[str, Any]) -> None:
        self._h = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._h.get(name, default)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, int | None]:
    """`name:port` / `[v6]:port` / `name` -> (name lower-cased, port or None)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, None
        name, rest = value[1:end], value[end + 1:]
        port = rest[1:] if rest.startswith(":") else ""
    else:
        name, _, port = value.partition(":")
    if port and not port.isdigit():
        return name, -1
    return name, int(port) if port else None


class Guard:
    """Pure ASGI middleware holding the server's rules (see the module docstring)."""

    def __init__(self, app, *, bind_host: str, port_of, token: str | None, readonly: bool, audit_path: Path,
                 max_body: int = MAX_BODY) -> None:
        self.app = app
        self.bind_host = bind_host.strip("[]").lower()
        self.port_of = port_of  # the bound port is known only once the socket is open (--port 0)
        self.token = token
        self.readonly = readonly
        self.audit_path = audit_path
        self.max_body = max_body
        self._audit_lock = threading.Lock()
        self._second: tuple[int, str] = (-1, "")

    # -- the rules ------------------------------------------------------------------------------

    def host_ok(self, host_header: str | None) -> bool:
        if not host_header:
            return False
        name, port = split_host(host_header)
        if port is not None and port != self.port_of():
            return False
        if name == "localhost" or name == self.bind_host:
            return True
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return False  # a name other than localhost: what a rebinding page would send
        try:
            bound = ipaddress.ip_address(self.bind_host)
        except ValueError:
            return address.is_loopback and is_loopback(self.bind_host)
        if bound.is_unspecified:
            return True  # bound to every address: any address of this machine, by number
        return address == bound or (address.is_loopback and bound.is_loopback)

    def token_ok(self, headers: Headers) -> bool:
        if not self.token:
            return True
        value = headers.get("authorization") or ""
        scheme, _, given = value.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.token.encode())

    @staticmethod
    def origin_ok(headers: Headers, host_header: str) -> bool:
        origin = headers.get("origin")
        if origin is not None and origin.lower() != f"http://{host_header.lower()}":
            return False
        site = headers.get("sec-fetch-site")
        return site is None or site in ("same-origin", "none")

    # -- ASGI ---------------------------------------------------------------------------------

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = Headers(scope)
        method, path = scope["method"], scope["path"]
        caller = caller_from_headers(headers)
        status = 0

        async def send_wrapper(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message = {**message, "headers": [*message.get("headers", ()), *SECURITY_HEADERS]}
            await send(message)

        try:
            refusal = self.refusal(scope, headers, method, path)
            if refusal is not None:
                await _json(send_wrapper, *refusal)
                return
            if method in BODILESS and headers.get("content-length") is None \
                    and headers.get("transfer-encoding") is None:
                app_receive = receive  # no body to bound (HTTP/1.1 sends one only with either header)
            else:
                body, too_big = await self._read_body(receive, headers)
                if too_big:
                    await _json(send_wrapper, 413, f"request body over {self.max_body // (1024 * 1024)} MiB "
                                                    "(a record is at most 1 MiB)")
                    return
                app_receive = replay_body(body, receive)
            token = CALLER.set(caller)
            try:
                await self.app(scope, app_receive, send_wrapper)
            finally:
                CALLER.reset(token)
        finally:
            self.audit(method, path, status, started, caller.agent)

    def refusal(self, scope, headers: Headers, method: str, path: str) -> tuple[int, str, list] | None:
        host = headers.get("host")
        if not self.host_ok(host):
            return 421, (f"refused: Host '{host or ''}' is not this server's address; use "
                         f"http://localhost:{self.port_of()} or the address kyb serve was bound to"), []
        open_path = method in ("GET", "HEAD") and (path in OPEN_PATHS or path.startswith(OPEN_PREFIXES))
        if not open_path and not self.token_ok(headers):
            return 401, ("a bearer token is required: send Authorization: Bearer <token> "
                         "(KYB_SERVE_TOKEN, or the one kyb serve printed)"), [(b"www-authenticate", b"Bearer")]
        if method in WRITE_METHODS and not self.origin_ok(headers, host or ""):
            return 403, "refused: a browser write from another origin (only the console's own page may write)", []
        if self.readonly and method in WRITE_METHODS and not _is_mcp(path):
            return 403, "this server is read-only (kyb serve --readonly): writes are refused", []
        return None

    async def _read_body(self, receive, headers: Headers) -> tuple[bytes, bool]:
        length = headers.get("content-length")
        if length and length.isdigit() and int(length) > self.max_body:
            return b"", True
        chunks, total = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > self.max_body:
                return b"", True
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks), False

    def audit(self, method: str, path: str, status: int, started: float, agent: str) -> None:
        """Append the request's line (`audit_line`). The file is opened per line (O_APPEND): a kept fd
        needs a stat per line to follow a rotated or removed file, and that cost what the open and
        the close do (~5 us of the ~6 us the three syscalls take)."""
        line = audit_line(self._stamp(), method, path, status, round((time.perf_counter() - started) * 1000, 1),
                          audit_label(agent))
        try:
            with self._audit_lock:
                try:
                    fd = os.open(self.audit_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                except FileNotFoundError:  # its directory first (not made on every request: a syscall each)
                    self.audit_path.parent.mkdir(parents=True, exist_ok=True)
                    fd = os.open(self.audit_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, line.encode())
                finally:
                    os.close(fd)
        except OSError:
            pass  # an audit line that cannot be written must not turn an answer into an error

    def _stamp(self) -> str:
        """This second in UTC, ISO 8601 (`2026-01-02T03:04:05+00:00`), formatted once a second."""
        now = int(time.time())
        second, stamp = self._second
        if second != now:
            stamp = datetime.fromtimestamp(now, timezone.utc).isoformat()
            self._second = (now, stamp)
        return stamp


def audit_line(ts: str, method: str, path: str, status: int, ms: float, agent: str) -> str:
    """`json.dumps({ts, method, path, status, ms, agent}, ensure_ascii=False) + "\\n"`, spelled by hand
    with json's own string encoder for the client's method, path and label: json.dumps of the dict
    was ~5 us of a request, this ~1 (issue 38; tests/test_serve_fixed.py holds them equal)."""
    return (f'{{"ts": {_quoted(ts)}, "method": {_quoted(method)}, "path": {_quoted(path)}, "status": {int(status)}, '
            f'"ms": {float(ms)!r}, "agent": {_quoted(agent)}}}\n')


def _is_mcp(path: str) -> bool:
    return path == "/mcp" or path.startswith("/mcp/")


def replay_body(body: bytes, receive):
    """`receive` for the app behind: the body already read, in one message, then the client's own."""
    sent = {"done": False}

    async def replay():
        if not sent["done"]:
            sent["done"] = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _json(send, status: int, message: str, extra_headers: list | None = None) -> None:
    payload = json.dumps(refusal_body(status, message), ensure_ascii=False).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            *(extra_headers or [])]})
    await send({"type": "http.response.body", "body": payload})
