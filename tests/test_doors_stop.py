"""A door stopped by a signal writes what it kept for later, then exits 0 (kyb_cli/mcp/stop.py).

A running `kyb mcp` or `kyb serve` keeps its read-log rows (receipts._write_later, written ~2 s after
an answer) and its new questions' vectors (embed._write_later) in memory; its exit writes what is
left (atexit). A signal's default action would skip that. MCP clients stop a stdio server with
SIGTERM (after closing stdin, or alone); a terminal sends SIGHUP, Ctrl-C SIGINT. The process is the
contract: a real door, a real signal, what is on disk after, the exit status, nothing on stdout after.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import apsw
import pytest

pytest.importorskip("mcp")

QUESTION = "who holds the pager"
CLIENT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}


def world(root: Path, tiny: Path) -> dict[str, str]:
    """The doors' environment: the tiny model in-process, this test's dirs, the read log on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KYB_")}
    return env | {"XDG_CONFIG_HOME": str(root / "config"), "XDG_DATA_HOME": str(root / "data"),
                  "XDG_CACHE_HOME": str(root / "cache"), "KYB_DEADLINES": "off", "KYB_AGENT": "door-agent",
                  "KYB_MODEL": str(tiny), "KYB_EMBED_HELPER": "0", "KYB_LOCK_TIMEOUT": "30"}


@pytest.fixture
def store(tmp_path, tiny_dir):
    from kyb_cli.api import init_store

    path = tmp_path / "store"
    init_store(path)
    add = [sys.executable, "-m", "kyb_cli", "--store", str(path), "add", "--key", "pager-duty",
           "--title", "Pager duty", "--body", QUESTION]
    subprocess.run(add, env=world(tmp_path, tiny_dir), check=True, capture_output=True, timeout=60)
    return path


class Stdio:
    """A `kyb mcp` on pipes, past the handshake."""

    def __init__(self, store: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "kyb_cli", "mcp", "--store", str(store)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.next_id = 1
        self.ask("initialize", CLIENT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, frame: dict) -> None:
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()

    def ask(self, method: str, params: dict, *, reply: bool = True) -> dict | None:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        if not reply:
            return None
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read().decode()
        return json.loads(line)

    def call(self, tool: str, arguments: dict, *, reply: bool = True) -> dict | None:
        return self.ask("tools/call", {"name": tool, "arguments": arguments}, reply=reply)

    def stopped_by(self, *signals: int, gap: float = 0.0, timeout: float = 30) -> tuple[int, bytes, bytes, float]:
        """Send `signals` (`gap` s apart); (exit status, stdout after, stderr, seconds to the exit)."""
        start = time.monotonic()
        for n, sig in enumerate(signals):
            if n:
                time.sleep(gap)
            self.proc.send_signal(sig)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        return self.proc.returncode, out, err, time.monotonic() - start


def read_log(store: Path) -> list[tuple]:
    from kyb_cli.core.index import receipts

    path = receipts.log_path(str(store))
    if not os.path.exists(path):
        return []
    conn = apsw.Connection(path)
    try:
        return conn.execute("SELECT agent, key, mode FROM reads ORDER BY id").fetchall()
    finally:
        conn.close()


def question_vectors(root: Path) -> int:
    """How many vectors of QUESTION (as e5 embeds a question) the cache holds."""
    from kyb_cli.core.embed.models import E5
    from kyb_cli.core.embed.recipe import text_hash

    path = root / "cache" / "kyb" / "embeddings.sqlite3"
    if not path.exists():
        return 0
    conn = apsw.Connection(str(path))
    try:
        return conn.execute("SELECT count(*) FROM vectors WHERE text_sha = ?",
                            (text_hash(E5.query_input(QUESTION)),)).fetchall()[0][0]
    finally:
        conn.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_kyb_mcp_stopped_by_a_signal_writes_its_reads_and_its_question_vector(store, tmp_path, tiny_dir, sig):
    door = Stdio(store, world(tmp_path, tiny_dir))
    reply = door.call("query", {"text": QUESTION})
    assert json.loads(reply["result"]["content"][0]["text"])["hits"][0]["key"] == "pager-duty"
    assert read_log(store) == [] and question_vectors(tmp_path) == 0  # kept for later: the 2 s have not passed
    code, out, err, took = door.stopped_by(sig)
    assert read_log(store) == [("door-agent", "pager-duty", "current")]
    assert question_vectors(tmp_path) == 1
    assert (code, out) == (0, b""), err.decode()
    assert b"Traceback" not in err and b"internal error" not in err, err.decode()
    assert took < 2.5  # nothing in flight: no grace period waited out


def hold_write_lock(store: Path) -> int:
    from kyb_cli.core.canon import lock

    fd = lock.try_lock(store / ".git" / "kyb" / "write.lock")
    assert fd is not None
    return fd


def test_a_call_in_flight_that_ends_within_the_grace_period_is_finished(store, tmp_path, tiny_dir):
    door = Stdio(store, world(tmp_path, tiny_dir))
    door.call("get", {"key": "pager-duty"})
    held = hold_write_lock(store)
    door.call("add", {"key": "rota", "title": "Rota", "body": "the rota"}, reply=False)
    time.sleep(0.3)  # the add waits for the lock on its thread
    threading.Timer(0.5, os.close, (held,)).start()  # the lock comes free 0.5 s after the signal
    code, out, err, took = door.stopped_by(signal.SIGTERM)
    assert code == 0 and b"without waiting" not in err, err.decode()
    assert 0.4 < took < 2.9  # waited for the call, not for the grace period
    answer = json.loads(out)  # the call was answered, and nothing else was said
    assert answer["id"] == door.next_id and answer["result"]["structuredContent"]["key"] == "rota", answer
    assert read_log(store) == [("door-agent", "pager-duty", "get")]
    got = subprocess.run([sys.executable, "-m", "kyb_cli", "--store", str(store), "get", "rota"],
                         env=world(tmp_path, tiny_dir), capture_output=True, timeout=60)
    assert got.returncode == 0, got.stderr  # the write was made


def test_a_call_sent_just_before_stdin_ends_is_answered(store, tmp_path, tiny_dir):
    """The end of stdin is the other way to stop (the MCP spec's first step): a call under way then
    is finished and answered before the session closes, as at a signal (the SDK alone dropped it)."""
    door = Stdio(store, world(tmp_path, tiny_dir))
    held = hold_write_lock(store)
    door.call("add", {"key": "rota", "title": "Rota", "body": "the rota"}, reply=False)
    time.sleep(0.3)
    threading.Timer(0.5, os.close, (held,)).start()
    out, err = door.proc.communicate(timeout=30)  # stdin closed
    assert door.proc.returncode == 0, err.decode()
    answer = json.loads(out)
    assert answer["id"] == door.next_id and answer["result"]["structuredContent"]["key"] == "rota", answer


def stopped_with_a_write_waiting(store, tmp_path, tiny_dir, *signals, gap: float = 0.0):
    """A door that answered a `get`, stopped by `signals` while its `add` waits on a held store lock:
    (exit code, stdout, stderr, seconds the stop took)."""
    door = Stdio(store, world(tmp_path, tiny_dir))
    door.call("get", {"key": "pager-duty"})
    held = hold_write_lock(store)
    try:
        door.call("add", {"key": "rota", "title": "Rota", "body": "the rota"}, reply=False)
        time.sleep(0.3)
        return door.stopped_by(*signals, gap=gap)
    finally:
        os.close(held)


@pytest.mark.slow  # the grace period is waited out: ~5 s of wall time (little CPU)
def test_a_call_in_flight_past_the_grace_period_is_left_and_the_kept_rows_written(store, tmp_path, tiny_dir):
    code, out, err, took = stopped_with_a_write_waiting(store, tmp_path, tiny_dir, signal.SIGTERM)
    assert (code, out) == (0, b""), err.decode()
    assert b"kyb: stopped without waiting further" in err
    assert 2.5 < took < 6
    assert read_log(store) == [("door-agent", "pager-duty", "get")]


def test_a_second_signal_exits_at_once(store, tmp_path, tiny_dir):
    code, out, err, took = stopped_with_a_write_waiting(store, tmp_path, tiny_dir, signal.SIGTERM, signal.SIGTERM,
                                                        gap=0.3)
    assert (code, out) == (0, b""), err.decode()
    assert took < 2.0
    assert read_log(store) == [("door-agent", "pager-duty", "get")]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_kyb_serve_stopped_by_a_signal_writes_its_reads_and_its_question_vector(store, tmp_path, tiny_dir, sig):
    from urllib.parse import quote

    from tests.support.serve_proc import Served

    server = Served.start(store, env=world(tmp_path, tiny_dir))
    try:
        reply = server.get(f"/search?q={quote(QUESTION)}")
        assert reply.status == 200 and reply.json["hits"][0]["key"] == "pager-duty"
        assert read_log(store) == [] and question_vectors(tmp_path) == 0
    finally:
        code = server.stop(sig)
    assert code == 0 and server.lines[-1] == "kyb: stopped", server.lines
    assert read_log(store) == [("door-agent", "pager-duty", "current")]
    assert question_vectors(tmp_path) == 1
