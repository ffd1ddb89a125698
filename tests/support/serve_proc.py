"""A real `kyb serve` process on a free port, and a small HTTP client that can send any header.

`Served.start(store, *args)` runs `python -m kyb_cli serve --port 0 …`, waits for the ready line
`kyb: listening on http://HOST:PORT` on stderr and keeps reading stderr in a thread (so the
process never blocks on a full pipe). `request()` uses http.client directly: tests need to send a
wrong Host, a foreign Origin or no Content-Length, which friendlier clients would fix for them.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

READY = re.compile(r"kyb: listening on http://(\S+):(\d+)")


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    raw: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw)

    @property
    def text(self) -> str:
        return self.raw.decode()


@dataclass
class Served:
    proc: subprocess.Popen
    host: str
    port: int
    store_path: Path
    lines: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, store_path: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 30) -> "Served":
        # `env` is the server's whole environment when given (a test's own world: no stray KYB_MODEL)
        full = dict(env) if env is not None else {
            k: v for k, v in os.environ.items() if k not in ("KYB_SERVE_TOKEN", "KYB_AGENT", "KYB_SESSION")}
        proc = subprocess.Popen([sys.executable, "-m", "kyb_cli", "--store", str(store_path), "serve", "--port", "0",
                                 *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=full)
        lines: list[str] = []
        ready = threading.Event()
        found: dict[str, Any] = {}

        def pump() -> None:
            for line in proc.stderr:
                lines.append(line.rstrip("\n"))
                m = READY.search(line)
                if m and not ready.is_set():
                    found["host"], found["port"] = m.group(1), int(m.group(2))
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        if not ready.wait(timeout) or "port" not in found:
            proc.kill()
            raise AssertionError("kyb serve did not get ready:\n" + "\n".join(lines))
        return cls(proc, found["host"].strip("[]"), found["port"], Path(store_path), lines)

    @property
    def base(self) -> str:
        return f"http://localhost:{self.port}"

    def request(self, method: str, path: str, body: Any = None, *, headers: dict[str, str] | None = None,
                raw: bytes | None = None, host: str | None = None, chunked: bool = False) -> Reply:
        conn = http.client.HTTPConnection(self.host if ":" not in self.host else self.host, self.port, timeout=60)
        sent = dict(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", host if host is not None else f"localhost:{self.port}")
            for k, v in sent.items():
                conn.putheader(k, v)
            if data is not None and not chunked:
                conn.putheader("Content-Length", str(len(data)))
            if chunked:
                conn.putheader("Transfer-Encoding", "chunked")
            conn.endheaders()
            if data is not None:
                if chunked:
                    step = 256 * 1024
                    for i in range(0, len(data), step):
                        piece = data[i:i + step]
                        conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    conn.send(b"0\r\n\r\n")
                else:
                    conn.send(data)
            resp = conn.getresponse()
            return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
        finally:
            conn.close()

    def get(self, path: str, **kw) -> Reply:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw) -> Reply:
        return self.request("POST", path, {} if body is None else body, **kw)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        deadline = time.time() + 2
        while time.time() < deadline and not any("stopped" in line for line in self.lines):
            time.sleep(0.05)
        return self.proc.returncode
