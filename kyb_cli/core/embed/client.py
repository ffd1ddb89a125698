"""Talking to the warm helper: find its socket, start it detached when absent, embed through it.

The client side imports neither numpy nor onnxruntime. Any failure (cannot start, model does not load
in the helper, timeout) returns None with a reason, and the caller embeds in-process instead.
KYB_EMBED_HELPER=0 turns the helper off; KYB_HELPER_START_TIMEOUT bounds the wait for a cold start.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

from kyb_cli.core.embed.recipe import sha256


def enabled() -> bool:
    from kyb_cli.core.settings import env_off

    return not env_off("KYB_EMBED_HELPER")


def socket_path(model_dir: Path) -> Path:
    """One socket per (user cache dir, model dir); a short /tmp path when the cache path is too long."""
    from kyb_cli.core.config.dirs import cache_dir

    base = cache_dir()
    name = "embed-" + sha256(str(Path(model_dir).resolve()).encode()).hexdigest()[:12] + ".sock"
    path = base / "run" / name
    if len(str(path)) > 100:  # AF_UNIX paths are limited to ~107 bytes
        tag = sha256(str(base).encode()).hexdigest()[:10]
        import tempfile  # only for long cache paths: kept off the query path

        path = Path(tempfile.gettempdir()) / f"kyb-{os.getuid()}-{tag}" / name
    return path


def _request(path: Path, header: dict, timeout: float) -> tuple[dict, bytes]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(str(path))
        conn.sendall(json.dumps(header).encode() + b"\n")
        buf = bytearray()
        while b"\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                raise ConnectionError("helper closed the connection")
            buf += chunk
        line, _, rest = bytes(buf).partition(b"\n")
        answer = json.loads(line)
        need = int(answer.get("count", 0)) * int(answer.get("dim", 0)) * 4 if answer.get("ok") else 0
        payload = bytearray(rest)
        while len(payload) < need:
            chunk = conn.recv(max(65536, need - len(payload)))
            if not chunk:
                raise ConnectionError("helper answer cut short")
            payload += chunk
        return answer, bytes(payload[:need])


def spawn(path: Path, model_dir: Path, fingerprint: str, pooling: str = "mean") -> "subprocess.Popen":
    import subprocess

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return subprocess.Popen(
        [sys.executable, "-m", "kyb_cli.core.embed.helper", "--socket", str(path),
         "--model", str(model_dir), "--fingerprint", fingerprint, "--pooling", pooling],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
    )


def embed_via_helper(model_dir: Path, fingerprint: str, inputs: list[str], pooling: str = "mean",
                     timeout: float = 120.0) -> tuple[list[bytes] | None, str | None]:
    """Vectors (float32 bytes) for `inputs` from the helper, starting it if needed; else (None, why)."""
    path = socket_path(model_dir)
    header = {"op": "embed", "fingerprint": fingerprint, "inputs": inputs}
    from kyb_cli.core.settings import env_float

    start_timeout = env_float("KYB_HELPER_START_TIMEOUT", 20.0)
    proc = None
    deadline = None
    restarts = 0
    spawned_at = 0.0
    while True:
        try:
            answer, payload = _request(path, header, timeout)
        except (FileNotFoundError, ConnectionRefusedError):
            answer = None
        except (OSError, ValueError) as exc:
            return None, f"helper failed: {exc}"
        if answer is not None:
            if answer.get("ok"):
                size = int(answer["dim"]) * 4
                return [payload[i * size:(i + 1) * size] for i in range(len(inputs))], None
            if answer.get("error") == "fingerprint" and restarts < 2:
                restarts += 1  # it was serving another model; it has stepped aside
                proc, deadline = None, None
                continue
            return None, f"helper: {answer.get('error')}"
        if proc is None:
            Path(str(path) + ".err").unlink(missing_ok=True)
            proc, spawned_at = spawn(path, model_dir, fingerprint, pooling), time.monotonic()
            if deadline is None:
                deadline = time.monotonic() + start_timeout
        elif proc.poll() == 0 and time.monotonic() - spawned_at > 0.5:
            proc = None  # another helper held the lock and has gone without a socket: try again
            continue
        elif proc.poll() not in (None, 0):
            err = Path(str(path) + ".err")
            why = err.read_text(encoding="utf-8").strip() if err.exists() else f"exit {proc.returncode}"
            return None, f"helper did not start: {why}"
        if time.monotonic() > deadline:
            return None, "helper did not start in time"
        time.sleep(0.02)


def ping(model_dir: Path, timeout: float = 2.0) -> dict | None:
    try:
        return _request(socket_path(model_dir), {"op": "ping"}, timeout)[0]
    except (OSError, ValueError):
        return None


def stop(model_dir: Path, timeout: float = 5.0) -> bool:
    """Ask the helper of this model to exit; True when one answered."""
    try:
        _request(socket_path(model_dir), {"op": "stop"}, timeout)
        return True
    except (OSError, ValueError):
        return False
