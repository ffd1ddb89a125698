"""`kyb mcp` reads and writes pipes and sockets on the event loop (mcp/pipes.py) and anything else
through the SDK's threads: both answer every call. The process boundary is the contract here."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("mcp")

from kyb_cli.mcp.pipes import pipe_like  # noqa: E402

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}


def test_pipe_like_takes_pipes_and_sockets_never_files_or_terminals(tmp_path):
    r, w = os.pipe()
    a, b = socket.socketpair()
    f = open(tmp_path / "file", "wb")
    primary, secondary = os.openpty()
    try:
        assert pipe_like(r) and pipe_like(w) and pipe_like(a.fileno())
        assert not pipe_like(f.fileno())
        assert not pipe_like(secondary)  # a terminal's O_NONBLOCK would leak to the shell
    finally:
        for fd in (r, w, primary, secondary):
            os.close(fd)
        a.close(), b.close(), f.close()


def _frames(*msgs) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in msgs)


def _spawn(store, stdout, env):
    return subprocess.Popen([sys.executable, "-m", "kyb_cli", "mcp", "--store", str(store.path)],
                            stdin=subprocess.PIPE, stdout=stdout, stderr=subprocess.PIPE, env=env)


def _query(i: int) -> dict:
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "query", "arguments": {"text": "port", "semantic": False}}}


def _env(tmp_path):
    return {k: v for k, v in os.environ.items() if k != "KYB_STORE"} | {"KYB_DEADLINES": "off"}


@pytest.mark.slow  # spawns the SDK server (2-3 s quiet, up to 9 s on a loaded machine)
def test_mcp_over_pipes_answers_every_call_by_its_id_and_nothing_else_on_the_wire(store, tmp_path):
    from kyb_cli import api

    api.add_knowledge(store, key="port", title="Port", body="The port is 9090.", tags=[], refs=[],
                      attribution=api.attribution("test"))
    proc = _spawn(store, subprocess.PIPE, _env(tmp_path))
    try:
        proc.stdin.write(_frames(INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        for i in range(2, 12):
            proc.stdin.write(_frames(_query(i)))
            proc.stdin.flush()
            reply = json.loads(proc.stdout.readline())
            assert reply["id"] == i
            hit = reply["result"]["structuredContent"]["hits"][0]
            assert hit["key"] == "port" and "stale" in hit and "committed_at" in hit
    finally:
        proc.stdin.close()
        rest = proc.stdout.read()
        proc.wait(30)
    assert rest == b"" and proc.returncode == 0
    assert b"Traceback" not in proc.stderr.read()


@pytest.mark.slow
def test_mcp_writing_to_a_regular_file_still_answers_through_the_sdks_threads(store, tmp_path):
    out = tmp_path / "replies.jsonl"
    with open(out, "wb") as sink:
        proc = _spawn(store, sink, _env(tmp_path))
        try:
            proc.stdin.write(_frames(INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"}, _query(2)))
            proc.stdin.flush()
            deadline = time.monotonic() + 60
            while out.read_bytes().count(b"\n") < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            proc.stdin.close()
            proc.wait(30)
    replies = [json.loads(line) for line in out.read_bytes().splitlines()]
    assert [r["id"] for r in replies] == [1, 2] and replies[1]["result"]["structuredContent"]["count"] == 0
    assert b"Traceback" not in proc.stderr.read()
