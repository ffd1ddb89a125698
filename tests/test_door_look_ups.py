"""A door's English question: both models looked up in one call (one cache statement), then split
per model (embed.one_of), must give what each model's own look-up gives; and an answer's pinned
index state (vectors.pinned) must follow the connection's own writes and drop at its end."""

from __future__ import annotations

import apsw
import pytest


@pytest.fixture
def both(tiny, monkeypatch):
    """The tiny model as e5 and as the English side (CLS pooling: another fingerprint)."""
    monkeypatch.setenv("KYB_MODEL_EN", str(tiny))
    return tiny


def test_both_looked_up_at_once_equal_each_alone(both):
    from kyb_cli.core import embed

    models = [m for m in embed.MODELS if not m.package]
    for cached in (False, True):
        question = "which runbook restarts the queue"
        if cached:
            embed.query_vectors(question, models)  # both vectors now in the cache
            embed.write_pending()
        together = embed.start_query(question, models)
        for pos, spec in enumerate(models):
            alone = embed.start_query(question, [spec])
            part = embed.one_of(together, pos)
            assert part[0] == alone[0]
            assert [job[1:] for job in part[1]] == [job[1:] for job in alone[1]]
            assert [job[0] for job in part[1]] == [0] * len(part[1])
            assert embed.finish_query(part) == embed.finish_query(alone)
        assert all(vector is not None for _fp, vector, _why in together[0]) == cached


def test_cache_get_each_reads_every_models_pair(tmp_path):
    from kyb_cli.core.embed.cache import VectorCache

    cache = VectorCache(tmp_path / "c.sqlite3")
    cache.put_each([("fa", "h1", b"\1" * 8), ("fb", "h1", b"\2" * 8), ("fa", "h2", b"\3" * 8)])
    got = cache.get_each([("fa", "h1"), ("fb", "h1"), ("fb", "h2"), ("fa", "h2")])
    assert got == {("fa", "h1"): b"\1" * 8, ("fb", "h1"): b"\2" * 8, ("fa", "h2"): b"\3" * 8}
    assert got[("fa", "h1")] == cache.get("fa", "h1") and cache.get_each([]) == {}


def test_pinned_state_follows_own_writes_and_ends(tmp_path):
    from kyb_cli.core.index.vectors import db_state, pinned, unpinned

    path = str(tmp_path / "i.sqlite3")
    conn, other = apsw.Connection(path), apsw.Connection(path)
    conn.execute("CREATE TABLE t(x)")
    before = db_state(conn)
    pinned(conn)
    try:
        assert db_state(conn) == before
        other.execute("INSERT INTO t VALUES (1)")  # another connection's commit: seen after the pin
        assert db_state(conn) == before
        conn.execute("INSERT INTO t VALUES (2)")  # its own write: seen at once
        mine = db_state(conn)
        assert mine != before and db_state(conn) == mine
        assert db_state(other) == (other.total_changes(), other.execute("PRAGMA data_version").fetchone()[0])
    finally:
        unpinned()
    assert db_state(conn) == (conn.total_changes(), conn.execute("PRAGMA data_version").fetchone()[0])
