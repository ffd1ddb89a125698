"""No index read inside the writer lock: while one writer holds `.git/kyb/write.lock`, every other
writer waits, so a write's index reads (the `revived`/`similar` hints, a task's checks) happen before
or after it, never while the index catches up under it."""

from __future__ import annotations

import os

from kyb_cli import api
from kyb_cli.core.canon import lock
from kyb_cli.core.index import fresh as fresh_mod



def _watch_index_reads(monkeypatch, store) -> list[bool]:
    held: list[bool] = []
    real = fresh_mod.fresh
    write_lock = store.kyb_dir / "write.lock"

    def fresh(*args, **kwargs):
        fd = lock.try_lock(write_lock)
        held.append(fd is None)
        if fd is not None:
            os.close(fd)
        return real(*args, **kwargs)

    monkeypatch.setattr(fresh_mod, "fresh", fresh)
    return held


def test_a_new_knowledge_key_reads_the_index_outside_the_writer_lock(store, monkeypatch):
    who = api.attribution("test")
    api.add_knowledge(store, key="old-note", title="Old note", body="first", tags=[], refs=[], attribution=who)
    api.retract_knowledge(store, "old-note", "it was wrong", who)
    held = _watch_index_reads(monkeypatch, store)
    result = api.add_knowledge(store, key="old-note", title="Old note", body="second", tags=[], refs=[],
                               attribution=who)
    assert held and not any(held)
    assert result.extras.get("revived") is True  # the hint still comes, read before the lock


def test_a_new_task_and_incident_read_the_index_outside_the_writer_lock(store, monkeypatch):
    who = api.attribution("test")
    held = _watch_index_reads(monkeypatch, store)
    api.write_task(store, who, key="task-one", title="One")
    api.write_incident(store, who, key="inc-2026-one", title="One", service="api", severity="low")
    assert not any(held)
