"""The warm helper process: reused across calls, restarted for a new model, never required."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.tiny_model import build_tiny_model


@pytest.fixture
def model(tmp_path, monkeypatch):
    path = build_tiny_model(tmp_path / "model")
    monkeypatch.setenv("KYB_MODEL", str(path))
    monkeypatch.setenv("KYB_EMBED_HELPER", "1")
    monkeypatch.setenv("KYB_HELPER_IDLE", "30")
    from kyb_cli.core import embed

    embed._EMBEDDERS.clear()
    yield path
    from kyb_cli.core.embed import client

    client.stop(path)


def test_helper_starts_on_demand_and_is_reused(model):
    from kyb_cli.core import embed
    from kyb_cli.core.embed import client

    assert client.ping(model) is None
    first, reason = embed.query_vector("where does checkout write")
    assert reason is None and len(first) == 32 * 4
    pid = client.ping(model)["pid"]
    assert embed.query_vector("another question")[1] is None
    assert client.ping(model)["pid"] == pid and pid != os.getpid()
    assert not embed._EMBEDDERS  # nothing was loaded in this process


def test_helper_and_in_process_agree(model, monkeypatch):
    from kyb_cli.core import embed

    via_helper = embed.passage_vectors(["Checkout. node 3 port 9090"]).vectors
    embed.open_cache().db.execute("DELETE FROM vectors")
    monkeypatch.setenv("KYB_EMBED_HELPER", "0")
    in_process = embed.passage_vectors(["Checkout. node 3 port 9090"]).vectors
    (h, a), (h2, b) = next(iter(via_helper.items())), next(iter(in_process.items()))
    assert h == h2 and max(abs(x - y) for x, y in zip(embed.vector_from_bytes(a), embed.vector_from_bytes(b))) < 1e-5


def test_helper_restarts_for_a_changed_model(model):
    from kyb_cli.core import embed
    from kyb_cli.core.embed import client

    embed.query_vector("checkout")
    before = client.ping(model)
    build_tiny_model(model, seed=99)
    vector, reason = embed.query_vector("checkout")
    after = client.ping(model)
    assert reason is None and after["pid"] != before["pid"]
    assert after["fingerprint"] == embed.current_fingerprint()[0] != before["fingerprint"]


def test_helper_that_cannot_start_falls_back_in_process(model, monkeypatch):
    from kyb_cli.core import embed
    from kyb_cli.core.embed import client

    monkeypatch.setattr(client, "spawn", lambda *a: subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"]))
    vector, reason = embed.query_vector("checkout")
    assert reason is None and len(vector) == 128 and embed._EMBEDDERS


def test_concurrent_processes_share_one_helper_and_one_cache(model, tmp_path):
    script = (
        "import json, sys\n"
        "from kyb_cli.core import embed\n"
        "from kyb_cli.core.embed import client\n"
        "v, r = embed.query_vector('question ' + sys.argv[1])\n"
        "p = embed.passage_vectors(['shared passage', 'own ' + sys.argv[1]])\n"
        "print(json.dumps({'ok': v is not None and p.pending == 0, 'pid': client.ping(embed.locate_model().path)['pid']}))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(i)], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ)) for i in range(4)]
    results = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(r["ok"] for r in results)
    assert len({r["pid"] for r in results}) == 1
    from kyb_cli.core import embed

    assert sum(embed.open_cache().fingerprints().values()) == 4 + 1 + 4  # queries, shared, own


def test_idle_helper_exits_and_removes_its_socket(model, monkeypatch):
    """No helper is left forever: after KYB_HELPER_IDLE seconds without requests it goes away."""
    import time

    from kyb_cli.core import embed
    from kyb_cli.core.embed import client

    monkeypatch.setenv("KYB_HELPER_IDLE", "1")
    assert embed.query_vector("an idle question")[1] is None
    pid = client.ping(model)["pid"]
    sock = client.socket_path(model)
    deadline = time.monotonic() + 15
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.2)  # polling the file, not pinging: a ping would count as a request
    assert not sock.exists()
    while time.monotonic() < deadline:
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"helper {pid} still running after its idle timeout")
