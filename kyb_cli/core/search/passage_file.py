"""A long body's passages kept on disk for one-shot processes (issue 38).

A `kyb query` process ends after its answer, so search/passage_words.py's in-memory table was filled
afresh by every one: decoding the candidates' docs, cutting 27 kB runbooks into passages and
tokenizing them into FTS5 was ~2 ms of a lexical query on the runbooks, the same work each time.
This file (`passages.v1.sqlite`, next to the index) keeps them between processes, keyed as the
in-memory table is by the version's key and Git blob (what its doc is made of) and the long-body
threshold: content, so never stale — an edit, a pull, another process's write make other blobs.
What cuts and tokenizes them (kyb's version, embed/recipe.py's rule, the index's tokenizer) is
written in the file; a file made otherwise is emptied first. An answer's lookups and matches run in
one transaction, so a process emptying the file meanwhile cannot mix two fillings. Any SQLite error
(a read-only store, a writer holding the file, a damaged file) returns None: the caller uses the
in-memory table for that answer, which gives the same passages.
"""

from __future__ import annotations

import os

NAME = "passages.v1.sqlite"
KEEP_ROWS = 50_000  # passages kept, then all dropped (~30 MB at most for 27 kB bodies)
BUSY_MS = 200
_OPEN: dict = {}  # index path -> _File, or False when it cannot be used (one try per process)


def passage_table() -> str:
    """The passages' FTS5 table, with the index's own tokenizer: this file's and the in-memory one's."""
    from kyb_cli.core.index.schema import TOKENIZER

    return f"CREATE VIRTUAL TABLE passage_words USING fts5(text, tokenize='{TOKENIZER}')"


def terms_held(conn, terms: list[str], owner: dict[int, int]) -> dict[int, set[int]]:
    """{passage rowid among `owner`'s: the indexes of `terms` it holds}, matched in `conn`'s passage table."""
    held: dict[int, set[int]] = {}
    if owner:
        for i, t in enumerate(terms):
            for (rowid,) in conn.execute("SELECT rowid FROM passage_words WHERE passage_words MATCH ?", (t,)):
                if rowid in owner:
                    held.setdefault(rowid, set()).add(i)
    return held


def matches(conn, made: list, terms: list[str], long_body: int, cut) -> tuple[dict, dict] | None:
    """(passage rowid -> vid, passage rowid -> indexes of `terms` it holds) for `made` (vid, key,
    blob) rows, as passage_words._in_memory returns them; None when the file cannot be used.
    `cut(vid)`: the passages of that version's doc when its body is over `long_body`, else ()."""
    import apsw

    kept = opened(conn)
    if kept is None:
        return None
    try:
        return kept.matches(made, terms, long_body, cut)
    except apsw.Error:
        kept.abandon()
        return None


def opened(conn):
    """The file next to `conn`'s index, open (one try per process and index), or None."""
    where = getattr(conn, "filename", "") or ""
    kept = _OPEN.get(where)
    if kept is None:
        kept = _OPEN[where] = _open(where)
    return kept or None


def _made_by() -> str:
    from kyb_cli import __version__
    from kyb_cli.core.embed import recipe
    from kyb_cli.core.index.schema import TOKENIZER

    return (f"kyb {__version__} file 2 recipe {recipe.RECIPE_VERSION} {recipe.CHUNK_UNITS} {recipe.OVERLAP_UNITS} "
            f"{recipe.MAX_PASSAGES} tokenizer {TOKENIZER}")


def _open(index_path: str):
    import apsw

    if not index_path or index_path == ":memory:":
        return False
    try:
        return _File(os.path.join(os.path.dirname(index_path), NAME))
    except (apsw.Error, OSError):
        return False


class _File:
    """The open file: `made` (key, blob, long_body -> first rowid, passages), `passage_words` (FTS5
    with the index's tokenizer), `meta` (who made it, the next rowid, the passages held) and `df`
    (search/df_file.py's term counts)."""

    def __init__(self, path: str) -> None:
        import apsw

        self.conn = apsw.Connection(path)
        self.conn.set_busy_timeout(BUSY_MS)
        self.conn.execute("PRAGMA synchronous = OFF")  # a cache: a lost write is cut again
        try:
            row = self.conn.execute("SELECT made_by FROM meta").fetchone()
        except apsw.SQLError:  # a new file
            row = None
        if row is None or row[0] != _made_by():
            self._make()

    def _make(self) -> None:
        with self.conn:  # BEGIN ... COMMIT: two processes making it at once take turns
            self.conn.execute(
                "DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS made; DROP TABLE IF EXISTS passage_words;"
                "DROP TABLE IF EXISTS df; DROP TABLE IF EXISTS common_rows;"
                "CREATE TABLE df(state TEXT NOT NULL, term TEXT NOT NULL, n INTEGER NOT NULL, "
                "PRIMARY KEY (state, term)) WITHOUT ROWID;"
                "CREATE TABLE meta(made_by TEXT NOT NULL, next INTEGER NOT NULL, held INTEGER NOT NULL);"
                "CREATE TABLE made(key TEXT NOT NULL, blob TEXT NOT NULL, long_body INTEGER NOT NULL, "
                "first INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (key, blob, long_body)) WITHOUT ROWID;"
                + passage_table())
            self.conn.execute("INSERT INTO meta VALUES (?, 1, 0)", (_made_by(),))

    def abandon(self) -> None:
        try:
            if not self.conn.getautocommit():
                self.conn.execute("ROLLBACK")
        except Exception:  # noqa: BLE001 - the in-memory table answers; nothing to keep here
            pass

    def matches(self, made: list, terms: list[str], long_body: int, cut) -> tuple[dict, dict]:
        self.conn.execute("BEGIN")
        try:
            found = self._look(made, long_body)
            if len(found) < len(made):  # some to cut: a writer's turn, then look again under it
                self.conn.execute("COMMIT")
                self.conn.execute("BEGIN IMMEDIATE")
                found = self._look(made, long_body)
                self._add(made, long_body, cut, found)
            owner = {rowid: vid for vid, rows in found.items() for rowid in rows}
            held = terms_held(self.conn, terms, owner)
            self.conn.execute("COMMIT")
        except BaseException:
            self.abandon()
            raise
        return owner, held

    def _look(self, made: list, long_body: int) -> dict[int, tuple[int, ...]]:
        found = {}
        for vid, key, blob in made:
            row = self.conn.execute("SELECT first, n FROM made WHERE key = ? AND blob = ? AND long_body = ?",
                                    (key, blob, long_body)).fetchone()
            if row is not None:
                found[vid] = tuple(range(row[0], row[0] + row[1]))
        return found

    def _add(self, made: list, long_body: int, cut, found: dict) -> None:
        """Cut and add the versions of `made` not in `found` (under BEGIN IMMEDIATE); `found` gets them."""
        missing = [m for m in made if m[0] not in found]
        parts = {vid: cut(vid) for vid, _key, _blob in missing}
        nxt, held = self.conn.execute("SELECT next, held FROM meta").fetchone()
        if held + sum(len(p) for p in parts.values()) > KEEP_ROWS:  # full: start afresh, with all of `made`
            self.conn.execute("DELETE FROM made; DELETE FROM passage_words")
            held = 0
            found.clear()
            missing = made
        added: dict[tuple[str, str], tuple[int, ...]] = {}  # two versions of one key may share a blob
        for vid, key, blob in missing:
            if (key, blob) in added:
                found[vid] = added[(key, blob)]
                continue
            rows = parts[vid] if vid in parts else cut(vid)
            self.conn.executemany("INSERT INTO passage_words(rowid, text) VALUES (?, ?)",
                                  [(nxt + n, text) for n, text in enumerate(rows)])
            self.conn.execute("INSERT INTO made VALUES (?, ?, ?, ?, ?)", (key, blob, long_body, nxt, len(rows)))
            found[vid] = added[(key, blob)] = tuple(range(nxt, nxt + len(rows)))
            nxt += len(rows)
            held += len(rows)
        self.conn.execute("UPDATE meta SET next = ?, held = ?", (nxt, held))
