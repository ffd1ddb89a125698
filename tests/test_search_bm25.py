"""A long-lived door scores the hot path's any-match from postings it keeps (search/bm25.py): the same
rows, scores (the same doubles) and order as SQLite's bm25(), on an index holding tombstones of
superseded versions; a write is seen by the next answer; a shape it does not score goes to SQLite."""

from __future__ import annotations

import random

import pytest

from kyb_cli.core.index import warm
from kyb_cli.core.index.fresh import with_index
from kyb_cli.core.search import bm25, known
from kyb_cli.core.search.syntax import query_plan
from tests.support.index_helpers import T0, put, query, remove

WORDS = ["postgres", "replica", "failover", "backup", "restore", "drill", "lag", "alert", "runbook", "node-3",
         "checkout", "latency", "café", "timeouts", "running"]
SQL = ("SELECT rowid, -bm25(fts_now, 3.0, 1.5, 1.5, 1.5, 1.0) AS s FROM fts_now WHERE fts_now MATCH ? "
       "ORDER BY s DESC, rowid DESC LIMIT ?")


@pytest.fixture
def kept():
    warm.keep(True)
    yield
    warm.keep(False)


def _store(store_path) -> None:
    rng = random.Random(7)
    for round_ in range(5):  # every key rewritten: fts_now holds a tombstone per superseded version
        for i in range(12):
            body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 40)))
            put(store_path, f"note-{i}", f"{rng.choice(WORDS)} note {i}", body, when=T0 + round_ * 100 + i)
        query(store_path, "replica")  # small catch-ups: not optimized, tombstones stay
    remove(store_path, "note-3", when=T0 + 2000)


def test_kept_postings_score_as_fts5_bm25_row_for_row(store_path, kept):
    _store(store_path)
    rng = random.Random(3)

    def compare(f):
        assert bm25.top(f.conn, '"replica"', 8) is None  # a state's first answer is SQLite's (_postings)
        asked = 0
        for _ in range(120):
            match = query_plan(" ".join(rng.sample(WORDS, rng.randint(1, 4))))[1].match
            ours = bm25.top(f.conn, match, 8)
            theirs = [tuple(r) for r in f.conn.execute(SQL, (match, 8))]
            if ours is None:  # a word the tokenizer splits (node-3) is a phrase: SQLite's
                assert "node" in match
                continue
            asked += 1
            assert ours == theirs, match
        return asked

    assert with_index(store_path, compare) > 60


def test_answers_are_the_same_with_and_without_kept_postings(store_path, monkeypatch):
    _store(store_path)
    questions = ["postgres replica failover", "backup", "latency timeouts café", "running drill", "node-3 lag",
                 "+replica failover", "replica -backup", '"replica failover"', "rep*", "unheardof words"]
    scored = []
    real = bm25.top
    monkeypatch.setattr(bm25, "top", lambda *a: scored.append(real(*a)) or scored[-1])
    monkeypatch.setattr(known, "key", lambda *a: None)  # every answer searched: no known answer kept
    cold = [query(store_path, q) for q in questions]
    assert scored == []  # a one-shot process asks SQLite
    warm.keep(True)
    try:
        assert [query(store_path, q) for q in questions] == cold
        assert [query(store_path, q) for q in questions] == cold  # postings kept from the first pass
    finally:
        warm.keep(False)
    assert sum(r is not None for r in scored) >= 9  # five any-matches of single words, twice (not the first)
    assert [] in scored  # nothing holds the last question's words


def test_a_write_is_seen_by_the_next_answer_and_a_state_is_kept_from_its_second_answer(store_path, kept,
                                                                                       monkeypatch):
    _store(store_path)
    scored = []
    real = bm25.top
    monkeypatch.setattr(bm25, "top", lambda *a: scored.append(real(*a)) or scored[-1])
    monkeypatch.setattr(known, "key", lambda *a: None)  # each answer searched: no known answer kept
    for _ in range(3):
        assert all(h["key"] != "fresh" for h in query(store_path, "zebra postgres")["hits"])
    assert [r is None for r in scored] == [True, False, False]
    put(store_path, "fresh", "zebra", "zebra zebra postgres", when=T0 + 3000)
    for _ in range(2):
        assert query(store_path, "zebra postgres")["hits"][0]["key"] == "fresh"
    assert [r is None for r in scored[3:]] == [True, False]


def test_only_an_any_match_of_single_words_is_scored_here():
    assert bm25.words_of('"a" OR "b"') == ["a", "b"]
    for match in ('"a b"', '"a" *', '("a") AND ("a" OR "b")', '("a") NOT ("b")', '"a" AND "b"'):
        assert bm25.words_of(match) is None


def test_a_words_df_from_the_term_list_is_the_count_of_its_matches(store_path):
    """relevance._df reads a single word's df from fts5vocab (issue 39: 3x cheaper at 100k keys):
    the same number as counting `fts MATCH`, for every word of the store and the other shapes."""
    from kyb_cli.core.search import relevance

    _store(store_path)

    def check(f):
        terms = [query_plan(w)[1].terms[0] for w in WORDS + ["zebra", "rep*", '"replica failover"']]
        tokenize = bm25.tokenizer(f.conn)
        for t in terms:
            assert relevance._df(f.conn, t, tokenize) == f.conn.execute(
                "SELECT count(*) FROM fts WHERE fts MATCH ?", (t,)).fetchone()[0], t
        return terms

    assert len(with_index(store_path, check)) == len(WORDS) + 3


def test_answers_leave_the_index_connection_as_they_found_it(store_path, kept):
    """What a door keeps per index state (postings, vector matrices, pending counts) is keyed by the
    connection's total_changes: an answer that wrote rows through it (the long-body passage check
    used a temp table of the index connection) made every answer rebuild them all."""
    from kyb_cli.core.index import vectors

    long_body = ("The replica failover drill runs every quarter. " * 15 + "\n\n") * 4  # several passages
    for i in range(4):
        put(store_path, f"drill-{i}", f"Replica drill {i}", long_body + f"postgres node {i}", when=T0 + i)
    seen = []
    real = vectors.db_state

    def spy(conn):
        seen.append(real(conn))
        return seen[-1]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(vectors, "db_state", spy)
        for i in range(4):
            assert query(store_path, f"replica failover drill postgres {i}")["count"] == 4
    assert len(set(seen)) == 1 and len(seen) >= 4


def test_a_top_cut_from_many_rows_keeps_every_tie_and_the_order_of_sqlite(store_path, kept):
    """Past 4 x limit matching rows only those scoring at least the limit-th best are ordered (numpy
    partition): rows of equal score around the cut (identical bodies) still come newest first, as
    SQLite orders them."""
    rng = random.Random(11)
    bodies = ["postgres replica lag", "postgres replica replica", "replica lag alert postgres", "postgres"]
    for i in range(48):
        put(store_path, f"tie-{i}", "tie note", rng.choice(bodies), when=T0 + i)
    query(store_path, "replica")

    def compare(f):
        bm25.top(f.conn, '"replica"', 1)  # the state's first answer: SQLite's; kept from the second
        asked = 0
        for match in ('"postgres" OR "replica"', '"replica" OR "lag"', '"postgres"', '"lag" OR "alert"'):
            for limit in (1, 2, 3, 5, 8, 11):
                ours = bm25.top(f.conn, match, limit)
                assert ours == [tuple(r) for r in f.conn.execute(SQL, (match, limit))], (match, limit)
                asked += 1
        return asked

    assert with_index(store_path, compare) == 24


def test_a_words_postings_are_its_rows_and_their_column_weighted_counts(store_path, kept):
    """_Postings.word reads a word's instances as one packed string (issue 38: ~8 -> ~3 ms a common
    word at 10k keys): the rows of fts_now holding it and, per row, its instances' column weights
    summed — what SQLite's GROUP BY over fts5vocab gives — for a word in the title and the body of
    one row, a word in no row, and rows deleted from fts_now (tombstones: in no count)."""
    import numpy as np

    from kyb_cli.core.index import schema

    _store(store_path)
    case = " ".join(f"WHEN '{n}' THEN {w!r}" for n, w in zip(schema.FTS_COLUMNS, schema.FTS_WEIGHTS))

    def check(f):
        bm25.top(f.conn, '"replica"', 1)  # the state's first answer: SQLite's; kept from the second
        p = bm25._postings(f.conn)
        live = set(p.ids.tolist())
        words = 0
        for w in WORDS + ["note", "zebra"]:
            token = bm25.token_of(p.tokenize, w)
            if token is None:
                continue
            rows = [(d, c) for d, c in f.conn.execute(
                f"SELECT doc, sum(CASE col {case} END) FROM temp.kyb_vocab WHERE term = ? GROUP BY doc ORDER BY doc",
                (token,)) if d in live]
            at, freq, hits = p.word(f.conn, token)
            assert [(int(d), float(c)) for d, c in zip(p.ids[at], freq)] == rows, w
            assert hits == len(rows) and freq.dtype == np.float64
            words += bool(rows)
        return words

    assert with_index(store_path, check) >= len(WORDS) - 2


def test_a_prefixs_kept_rows_give_the_same_term_hits_as_asking_fts(store_path, kept):
    """A door keeps a prefix's rows (`"депл" *`, a stemmed Cyrillic word; relevance._rows) as a sorted
    array, whatever its df up to PREFIX_MAX (issue 38: FTS5 merged its tokens' doclists on every
    call): term_hits gives the same {version: terms held} as the query per call, for candidates that
    hold it, that do not, and ids no version has."""
    from kyb_cli.core.search import relevance

    rng = random.Random(5)
    words = ["деплой", "деплоя", "докер", "заказа", "заказы", "replica", "rep", "replay"]
    for round_ in range(3):
        for i in range(10):
            put(store_path, f"ru-{i}", f"{rng.choice(words)} {i}", " ".join(rng.choices(words, k=6)),
                when=T0 + round_ * 100 + i)
    for q in ("деплой докер заказа", "rep*"):
        query(store_path, q)
        query(store_path, q)

    def check(f):
        compared = 0
        for q in ("деплой докер заказа", "rep* докер"):
            terms = query_plan(q)[1].terms
            assert any(t.endswith("*") for t in terms)
            head = "the head"  # any text: a part of the state the kept counts and rows are keyed by
            relevance.term_weights(f.conn, terms, head)  # the df this state counts: what _rows keeps by
            vids = [r for (r,) in f.conn.execute("SELECT id FROM versions ORDER BY id")][::2] + [10**9]
            kept_rows = relevance._rows(f.conn, terms, head)
            assert any(not isinstance(v, frozenset) for v in kept_rows.values())
            assert relevance.term_hits(f.conn, terms, vids, head) == relevance.term_hits(f.conn, terms, vids)
            compared += 1
        return compared

    assert with_index(store_path, check) == 2


def test_a_common_words_term_hits_from_the_kept_postings_are_fts5s(store_path, kept, monkeypatch):
    """A word too common for relevance._rows is read from the postings BM25 keeps (bm25.Held): term_hits
    gives FTS5's {version: terms held} for current versions, superseded ones (fts_now does not hold
    them: asked), a removed key's and ids no version has; a write is seen at once (a new state)."""
    from kyb_cli.core.search import relevance

    monkeypatch.setattr(relevance, "ROWS_MAX", 0)  # every word common: none kept by _rows
    _store(store_path)
    held = []
    real = bm25.Held.holding
    monkeypatch.setattr(bm25.Held, "holding", lambda self, t: held.append(real(self, t)) or held[-1])
    qs = ["postgres replica failover", "latency timeouts café", "node-3 lag drill"]

    def check(f):
        for q in qs:
            plan = query_plan(q)[1]
            bm25.top(f.conn, plan.match, 8)  # the state's postings, as the lexical side reads them
            bm25.top(f.conn, plan.match, 8)
            head = "the head"
            relevance.term_weights(f.conn, plan.terms, head)
            vids = [r for (r,) in f.conn.execute("SELECT id FROM versions ORDER BY id")] + [10**9]
            assert relevance.term_hits(f.conn, plan.terms, vids, head) == relevance.term_hits(f.conn, plan.terms, vids)
        return True

    with_index(store_path, check)
    assert sum(h is not None for h in held) >= 6 and any(h for h in held)
    put(store_path, "note-1", "replica note", "failover failover postgres", when=T0 + 3000)
    held.clear()

    def stale(f):  # the postings kept are of the state before the write: never read
        plan = query_plan(qs[0])[1]
        relevance.term_weights(f.conn, plan.terms, "the head")
        vids = [r for (r,) in f.conn.execute("SELECT id FROM versions ORDER BY id")]
        assert relevance.term_hits(f.conn, plan.terms, vids, "the head") == relevance.term_hits(f.conn, plan.terms, vids)
        return True

    with_index(store_path, stale)
    assert held == []
    with_index(store_path, check)
    assert sum(h is not None for h in held) >= 6


def test_a_phrase_no_row_holds_is_left_out_and_the_rest_scored_as_fts5_bm25(store_path, kept):
    """A new identifier in a question (`h38q-10k-7`: a phrase of the tokenizer's pieces) matches no row
    and adds 0.0 to every score: the any-match is scored here without it, row for row as bm25() with it;
    a phrase some row holds still goes to SQLite."""
    _store(store_path)

    def compare(f):
        assert bm25.top(f.conn, '"replica"', 8) is None  # a state's first answer is SQLite's (_postings)
        for text in ("postgres replica failover h38q-10k-123-s5", "latency zq-77 café", "xq-1 yq-2",
                     "running drill unheard-of"):
            match = query_plan(text)[1].match
            assert any(" " in t for t in match.split(" OR "))  # a phrase indeed
            ours = bm25.top(f.conn, match, 8)
            assert ours == [tuple(r) for r in f.conn.execute(SQL, (match, 8))], match
        held = query_plan("replica node-3")[1].match  # `"node 3"`: rows hold it
        assert bm25.top(f.conn, held, 8) is None

    with_index(store_path, compare)
