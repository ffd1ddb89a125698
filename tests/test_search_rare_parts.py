"""A one-shot answer with a rarer word scores only the rows holding one, from each rarer word's own
bm25() and the common words' parts kept on disk (common_rows.rare_top): the same rows, scores (the
same doubles) and order as bm25() over every row of the OR, without asking bm25() of the OR; when
the rows holding a rarer word cannot prove the top, or the parts are not kept yet, it falls back."""

from __future__ import annotations

import random

from kyb_cli.core.index.fresh import with_index
from kyb_cli.core.search import bm25
from kyb_cli.core.search.syntax import query_plan
from tests.test_search_bm25_rare import COMMON, RARE, SQL, _store

OR_SQL = "AND +rowid IN"  # today's SQL for the rarer-word case: bm25() over every row of the OR


def _ask(store_path, questions):
    """Each question's (rare_top, bm25() over every row, whether the OR was scored by SQL)."""
    def ask(f):
        asked: list[str] = []
        f.conn.exec_trace = lambda _c, sql, _b: asked.append(sql) or True
        out = []
        for words, limit in questions:
            match = query_plan(" ".join(words))[1].match
            before = len(asked)
            ours = bm25.rare_top(f.conn, match, limit)
            scored_the_or = any(OR_SQL in s for s in asked[before:])
            f.conn.exec_trace = None
            out.append((ours, [tuple(r) for r in f.conn.execute(SQL, (match, limit))], scored_the_or))
            f.conn.exec_trace = lambda _c, sql, _b: asked.append(sql) or True
        return out

    return with_index(store_path, ask)


def _questions():
    rng = random.Random(7)
    out = []
    for _ in range(150):
        words = rng.sample(COMMON, rng.randint(1, 3)) + rng.sample(RARE, rng.randint(1, 2))
        rng.shuffle(words)
        out.append((words, rng.choice([1, 3, 5, 10])))
    return out


def test_the_kept_parts_give_bm25s_top_of_the_or_without_scoring_it(store_path):
    _store(store_path)
    questions = _questions()
    rounds = [_ask(store_path, questions) for _ in range(2)]  # a phrase's parts are made its second asking
    for answers in rounds:
        for (ours, theirs, _sql), q in zip(answers, questions):
            assert ours is None or ours == theirs, q
    first, last = rounds
    assert any(sql for ours, _t, sql in first)  # before a common word's parts are kept: today's SQL
    proved = [ours is not None for ours, _t, _sql in last]
    assert sum(proved) > 40 and proved == [ours is not None for ours, _t, _sql in first]
    assert not any(sql for ours, _t, sql in last)  # never bm25() over every row of the OR


def test_a_top_the_rarer_rows_cannot_fill_falls_back(store_path):
    """Fewer rows hold the rarer word than the top asks: a row holding only common words enters it,
    so the proof fails and rare_top says None (bm25() scores every row), kept parts or not."""
    _store(store_path)

    def count(f):
        return f.conn.execute("SELECT count(*) FROM fts_now WHERE fts_now MATCH '\"drill\"'").fetchone()[0]

    rare_rows = with_index(store_path, count)
    questions = [(["checkout", "drill", "latency"], rare_rows + 1), (["checkout", "drill", "latency"], rare_rows)]
    for _ in range(3):
        (too_few, theirs_few, _s1), (enough, theirs, _s2) = _ask(store_path, questions)
        assert too_few is None and len(theirs_few) == rare_rows + 1
        assert enough == theirs
