"""The read log ("receipts", issue 40): who was shown which version of which record, and how.

One SQLite file, `reads.sqlite`, beside the index (`index_dir`: `.git/kyb/`, or the user's cache for a
read-only store). It is never part of the canon (no record file, no commit) and never travels with a
sync or a clone: a clone starts with no reads. Each answer that shows records appends one row per
record: `at`, the attribution labels writes use (agent, session, workspace, transport), `key`, the
version's `sha` and the `mode` it was read in (get, current, as_of, as_of_event, history,
changed_between, context). Questions that found nothing confident go to `misses` (the text secret-scanned
first). The labels are what the client says: an audit aid, not identity.

One index, (agent, key, id): the look-up every answer makes. `kyb reads KEY` and `--unread-since`
scan the table (at most MAX_ROWS rows: about 20 and 40 ms), so that an answer pays for one index. A
long-lived door's connection keeps the newest reads it has seen (_LAST) and skips that look-up while
no other connection has committed (PRAGMA data_version): still inside the answer's one transaction.
A resident door (index/warm.keep) answers first and writes its rows after the answer, several
answers' in one commit (_write_later, write_pending): every reader of this process writes them first.

Bounded by age and rows: every PRUNE_EVERY-th row written, rows older than KEEP_DAYS days are dropped
and only the newest MAX_ROWS kept (per table), so no write pays for a scan. `KYB_READS=off` or
`[reads] log = false` in config.toml turns the log off (nothing is read or written).
"""

from __future__ import annotations

import _thread  # threading's own lock and ident without importing threading (a CLI query never does)
import os
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`


FILE = "reads.sqlite"
KEEP_DAYS = 90
MAX_ROWS = 200_000
PRUNE_EVERY = 1024
TEXT_MAX = 300  # a logged miss keeps the question's first 300 characters

DDL = """
CREATE TABLE IF NOT EXISTS reads(
    id INTEGER PRIMARY KEY, at REAL NOT NULL, agent TEXT NOT NULL, session TEXT NOT NULL,
    workspace TEXT NOT NULL, transport TEXT NOT NULL, key TEXT NOT NULL, sha TEXT NOT NULL, mode TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS reads_agent ON reads(agent, key, id);  -- the one index every answer keeps up
CREATE TABLE IF NOT EXISTS misses(
    id INTEGER PRIMARY KEY, at REAL NOT NULL, agent TEXT NOT NULL, session TEXT NOT NULL,
    workspace TEXT NOT NULL, transport TEXT NOT NULL, text TEXT NOT NULL, mode TEXT NOT NULL);
"""

_CONNS: dict[tuple[str, int], object] = {}  # (file, thread): an apsw connection is one thread's at a time
def enabled() -> bool:
    """False under KYB_READS=off or `[reads] log = false`. The config is asked on every answer
    (load_config keeps the parsed file while its stat is unchanged: one stat), so a long-lived
    door sees the key changed at its next answer, as every other setting."""
    from kyb_cli.core.settings import env_off

    if env_off("KYB_READS"):
        return False
    from kyb_cli.core.config.file import load_config

    try:
        return (load_config().get("reads") or {}).get("log", True) is not False
    except Exception:  # noqa: BLE001 — a broken config is said by the calls that need it, not here
        return True


_PATHS: dict[str, str] = {}


def log_path(store_path: Path | str) -> str:
    """`reads.sqlite` in the store's index directory (found once per process and store), a string:
    a `kyb query` builds no Path (issue 38)."""
    found = _PATHS.get(str(store_path))
    if found is None:
        from kyb_cli.core.canon.headfile import git_dir_str
        from kyb_cli.core.index.schema import index_dir_str

        found = _PATHS[str(store_path)] = os.path.join(index_dir_str(git_dir_str(store_path)), FILE)
    return found


def _conn(store_path: Path, *, create: bool):
    """The process's connection to the store's read log (kept: a long-lived door pays one open);
    None when there is no log yet and `create` is False."""
    return _open(_slot(store_path), create=create)


def _slot(store_path: Path) -> tuple[str, int]:
    """(the log's path, this thread): an apsw connection is one thread's at a time."""
    return str(log_path(store_path)), _thread.get_ident()


def _open(slot: tuple[str, int], *, create: bool):
    """The connection kept for `slot` (a door's writer thread writes on the answering thread's, _write)."""
    path = slot[0]
    made = os.path.exists(path)  # a log removed meanwhile (a store deleted and made again) is opened anew
    conn = _CONNS.get(slot)
    if conn is not None and made:
        return conn
    if not create and not made:
        return None
    import apsw

    if not made:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    _LAST.pop(_CONNS.get(slot), None)  # the replaced connection's cache of newest reads
    conn = apsw.Connection(path)
    conn.set_busy_timeout(500)  # another process logging holds the write lock for well under a ms
    # WAL, no fsync: a read log is an audit aid, and an answer must not wait for the disk (a power loss
    # may lose the last reads, never the file); apsw runs a PRAGMA that answers only once read.
    # WAL and the tables are the file's, made once; `synchronous` is each connection's own.
    conn.execute("PRAGMA synchronous=OFF").fetchall()
    if not made or not conn.execute("PRAGMA user_version").fetchall()[0][0]:
        conn.execute("PRAGMA journal_mode=WAL").fetchall()
        conn.execute(DDL + "PRAGMA user_version=1;")
    _CONNS[slot] = conn
    return conn


def record(store_path: Path, who: tuple[str, str, str, str], rows: list[tuple[str, str, str]],
           shown: list[tuple[str, str]] = (), miss: tuple[str, str] | None = None) -> dict[str, tuple[str, float]]:
    """Append one row per (key, sha, mode) shown to `who` (agent, session, workspace, transport), and
    answer `changed_since` for the (key, current sha) pairs `shown` as it was just before; `miss`:
    (question, mode) of an answer that found nothing confident, logged too (one transaction: one
    lock, one commit). In a resident door the rows are kept and written after the answer (_write_later)."""
    slot = _slot(store_path)
    if not rows and miss is None:
        with _LOCK:
            conn = _open(slot, create=False)
            return changed_since(conn, who[0], who[1], list(shown), unwritten=_unwritten(slot, who)) \
                if conn is not None and shown else {}
    missed = None if miss is None else (scrubbed(miss[0])[:TEXT_MAX], miss[1])
    if _RESIDENT:
        return _answer_now_write_later(slot, who, rows, shown, missed)
    conn = _open(slot, create=True)
    at = time.time()
    # IMMEDIATE: the write lock first (waited for), so the look-up's snapshot is never one another
    # writer has moved past (a deferred transaction would fail its upgrade at once: a read lost)
    conn.execute("BEGIN IMMEDIATE")
    try:
        known = _known(conn)
        changed = changed_since(conn, who[0], who[1], list(shown), known, _unwritten(slot, who)) if shown else {}
        pruned = _insert(conn, known, at, who, rows, missed)
        conn.execute("COMMIT")
    except BaseException:
        _LAST.pop(conn, None)  # what this transaction told the cache is not in the file
        if not conn.getautocommit():
            conn.execute("ROLLBACK")
        raise
    _prune(conn, pruned)
    return changed


def _insert(conn, known: dict, at: float, who: tuple, rows: list, missed: tuple | None) -> tuple[bool, bool]:
    """The rows and the miss inserted (inside the caller's transaction), the cache told of the rows;
    (reads, misses): whether each table is due for a prune (every PRUNE_EVERY-th row)."""
    due = [False, False]
    if rows:
        conn.executemany("INSERT INTO reads(at, agent, session, workspace, transport, key, sha, mode) "
                         "VALUES (?,?,?,?,?,?,?,?)", [(at, *who, key, sha, mode) for key, sha, mode in rows])
        newest = conn.last_insert_rowid()
        due[0] = newest // PRUNE_EVERY != (newest - len(rows)) // PRUNE_EVERY
        _logged(known, who, rows, at)
    if missed is not None:
        conn.execute("INSERT INTO misses(at, agent, session, workspace, transport, text, mode) "
                     "VALUES (?,?,?,?,?,?,?)", (at, *who, *missed))
        due[1] = conn.last_insert_rowid() % PRUNE_EVERY == 0
    return due[0], due[1]


def _prune(conn, due: tuple[bool, bool]) -> None:
    """The tables _insert found due pruned, after the commit (the cache dropped with a read)."""
    if due[0]:
        _LAST.pop(conn, None)  # a pruned read may have been a key's newest
        prune(conn, "reads")
    if due[1]:
        prune(conn, "misses")


# -- a resident door: the answer first, its rows written after it ---------------------------------
# The INSERT and COMMIT were ~0.24-0.28 ms of every answer of a running door, after the answer was
# built and before the door could send it (bench_door_hybrid --timeline, "read log"): ~15-20 % of a
# warm lexical answer. A door (index/warm.keep: `kyb mcp`, `kyb serve`) answers from the file as it
# stands plus the reads it has not written yet (_UNWRITTEN: every earlier answer of this process),
# keeps the rows (_PENDING) and a writer thread writes them WRITE_AFTER_S later, several answers' in
# one commit, on the connection of the thread that answered last (under _LOCK): its own commit leaves
# that connection's data_version, so its cache of newest reads (_LAST) stays. Every reader of the log in
# this process writes them first (reads, misses, last_read_keys, read_since); the door's exit writes
# what is left. A door killed outright loses them (the log is an audit aid); a one-shot CLI process
# writes at once, as before. The step is now the look-up alone: "read log" 0.22 -> 0.06 ms of a warm
# lexical answer, 0.37 -> 0.12 ms of a hybrid one (108 runbooks, paired runs against 20c2dc2).

_RESIDENT = False
_LOCK = _thread.RLock()  # every use of a connection while a door defers: the writer uses the answerer's
_PENDING: list = []  # [(slot, at, who, rows, missed)] in the order answered
# (log path, agent, session or "") -> ({key: (sha, at)} newest unwritten read, {(key, sha)} every one)
_UNWRITTEN: dict[tuple[str, str, str], tuple[dict, set]] = {}
WRITE_AFTER_S = 2.0
_SINCE = [0.0]  # when the oldest kept row was made (time.monotonic)
_WAKE: list = []  # the writer thread's threading.Event, made with the thread at the first kept row


def resident(on: bool = True) -> None:
    """A long-lived door calls this once (index/warm.keep, as embed.resident): its reads are written
    after its answers; the exit writes what is left. `on=False` writes them now and stops deferring."""
    import atexit

    global _RESIDENT
    _RESIDENT = on
    atexit.unregister(write_pending)  # once, however often a door says so
    if on:
        atexit.register(write_pending)
    else:
        write_pending()


def _answer_now_write_later(slot, who, rows, shown, missed) -> dict[str, tuple[str, float]]:
    """record() in a door: the warnings from the file (or the connection's cache) and the unwritten
    reads, the rows kept for the writer; no transaction (one look-up, and the cache's hit has none)."""
    with _LOCK:
        conn = _open(slot, create=True)
        changed = changed_since(conn, who[0], who[1], list(shown), _known(conn), _unwritten(slot, who)) \
            if shown else {}
        _write_later(slot, who, rows, missed)
    return changed


def _write_later(slot: tuple[str, int], who: tuple, rows: list, missed: tuple | None) -> None:
    """The rows kept (under _LOCK), seen by every later answer of this process (_UNWRITTEN), and the
    writer thread woken."""
    at = time.time()
    if not _PENDING:
        _SINCE[0] = time.monotonic()
    _PENDING.append((slot, at, who, rows, missed))
    for session in {who[1], ""}:
        newest, every = _UNWRITTEN.setdefault((slot[0], who[0], session), ({}, set()))
        for key, sha, _mode in rows:
            newest[key] = (sha, at)
            every.add((key, sha))
    if not _WAKE:
        import threading

        _WAKE.append(threading.Event())
        threading.Thread(target=_writer, name="kyb-read-log", daemon=True).start()
    if not _WAKE[0].is_set():
        _WAKE[0].set()


def _unwritten(slot: tuple[str, int], who: tuple) -> tuple[dict, set] | None:
    """This process's unwritten reads of the log by `who`'s agent (and session), for changed_since."""
    return _UNWRITTEN.get((slot[0], who[0], who[1])) if _UNWRITTEN else None


def _writer() -> None:
    """The door's writer thread: woken by a kept row, it waits until the oldest kept row is
    WRITE_AFTER_S old (the answer is long out, and the next ones' rows join the same commit), then
    writes them all."""
    while True:
        _WAKE[0].wait()
        while (left := _SINCE[0] + WRITE_AFTER_S - time.monotonic()) > 0:
            time.sleep(min(left, 0.5))  # a reader may have written them meanwhile: newer rows, a new oldest
        _WAKE[0].clear()
        write_pending()


def write_pending() -> None:
    """The rows kept by _write_later written in one transaction, in the order answered, on the
    connection of the thread that answered last (a stdio door's only one: its own commit keeps its
    cache, _LAST; the other threads' connections see another's commit, as when each wrote inline).
    Called by the writer thread, every reader of the log in this process, and the exit."""
    with _LOCK:
        if not _PENDING:
            return
        by_log: dict = {}
        for slot, *entry in _PENDING:
            by_log.setdefault(slot[0], [None, []])
            by_log[slot[0]][0] = slot
            by_log[slot[0]][1].append(entry)
        _PENDING.clear()
        _UNWRITTEN.clear()
        for slot, entries in by_log.values():
            try:
                _write(_open(slot, create=True), entries)
            except Exception:  # noqa: BLE001 - a log that cannot be written leaves the answers unlogged, as inline
                pass


def _write(conn, entries: list) -> None:
    """The kept answers' rows inserted in one transaction on `conn`, its cache told (as record inline)."""
    conn.execute("BEGIN IMMEDIATE")
    due = [False, False]
    try:
        known = _known(conn)
        for at, who, rows, missed in entries:
            due = [a or b for a, b in zip(due, _insert(conn, known, at, who, rows, missed))]
        conn.execute("COMMIT")
    except BaseException:
        _LAST.pop(conn, None)
        if not conn.getautocommit():
            conn.execute("ROLLBACK")
        raise
    _prune(conn, due)


def scrubbed(text: str) -> str:  # a miss is logged with its secrets cut out (never logged)
    """`text` with every secret-looking value from its start on replaced by `<not shown>`."""
    from kyb_cli.core.records.secrets import rules_in, scan

    text = " ".join(text.split())
    found = next(scan(text, anywhere=True, rules=rules_in(text)), None)
    return text if found is None else text[:found.start] + "<not shown>"


def prune(conn, table: str) -> None:
    """Rows older than KEEP_DAYS dropped, then all but the newest MAX_ROWS. Times grow with ids, so the
    old rows are the first ones: found from the oldest on (a cost in the rows dropped, no index on `at`)."""
    with conn:
        conn.execute(f"DELETE FROM {table} WHERE id < coalesce((SELECT id FROM {table} WHERE at >= ? ORDER BY id "
                     f"LIMIT 1), (SELECT max(id) + 1 FROM {table}))", (time.time() - KEEP_DAYS * 86400,))
        conn.execute(f"DELETE FROM {table} WHERE id <= (SELECT max(id) FROM {table}) - ?", (MAX_ROWS,))


# The newest read per (agent, session) and key, as this connection last saw the file: conn ->
# (PRAGMA data_version when seen, {(agent, session): {key: (sha, at) or None (never read)}}), session ""
# standing for every session of the agent. data_version changes when another connection (process or
# thread) commits: then the cache is dropped and the file asked again. A door asked about the same
# records again (the common case) skips changed_since's SELECT: ~45 µs of the read log's ~150 µs on
# the 108 runbooks (10 hits, a 185k-row log).
_LAST: dict[object, tuple[int, dict[tuple[str, str], dict[str, tuple[str, float] | None]]]] = {}
_LAST_MAX = 50_000  # keys kept per connection before the cache starts over


def _known(conn) -> dict[tuple[str, str], dict]:
    """This connection's cache of newest reads, valid inside the transaction that asks (its snapshot);
    emptied when another connection has committed since this one last looked."""
    version = conn.execute("PRAGMA data_version").fetchall()[0][0]
    kept = _LAST.get(conn)
    if kept is None or kept[0] != version or sum(map(len, kept[1].values())) > _LAST_MAX:
        kept = _LAST[conn] = (version, {})
    return kept[1]


def _logged(known: dict, who: tuple[str, str, str, str], rows: list[tuple[str, str, str]], at: float) -> None:
    """The rows just inserted, now each key's newest read for the agent, its session and every session."""
    for slot in {(who[0], who[1]), (who[0], "")}:
        last = known.get(slot)
        if last is not None:
            for key, sha, _mode in rows:
                last[key] = (sha, at)


def changed_since(conn, agent: str, session: str, shown: list[tuple[str, str]],
                  known: dict | None = None, unwritten: tuple[dict, set] | None = None) -> dict[str, tuple[str, float]]:
    """key -> (sha, at) of the agent's (session's) newest read of each shown key, for the keys it read
    at another version and never at the current one `shown` gives (a look at the past with `get --at`
    after reading the current version warns of nothing). `known`: the connection's cache (_known),
    read for the keys it holds and filled with the ones it did not. `unwritten`: a door's reads not
    written yet (_unwritten), newer than the file's: as if written before this look-up."""
    if not shown:
        return {}
    narrow, args = (" AND session = ?", [session]) if session else ("", [])
    cached = None if known is None else known.setdefault((agent, session), {})
    asked = [key for key, _sha in shown if cached is None or key not in cached]
    last = {} if cached is None else {key: cached[key] for key, _sha in shown if cached.get(key) is not None}
    if asked:
        # one indexed look-up per key (reads_agent: agent, key, id), never a scan of a key's every read
        values = ",".join(["(?)"] * len(asked))
        found = {key: (sha, at) for key, sha, at in conn.execute(
            f"WITH k(key) AS (VALUES {values}) SELECT r.key, r.sha, r.at FROM k JOIN reads r ON r.id = "
            f"(SELECT id FROM reads WHERE agent = ? AND key = k.key{narrow} ORDER BY id DESC LIMIT 1)",
            [*asked, agent, *args])}
        last.update(found)
        if cached is not None:
            for key in asked:
                cached[key] = found.get(key)
    newest, every = unwritten or ({}, ())
    changed = {}
    for key, current in shown:
        read = newest.get(key) or last.get(key)
        if read is not None and read[0] != current and (key, current) not in every and not conn.execute(
                f"SELECT 1 FROM reads WHERE agent = ? AND key = ? AND sha = ?{narrow} LIMIT 1",
                [agent, key, current, *args]).fetchall():  # rare: only when the last read differs
            changed[key] = read
    return changed


def _fetch(store_path: Path, sql: str, args: list | tuple) -> list[tuple]:
    """The rows `sql` selects from the log ([] when there is none), a door's unwritten reads written
    first: every reader of this process sees every answer before it (the writer thread is held off)."""
    write_pending()
    with _LOCK:
        conn = _conn(store_path, create=False)
        return [] if conn is None else conn.execute(sql, args).fetchall()


def last_read_keys(store_path: Path, agent: str, session: str, limit: int = 500) -> list[tuple[str, str, float]]:
    """(key, sha, at) of the newest read of each key this agent (session) read, newest first."""
    narrow, args = (" AND session = ?", [session]) if session else ("", [])
    rows = _fetch(store_path, f"SELECT key, sha, at, max(id) AS last FROM reads WHERE agent = ?{narrow} GROUP BY key "
                  "ORDER BY last DESC LIMIT ?", [agent, *args, limit])
    return [(key, sha, at) for key, sha, at, _last in rows]


def _where(agent: str, session: str, since: float | None, until: float | None, key: str = "") -> tuple[str, list]:
    parts, args = [], []
    for column, value in (("key", key), ("agent", agent), ("session", session)):
        if value:
            parts.append(f"{column} = ?")
            args.append(value)
    if since is not None:
        parts.append("at >= ?")
        args.append(since)
    if until is not None:
        parts.append("at <= ?")
        args.append(until)
    return (" WHERE " + " AND ".join(parts)) if parts else "", args


COLUMNS = ("at", "agent", "session", "workspace", "transport")


def reads(store_path: Path, key: str, *, agent: str = "", session: str = "", since: float | None = None,
          until: float | None = None, limit: int = 100) -> tuple[list[dict], dict[str, int]]:
    """The reads (newest first, at most `limit`) and the count per agent, under the filters."""
    where, args = _where(agent, session, since, until, key)
    found = _fetch(store_path, "SELECT at, agent, session, workspace, transport, key, sha, mode "
                   f"FROM reads{where} ORDER BY id DESC LIMIT ?", [*args, limit])
    rows = [dict(zip((*COLUMNS, "key", "sha", "mode"), row)) for row in found]
    counts = dict(_fetch(store_path, f"SELECT agent, count(*) FROM reads{where} GROUP BY agent ORDER BY count(*) DESC",
                         args))
    return rows, counts


def misses(store_path: Path, *, agent: str = "", session: str = "", since: float | None = None,
           until: float | None = None, limit: int = 100) -> list[dict]:
    where, args = _where(agent, session, since, until)
    return [dict(zip((*COLUMNS, "text", "mode"), row)) for row in _fetch(store_path,
            f"SELECT at, agent, session, workspace, transport, text, mode FROM misses{where} ORDER BY id DESC LIMIT ?",
            [*args, limit])]


def read_since(store_path: Path, since: float) -> set[str]:
    """The keys someone read at or after `since`."""
    return {key for (key,) in _fetch(store_path, "SELECT DISTINCT key FROM reads WHERE at >= ?", (since,))}
