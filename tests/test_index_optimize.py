"""The full-text tables are optimized (one segment, `fts_now`'s replaced rows dropped) when a build
ends and after a big catch-up; an optimized index answers exactly as before (keys, order, scores,
strength), in every time mode."""

from __future__ import annotations

from kyb_cli.core.index import build
from kyb_cli.core.index.fresh import with_index
from tests.support.index_helpers import T0, put, query, remove


def _answers(store_path) -> list:
    out = []
    for text in ("postgres replica failover", "backup restore", "+replica -backup", '"replica failover"', "rep*", ""):
        for mode in ({}, {"mode": "history"}, {"mode": "as_of", "as_of": T0 + 500},
                     {"mode": "changed_between", "window": (T0 + 100, T0 + 900)}):
            r = query(store_path, text, **mode)
            out.append([(h["key"], h["score"], h["strength"], h["sha"]) for h in r["hits"]] + [r["confident"]])
    return out


def test_optimized_index_answers_the_same(store_path):
    words = ["postgres replica failover", "backup restore drill", "replica lag alert", "failover runbook"]
    for round_ in range(6):  # every key rewritten: fts_now holds a tombstone per superseded version
        for i, text in enumerate(words):
            put(store_path, f"note-{i}", f"{text} {round_}", f"{text} body {round_ * i}", when=T0 + round_ * 200 + i)
        query(store_path, "replica")  # caught up one round at a time: small catch-ups, not optimized
    remove(store_path, "note-3", when=T0 + 2000)
    before = _answers(store_path)
    assert sum(len(a) > 1 for a in before) > 20
    with_index(store_path, lambda f: build.optimize(f.conn))
    assert _answers(store_path) == before


def test_big_catch_up_optimizes(store_path, monkeypatch):
    put(store_path, "note-a", "first", when=T0)
    query(store_path, "first")  # the index is built here
    calls = []
    monkeypatch.setattr(build, "optimize", lambda conn: calls.append(conn))
    monkeypatch.setattr(build, "OPTIMIZE_AFTER", 2)
    put(store_path, "note-b", "second", when=T0 + 1)
    assert query(store_path, "second")["count"] == 1 and calls == []  # one commit: not optimized
    put(store_path, "note-c", "third", when=T0 + 2)
    put(store_path, "note-d", "fourth", when=T0 + 3)
    assert query(store_path, "fourth")["count"] == 1 and len(calls) == 1


def test_word_weights_follow_the_index(store_path):
    """A term's df is kept per index state: a write is seen by the next answer's weights."""
    import math

    from kyb_cli.core.search import relevance

    def weights():
        return with_index(store_path, lambda f: relevance.term_weights(f.conn, ['"alpha"', '"beta"'], f.head))

    def expected(n_alpha, n_beta, total):
        return [max(0.05, math.log((total + 1) / (df + 0.5))) for df in (n_alpha, n_beta)]

    put(store_path, "note-a", "alpha", when=T0)
    put(store_path, "note-b", "beta gamma", when=T0 + 1)
    assert weights() == expected(1, 1, 2)
    assert weights() == expected(1, 1, 2)  # from the kept counts
    put(store_path, "note-c", "alpha again", when=T0 + 2)
    assert weights() == expected(2, 1, 3)


def test_an_index_never_optimized_is_optimized_at_its_first_catch_up(store_path, monkeypatch):
    """An index built before builds ended optimized gets the same compaction once, at its next
    catch-up, without a rebuild; later small catch-ups leave it alone."""
    put(store_path, "note-a", "first", when=T0)
    query(store_path, "first")
    with_index(store_path, lambda f: f.conn.execute("DELETE FROM meta WHERE k = 'fts_optimized'"))
    calls = []
    real = build.optimize
    monkeypatch.setattr(build, "optimize", lambda conn: (calls.append(conn), real(conn)))
    put(store_path, "note-b", "second", when=T0 + 1)
    assert query(store_path, "second")["count"] == 1 and len(calls) == 1
    put(store_path, "note-c", "third", when=T0 + 2)
    assert query(store_path, "third")["count"] == 1 and len(calls) == 1
