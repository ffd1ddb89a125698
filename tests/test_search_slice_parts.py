"""`--as-of` and `--history` rank an OR of words from each word's bm25() parts over `fts` kept on
disk, asking the slice about the candidates only (lexical._slice_top, common_rows.slice_top and
full_top, slice.among; issue 39): the same versions, states, scores (the same doubles) and order as
the SQL they replace, kept here verbatim as the oracle (slice first, then bm25() over every matching
row of `fts`), over random questions, several times, filters and limits, on a store with rewritten
keys, retractions and archived records."""

from __future__ import annotations

import random
import shutil

import pytest

from kyb_cli.core.index.fresh import with_index
from kyb_cli.core.index.slice import Filters, filter_sql
from kyb_cli.core.search import common_rows, lexical
from kyb_cli.core.search.syntax import query_plan
from tests.support.index_helpers import T0, put, remove

WORDS = ["checkout", "latency", "timeout", "postgres", "replica", "failover", "drill", "café", "running", "port"]

# The SQL lexical() ran for these modes before issue 39, verbatim (its candidates() too).
UNREADABLE = " WHERE vid NOT IN (SELECT version_id FROM unreadable)"
CANDIDATES = {
    "history": "SELECT v.id AS vid, k.state AS state FROM versions v JOIN keys k ON k.key = v.key",
    "as_of": ("SELECT e.version_id AS vid, CASE e.action WHEN 'deleted' THEN 'archived' ELSE 'active' END AS state "
              "FROM (SELECT max(id) AS eid FROM events WHERE committed_at <= :t GROUP BY key) s "
              "JOIN events e ON e.id = s.eid "
              "WHERE NOT (e.action = 'deleted' AND e.key NOT LIKE 'inc-%' AND e.key NOT LIKE 'task-%')"),
}
ORACLE = ("WITH cand AS MATERIALIZED (SELECT * FROM ({cand})" + UNREADABLE + ") "
          "SELECT t.vid, t.hit_state, t.score, (k.version_id = v.id AND k.state != 'retracted') AS is_head "
          "FROM (SELECT * FROM (SELECT m.vid AS vid, m.state AS hit_state, m.score AS score, v.key AS key "
          "FROM (SELECT c.vid, c.state, -bm25(fts, 3.0, 1.5, 1.5, 1.5, 1.0) AS score FROM fts "
          "JOIN cand c ON c.vid = fts.rowid WHERE fts MATCH :q) m JOIN versions v ON v.id = m.vid{where}) "
          "ORDER BY score DESC, vid DESC LIMIT :limit) t JOIN versions v ON v.id = t.vid JOIN keys k ON k.key = v.key "
          "ORDER BY t.score DESC, t.vid DESC")


def _store(store_path) -> list[int]:
    rng = random.Random(39)
    times = []
    for round_ in range(4):  # every key rewritten; some commits dated before earlier ones
        for i in range(24):
            key = (f"note-{i}", f"inc-{i}-outage", f"task-{i}")[i % 3]
            words = rng.sample(WORDS, rng.randint(1, 5))
            body = " ".join(rng.choice(words) for _ in range(rng.randint(2, 30)))
            when = T0 + round_ * 1000 + i * 10 - (500 if rng.random() < 0.1 else 0)
            extra = {"service": "orders", "severity": "high", "status": rng.choice(["open", "resolved"])} \
                if key.startswith("inc-") else {"status": rng.choice(["open", "done"])} if key.startswith("task-") else {}
            put(store_path, key, f"{rng.choice(words)} {key}", body, when=when,
                tags=[rng.choice(["db", "net"])], **extra)
            times.append(when)
        for key in (f"note-{3 * round_}", f"inc-{3 * round_ + 1}-outage", f"task-{3 * round_ + 2}"):
            remove(store_path, key, when=T0 + round_ * 1000 + 600)  # retracted, archived, archived
            times.append(T0 + round_ * 1000 + 600)
    return times


@pytest.fixture(scope="module")
def _built(tmp_path_factory):
    """The store's history, committed once a module (its index is never built here: each test
    builds its own, under its own limits, from a copy)."""
    from kyb_cli.core.canon.repo import init_store

    path = tmp_path_factory.mktemp("slice") / "store"
    init_store(path)
    return path, _store(path)


@pytest.fixture
def built(_built, tmp_path):
    """(a fresh copy of the module's store, its commit times)."""
    path = tmp_path / "store"
    shutil.copytree(_built[0], path, symlinks=True)
    return path, _built[1]


def _questions(times: list[int], n: int = 160):
    rng = random.Random(7)
    picks = [min(times) - 1, max(times) + 1] + rng.sample(sorted(set(times)), 6)
    out = []
    for _ in range(n):
        words = rng.sample(WORDS, rng.randint(1, 4))
        mode = rng.choice(["history", "as_of", "as_of"])
        filters = rng.choice([Filters(), Filters(), Filters(kind="incident"), Filters(status="open"),
                              Filters(tags=["db"]), Filters(service="orders")])
        out.append((" ".join(words), mode, rng.choice(picks) if mode == "as_of" else None, filters,
                    rng.choice([1, 3, 5, 10, 40])))
    return out


def _ask(store_path, questions):
    used = []
    real = lexical._slice_top

    def counted(*a):
        got = real(*a)
        used.append(got is not None)
        return got

    def ask(f):
        out = []
        for text, mode, t, filters, limit in questions:
            ours = [(vid, h["state"], h["score"], h["is_head"])
                    for vid, h in lexical.lexical(f.conn, text, mode=mode, as_of=t, filters=filters, limit=limit)]
            params = {"q": query_plan(text)[1].match, "limit": limit, "t": t}
            where = filter_sql(filters, params)
            sql = ORACLE.format(cand=CANDIDATES[mode], where=" WHERE " + " AND ".join(where) if where else "")
            theirs = [(vid, state, round(float(score), 6), bool(head))
                      for vid, state, score, head in f.conn.execute(sql, params)]
            out.append((ours, theirs))
        return out

    lexical._slice_top = counted
    try:
        return [with_index(store_path, ask) for _ in range(3)], used  # counts, then parts, then kept
    finally:
        lexical._slice_top = real


def _same(rounds, questions):
    for answers in rounds:
        for (ours, theirs), q in zip(answers, questions):
            assert ours == theirs, q


def test_kept_parts_answer_as_the_slice_first_sql(built):
    store_path, times = built
    questions = _questions(times)
    rounds, used = _ask(store_path, questions)
    _same(rounds, questions)
    assert sum(used[-len(questions):]) == len(questions)  # parts kept: every question ranked from them


def test_scores_from_every_row_when_the_best_rows_prove_nothing(built, monkeypatch):
    store_path, times = built
    monkeypatch.setattr(common_rows, "KEEP_FTS", 1)  # one best row a word: full_top ranks
    monkeypatch.setattr(common_rows, "KEEP", 1)
    full = []
    real = common_rows.full_top
    monkeypatch.setattr(common_rows, "full_top", lambda *a: full.append(1) or real(*a))
    questions = _questions(times, 80)
    rounds, _used = _ask(store_path, questions)
    _same(rounds, questions)
    assert len(full) > 20


def test_too_many_rows_to_ask_leave_the_question_to_bm25(built, monkeypatch):
    store_path, times = built
    monkeypatch.setattr(common_rows, "KEEP_FTS", 1)
    monkeypatch.setattr(common_rows, "KEEP", 1)
    monkeypatch.setattr(common_rows, "MOST_ASKED", 3)
    questions = _questions(times, 60)
    rounds, used = _ask(store_path, questions)
    _same(rounds, questions)
    assert not all(used[-len(questions):])


def test_past_the_most_words_kept_the_others_start_afresh(built, monkeypatch):
    store_path, times = built
    monkeypatch.setattr(common_rows, "MOST_FTS_WORDS", 3)
    questions = _questions(times, 60)
    rounds, _used = _ask(store_path, questions)
    _same(rounds, questions)

    def held(f):
        from kyb_cli.core.search import passage_file

        return passage_file.opened(f.conn).conn.execute(
            "SELECT count(*) FROM version_rows WHERE ids IS NOT NULL").fetchone()[0]

    assert 0 < with_index(store_path, held) <= 4


def test_a_door_keeps_the_parts_in_memory_and_answers_the_same(built, monkeypatch):
    store_path, times = built
    from kyb_cli.core.index import warm

    monkeypatch.setattr(warm, "_keeping", True)
    opened = []
    from kyb_cli.core.search import passage_file

    real = passage_file.opened
    monkeypatch.setattr(passage_file, "opened", lambda conn: opened.append(1) or real(conn))
    questions = _questions(times, 60)
    rounds, used = _ask(store_path, questions)
    _same(rounds, questions)
    assert not opened  # a door never opens the file
    assert sum(used[-len(questions):]) > len(questions) // 2, sum(used[-len(questions):])
