"""A one-shot answer ranks an AND of common words from the parts kept on disk (search/common_rows.py):
the same rows, scores (the same doubles) and order as bm25() over every row holding them all,
without asking bm25() of the AND; when the kept best rows cannot prove the top, bm25() does."""

from __future__ import annotations

import random

from kyb_cli.core.index.fresh import with_index
from kyb_cli.core.search import bm25, common_rows
from kyb_cli.core.search.syntax import query_plan
from tests.support.index_helpers import T0, put

COMMON = ["checkout", "latency", "timeout"]
SQL = ("SELECT rowid, -bm25(fts_now, 3.0, 1.5, 1.5, 1.5, 1.0) AS s FROM fts_now WHERE fts_now MATCH ? "
       "ORDER BY s DESC, rowid DESC LIMIT ?")


def _store(store_path) -> None:
    rng = random.Random(3)
    for i in range(60):
        body = " ".join(rng.choice(COMMON + ["filler", "words", "here"]) for _ in range(rng.randint(3, 40)))
        put(store_path, f"note-{i}", f"{rng.choice(COMMON)} note {i}", f"checkout latency timeout {body}",
            when=T0 + i)


def _compare(store_path, keep: int, monkeypatch) -> tuple[int, int]:
    monkeypatch.setattr(common_rows, "KEEP", keep)
    asked: list[str] = []

    def compare(f):
        f.conn.exec_trace = lambda _c, sql, _b: asked.append(sql) or True
        proved = 0
        for words, limit in [(["checkout", "latency"], 3), (["timeout", "checkout"], 10),
                             (["latency", "timeout", "checkout"], 5), (["checkout", "latency"], 1)]:
            match = query_plan(" ".join(words))[1].match
            before = len(asked)
            ours = bm25.rare_top(f.conn, match, limit)
            scored_the_and = any("bm25" in s and "AND +rowid" not in s for s in asked[before:])
            f.conn.exec_trace = None
            common = " AND ".join(f'"{w}"' for w in words)
            assert ours == [tuple(r) for r in f.conn.execute(SQL, (common, limit))], (words, limit)
            f.conn.exec_trace = lambda _c, sql, _b: asked.append(sql) or True
            proved += not scored_the_and
        return proved

    first = with_index(store_path, compare)  # the first asking keeps each word's count,
    with_index(store_path, compare)  # the second its parts
    return first, with_index(store_path, compare)


def test_the_kept_parts_give_bm25s_top_without_scoring_the_and(store_path, monkeypatch):
    _store(store_path)
    _first, again = _compare(store_path, 256, monkeypatch)  # every row among the best: always proved
    assert again == 4


def test_a_top_the_kept_best_rows_cannot_prove_is_scored_by_bm25(store_path, monkeypatch):
    _store(store_path)
    _first, again = _compare(store_path, 1, monkeypatch)  # one best row a word: the bound holds nothing
    assert again == 0


def test_a_top_proved_from_part_of_the_rows_is_bm25s(store_path, monkeypatch):
    """Best rows cut short of every row: the answers equal bm25()'s (asserted in _compare), proved or not."""
    _store(store_path)
    assert _compare(store_path, 10, monkeypatch)[1] > 0  # 10 of 60 rows a word: some tops proved
