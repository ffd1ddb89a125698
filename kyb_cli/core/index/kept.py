"""A count over the index kept in the index's own `meta` table, for the next one-shot process.

A long-lived door memoizes a count per connection (vectors.pending); a one-shot `kyb query` opens a
new connection every time and would scan the slice again (`pending_vectors`: ~20 ms at 10k keys,
~10x that at 100k). Here the count is kept in one meta row named after what it counts (the SQL and
its parameters) whose value says what it was counted from: the indexed head, whether the history
is in, the counter of vector writes (`vec_serial`) and the last version and event ids. Any change of
those is a miss, and a file replaced by a rebuild or the history swap starts without the rows.

`vec_serial` is moved by triggers on the vectors table, created in the transaction that keeps the
first count of a file: whoever writes vectors (the filler, `kyb index --embed`, an older kyb still
running, a test by hand) moves it in the same transaction. Writing the row is best-effort: never
inside a caller's transaction, never waiting for a lock (a busy index keeps its count uncounted
here, the answer is the same), never in a long-lived door (a write of its own would drop its
per-connection memos, and it has them anyway).
"""

from __future__ import annotations

import json

SERIAL = "vec_serial"  # meta: vector rows written or removed since the triggers below are in
PREFIX = "count:"      # meta rows of kept counts
MAX_ROWS = 64          # kept counts beyond this (many distinct --as-of times): all dropped, counted again

_STAMP = ("SELECT (SELECT v FROM meta WHERE k = 'head'), (SELECT v FROM meta WHERE k = 'history'), "
          f"(SELECT v FROM meta WHERE k = '{SERIAL}'), (SELECT max(id) FROM versions), "
          "(SELECT max(id) FROM events), (SELECT v FROM meta WHERE k = ?)")


_BUMP = f"UPDATE meta SET v = CAST(v AS INTEGER) + 1 WHERE k = '{SERIAL}'"
TRIGGERS = [f"CREATE TRIGGER IF NOT EXISTS kept_vectors_{op.lower()} AFTER {op} ON vectors BEGIN {_BUMP}; END"
            for op in ("INSERT", "UPDATE", "DELETE")]


def count(conn, sql: str, params: dict) -> int:
    """`SELECT count…` `sql` with `params`, from its kept row when the index is as it was counted."""
    import hashlib  # (the query's embedding imports it anyway: not at import time)

    row = PREFIX + hashlib.sha256(f"{sql}\0{sorted(params.items())!r}".encode()).hexdigest()[:32]
    try:
        *stamp, kept = conn.execute(_STAMP, (row,)).fetchone()
    except Exception:  # noqa: BLE001 - an index without these tables: count as before
        return conn.execute(sql, params).fetchone()[0]
    stamp = json.dumps(stamp)
    if kept is not None:
        said, _, n = kept.rpartition("\n")
        if said == stamp and n.isdigit():
            return int(n)
    if not _writable(conn):
        return conn.execute(sql, params).fetchone()[0]
    conn.execute("BEGIN")  # the stamp and the count from one read, then (maybe) the row in the same
    try:
        *now, _kept = conn.execute(_STAMP, (row,)).fetchone()
        now[2] = now[2] or "0"  # a file's first kept count: _put starts the serial in this transaction
        n = conn.execute(sql, params).fetchone()[0]
        _put(conn, row, f"{json.dumps(now)}\n{n}")
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    return n


def _writable(conn) -> bool:
    from kyb_cli.core.index import warm

    try:
        return not warm.keeping() and not conn.in_transaction
    except Exception:  # noqa: BLE001
        return False


def _put(conn, row: str, value: str) -> None:
    """Write the row and commit, or give up at once: another writer, a reader in the way, a read-only file."""
    waited = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.set_busy_timeout(0)
    try:
        conn.execute(f"INSERT OR IGNORE INTO meta(k, v) VALUES('{SERIAL}', '0')")
        for trigger in TRIGGERS:  # from now on every vector write moves the serial (a no-op when there)
            conn.execute(trigger)
        conn.execute(f"DELETE FROM meta WHERE k GLOB '{PREFIX}*' AND k != ? AND "
                     f"(SELECT count(*) FROM meta WHERE k GLOB '{PREFIX}*') >= {MAX_ROWS}", (row,))
        conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES(?, ?)", (row, value))
        conn.execute("COMMIT")
    except Exception:  # noqa: BLE001 - best-effort: the caller rolls back, the answer is unchanged
        pass
    finally:
        conn.set_busy_timeout(waited)
