"""index/kept_state.one_read: an answer's index reads in one read transaction, never ending a
transaction it did not begin, ended when the block raises too; the answers are the same."""

from __future__ import annotations

import apsw
import pytest

from kyb_cli.core.index.kept_state import one_read


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


def test_coverages_are_coverage_of_each_candidate():
    """relevance.coverages (the weights' total summed once) gives coverage()'s very doubles."""
    import random

    from kyb_cli.core.search.relevance import coverage, coverages

    rng = random.Random(38)
    for _ in range(300):
        weights = [rng.choice([0.05, 0.3, 1.7, 2.2, 4.6]) for _ in range(rng.randint(0, 8))]
        if rng.random() < 0.1:
            weights = [0.0] * len(weights)
        vids = list(range(rng.randint(0, 12)))
        held = {v: {i for i in range(len(weights)) if rng.random() < 0.5} for v in vids if rng.random() < 0.7}
        got = coverages(held, vids, weights)
        assert {v: repr(c) for v, c in got.items()} == {v: repr(coverage(held.get(v, set()), weights)) for v in vids}


def test_a_commit_time_is_shown_as_rfc3339_says():
    from kyb_cli.core.search.lexical import _when
    from kyb_cli.core.timestamps import rfc3339

    for t in (0, 1_700_000_000, 1_700_000_000, 253_402_300_800):
        assert _when(t) == rfc3339(t)


@pytest.mark.parametrize("ask", [{"limit": 2}, {"limit": 2, "min_strength": "strong"}, {"limit": 3, "explain": True},
                                 {"limit": 2, "also": ["drill replica"]}, {"limit": 20}])
def test_only_the_kept_hits_are_graded_and_the_answer_is_the_same(store_path, monkeypatch, ask):
    """A response grades the hits it keeps (answer_parts.Ungraded): with every candidate graded first
    (as before) the answer is the same, keys in the same order; a cut grades no more than it keeps."""
    from kyb_cli.core.search import answer_parts, relevance
    from kyb_cli.core.search.pipeline import search

    from tests.support.index_helpers import T0, put

    for i in range(8):
        put(store_path, f"db-{i}", f"Postgres replica {i}", f"failover drill {i} " * (i + 1), when=T0 + i)
    calls = []
    real_grade = relevance.grade
    monkeypatch.setattr(relevance, "grade", lambda hit, **k: calls.append(1) or real_grade(hit, **k))
    got = search(store_path, "replica failover", **ask)
    if "min_strength" not in ask and "also" not in ask:
        assert len(calls) == len(got["hits"])  # the kept hits only
    real_graded = answer_parts.graded
    monkeypatch.setattr(answer_parts, "graded", lambda hits, these: real_graded(hits, hits) and these)
    every = search(store_path, "replica failover", **ask)
    assert [list(h.items()) for h in got["hits"]] == [list(h.items()) for h in every["hits"]]
    assert got == every
