"""A one-shot answer with a rarer word scores the OR from parts (common_rows.or_top, few_rare): the
same rows, scores (the same doubles) and order as bm25() over every row of the OR, without asking
bm25() of the OR; when the kept best rows cannot prove the top, or too few rows hold a rarer word,
or nothing is kept yet, bm25() does."""

from __future__ import annotations

import random

from kyb_cli.core.index.fresh import with_index
from kyb_cli.core.search import bm25, common_rows
from kyb_cli.core.search.syntax import query_plan
from tests.test_search_bm25_rare import COMMON, RARE, SQL, _store

OR_SQL = "AND +rowid IN"  # today's SQL for the rarer-word case: bm25() over every row of the OR


def _ask(store_path, questions, monkeypatch):
    """Each question's (rare_top, bm25() over every row, how rare_top scored: "sql", a function's name, None)."""
    used: list[str] = []
    for name in ("or_top", "few_rare"):
        real = getattr(common_rows, name)
        monkeypatch.setattr(common_rows, name, lambda *a, _real=real, _name=name: used.append(_name) or _real(*a))

    def ask(f):
        asked: list[str] = []
        f.conn.exec_trace = lambda _c, sql, _b: asked.append(sql) or True
        out = []
        for words, limit in questions:
            match = query_plan(" ".join(words))[1].match
            before, done = len(asked), len(used)
            ours = bm25.rare_top(f.conn, match, limit)
            how = "sql" if any(OR_SQL in s for s in asked[before:]) else (used[done:] or [None])[0]
            f.conn.exec_trace = None
            out.append((ours, [tuple(r) for r in f.conn.execute(SQL, (match, limit))], how))
            f.conn.exec_trace = lambda _c, sql, _b: asked.append(sql) or True
        return out

    return with_index(store_path, ask)


def _questions(seed: int, n: int = 150):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = rng.sample(COMMON, rng.randint(1, 3)) + rng.sample(RARE, rng.randint(1, 2))
        rng.shuffle(words)
        out.append((words, rng.choice([1, 3, 5, 10])))
    return out


def _same(rounds, questions):
    for answers in rounds:
        for (ours, theirs, _how), q in zip(answers, questions):
            assert ours is None or ours == theirs, q


def test_kept_parts_give_bm25s_top_of_the_or_without_scoring_it(store_path, monkeypatch):
    monkeypatch.setattr(bm25, "FEW_RARE", 1)  # 29 rows: any rarer rows are "few"
    _store(store_path)
    questions = _questions(7)
    rounds = [_ask(store_path, questions, monkeypatch) for _ in range(2)]  # parts are made the second asking
    _same(rounds, questions)
    first, last = rounds
    assert {"sql", "few_rare", "or_top"} <= {how for ours, _t, how in first if ours is not None}
    proved = [ours is not None for ours, _t, _how in last]
    assert sum(proved) > 40 and proved == [ours is not None for ours, _t, _how in first]
    assert {how for ours, _t, how in last if ours is not None} == {"or_top"}  # never bm25() of the OR


def test_a_top_the_kept_best_rows_cannot_prove_is_scored_by_bm25(store_path, monkeypatch):
    """One best row kept a phrase: the bound proves little, and bm25() of the OR answers those."""
    monkeypatch.setattr(common_rows, "KEEP", 1)
    _store(store_path)
    questions = _questions(8, 60)
    rounds = [_ask(store_path, questions, monkeypatch) for _ in range(2)]
    _same(rounds, questions)
    hows = [how for ours, _t, how in rounds[1] if ours is not None]
    assert "sql" in hows and "or_top" in hows, hows  # or_top said None where its bound fails


def test_a_top_the_rarer_rows_cannot_fill_falls_back(store_path, monkeypatch):
    """Fewer rows hold the rarer word than the top asks: a row holding only common words enters it,
    so the proof fails and rare_top says None (bm25() scores every row), parts kept or not."""
    _store(store_path)

    def count(f):
        return f.conn.execute("SELECT count(*) FROM fts_now WHERE fts_now MATCH '\"drill\"'").fetchone()[0]

    rare_rows = with_index(store_path, count)
    questions = [(["checkout", "drill", "latency"], rare_rows + 1), (["checkout", "drill", "latency"], rare_rows)]
    for _ in range(3):
        (too_few, theirs_few, _h1), (enough, theirs, _h2) = _ask(store_path, questions, monkeypatch)
        assert too_few is None and len(theirs_few) == rare_rows + 1
        assert enough == theirs
