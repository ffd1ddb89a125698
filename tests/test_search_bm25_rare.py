"""A one-shot answer scores only the rows holding a rarer word when that provably leaves the top as
it is (search/bm25.rare_top): the same rows, scores (the same doubles) and order as bm25() over
every matching row, on an index holding tombstones of superseded versions; otherwise it says None."""

from __future__ import annotations

import random

from kyb_cli.core.index.fresh import with_index
from kyb_cli.core.search import bm25
from kyb_cli.core.search.syntax import query_plan
from tests.support.index_helpers import T0, put, query, remove

COMMON = ["checkout", "latency", "timeout"]  # in most bodies: FTS5 clamps their idf to 1e-6
RARE = ["postgres", "replica", "failover", "drill", "café", "running"]
SQL = ("SELECT rowid, -bm25(fts_now, 3.0, 1.5, 1.5, 1.5, 1.0) AS s FROM fts_now WHERE fts_now MATCH ? "
       "ORDER BY s DESC, rowid DESC LIMIT ?")


def _store(store_path) -> None:
    rng = random.Random(11)
    for round_ in range(3):  # every key rewritten: fts_now holds a tombstone per superseded version
        for i in range(30):
            words = [w for w in COMMON if rng.random() < 0.85] + rng.sample(RARE, rng.randint(0, 2))
            body = " ".join(rng.choice(words or COMMON) for _ in range(rng.randint(3, 30)))
            put(store_path, f"note-{i}", f"{rng.choice(COMMON)} note {i}", body, when=T0 + round_ * 100 + i)
        query(store_path, "replica")  # small catch-ups: tombstones stay
    remove(store_path, "note-3", when=T0 + 2000)


def test_the_rows_left_out_give_bm25s_top_row_for_row(store_path):
    _store(store_path)
    rng = random.Random(5)

    def compare(f):
        used = {"rare": 0, "all common": 0}
        for _ in range(200):
            words = rng.sample(COMMON, rng.randint(1, 3)) + rng.sample(RARE, rng.randint(0, 2))
            rng.shuffle(words)
            match = query_plan(" ".join(words))[1].match
            limit = rng.choice([1, 3, 5, 10])
            ours = bm25.rare_top(f.conn, match, limit)
            theirs = [tuple(r) for r in f.conn.execute(SQL, (match, limit))]
            if ours is not None:
                used["all common" if set(words) <= set(COMMON) else "rare"] += 1
                assert ours == theirs, (match, limit)
        return used

    used = with_index(store_path, compare)
    assert used["rare"] > 40 and used["all common"] > 10, used


def test_no_bound_when_the_rows_looked_at_are_too_few(store_path):
    _store(store_path)

    def check(f):
        rare_rows = f.conn.execute("SELECT count(*) FROM fts_now WHERE fts_now MATCH '\"drill\"'").fetchone()[0]
        plan = query_plan("checkout drill")[1].match
        assert 0 < rare_rows
        assert bm25.rare_top(f.conn, plan, rare_rows + 1) is None  # a common-only row fills the top
        assert bm25.rare_top(f.conn, plan, rare_rows) is not None
        assert bm25.rare_top(f.conn, query_plan("checkout")[1].match, 3) is None  # one word: nothing to skip
        return True

    assert with_index(store_path, check)


def test_no_bound_when_rows_holding_every_word_score_low(store_path):
    """Long bodies holding both common words once score below a short body repeating one: the rows
    holding every word do not clear (n - 1) * 2.2e-6, so every row is scored (and the short one leads)."""
    filler = " ".join(f"filler{i}" for i in range(100))
    for i in range(6):
        put(store_path, f"long-{i}", f"long {i}", f"alpha beta {filler}", when=T0 + i)
    for i in range(4):
        put(store_path, f"short-{i}", f"short {i}", "alpha alpha alpha", when=T0 + 10 + i)
    match = query_plan("alpha beta")[1].match

    def check(f):
        return bm25.rare_top(f.conn, match, 3), [tuple(r) for r in f.conn.execute(SQL, (match, 3))]

    ours, theirs = with_index(store_path, check)
    assert ours is None
    assert query(store_path, "alpha beta")["hits"][0]["key"].startswith("short-")


def test_the_row_count_is_the_one_bm25_reads(store_path):
    """fts_now's averages record counts its live rows (a superseded or retracted version's row is gone)."""
    _store(store_path)

    def rows(f):
        return bm25._fts_now_rows(f.conn), f.conn.execute("SELECT count(*) FROM keys WHERE state != 'retracted'"
                                                          ).fetchone()[0]

    ours, live = with_index(store_path, rows)
    assert ours == live == 29


def test_answers_are_the_same_with_the_bound(store_path, monkeypatch):
    _store(store_path)
    questions = ["checkout postgres", "latency timeout failover drill", "timeout café", "checkout latency timeout",
                 "running checkout -drill", "+replica checkout", "latency timeout", "timeout unheardof checkout"]
    bounded = [query(store_path, q) for q in questions]
    monkeypatch.setattr(bm25, "rare_top", lambda *a: None)
    assert [query(store_path, q) for q in questions] == bounded
