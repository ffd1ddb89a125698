"""A snapshot's `fts` is a copy of its `fts_now` (snapshot.copy_fts_now, issue 39): the same index,
term for term and score for score, as writing each row into both tables gave; and a catch-up on the
snapshot adds to both as before."""

from __future__ import annotations

import os

from kyb_cli.core.index import build as index_build
from kyb_cli.core.index import gitlog, schema, snapshot
from tests.support.index_helpers import T0, dump_index, put, remove

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


# A big snapshot's `fts_now` written by its workers, each into a file of its own, and merged into
# the index (spread.Shard, fts_merge.merge; issue 39): the same tables as written here, and when the
# merge fails, the old path (rows inserted here), never a lost first answer; no shard file left.

TABLES = ("versions", "vtext", "unreadable", "events", "keys", "meta", "commits", "fts_now_config", "fts_config")


def _with_workers(monkeypatch) -> list:
    """This small store spread over two workers, 3 records a chunk; the list of each merge's shards."""
    from kyb_cli.core.index import fts_merge, spread

    monkeypatch.setattr(spread, "SPREAD_AT", 1)
    monkeypatch.setattr(spread, "CHUNK", 3)
    monkeypatch.setattr(spread, "workers", lambda: 2)
    merges: list = []
    real = fts_merge.merge

    def merge(conn, table, paths):
        merges.append((table, [p for p in paths if os.path.getsize(p) > 0]))  # committed files, there
        return real(conn, table, paths)
    monkeypatch.setattr(fts_merge, "merge", merge)
    return merges


def _all(db) -> dict:
    return {**dump(db), **dump_index(db, TABLES)}


def test_a_snapshot_whose_workers_wrote_fts_now_is_the_snapshot_written_here(store_path, tmp_path, monkeypatch):
    seed(store_path)
    head = gitlog.head(store_path)
    snapshot.build(store_path, tmp_path / "here.sqlite", head)
    merges = _with_workers(monkeypatch)
    snapshot.build(store_path, tmp_path / "merged.sqlite", head)
    assert [(t, len(p)) for t, p in merges] == [("fts_now", 2)]  # both workers' shards, merged once
    here, merged = _all(tmp_path / "here.sqlite"), _all(tmp_path / "merged.sqlite")
    assert merged == here
    assert len(here['fts_now "checkout"']) == 12 and len(here["fts row"]) > 20
    assert sorted(set(os.listdir(tmp_path)) - {"store"}) == ["here.sqlite", "merged.sqlite"]  # no shard left behind


def test_a_merge_that_fails_leaves_fts_now_to_this_process(store_path, tmp_path, monkeypatch):
    """A merge that raises after writing (its rows in the table) or at once: the table is made anew
    from the records read again, the same as written here."""
    from kyb_cli.core.index import fts_merge

    seed(store_path)
    head = gitlog.head(store_path)
    snapshot.build(store_path, tmp_path / "here.sqlite", head)
    merges = _with_workers(monkeypatch)
    wrapped = fts_merge.merge

    def after_writing(conn, table, paths):
        wrapped(conn, table, paths)
        raise fts_merge.ShardMismatch("refused late")
    monkeypatch.setattr(fts_merge, "merge", after_writing)
    snapshot.build(store_path, tmp_path / "late.sqlite", head)

    def at_once(conn, table, paths):
        merges.append((table, paths))
        raise RuntimeError("an SQLite whose format merge does not know")
    monkeypatch.setattr(fts_merge, "merge", at_once)
    snapshot.build(store_path, tmp_path / "early.sqlite", head)
    assert [len(p) for _t, p in merges] == [2, 2]  # both went through a merge, and failed
    here = _all(tmp_path / "here.sqlite")
    assert _all(tmp_path / "late.sqlite") == here and _all(tmp_path / "early.sqlite") == here
    assert len(here['fts_now "checkout"']) == 12
    assert sorted(set(os.listdir(tmp_path)) - {"store"}) == ["early.sqlite", "here.sqlite", "late.sqlite"]


def test_a_shard_its_worker_never_finished_is_not_merged(store_path, tmp_path, monkeypatch):
    """A worker that gave every chunk's rows but not its last word (its shard never said committed):
    no merge; the rows read again and inserted here."""
    from kyb_cli.core.index import spread

    seed(store_path)
    head = gitlog.head(store_path)
    snapshot.build(store_path, tmp_path / "here.sqlite", head)
    merges = _with_workers(monkeypatch)
    real = spread._receive
    monkeypatch.setattr(spread, "_receive", lambda stream: None if (got := real(stream)) is True else got)
    snapshot.build(store_path, tmp_path / "unsure.sqlite", head)
    assert merges == []
    assert _all(tmp_path / "unsure.sqlite") == _all(tmp_path / "here.sqlite")
    assert sorted(set(os.listdir(tmp_path)) - {"store"}) == ["here.sqlite", "unsure.sqlite"]
