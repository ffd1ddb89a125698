"""The filler's long reads in pieces (issue 39): the index's journal is not WAL, so a write's commit
waits until no connection holds a read lock; the scan for missing passages and the pending recount
read SCAN_VERSIONS versions a statement, each its own read, with the same answers as one read."""

from __future__ import annotations

import apsw
import pytest

from tests.support.index_helpers import T0, add_vectors, index_conn, put, remove

FP = "fp-pieces"

# The scan as one statement (what the filler ran before): the oracle the pieces must agree with.
ONE_READ = ("SELECT t.text_sha, max(k.key IS NOT NULL) AS cur, max(t.version_id) AS m FROM vtext t "
            "LEFT JOIN keys k ON k.version_id = t.version_id AND k.state != 'retracted' "
            "WHERE NOT EXISTS (SELECT 1 FROM vectors x WHERE x.text_sha = t.text_sha AND x.fingerprint = :fp) "
            "GROUP BY t.text_sha {having}ORDER BY cur DESC, m DESC, t.text_sha LIMIT :n")




def one_read(c, limit, current_only=False):
    sql = ONE_READ.format(having="HAVING cur = 1 " if current_only else "")
    return [r[0] for r in c.execute(sql, {"fp": FP, "n": limit})]


@pytest.fixture
def mixed(store_path):
    """Keys with several versions, a text two keys share (one hash, two versions), a retracted key,
    a long body (several passages); some passages already with a vector."""
    for i in range(5):
        put(store_path, f"k{i}", f"Key {i}", f"first text {i}", T0 + i)
    for i in range(3):
        put(store_path, f"k{i}", f"Key {i} again", f"second text {i}", T0 + 10 + i)
    put(store_path, "twin", "Key 4", "first text 4", T0 + 20)
    put(store_path, "gone", "Key 0 again", "second text 0", T0 + 21)  # k0's current text, newer
    remove(store_path, "gone", T0 + 22)
    put(store_path, "long", "Long", "\n\n".join(f"Paragraph {j}. " + "word " * 120 for j in range(6)), T0 + 23)
    c = index_conn(store_path)
    add_vectors(c, one_read(c, 100)[3:5], FP)
    c.close()
    return store_path


@pytest.mark.parametrize("size", [1, 3, 2048])
def test_the_scan_in_pieces_is_the_scan_in_one_read(mixed, monkeypatch, size):
    from kyb_cli.core.index import vectors

    monkeypatch.setattr(vectors, "SCAN_VERSIONS", size)
    c = index_conn(mixed)
    whole = one_read(c, 1000)
    assert len(whole) > 8 and len(one_read(c, 1000, True)) < len(whole)  # the fixture has both sorts
    for current_only in (False, True):
        for limit in (1, 4, 1000):
            assert vectors.missing_in_order(c, FP, limit, current_only) == one_read(c, limit, current_only)
    c.close()


@pytest.mark.parametrize("size", [1, 3])
def test_pending_in_pieces_is_pending_in_one_read_and_is_kept(mixed, monkeypatch, size):
    from kyb_cli.core.index import kept, vectors
    from kyb_cli.core.index.slice import Slice

    monkeypatch.setattr(vectors, "SCAN_VERSIONS", size)
    c = index_conn(mixed)
    c.execute("DELETE FROM unreadable")
    c.execute("INSERT INTO unreadable(version_id, reason) VALUES(2, 'test')")  # never counted
    c.execute(f"DELETE FROM meta WHERE k GLOB '{kept.PREFIX}*'")  # nothing kept: counted
    sql, params = vectors._missing_sql(Slice("history"), "count(DISTINCT c.vid)")
    whole = c.execute(sql, params | {"fp": FP}).fetchone()[0]
    assert whole > 8
    c.close()
    c = index_conn(mixed)
    assert vectors.pending(c, FP, Slice("history"), True) == whole
    c.close()
    c = index_conn(mixed)
    monkeypatch.setattr(vectors, "pieces", lambda *a, **k: pytest.fail("counted again"))
    assert vectors.pending(c, FP, Slice("history"), True) == whole  # the kept row answers
    c.close()


def test_pending_in_pieces_keeps_no_row_when_the_index_moved_meanwhile(mixed, monkeypatch):
    from kyb_cli.core.index import kept, vectors
    from kyb_cli.core.index.slice import Slice

    c = index_conn(mixed)
    c.execute(f"DELETE FROM meta WHERE k GLOB '{kept.PREFIX}*'")
    real = vectors.pieces

    def moved(*a, **k):
        yield from real(*a, **k)
        with c:  # a vector written by someone else between the count and the keeping
            c.execute("INSERT INTO vectors(text_sha, fingerprint, vec) VALUES('other', ?, zeroblob(16))", (FP,))

    monkeypatch.setattr(vectors, "pieces", moved)
    vectors.pending(c, FP, Slice("history"), True)
    assert c.execute(f"SELECT count(*) FROM meta WHERE k GLOB '{kept.PREFIX}*'").fetchone()[0] == 0
    c.close()


def test_a_write_commits_between_any_two_pieces(mixed, monkeypatch):
    """No read lock outlives a piece: another connection, not waiting at all, commits after each."""
    from kyb_cli.core.index import schema, vectors
    from kyb_cli.core.canon import headfile
    from kyb_cli.core.index.slice import Slice

    monkeypatch.setattr(vectors, "SCAN_VERSIONS", 2)
    c = index_conn(mixed)
    writer = apsw.Connection(str(schema.index_path(headfile.git_dir(mixed))))
    writer.set_busy_timeout(0)
    real = vectors.pieces
    commits = []

    def with_writes(*a, **k):
        for rows in real(*a, **k):
            yield rows
            with writer:  # apsw.BusyError here if the reader still held the lock
                writer.execute("INSERT OR REPLACE INTO meta(k, v) VALUES('test-write', ?)", (len(commits),))
            commits.append(1)

    monkeypatch.setattr(vectors, "pieces", with_writes)
    assert vectors.missing_in_order(c, FP, 5)
    vectors.pending(c, FP, Slice("history"), True)
    assert len(commits) >= 6  # a write after every piece of the scan and of the count
    writer.close()
    c.close()


def test_no_read_lock_is_held_while_the_model_runs(mixed, tiny, monkeypatch):
    """The filler's batch: while passages are embedded (seconds of model), a write commits at once."""
    from kyb_cli.core import embed
    from kyb_cli.core.canon import headfile
    from kyb_cli.core.index import schema, vectors

    gdir = headfile.git_dir(mixed)
    writer = apsw.Connection(str(schema.index_path(gdir)))
    writer.set_busy_timeout(0)
    real = embed.passage_vectors
    runs = []

    def model(texts, **k):
        with writer:  # apsw.BusyError here if the filler kept a read open across the model run
            writer.execute("INSERT OR REPLACE INTO meta(k, v) VALUES('test-write', ?)", (len(runs),))
        runs.append(len(texts))
        return real(texts, **k)

    monkeypatch.setattr(embed, "passage_vectors", model)
    c = index_conn(mixed)
    assert vectors.fill_background(c, gdir) is True
    assert runs and runs[0] > 0
    c.close()
    writer.close()


def test_the_fixture_has_a_current_text_newest_in_a_retracted_version(mixed):
    c = index_conn(mixed)
    shared = c.execute("SELECT t.text_sha FROM vtext t JOIN versions v ON v.id = t.version_id "
                       "GROUP BY t.text_sha HAVING count(DISTINCT v.key) > 1").fetchall()
    assert len(shared) >= 2  # k4 and twin; k0 and the retracted gone
    c.close()
