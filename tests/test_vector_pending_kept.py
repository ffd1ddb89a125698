"""`pending_vectors` kept in the index's meta (index/kept.py) for the next one-shot process: after
every kind of change the kept count equals a fresh count, a busy index never fails or blocks the
answer, and a long-lived door keeps its own (no write of its own)."""

from __future__ import annotations

import pytest

from tests.support.index_helpers import T0, fill_in_background_now, put, remove

FP, FP2 = "fp-one", "fp-two"
SLICES = ("current", "history")


def seed(store_path):
    put(store_path, "alpha", "Alpha", "first text", T0)
    put(store_path, "beta", "Beta", "second text", T0 + 10)
    put(store_path, "alpha", "Alpha", "alpha again", T0 + 20)


def truth(conn, fp: str, mode: str) -> int:
    """The count as it is now, straight from the SQL (no memo, no kept row)."""
    from kyb_cli.core.index.slice import Slice
    from kyb_cli.core.index.vectors import _missing_sql

    sql, params = _missing_sql(Slice(mode), "count(DISTINCT c.vid)")
    return conn.execute(sql, params | {"fp": fp}).fetchone()[0]


def reported(store_path, fp: str, mode: str) -> int:
    """What a one-shot process reports: a new connection each time (fresh(), no door)."""
    from kyb_cli.core.index.fresh import fresh
    from kyb_cli.core.index.slice import Slice
    from kyb_cli.core.index.vectors import pending

    f = fresh(store_path)
    try:
        return pending(f.conn, fp, Slice(mode))
    finally:
        f.conn.close()


def kept_rows(store_path) -> dict:
    from kyb_cli.core.index.fresh import fresh

    f = fresh(store_path)
    try:
        return dict(f.conn.execute("SELECT k, v FROM meta WHERE k GLOB 'count:*'"))
    finally:
        f.conn.close()


def agree(store_path, fps=(FP,)) -> dict:
    """Each slice and fingerprint: asked twice (a miss, then the kept row), both equal to the truth."""
    from kyb_cli.core.index.fresh import fresh

    out = {}
    for fp in fps:
        for mode in SLICES:
            first, second = reported(store_path, fp, mode), reported(store_path, fp, mode)
            f = fresh(store_path)
            try:
                want = truth(f.conn, fp, mode)
            finally:
                f.conn.close()
            assert first == second == want, (fp, mode, first, second, want)
            out[(fp, mode)] = want
    return out


def give_vectors(store_path, fp: str, share: float = 0.5, spec=None) -> None:
    """Vectors for part of the texts, as the filler and `kyb index --embed` store them."""
    from kyb_cli.core.index.fresh import fresh
    from kyb_cli.core.index.vectors import missing, store
    from kyb_cli.core.index.slice import Slice

    f = fresh(store_path)
    try:
        todo = missing(f.conn, fp, Slice("history"))
        store(f.conn, fp, {h: b"\0" * 16 for h in todo[: max(1, int(len(todo) * share))]}, spec)
    finally:
        f.conn.close()


def test_the_kept_row_is_read_by_the_next_process(store_path):
    seed(store_path)
    assert agree(store_path)[(FP, "current")] == 2
    rows = kept_rows(store_path)
    assert len(rows) == 2  # one per slice
    from kyb_cli.core.index.fresh import fresh

    f = fresh(store_path)  # the row says the count: doctor one, and the next process reports it
    with f.conn:
        for k, v in rows.items():
            f.conn.execute("UPDATE meta SET v = ? WHERE k = ?", (v.rpartition("\n")[0] + "\n777", k))
    f.conn.close()
    assert reported(store_path, FP, "current") == 777


def test_a_write_and_a_retraction_are_counted_again(store_path):
    seed(store_path)
    agree(store_path)
    put(store_path, "gamma", "Gamma", "third text", T0 + 30)
    assert agree(store_path)[(FP, "current")] == 3
    remove(store_path, "beta", T0 + 40)
    assert agree(store_path)[(FP, "current")] == 2


def test_vectors_stored_by_a_fill_are_counted_again(store_path):
    seed(store_path)
    before = agree(store_path)
    give_vectors(store_path, FP)
    after = agree(store_path)
    assert after[(FP, "history")] < before[(FP, "history")]
    give_vectors(store_path, FP, share=1.0)
    assert agree(store_path)[(FP, "history")] == 0


def test_another_models_vectors_and_a_new_fingerprint(store_path):
    from kyb_cli.core.embed.models import E5

    seed(store_path)
    give_vectors(store_path, FP, share=1.0, spec=E5)
    assert agree(store_path, (FP, FP2))[(FP, "history")] == 0
    other = type("Spec", (), {"name": "other-model"})()
    give_vectors(store_path, FP2, share=1.0, spec=other)  # another model's: FP stays, FP2 is in
    got = agree(store_path, (FP, FP2))
    assert got[(FP, "history")] == got[(FP2, "history")] == 0
    give_vectors(store_path, "fp-three", share=0.5, spec=E5)  # e5 under a new fingerprint: FP dropped
    got = agree(store_path, (FP, FP2, "fp-three"))
    assert got[(FP, "history")] == 3 and got[(FP2, "history")] == 0


def test_a_reindex_is_counted_again(store_path):
    from kyb_cli.core.index.fresh import rebuild

    seed(store_path)
    give_vectors(store_path, FP, share=1.0)
    assert agree(store_path)[(FP, "history")] == 0
    rebuild(store_path)  # a new file: no vectors, no kept rows
    assert agree(store_path)[(FP, "history")] == 3


def test_the_filler_and_index_embed_on_the_tiny_model(store_path, tiny, cli):
    from kyb_cli.core import embed

    seed(store_path)
    fp = embed.current_fingerprint()[0]
    assert agree(store_path, (fp,))[(fp, "history")] == 3
    fill_in_background_now(store_path)
    assert agree(store_path, (fp,))[(fp, "history")] == 0
    put(store_path, "gamma", "Gamma", "third text", T0 + 30)
    assert agree(store_path, (fp,))[(fp, "history")] == 1
    assert cli("index", "--embed").code == 0
    assert agree(store_path, (fp,))[(fp, "history")] == 0


@pytest.mark.parametrize("lock", ["BEGIN IMMEDIATE", "BEGIN"])
def test_a_busy_index_answers_without_writing(store_path, lock):
    """Another process holds the write lock (or reads, so a commit would wait): the count is right,
    nothing is kept, no transaction is left open, and the busy timeout is as it was."""
    from kyb_cli.core.index.fresh import fresh
    from kyb_cli.core.index.slice import Slice
    from kyb_cli.core.index.vectors import pending

    seed(store_path)
    other = fresh(store_path).conn
    other.execute(lock)
    other.execute("SELECT count(*) FROM meta").fetchone()  # a reader's shared lock
    f = fresh(store_path)
    try:
        waited = f.conn.execute("PRAGMA busy_timeout").fetchone()[0]
        assert pending(f.conn, FP, Slice("current")) == 2
        assert not f.conn.in_transaction
        assert f.conn.execute("PRAGMA busy_timeout").fetchone()[0] == waited > 0
    finally:
        f.conn.close()
        other.execute("ROLLBACK")
        other.close()
    assert kept_rows(store_path) == {}
    assert agree(store_path)[(FP, "current")] == 2  # free again: kept from now on
    assert len(kept_rows(store_path)) == 2


def test_a_long_lived_door_does_not_write(store_path):
    from kyb_cli.core.index import warm

    seed(store_path)
    warm.keep(True)
    try:
        assert reported(store_path, FP, "current") == 2
    finally:
        warm.keep(False)
    assert kept_rows(store_path) == {}


def test_many_slices_stay_bounded(store_path, monkeypatch):
    from kyb_cli.core.index import kept
    from kyb_cli.core.index.fresh import fresh
    from kyb_cli.core.index.slice import Slice
    from kyb_cli.core.index.vectors import pending

    monkeypatch.setattr(kept, "MAX_ROWS", 3)
    seed(store_path)
    for t in range(6):  # as_of times: one slice each
        f = fresh(store_path)
        try:
            assert pending(f.conn, FP, Slice("as_of", as_of=T0 + 10 * t)) == truth_as_of(f.conn, T0 + 10 * t)
        finally:
            f.conn.close()
        assert 1 <= len(kept_rows(store_path)) <= 3


def truth_as_of(conn, t: int) -> int:
    from kyb_cli.core.index.slice import Slice
    from kyb_cli.core.index.vectors import _missing_sql

    sql, params = _missing_sql(Slice("as_of", as_of=t), "count(DISTINCT c.vid)")
    return conn.execute(sql, params | {"fp": FP}).fetchone()[0]


def test_the_history_swap_is_counted_again(store_path, monkeypatch):
    """A staged index (HEAD's snapshot, vectors given meanwhile), then the history swapped in with
    the vectors carried over: same head, another file."""
    from kyb_cli.core.index.fresh import fresh

    monkeypatch.setenv("KYB_STAGE_AT", "0")
    monkeypatch.setenv("KYB_BACKGROUND", "off")
    seed(store_path)
    f = fresh(store_path)
    assert f.conn.execute("SELECT v FROM meta WHERE k = 'history'").fetchone()[0] == "pending"
    f.conn.close()
    give_vectors(store_path, FP)
    snap = agree(store_path)
    fill_in_background_now(store_path)
    f = fresh(store_path)
    assert f.conn.execute("SELECT v FROM meta WHERE k = 'history'").fetchone()[0] == "complete"
    f.conn.close()
    full = agree(store_path)
    assert full[(FP, "history")] > snap[(FP, "history")]  # the older version is in now, without a vector


def test_vectors_written_by_any_hand_are_counted_again(store_path):
    """An older kyb still running, or anything else writing the vectors table straight: the file's
    triggers move the stamp (vectors.store is not the only writer the count may trust)."""
    from kyb_cli.core.index.fresh import fresh

    seed(store_path)
    before = agree(store_path)[(FP, "history")]
    f = fresh(store_path)
    (sha,), = f.conn.execute("SELECT text_sha FROM vtext LIMIT 1").fetchall()
    f.conn.execute("INSERT INTO vectors(text_sha, fingerprint, vec) VALUES(?, ?, zeroblob(16))", (sha, FP))
    f.conn.close()
    assert agree(store_path)[(FP, "history")] == before - 1
    f = fresh(store_path)
    f.conn.execute("DELETE FROM vectors")
    f.conn.close()
    assert agree(store_path)[(FP, "history")] == before


def test_a_query_on_a_busy_index_reports_the_fresh_count(store_path, tiny):
    """The whole answer (pipeline.search) while another process holds the index's write lock."""
    from kyb_cli.core.index.fresh import fresh
    from kyb_cli.core.search.pipeline import search

    seed(store_path)
    fresh(store_path).conn.close()  # the index is at HEAD: the answer needs no catch-up
    other = fresh(store_path).conn
    other.execute("BEGIN IMMEDIATE")
    try:
        r = search(store_path, "alpha", semantic=True, mode="history")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert r["semantic"] is True and r["pending_vectors"] == 3 and r["count"] >= 1
    assert kept_rows(store_path) == {}


def test_the_first_kept_count_of_a_file_is_read_back(store_path, monkeypatch):
    """The count that starts a file's serial is stamped with it: the next process reads it."""
    from kyb_cli.core.index import kept

    seed(store_path)
    assert reported(store_path, FP, "current") == 2
    calls = []
    real = kept._put
    monkeypatch.setattr(kept, "_put", lambda *a: calls.append(a) or real(*a))
    assert reported(store_path, FP, "current") == 2 and calls == []
