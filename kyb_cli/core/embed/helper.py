"""The warm helper: one process per model that keeps the model loaded and embeds over a unix socket.

A per-call CLI would spend ~1 s loading the model for a 2 ms query; the helper pays that once and
then answers in milliseconds. Started detached on demand by client.py, it exits after an idle
timeout (KYB_HELPER_IDLE, default 600 s), or when a client shows a different fingerprint (the model
files or recipe changed). An flock on `<socket>.lock` keeps it to one helper per socket.

Protocol, one request per connection: a JSON line `{"op": "embed", "fingerprint": fp, "inputs": [...]}`
(or `{"op": "ping"}` / `{"op": "stop"}`); the answer is a JSON line
`{"ok": true, "dim": d, "count": n, "fingerprint": fp}` followed by n*d little-endian float32, or
`{"ok": false, "error": "..."}`. The client needs no numpy.

Run: python -m kyb_cli.core.embed.helper --socket PATH --model DIR --fingerprint FP [--pooling mean|cls|none] [--idle S]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path


def _read_line(conn: socket.socket, limit: int = 64 << 20) -> bytes:
    buf = bytearray()
    while not buf.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        buf += chunk
        if len(buf) > limit:
            raise ValueError("request too large")
    return bytes(buf)


class Helper:
    def __init__(self, sock_path: Path, model: Path, fingerprint: str, idle: float, pooling: str = "mean") -> None:
        self.sock_path = sock_path
        self.fingerprint = fingerprint
        self.idle = idle
        self.last = time.monotonic()
        self.busy = 0
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.retire_lock = threading.Lock()
        self.count_lock = threading.Lock()
        self.listener: socket.socket | None = None
        self.lock_fd = -1
        self.sock_ino = -1
        if pooling == "none":  # the model is an installed package (USE, embed/package.py), not `model`'s files
            from kyb_cli.core.embed.models import MODELS
            from kyb_cli.core.embed.package import PackageEmbedder

            self.embedder = PackageEmbedder(next(m for m in MODELS if m.package))
        else:
            from kyb_cli.core.embed.embedder import Embedder

            self.embedder = Embedder(model, pooling=pooling)

    def serve(self, listener: socket.socket) -> None:
        listener.settimeout(1.0)
        while not self.stopping.is_set():
            if self.busy == 0 and time.monotonic() - self.last > self.idle:
                break
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            self.last = time.monotonic()
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn: socket.socket) -> None:
        with self.count_lock:
            self.busy += 1
        try:
            conn.settimeout(60)
            request = json.loads(_read_line(conn) or b"{}")
            op = request.get("op")
            if op == "ping":
                self._reply(conn, {"ok": True, "fingerprint": self.fingerprint, "pid": os.getpid()})
            elif op == "stop":
                self.retire()
                self._reply(conn, {"ok": True})
            elif op == "embed":
                if request.get("fingerprint") != self.fingerprint:
                    # The files or recipe changed under us: make way for a helper of the new model.
                    self.retire()
                    self._reply(conn, {"ok": False, "error": "fingerprint", "fingerprint": self.fingerprint})
                    return
                inputs = [str(x) for x in request.get("inputs", [])]
                with self.lock:
                    vectors = self.embedder.embed(inputs) if inputs else None
                payload = vectors.astype("<f4").tobytes() if vectors is not None else b""
                self._reply(conn, {"ok": True, "dim": self.embedder.dim, "count": len(inputs),
                                   "fingerprint": self.fingerprint}, payload)
            else:
                self._reply(conn, {"ok": False, "error": f"unknown op {op!r}"})
        except Exception as exc:  # one bad request must not kill the helper
            try:
                self._reply(conn, {"ok": False, "error": str(exc)[:200]})
            except OSError:
                pass
        finally:
            self.last = time.monotonic()
            conn.close()
            with self.count_lock:
                self.busy -= 1

    def retire(self) -> None:
        """Stop taking connections now: unlink our socket, release the lock, let the loop end."""
        with self.retire_lock:
            if self.stopping.is_set():
                return
            self.stopping.set()
            try:
                if os.stat(self.sock_path).st_ino == self.sock_ino:
                    self.sock_path.unlink()
            except OSError:
                pass
            for close in (self.listener.close, lambda: os.close(self.lock_fd)):
                try:
                    close()
                except OSError:
                    pass

    @staticmethod
    def _reply(conn: socket.socket, header: dict, payload: bytes = b"") -> None:
        conn.sendall(json.dumps(header).encode() + b"\n" + payload)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kyb-embed-helper")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--fingerprint", required=True)
    parser.add_argument("--pooling", choices=("mean", "cls", "none"), default="mean")
    from kyb_cli.core.settings import env_float

    parser.add_argument("--idle", type=float, default=env_float("KYB_HELPER_IDLE", 600.0))
    args = parser.parse_args(argv)
    sock_path = Path(args.socket)
    sock_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock_fd = os.open(str(sock_path) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another helper owns this socket: it will answer
    err_path = Path(str(sock_path) + ".err")
    try:
        helper = Helper(sock_path, Path(args.model), args.fingerprint, args.idle, args.pooling)
    except Exception as exc:
        err_path.write_text(str(exc)[:500], encoding="utf-8")
        return 1
    err_path.unlink(missing_ok=True)
    try:
        sock_path.unlink()
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        listener.bind(str(sock_path))
    finally:
        os.umask(old_umask)
    listener.listen(64)
    helper.listener, helper.lock_fd, helper.sock_ino = listener, lock_fd, os.stat(sock_path).st_ino
    try:
        helper.serve(listener)
    finally:
        # Unlink before releasing the lock, so a successor never loses its fresh socket to us.
        helper.retire()
        deadline = time.monotonic() + 60
        while helper.busy and time.monotonic() < deadline:  # let in-flight answers finish
            time.sleep(0.01)
    return 0


if __name__ == "__main__":
    sys.exit(main())
