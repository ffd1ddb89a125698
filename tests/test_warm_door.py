"""What a long-lived door keeps warm (index connections, core/index/warm.py) never answers stale:
a write from another process, a `git pull`, a `kyb sync`, a rebuilt or deleted index, a model import, a
model change and a config change are all
seen by the very next answer. In-process through the porcelain, as `kyb mcp` and `kyb serve` run it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from kyb_cli import api
from kyb_cli.core.index import schema, warm
from kyb_cli.core.records.model import Record
from tests.support.index_helpers import T0, put
from kyb_cli.core.records.keys import path_of_key


@pytest.fixture
def warm_door():
    api.keep_warm()
    yield
    api.keep_warm(False)


def _keys(store_path, text: str, **kw) -> list[str]:
    _path, response = api.query(store_path, text, semantic=False, **kw)
    return [h["key"] for h in response["hits"]]


def _git(path, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="h", GIT_AUTHOR_EMAIL="h@example.org",
               GIT_COMMITTER_NAME="h", GIT_COMMITTER_EMAIL="h@example.org")
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, env=env)


def _idle(store_path) -> list:
    return [c for c, _i in warm._idle.get(str(schema.index_path(store_path / ".git")), [])]


def test_warm_door_reuses_one_index_connection_between_answers(store_path, warm_door):
    put(store_path, "svc", "Svc", "port 8080", T0)
    assert _keys(store_path, "8080") == ["svc"]
    kept = _idle(store_path)
    assert len(kept) == 1
    assert _keys(store_path, "8080") == ["svc"]
    assert _idle(store_path) == kept  # the same connection answered again, and went back


def test_one_shot_process_closes_its_index_connection(store_path):
    put(store_path, "svc", "Svc", "port 8080", T0)
    assert _keys(store_path, "8080") == ["svc"]
    assert _idle(store_path) == []


def test_write_from_another_process_is_seen_by_the_next_warm_answer(store_path, warm_door):
    put(store_path, "svc", "Svc", "port 8080", T0)
    assert _keys(store_path, "zebra") == []
    record = Record(key="zoo", title="Zoo", body="the zebra lives here")
    (store_path / "knowledge").mkdir(exist_ok=True)
    (store_path / path_of_key("zoo")).parent.mkdir(parents=True, exist_ok=True)
    (store_path / path_of_key("zoo")).write_text(record.to_markdown())
    _git(store_path, "add", path_of_key("zoo"))
    _git(store_path, "commit", "-q", "-m", "kyb: add zoo")  # another process moves HEAD
    assert _keys(store_path, "zebra") == ["zoo"]


def test_git_pull_is_seen_by_the_next_warm_answer(store_path, tmp_path, warm_door):
    put(store_path, "svc", "Svc", "port 8080", T0)
    _git(store_path, "reset", "-q", "--hard")
    peer = tmp_path / "peer"
    _git(tmp_path, "clone", "-q", str(store_path), str(peer))
    assert _keys(store_path, "walrus") == []
    put(peer, "seal", "Seal", "a walrus and a seal", T0 + 5)
    _git(peer, "reset", "-q", "--hard")
    _git(store_path, "pull", "-q", "--ff-only", str(peer), "HEAD")
    assert _keys(store_path, "walrus") == ["seal"]


def test_index_rebuilt_by_another_process_is_read_from_the_new_file(store_path, warm_door):
    put(store_path, "svc", "Svc", "port 8080", T0)
    assert _keys(store_path, "8080") == ["svc"]
    old = _idle(store_path)
    put(store_path, "db", "Db", "port 5432", T0 + 1)
    subprocess.run([sys.executable, "-c", "import sys; from kyb_cli import api; api.rebuild_index(sys.argv[1])",
                    str(store_path)], check=True, env=dict(os.environ, PYTHONPATH=os.getcwd()))
    assert _keys(store_path, "5432") == ["db"]
    assert _idle(store_path) != old  # the connection to the replaced file was closed, not reused


def test_deleted_index_is_rebuilt_on_disk_not_kept_alive_in_the_server(store_path, warm_door):
    put(store_path, "svc", "Svc", "port 8080", T0)
    assert _keys(store_path, "8080") == ["svc"]
    db = schema.index_path(store_path / ".git")
    db.unlink()  # "it is a cache": a user removes it while the server runs
    put(store_path, "db", "Db", "port 5432", T0 + 1)
    assert _keys(store_path, "5432") == ["db"]
    assert db.exists()


def test_model_change_is_seen_by_the_next_warm_answer(store_path, tmp_path, tiny_dir, monkeypatch, warm_door):
    from kyb_cli.core import embed
    from tests.support.tiny_model import build_tiny_model

    model = tmp_path / "model"
    shutil.copytree(tiny_dir, model)
    monkeypatch.setenv("KYB_MODEL", str(model))
    monkeypatch.setenv("KYB_EMBED_HELPER", "0")
    embed._EMBEDDERS.clear()
    put(store_path, "svc", "Svc", "checkout service port 8080", T0)
    api.embed_all(store_path)
    _p, before = api.query(store_path, "checkout service")
    assert before["semantic"] and not before.get("pending_vectors")
    build_tiny_model(model, seed=8)  # another model in the same place (`kyb model import` over it)
    _p, after = api.query(store_path, "checkout service")
    assert after["semantic"] and after["pending_vectors"] == 1  # the new model's vectors are not there yet
    monkeypatch.setenv("KYB_MODEL", str(tmp_path / "gone"))
    _p, off = api.query(store_path, "checkout service")
    assert not off["semantic"] and off["semantic_off"]


def test_stdio_door_answers_reads_inline_and_keeps_writes_on_a_thread(store_path):
    """`kyb mcp` runs read-only tools on its event loop (no thread hop per answer); a write, which may
    wait for the store's lock, still runs on a worker thread; both still answer through the door."""
    import anyio

    from kyb_cli.mcp.server import answer_reads_inline, build_server

    server = build_server(str(store_path))
    answer_reads_inline(server)
    tools = {t.name: t for t in server._tool_manager.list_tools()}
    assert tools["query"].is_async and tools["get"].is_async
    assert not tools["add"].is_async and not tools["retract"].is_async

    async def ask():
        await server.call_tool("add", {"key": "svc", "title": "Svc", "body": "port 8080"})
        return await server.call_tool("query", {"text": "8080", "semantic": False})

    result = anyio.run(ask)
    assert [h["key"] for h in result.structured_content["hits"]] == ["svc"]


def test_warm_connections_are_never_shared_between_concurrent_requests(store_path, warm_door):
    """`kyb serve` answers from a thread pool: each request takes its own connection (at most
    IDLE_PER_INDEX stay idle afterwards), and every concurrent answer is right."""
    from concurrent.futures import ThreadPoolExecutor

    put(store_path, "svc", "Svc", "port 8080", T0)
    put(store_path, "db", "Db", "port 5432", T0 + 1)
    held: set[int] = set()
    clashes: list[int] = []
    taken = warm.take

    def spy(path):
        opened = taken(path)
        if opened is not None:
            if id(opened[0]) in held:
                clashes.append(id(opened[0]))
            held.add(id(opened[0]))
        return opened

    given = warm.release

    def back(conn):
        held.discard(id(conn))
        given(conn)

    import kyb_cli.core.index.fresh as fresh_mod

    fresh_mod.warm.take, fresh_mod.warm.release = spy, back
    try:
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda i: _keys(store_path, "5432" if i % 2 else "8080"), range(80)))
    finally:
        fresh_mod.warm.take, fresh_mod.warm.release = taken, given
    assert answers == [["db"] if i % 2 else ["svc"] for i in range(80)]
    assert clashes == []
    assert 1 <= len(_idle(store_path)) <= warm.IDLE_PER_INDEX


def test_words_a_write_from_another_process_adds_count_in_the_next_warm_answer(store_path, warm_door):
    """The rows a door keeps per term (search/relevance.py term_hits) are of one state of the index:
    a record holding the question's words, committed by another process, is graded by them at once."""
    put(store_path, "svc", "Svc", "zebra crossing on port 8080", T0)
    _path, before = api.query(store_path, "zebra giraffe", semantic=False)
    assert [(h["key"], h["strength"]) for h in before["hits"]] == [("svc", "weak")]
    record = Record(key="zoo", title="Zoo", body="the zebra and the giraffe live here")
    (store_path / path_of_key("zoo")).parent.mkdir(parents=True, exist_ok=True)
    (store_path / path_of_key("zoo")).write_text(record.to_markdown())
    _git(store_path, "add", path_of_key("zoo"))
    _git(store_path, "commit", "-q", "-m", "kyb: add zoo")
    _path, after = api.query(store_path, "zebra giraffe", semantic=False)
    assert [(h["key"], h["strength"]) for h in after["hits"]][0] == ("zoo", "strong")


def test_verification_written_by_another_process_is_in_the_next_warm_answer(store_path, warm_door):
    """`verified` and `stale` are read on the search's own (kept, caught-up) connection: a verify
    committed by another process shows in the very next answer, never the state before it."""
    put(store_path, "svc", "Svc", "port 8080", T0)
    _path, before = api.query(store_path, "port", semantic=False)
    assert before["hits"][0]["verified"] is None and len(_idle(store_path)) == 1
    code = ("import sys; from kyb_cli import api; api.verify(api.open_store(sys.argv[1]), 'svc', source='runbook', "
            "attribution=api.attribution('other'))")
    subprocess.run([sys.executable, "-c", code, str(store_path)], check=True, capture_output=True)
    _path, after = api.query(store_path, "port", semantic=False)
    assert after["hits"][0]["verified"]["source"] == "runbook" and after["hits"][0]["verified"]["current"] is True


def test_trust_assessments_a_door_keeps_are_of_one_state_of_the_index(store_path, warm_door):
    """annotate_hits keeps its assessments per state (file, head, newest version id): any write starts anew."""
    from kyb_cli.core.index import trust

    put(store_path, "svc", "Svc", "port 8080", T0)
    _path, first = api.query(store_path, "port", semantic=False)
    state, kept = trust._KEPT[0]
    assert ("svc", first["hits"][0]["sha"]) in kept
    _path, again = api.query(store_path, "port", semantic=False)
    assert trust._KEPT[0][0] == state and again["hits"] == first["hits"]
    put(store_path, "other", "Other", "port 9090", T0 + 10)
    _path, after = api.query(store_path, "port", semantic=False)
    assert trust._KEPT[0][0] != state and trust._KEPT[0][1] is not kept
    assert {h["key"] for h in after["hits"]} == {"svc", "other"}


def test_kyb_sync_is_seen_by_the_next_warm_answer(store_path, tmp_path, warm_door):
    """Issue 38: a sync that brings a peer's record in (a merge or fast-forward by kyb itself)."""
    who = api.attribution("test", environ={})
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", str(remote))
    store = api.open_store(store_path)
    api.add_knowledge(store, key="svc", title="Svc", body="port 8080", tags=[], refs=[], attribution=who)
    api.set_remote(store, str(remote))
    api.sync(store, attribution=who)
    api.clone(str(remote), tmp_path / "peer")
    assert _keys(store_path, "walrus") == []
    peer_store = api.open_store(tmp_path / "peer")
    api.add_knowledge(peer_store, key="seal", title="Seal", body="a walrus and a seal", tags=[], refs=[],
                      attribution=who)
    api.sync(peer_store, attribution=who)
    api.sync(store, attribution=who)
    assert _keys(store_path, "walrus") == ["seal"]


def test_config_change_is_seen_by_the_next_warm_answer(store_path, tmp_path, tiny_dir, monkeypatch, warm_door):
    """Issue 38: the model named in the config file, changed under a running door."""
    config = tmp_path / "config.toml"
    config.write_text(f'model = "{tiny_dir}"\n', encoding="utf-8")
    monkeypatch.delenv("KYB_MODEL", raising=False)
    monkeypatch.delenv("KYB_MODEL_EN", raising=False)
    monkeypatch.setenv("KYB_CONFIG", str(config))
    put(store_path, "svc", "Svc", "checkout service port 8080", T0)
    _p, before = api.query(store_path, "checkout service")
    assert before["semantic"]
    config.write_text(f'model = "{tmp_path / "no-model-here"}"\n', encoding="utf-8")
    _p, after = api.query(store_path, "checkout service")
    assert not after["semantic"] and after["semantic_off"]


def test_model_import_is_seen_by_the_next_warm_answer(store_path, tiny_dir, monkeypatch, warm_door):
    """Issue 38: a door that answered without a model answers by meaning once `kyb model import`
    (api.model_import, another process's or its own) put one in the default place."""
    from kyb_cli.core import embed

    monkeypatch.delenv("KYB_MODEL", raising=False)
    monkeypatch.delenv("KYB_MODEL_EN", raising=False)
    monkeypatch.setenv("KYB_EMBED_HELPER", "0")
    embed._EMBEDDERS.clear()
    put(store_path, "svc", "Svc", "checkout service port 8080", T0)
    _p, before = api.query(store_path, "checkout service")
    assert not before["semantic"] and before["semantic_off"]
    api.model_import(tiny_dir)
    _p, after = api.query(store_path, "checkout service")
    assert after["semantic"] and after["pending_vectors"] == 1  # the new model's vector of `svc`: not made yet
    api.embed_all(store_path)
    _p, done = api.query(store_path, "checkout service")
    assert done["semantic"] and not done.get("pending_vectors") and [h["key"] for h in done["hits"]] == ["svc"]
