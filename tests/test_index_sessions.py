"""One answer is one index session; a write of a new key reads no index inside the writer lock.

The index is opened (brought to HEAD) by `index.fresh.fresh`; these tests count its calls around
one answer of the porcelain (api.handle, as every door calls it), and for writes note whether the
writer lock (`canon.lock.exclusive`) is held at the time.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from kyb_cli import api
from kyb_cli.api.operations import OPERATIONS
from tests.support.doors import StoreDoor


def _Door(store):
    return StoreDoor(store, "test")


def _fields(operation: str, **given):
    fields = {f.name: f.default for f in OPERATIONS[operation].fields}
    fields.update(given)
    return fields


@pytest.fixture
def opens(monkeypatch):
    """Every index open as (lock held?) — one entry per `fresh()` call."""
    import kyb_cli.core.canon.lock as lock
    import kyb_cli.core.index.fresh as fresh_mod

    seen: list[bool] = []
    held = [False]
    real_fresh, real_exclusive = fresh_mod.fresh, lock.exclusive

    def counting(*a, **k):
        seen.append(held[0])
        return real_fresh(*a, **k)

    @contextmanager
    def exclusive(*a, **k):
        with real_exclusive(*a, **k):
            held[0] = True
            try:
                yield
            finally:
                held[0] = False

    monkeypatch.setattr(fresh_mod, "fresh", counting)
    monkeypatch.setattr(lock, "exclusive", exclusive)
    return seen


@pytest.fixture
def door(store):
    d = _Door(store)
    api.add_knowledge(store, key="port", title="Port", body="Checkout uses port 9090.", tags=[], refs=[],
                      attribution=d.attribution())
    api.add_knowledge(store, key="port", title="Port", body="Checkout uses port 9443.", tags=[], refs=[],
                      attribution=d.attribution())
    api.handle("task", d, _fields("task", key="task-a", title="A"))
    api.handle("task", d, _fields("task", key="task-b", title="B", blocked_by=["task-a"]))
    api.handle("get", d, _fields("get", key="port"))  # the index is at HEAD before counting
    return d


@pytest.mark.parametrize("fields", [
    {"key": "port"}, {"key": "task-a"}, {"key": "port", "version": 1}, {"key": "port", "at": "HEAD~3"},
], ids=["knowledge-with-trust", "task-with-blocks", "by-version", "at-revision"])
def test_a_get_with_its_trust_annotation_and_task_blocks_opens_the_index_once(door, opens, fields):
    answer = api.handle("get", door, _fields("get", **fields))
    assert "verified" in answer
    if fields["key"] == "task-a":
        assert answer["blocks"] == ["task-b"]
    assert len(opens) == 1


@pytest.mark.parametrize("operation,fields", [
    ("history", {"key": "port"}), ("tasks", {}), ("tasks", {"ready": True}), ("incidents", {}),
], ids=["history", "tasks", "tasks-ready", "incidents"])
def test_a_read_answer_opens_the_index_once(door, opens, operation, fields):
    api.handle(operation, door, _fields(operation, **fields))
    assert len(opens) == 1


@pytest.mark.parametrize("operation,fields", [
    ("task", {"key": "task-new", "title": "New", "blocked_by": ["task-a"]}),
    ("incident", {"key": "inc-2026-12-01-new", "title": "New", "service": "checkout", "severity": "high"}),
], ids=["task", "incident"])
def test_a_write_of_a_new_key_reads_no_index_inside_the_writer_lock(door, opens, operation, fields):
    reply = api.handle(operation, door, _fields(operation, **fields))
    assert reply["action"] == "created"
    assert opens and True not in opens


def test_a_new_knowledge_key_reads_no_index_inside_the_writer_lock(door, opens):
    reply = api.add_knowledge(door.store(), key="fresh-fact", title="Fresh", body="A new fact.", tags=[],
                              refs=[], attribution=door.attribution()).to_json()
    assert reply["action"] == "created"
    assert opens and True not in opens


def test_damage_met_by_a_read_inside_the_session_is_healed_by_the_session_once(door, opens, monkeypatch):
    """The trust annotation reads on the answer's connection; real damage it meets reaches the
    session's opener, which rebuilds once and answers (never a second, unhealed session)."""
    import kyb_cli.core.index.trust as trust
    from kyb_cli.core.index import schema

    real = trust.key_versions
    calls = []

    def damaged_once(conn, keys):
        calls.append(keys)
        if len(calls) == 1:
            raise schema.Damaged("a row that will not decode")
        return real(conn, keys)

    monkeypatch.setattr(trust, "key_versions", damaged_once)
    answer = api.handle("get", door, _fields("get", key="port"))
    assert answer["key"] == "port" and len(calls) == 2
    assert len(opens) == 2  # the session, then its one rebuild


@pytest.mark.parametrize("mode", [{}, {"history": True}, {"as_of": "2999-01-01"}], ids=["current", "history", "as-of"])
def test_a_query_with_its_trust_annotation_opens_the_index_once(door, opens, mode):
    _path, response = api.query(door.path(), "port", semantic=False, **mode)
    assert response["hits"] and all("verified" in h and "stale" in h for h in response["hits"])
    assert len(opens) == 1


def test_a_session_is_its_own_threads_answer_and_never_joined_by_another(door, opens):
    """Under `kyb serve`'s thread pool, a request never reads on another request's open session."""
    import threading

    from kyb_cli.core.index.fresh import joined, with_index

    inside, done = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def hold(f):
        seen["held"] = f
        inside.set()
        done.wait(10)
        return f

    holder = threading.Thread(target=with_index, args=(door.path(), hold))
    holder.start()
    try:
        assert inside.wait(10)
        seen["joined"] = joined(door.path())
        answer = api.handle("get", door, _fields("get", key="port"))
    finally:
        done.set()
        holder.join(10)
    assert seen["joined"] is None and answer["key"] == "port"
    assert len(opens) == 2  # the held session, and this thread's own
