"""Start `kyb serve`: bind, say where on stderr, serve until SIGINT/SIGTERM/SIGHUP, stop cleanly.

The socket is bound here (not by uvicorn) so `--port 0` works and the ready line names the real
port; the line `kyb: listening on http://HOST:PORT` is printed once the app has started and the
socket accepts. A signal finishes the requests in flight (a few seconds at most) and exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
import sys
import threading
from pathlib import Path

from kyb_cli.api import StoreError, UsageError


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say they are
    # TCP, and without it every keep-alive answer waits ~40 ms for a delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        if exc.errno in (98, 48):  # EADDRINUSE on Linux / macOS
            raise UsageError(f"port {port} on {host} is in use (another kyb serve?); pick one with --port") from None
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(store_path: Path, *, host: str, port: int, readonly: bool, open_browser: bool) -> None:
    import uvicorn

    from kyb_cli import api
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door
    from kyb_cli.serve.guard import is_loopback
    from kyb_cli.api.preload import preload

    preload()  # before the socket is bound: no request can meet a half-imported module
    api.keep_warm()  # index connections stay open between requests (core/index/warm.py)
    loopback = is_loopback(host.strip("[]"))
    token = os.environ.get("KYB_SERVE_TOKEN", "").strip() or None
    generated = False
    if token is None and not loopback:
        token, generated = secrets.token_urlsafe(24), True
    sock = bind(host, port)
    bound_port = sock.getsockname()[1]
    door = Door(Path(store_path), readonly=readonly, token_required=token is not None,
                default_workspace=api.attribution("http").workspace)
    app = build_app(door, bind_host=host, port_of=lambda: bound_port, token=token)
    base = f"http://{url_host(host)}:{bound_port}"

    class Server(uvicorn.Server):
        async def startup(self, sockets=None):
            await super().startup(sockets=sockets)
            if self.should_exit:
                return
            if generated:
                _say(f"token (printed once; send it as Authorization: Bearer …): {token}")
            _say(f"serving {store_path}" + (" read-only" if readonly else ""))
            _say(f"listening on {base}")
            if open_browser:
                _open(base, token)

        @contextlib.contextmanager
        def capture_signals(self):
            """uvicorn's SIGINT and SIGTERM, and SIGHUP too (a closed terminal): a stop that writes what
            the door kept for later (its read log, its question vectors: atexit), not a death."""
            hup = getattr(signal, "SIGHUP", None)
            own = hup is not None and threading.current_thread() is threading.main_thread()
            before = signal.signal(hup, self.handle_exit) if own else None
            try:
                with super().capture_signals():
                    yield
            finally:
                if own:
                    signal.signal(hup, before)

        def handle_exit(self, sig, frame):  # stop; do not re-raise the signal afterwards
            if self.should_exit:
                self.force_exit = True
            self.should_exit = True

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", http=one_write_protocol(),
                            timeout_graceful_shutdown=3, server_header=False, date_header=True)
    server = Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    if not server.started:
        raise StoreError("the server did not start (see the lines above)")
    _say("stopped")


def one_write_protocol():
    """uvicorn's HTTP protocol (httptools, else h11) on a transport that sends a response's head and
    its body in one write. uvicorn writes the status line and headers when the app sends
    `http.response.start`, and the body at `http.response.body`: two sends, and with Nagle off (see
    `bind`) two TCP segments, so a client reads twice for every answer."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class OneWrite(AutoHTTPProtocol):
        def connection_made(self, transport) -> None:
            super().connection_made(HeadWithBody(transport))

    return OneWrite


class HeadWithBody:
    """A transport that holds a response's head (`HTTP/1.1 …\\r\\n\\r\\n`) until the next write, which
    it goes out with, or until the event loop's step ends (a head whose body is not sent at once:
    `100 Continue`, a stream); anything else done to the transport sends the held head first. Bytes and
    their order are the same; any other write passes through."""

    __slots__ = ("_transport", "_head")

    def __init__(self, transport) -> None:
        self._transport, self._head = transport, b""

    def write(self, data) -> None:
        if self._head:
            data, self._head = self._head + data, b""
        elif data[:9] == b"HTTP/1.1 " and data[-4:] == b"\r\n\r\n":
            self._head = bytes(data)
            asyncio.get_running_loop().call_soon(self.flush)
            return
        self._transport.write(data)

    def flush(self) -> None:
        if self._head:
            head, self._head = self._head, b""
            self._transport.write(head)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self.flush()
        self._transport.abort()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + len(self._head)

    def __getattr__(self, name: str):  # anything else (writelines, pause_reading, …) after the held head
        self.flush()
        return getattr(self._transport, name)


def _open(base: str, token: str | None) -> None:
    import webbrowser

    url = base.replace("://0.0.0.0:", "://localhost:").replace("://[::]:", "://localhost:") + "/"
    if token:
        url += f"#token={token}"  # the fragment never reaches a server or a log
    try:
        webbrowser.open(url)
    except Exception:  # noqa: BLE001 — no browser is not an error: the URL is printed
        _say(f"open {url} in a browser")


def _say(line: str) -> None:
    sys.stderr.write(f"kyb: {line}\n")
    sys.stderr.flush()
