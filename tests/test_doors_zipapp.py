"""The zipapp: one file, built from this project, that runs kyb with nothing else on sys.path.

One test on purpose: building takes tens of seconds, so the suite builds it once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The interpreter the venv was made from: same Python and platform, none of the venv's packages.
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)


@pytest.mark.slow  # builds the 75 MB zipapp: ~20 s
def test_zipapp_is_self_contained_and_writes_and_reads(tmp_path):
    pyz = tmp_path / "kyb.pyz"
    built = subprocess.run([sys.executable, str(ROOT / "zipapp.py"), "-o", str(pyz)],
                           capture_output=True, text=True, timeout=480)
    assert built.returncode == 0, built.stderr
    report = json.loads(built.stdout)
    assert {"pygit2", "apsw", "onnxruntime", "tokenizers", "numpy", "sqlite_vec"} <= set(report["native_packages"])

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_DATA_HOME": str(tmp_path / "data"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "KYB_STORE": str(tmp_path / "store"),
           "KYB_DEADLINES": "off", "KYB_EMBED_HELPER": "0"}
    work = tmp_path / "elsewhere"
    work.mkdir()

    def run(*args: str, cmd: list[str] | None = None) -> subprocess.CompletedProcess:
        # -S: no site-packages at all; -I: no PYTHONPATH, no user site, no cwd on sys.path.
        return subprocess.run(cmd or [BASE_PYTHON, "-S", "-I", str(pyz), *args], cwd=work, env=env,
                              capture_output=True, text=True, timeout=180)

    assert run("init").returncode == 0
    added = run("add", "--key", "checkout-write-path", "--title", "Checkout write path",
                "--body", "Checkout writes go through svc-checkout on node-3.")
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["action"] == "created"
    got = run("get", "checkout-write-path")
    assert got.returncode == 0 and json.loads(got.stdout)["body"].endswith("node-3.")
    query = run("query", "svc-checkout")
    assert query.returncode == 0, query.stderr
    assert [h["key"] for h in json.loads(query.stdout)["hits"]] == ["checkout-write-path"]
    assert run("get", "nope").returncode == 1  # the exit-code contract holds inside the zipapp

    # `kyb mcp` works from the one file too (the [mcp] extra is bundled when installed where it is built).
    # stdin stays open until the answer is read: a server may stop at end of input before answering.
    server = subprocess.Popen([BASE_PYTHON, "-S", "-I", str(pyz), "mcp"], cwd=work, env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watchdog = threading.Timer(180, server.kill)
    watchdog.start()
    try:
        replies = {}
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ):
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
            while "id" in message and message["id"] not in replies:
                line = server.stdout.readline()
                assert line, server.stderr.read()
                reply = json.loads(line)
                replies[reply.get("id")] = reply
    finally:
        server.stdin.close()
        server.wait(timeout=60)
        watchdog.cancel()
    assert {"query", "add", "context"} <= {t["name"] for t in replies[2]["result"]["tools"]}

    (cache,) = (tmp_path / "cache" / "kyb" / "pyz").iterdir()
    assert cache.name.startswith("0.") and (cache / ".complete").exists()
    probe = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[2] + '/site']\n"
             "import onnxruntime, tokenizers, numpy, apsw, sqlite_vec, pygit2, kyb_cli\n"
             "print(onnxruntime.__file__); print(kyb_cli.__file__)")
    loaded = run(cmd=[BASE_PYTHON, "-S", "-I", "-c", probe, str(cache), str(pyz)])
    assert loaded.returncode == 0, loaded.stderr
    ort_file, kyb_file = loaded.stdout.split()
    assert ort_file.startswith(str(cache)) and kyb_file.startswith(str(pyz))
