"""A count over the index kept in the index's own `meta` table, for the next one-shot process.

A long-lived door memoizes a count per connection (vectors.pending); a one-shot `kyb query` opens a
new connection every time and would scan the slice again (`pending_vectors`: ~20 ms at 10k keys,
~10x that at 100k). Here the count is kept in one meta row named after what it counts (the SQL and
its parameters) whose value says what it was counted from: the indexed head, whether the history
is in, the counter of vector rows changed or removed (`vec_gone`), the last version and event ids,
and the last row of the log of vectors added (`vec_added`). Any change of the first five is a miss,
and a file replaced by a rebuild or the history swap starts without the rows.

Vectors only added since (the background filler's batches, while queries come): the count is not
made again from the whole slice (~0.3 s at 100k keys, after every batch) but brought forward by the
caller's `since` SQL over the vectors added after the row's log position (the versions those
completed). The log holds only pairs that were absent when written, so a version counted pending
then and complete now has one of its texts in it, and one complete now with a text in it was
pending then: the difference is exact.

The log and `vec_gone` are moved by triggers on the vectors table, created in the transaction that
keeps the first count of a file: whoever writes vectors (the filler, `kyb index --embed`, an older
kyb still running, a test by hand) moves them in the same transaction. Writing the row is
best-effort: never inside a caller's transaction, never waiting for a lock (a busy index keeps its
count uncounted here, the answer is the same), never in a long-lived door (a write of its own would
drop its per-connection memos, and it has them anyway).
"""

from __future__ import annotations

import json

GONE = "vec_gone"    # meta: vector rows changed or removed since the triggers below are in
ADDED = "vec_added"  # meta: the last row of the vec_added log (vectors added, absent before)
PREFIX = "count:"    # meta rows of kept counts
MAX_ROWS = 64        # kept counts beyond this (many distinct --as-of times): all dropped, counted again
MAX_SINCE = 4096     # vectors added since a kept count beyond this (`kyb index --embed`): counted again

_STAMP = ("SELECT (SELECT v FROM meta WHERE k = 'head'), (SELECT v FROM meta WHERE k = 'history'), "
          f"(SELECT v FROM meta WHERE k = '{GONE}'), (SELECT max(id) FROM versions), "
          f"(SELECT max(id) FROM events), (SELECT v FROM meta WHERE k = '{ADDED}'), "
          "(SELECT v FROM meta WHERE k = ?)")

_BUMP = f"UPDATE meta SET v = CAST(v AS INTEGER) + 1 WHERE k = '{GONE}'"
TRIGGERS = [
    f"CREATE TABLE IF NOT EXISTS {ADDED}(id INTEGER PRIMARY KEY, text_sha TEXT NOT NULL, fingerprint TEXT NOT NULL)",
    *(f"CREATE TRIGGER IF NOT EXISTS kept_gone_{op.lower()} AFTER {op} ON vectors BEGIN {_BUMP}; END"
      for op in ("UPDATE", "DELETE")),
    # BEFORE, so the pair is logged only when absent (a REPLACE of a present vector completes nothing).
    "CREATE TRIGGER IF NOT EXISTS kept_added BEFORE INSERT ON vectors WHEN NOT EXISTS "
    "(SELECT 1 FROM vectors WHERE text_sha = NEW.text_sha AND fingerprint = NEW.fingerprint) BEGIN "
    f"UPDATE meta SET v = CAST(v AS INTEGER) + 1 WHERE k = '{ADDED}'; "  # ids never reused after a prune
    f"INSERT INTO {ADDED}(id, text_sha, fingerprint) VALUES((SELECT CAST(v AS INTEGER) FROM meta "
    f"WHERE k = '{ADDED}'), NEW.text_sha, NEW.fingerprint); END",
]


def count(conn, sql: str, params: dict, since: str | None = None, apart=None) -> int:
    """`SELECT count…` `sql` with `params`, from its kept row when the index is as it was counted.

    `since`: SQL counting what `sql` counted then but no longer counts, when only vectors were
    added since (the rows of `vec_added` after `:since`); the kept count less that is the count.
    `apart`: a function making the same count by short reads of its own (the background filler:
    `sql` in one read held the index's read lock for seconds, which a write's commit waits for)."""
    from kyb_cli.core.embed.recipe import sha256  # not hashlib for one short hash: it loads OpenSSL (~3 ms)

    row = PREFIX + sha256(f"{sql}\0{sorted(params.items())!r}".encode()).hexdigest()[:32]
    try:
        *stamp, kept = conn.execute(_STAMP, (row,)).fetchone()
    except Exception:  # noqa: BLE001 - an index without these tables: count as before
        return conn.execute(sql, params).fetchone()[0]
    if kept is not None:
        said, _, n = kept.rpartition("\n")
        if said == json.dumps(stamp) and n.isdigit():
            return int(n)
    own = not conn.in_transaction
    writable = own and _writable()
    if own and apart is not None:
        return _count_apart(conn, row, since, params, apart, writable)
    if own:
        conn.execute("BEGIN")  # the stamp and the count from one read, then (maybe) the row in the same
    try:
        *now, kept = conn.execute(_STAMP, (row,)).fetchone()
        n = _forward(conn, now, kept, since, params)
        if n is None:
            n = conn.execute(sql, params).fetchone()[0]
        if writable:
            now[2], now[5] = now[2] or "0", now[5] or "0"  # a file's first count: _put starts them here
            _put(conn, row, now, n)
    finally:
        if own and conn.in_transaction:
            conn.execute("ROLLBACK")
    return n


def _count_apart(conn, row: str, since: str | None, params: dict, apart, writable: bool) -> int:
    """count() with the slow count made by `apart` between two short reads (brought forward when it
    can be, in the first); the row kept only when the stamp did not move meanwhile. A file's first
    count starts the log first, so that vectors written during the count move the stamp."""
    conn.execute("BEGIN")
    try:
        *now, kept = conn.execute(_STAMP, (row,)).fetchone()
        n = _forward(conn, now, kept, since, params)
        if n is not None and writable:
            _put(conn, row, now, n)
        elif n is None and writable and None in (now[2], now[5]):
            _commit_now(conn, lambda: _start_log(conn))
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    if n is not None:
        return n
    if writable and None in (now[2], now[5]):
        *now, kept = conn.execute(_STAMP, (row,)).fetchone()
    n = apart()
    if writable and None not in (now[2], now[5]):
        conn.execute("BEGIN")
        try:
            *again, _kept = conn.execute(_STAMP, (row,)).fetchone()
            if again == now:
                _put(conn, row, now, n)
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
    return n


def _forward(conn, now: list, kept: str | None, since: str | None, params: dict) -> int | None:
    """The kept count brought forward over the vectors added since it, or None: count it again."""
    if since is None or kept is None or now[5] is None:
        return None
    then, n = _read(kept)
    if then is None or not n.isdigit() or then[:5] != now[:5]:
        return None
    start, end = int(then[5] or 0), int(now[5])
    if not 0 <= end - start <= MAX_SINCE:
        return None
    return int(n) - conn.execute(since, params | {"since": start}).fetchone()[0]


def _writable() -> bool:
    from kyb_cli.core.index import warm

    try:
        return not warm.keeping()
    except Exception:  # noqa: BLE001
        return False


def _put(conn, row: str, stamp: list, n: int) -> None:
    """Write the row, drop the log the kept rows no longer need, and commit; or give up at once:
    another writer, a reader in the way, a read-only file."""
    def write() -> None:
        _start_log(conn)
        conn.execute(f"DELETE FROM meta WHERE k GLOB '{PREFIX}*' AND k != ? AND "
                     f"(SELECT count(*) FROM meta WHERE k GLOB '{PREFIX}*') >= {MAX_ROWS}", (row,))
        conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES(?, ?)", (row, f"{json.dumps(stamp)}\n{n}"))
        conn.execute(f"DELETE FROM {ADDED} WHERE id <= ?", (_oldest_needed(conn, stamp),))

    _commit_now(conn, write)


def _start_log(conn) -> None:
    for name in (GONE, ADDED):
        conn.execute("INSERT OR IGNORE INTO meta(k, v) VALUES(?, '0')", (name,))
    for statement in TRIGGERS:  # from now on every vector write moves the stamp (a no-op when there)
        conn.execute(statement)


def _commit_now(conn, write) -> None:
    """write() in the caller's transaction, committed; or given up at once (the caller rolls back)."""
    waited = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.set_busy_timeout(0)
    try:
        write()
        conn.execute("COMMIT")
    except Exception:  # noqa: BLE001 - best-effort: the caller rolls back, the answer is unchanged
        pass
    finally:
        conn.set_busy_timeout(waited)


def _oldest_needed(conn, stamp: list) -> int:
    """The log position of the oldest kept row that may still be brought forward (same first five,
    not more than MAX_SINCE behind)."""
    now = oldest = int(stamp[5])
    for (value,) in conn.execute(f"SELECT v FROM meta WHERE k GLOB '{PREFIX}*'"):
        then, _n = _read(value)
        if then is not None and then[:5] == stamp[:5] and now - int(then[5] or 0) <= MAX_SINCE:
            oldest = min(oldest, int(then[5] or 0))
    return oldest


def _read(value: str) -> tuple[list | None, str]:
    """A kept row's stamp (None: not one of this kyb's six-part stamps) and its count's text."""
    said, _, n = value.rpartition("\n")
    try:
        then = json.loads(said)
    except ValueError:
        return None, n
    return (then if isinstance(then, list) and len(then) == 6 else None), n
