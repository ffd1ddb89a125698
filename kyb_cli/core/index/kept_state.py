"""What a long-lived door keeps per index connection and state: the state (`db_state`), the memo
(`conn_memo`, `per_state`), one answer's state read once (`pinned`) and its reads in one read
transaction (`one_read`). Moved out of vectors.py
(its 500 lines); vectors.py still names them for its readers.
"""

from __future__ import annotations

from _thread import _local


def per_state(conn, key, make):
    """make()'s value for `key`, kept per connection while the index is as it was (db_state): a
    long-lived door asks again and again; any commit, this connection's or another's, makes it anew."""
    memo = conn_memo(conn)
    state = db_state(conn)
    known = memo.get(key)
    if known is not None and known[0] == state:
        return known[1]
    value = make()
    memo[key] = (state, value)
    return value


_MEMOS = None  # connection -> {what: (db_state, value)}; a closed, dropped connection takes its own along


def conn_memo(conn) -> dict:
    """This connection's {what: (db_state, value)} (per_state; the door's own kept answers)."""
    global _MEMOS
    if _MEMOS is None:
        import weakref

        _MEMOS = weakref.WeakKeyDictionary()
    try:
        return _MEMOS.setdefault(conn, {})
    except TypeError:  # not weak-referenceable: no memo
        return {}


def memo_if_any(conn) -> dict | None:
    """This connection's memo when this process ever made one (conn_memo), else None, making none:
    a one-shot `kyb query` asks whether a door kept postings (bm25.Held.of) and never keeps any, so
    it does not import weakref for an empty memo (~0.5 ms of a 10k-key query's ~50, issue 38)."""
    if _MEMOS is None:
        return None
    try:
        return _MEMOS.get(conn)
    except TypeError:  # not weak-referenceable: conn_memo keeps none for it either
        return None


def db_state(conn) -> tuple[int, int]:
    """What this connection's view of the index was made from: its own changes and the file's
    data_version (SQLite moves it on every commit of any other connection, another process's
    included). Equal states = the same rows. Inside `pinned` (one answer's vector side) the
    data_version read when it began, while the connection's own changes stand still."""
    pin = getattr(_PIN, "at", None)
    if pin is not None and pin[0] is conn:
        changes = conn.total_changes()  # no SQL: its own writes (a kept count's row) still show
        if changes == pin[1][0]:
            return pin[1]
        state = _PIN.at = (conn, (changes, conn.execute("PRAGMA data_version").fetchone()[0]))
        return state[1]
    return conn.total_changes(), conn.execute("PRAGMA data_version").fetchone()[0]


_PIN = _local()  # this thread's (connection, its state) while `pinned`


def pinned(conn):
    """db_state(conn) read once for what follows on this thread, until `unpinned()`: a door's
    English answer asked it ~13 times (every kept scan, copy, count and the words' postings),
    ~8 µs a `PRAGMA data_version` (108 runbooks: ~0.1 ms an answer). Another process's commit in
    between is seen by the next answer (as if it came after this one began); whatever is kept
    meanwhile is tagged with the older state, so it is made again then, never read as newer."""
    _PIN.at = None
    _PIN.at = (conn, db_state(conn))


def unpinned() -> None:
    """db_state reads the connection again (the end of `pinned`)."""
    _PIN.at = None


class one_read:
    """`with one_read(conn):` the statements inside read in one transaction, when the connection is
    not in one already. The index is in rollback-journal mode: each statement outside a transaction
    takes and drops the file's shared lock and checks for a hot journal (~11 us a statement against
    ~1.3 inside one, 108 runbooks), and a new question's grading reads ~15 (word counts, rows, the
    newest id): issue 38. Read only, so the end is a COMMIT whether or not the block raised."""

    __slots__ = ("conn", "began")

    def __init__(self, conn) -> None:
        self.conn, self.began = conn, False

    def __enter__(self) -> None:
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")
            self.began = True

    def __exit__(self, kind, *_raised) -> None:
        if not self.began:
            return
        self.began = False
        try:
            self.conn.execute("COMMIT")
        except Exception:  # noqa: BLE001 - a damaged index's first error is the one to heal by
            if kind is None:
                raise
