"""Commits with chosen times, written straight to Git (as a plain `git commit` would), for index tests."""

from __future__ import annotations

from pathlib import Path

import pygit2

from kyb_cli.core.records.keys import path_of_key
from kyb_cli.core.records.model import Record
from kyb_cli.core.canon.tree import BLOB_MODE, apply_changes

T0 = 1_767_225_600  # 2026-01-01T00:00:00Z


def set_file(repo: pygit2.Repository, tree: pygit2.Tree | None, path: str, blob: pygit2.Oid | None) -> pygit2.Oid:
    """A new tree equal to `tree` with the file at `path` set to `blob` (None: removed)."""
    return apply_changes(repo, tree, {path: None if blob is None else (blob, BLOB_MODE)})


def _commit(store_path: Path, path: str, data: bytes | None, when: int, message: str,
            parents: list[pygit2.Oid] | None = None, ref: str | None = "HEAD") -> str:
    repo = pygit2.Repository(str(store_path))
    head = repo.head.peel(pygit2.Commit)
    base = repo[parents[0]] if parents else head
    blob = repo.create_blob(data) if data is not None else None
    tree = set_file(repo, base.tree, path, blob)
    sig = pygit2.Signature("t", "t@example.org", when, 0)
    oid = repo.create_commit(ref, sig, sig, message, tree, parents or [head.id])
    return str(oid)


def put(store_path: Path, key: str, title: str, body: str = "", when: int = T0, **fields) -> str:
    record = Record(key=key, title=title, body=body, **fields)
    return _commit(store_path, path_of_key(key), record.to_markdown().encode(), when, f"kyb: add {key}\n")


def remove(store_path: Path, key: str, when: int = T0) -> str:
    return _commit(store_path, path_of_key(key), None, when, f"kyb: retract {key}\n")


def query(store_path: Path, text: str = "", **kwargs) -> dict:
    from kyb_cli.core.search.pipeline import search

    return search(store_path, text, **kwargs)


def keys(response: dict) -> list[str]:
    return [h["key"] for h in response["hits"]]


def fill_in_background_now(store_path: Path) -> None:
    """Do, in this process, what the detached background filler does: history, then every vector."""
    from kyb_cli.core.canon import headfile
    from kyb_cli.core.index import staged
    from kyb_cli.core.index.fresh import fresh
    from kyb_cli.core.index import filler

    fresh(store_path).conn.close()
    gdir = headfile.git_dir(store_path)
    fd = staged.try_lock(gdir)
    assert fd is not None, "a filler is running"
    try:
        filler.run(store_path, gdir)
    finally:
        staged.release(fd)


def index_conn(store_path: Path):
    """The store's index, current (built or caught up as a read would), as a connection."""
    from kyb_cli.core.index.fresh import fresh

    return fresh(store_path).conn


def add_vectors(c, shas, fp: str) -> None:
    """Vectors (zero blobs) for these passage hashes under fingerprint `fp`, as the filler stores them."""
    with c:
        c.executemany("INSERT OR REPLACE INTO vectors(text_sha, fingerprint, vec) VALUES(?, ?, zeroblob(16))",
                      [(h, fp) for h in shas])


def dump_index(db, tables: tuple[str, ...], fts_rows: str = "rowid, *") -> dict:
    """Every row of `tables` and of both full-text tables (`fts_rows`: what to select of them; a
    contentless table's columns read as NULL), for comparing two indexes row for row."""
    from kyb_cli.core.index import schema

    conn = schema.connect(db)
    try:
        out = {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in tables}
        for fts in ("fts", "fts_now"):
            out[fts] = conn.execute(f"SELECT {fts_rows} FROM {fts} ORDER BY rowid").fetchall()
    finally:
        conn.close()
    return out
