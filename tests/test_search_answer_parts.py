"""search/answer_parts.one_read: an answer's index reads in one read transaction, never ending a
transaction it did not begin, ended when the block raises too; the answers are the same."""

from __future__ import annotations

import apsw
import pytest

from kyb_cli.core.search.answer_parts import one_read


def test_one_read_holds_one_transaction_and_leaves_a_callers_alone():
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE t(x)")
    with one_read(conn):
        assert conn.in_transaction
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)
    assert not conn.in_transaction
    conn.execute("BEGIN")
    with one_read(conn):
        conn.execute("INSERT INTO t VALUES (1)")
    assert conn.in_transaction  # the caller's: not committed here
    conn.execute("ROLLBACK")
    with pytest.raises(ZeroDivisionError):
        with one_read(conn):
            1 / 0
    assert not conn.in_transaction


def test_a_hybrid_answer_reads_in_one_transaction(store_path, monkeypatch):
    """The grading's reads (word counts, rows, the newest id) run inside one transaction, and the
    connection is out of it once the answer is made."""
    from kyb_cli.core.search import pipeline, relevance
    from tests.support.index_helpers import T0, put, query

    for i in range(6):
        put(store_path, f"db-{i}", f"Postgres replica {i}", f"failover drill {i} " * (i + 1), when=T0 + i)
    seen = []
    real = relevance.term_weights

    def weights(conn, *a, **k):
        seen.append(conn.in_transaction)
        return real(conn, *a, **k)

    monkeypatch.setattr(relevance, "term_weights", weights)
    before = query(store_path, "replica failover")
    assert seen == [True]
    monkeypatch.setattr(pipeline, "_answer", lambda conn, *a, **k: pipeline._answered(conn, *a, **k))
    assert query(store_path, "replica failover") == before
