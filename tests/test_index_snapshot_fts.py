"""A snapshot's `fts` is a copy of its `fts_now` (snapshot.copy_fts_now, issue 39): the same index,
term for term and score for score, as writing each row into both tables gave; and a catch-up on the
snapshot adds to both as before."""

from __future__ import annotations

from kyb_cli.core.index import build as index_build
from kyb_cli.core.index import gitlog, schema, snapshot
from tests.support.index_helpers import T0, put, remove

WEIGHTS = ", ".join(str(w) for w in schema.FTS_WEIGHTS)
QUESTIONS = ('"checkout"', '"port"', '"note" OR "outage"', '"checkout" AND "9003"', '"t1"', '"down"',
             '"moved" OR "8080"', '"leaked"', 'title : "note"', '"ghp"')


def seed(store_path) -> None:
    for n in range(11):
        put(store_path, f"note-{n:02d}", f"Note {n}", f"checkout note {n} on port {9000 + n} " * (n + 1),
            T0 + n, tags=[f"t{n % 3}"])
    put(store_path, "leaked", "Leaked", "token ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6", T0 + 20)
    put(store_path, "inc-1-outage", "Outage", "checkout down", T0 + 30, service="checkout", severity="high",
        status="open")


def dump(db) -> dict:
    conn = schema.connect(db)
    try:
        out = {}
        for table in ("fts", "fts_now"):
            conn.execute(f"INSERT INTO {table}({table}) VALUES('integrity-check')")
            for kind in ("row", "col", "instance"):
                conn.execute(f"CREATE VIRTUAL TABLE temp.v_{table}_{kind} USING fts5vocab(main, {table}, {kind})")
                out[f"{table} {kind}"] = conn.execute(f"SELECT * FROM temp.v_{table}_{kind}").fetchall()
            for q in QUESTIONS:
                out[f"{table} {q}"] = conn.execute(
                    f"SELECT rowid, bm25({table}, {WEIGHTS}), highlight({table}, 4, '[', ']') FROM {table} "
                    f"WHERE {table} MATCH ? ORDER BY bm25({table}, {WEIGHTS}), rowid", (q,)).fetchall()
        out["versions"] = conn.execute("SELECT * FROM versions ORDER BY id").fetchall()
        return out
    finally:
        conn.close()


def _two_snapshots(store_path, tmp_path, monkeypatch) -> str:
    """The seeded store's snapshot twice: `copied.sqlite` (fts copied from fts_now) and
    `written.sqlite` (fts written row by row); HEAD."""
    seed(store_path)
    head = gitlog.head(store_path)
    snapshot.build(store_path, tmp_path / "copied.sqlite", head)
    monkeypatch.setattr(snapshot, "COPY_FTS", False)
    snapshot.build(store_path, tmp_path / "written.sqlite", head)
    return head


def test_a_snapshots_fts_is_the_fts_written_row_by_row(store_path, tmp_path, monkeypatch):
    head = _two_snapshots(store_path, tmp_path, monkeypatch)
    copied, written = dump(tmp_path / "copied.sqlite"), dump(tmp_path / "written.sqlite")
    assert copied == written
    assert len(copied["fts row"]) > 20 and len(copied['fts "checkout"']) == 12  # the held-out one is in neither
    assert copied['fts "checkout"'] == copied['fts_now "checkout"']


def test_a_catch_up_on_a_copied_snapshot_writes_both_tables_as_before(store_path, tmp_path, monkeypatch):
    head = _two_snapshots(store_path, tmp_path, monkeypatch)
    put(store_path, "note-03", "Note 3", "checkout note 3 moved to port 8080", T0 + 40)
    remove(store_path, "note-04", T0 + 50)
    new_head = gitlog.head(store_path)
    for name in ("copied", "written"):
        conn = schema.connect(tmp_path / f"{name}.sqlite")
        try:
            assert index_build.catch_up(conn, store_path, head, new_head)["commits"] == 2
        finally:
            conn.close()
    copied, written = dump(tmp_path / "copied.sqlite"), dump(tmp_path / "written.sqlite")
    assert copied == written
    assert len(copied['fts "moved" OR "8080"']) == 1 and len(copied['fts "checkout"']) == 13  # every version
    assert len(copied['fts_now "checkout"']) == 11  # each key's current one, the removed note's not
