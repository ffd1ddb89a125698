"""Index connections kept open between calls of a long-lived process (`kyb mcp`, `kyb serve`).

Opening the index (connect, pragmas, schema check) and closing it cost more than a warm lexical
query, twice per answer. A server calls `keep()` once; readers then `take` a connection and
`release` it, and an idle one is reused only while it is provably the file at the index path:
same device and inode as when it was opened (a rebuild renames a new file over the path, a delete
makes a new inode: the old connection is closed, never read again). Its `meta` is read again on
every take, so the caller still compares the indexed head with HEAD and catches up a write from
another process, a `git pull` or a sync before it answers; SQLite itself sees every committed change
of the file at the start of each read. Without `keep()` (a one-shot CLI process) every release closes. `keep()` also makes the process hold
its embedding models itself (embed.resident): no hop to the helper per question, and writes its
read log after its answers (receipts.resident).
A connection is used by one thread at a time: `take` hands it out, `release` gives it back.
"""

from __future__ import annotations

import _thread
import os

from kyb_cli.core.index import schema

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`

IDLE_PER_INDEX = 4  # concurrent requests beyond this open their own connection and close it after

_keeping = False
_lock = _thread.allocate_lock()  # threading's Lock itself; importing threading costs a CLI query ~1 ms
_idle: dict[str, list[tuple[object, tuple[int, int]]]] = {}
_ident: dict[int, tuple[str, tuple[int, int]]] = {}  # id(conn) -> (index path, identity at open)


def keep(on: bool = True) -> None:
    """Keep released connections open for the next call (a long-lived door); `False` closes them all."""
    global _keeping
    _keeping = on
    from kyb_cli.core import embed

    embed.resident(on)  # its questions are embedded by models it holds, not through the helper
    from kyb_cli.core.index import receipts

    receipts.resident(on)  # its reads are logged after its answers (the exit writes what is left)
    if not on:
        clear()


def keeping() -> bool:
    """Whether this process is a long-lived door (`keep()` was called): worth keeping per-index state."""
    return _keeping


def index_state(conn, head: str | None) -> tuple[int, tuple]:
    """(newest version id, the index's state: its file, `head`, that id): what answers kept per state
    are kept by (term counts, term rows, trust assessments) — a write, a pull, a sync, a rebuild make
    a new one. The build numbers versions 1, 2, 3... and never deletes one, so the newest id also
    counts them (tests/test_search_relevance_total.py)."""
    newest = conn.execute("SELECT coalesce(max(id), 0) FROM versions").fetchone()[0]
    return newest, (conn.filename, head, newest)


def kept_for(slot: list, state: tuple, limit: int) -> dict:
    """The dict `slot` ([(state, dict)]) keeps for `state`; a new empty one, put in the slot, when
    the state moved or the dict outgrew `limit`. A reader of an older state keeps filling its own
    dict, never the new one."""
    seen, kept = slot[0]
    if seen != state or len(kept) > limit:
        kept = {}
        slot[0] = (state, kept)
    return kept


def _identity(path: Path | str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _remember(conn, path: Path, before: tuple[int, int] | None) -> None:
    """Pool `conn` later only if the path named one file from before the open to after it."""
    keep = _keeping and before is not None and _identity(path) == before
    with _lock:
        if keep:
            _ident[id(conn)] = (str(path), before)
        else:  # an entry left by a closed connection whose id this one reuses must not vouch for it
            _ident.pop(id(conn), None)


def open_valid(path: Path):
    """schema.open_valid, remembering which file the connection reads."""
    before = _identity(path) if _keeping else None
    opened = schema.open_valid(path)
    if opened is not None:
        _remember(opened[0], path, before)
    return opened


def connect(path: Path):
    """schema.connect, remembering which file the connection reads."""
    before = _identity(path) if _keeping else None
    conn = schema.connect(path)
    _remember(conn, path, before)
    return conn


def take(path: Path):
    """(conn, meta) of a usable index at `path` (an idle connection still reading that very file,
    else a new one), or None when missing, corrupt or of another schema (as schema.open_valid)."""
    if not _keeping:
        return schema.open_valid(path)
    now = _identity(path)
    conn = None
    with _lock:
        idle = _idle.get(str(path), [])
        while idle:
            c, ident = idle.pop()
            if ident == now:
                conn = c
                _ident[id(c)] = (str(path), ident)
                break
            _close(c)  # the path names another file now (rebuilt, replaced, deleted)
    if conn is not None:
        import apsw

        try:
            meta = schema.read_meta(conn)
        except apsw.BusyError:
            release(conn)
            raise
        except apsw.Error:
            meta = {}
        if meta.get("schema") == schema.SCHEMA_VERSION:
            return conn, meta
        discard(conn)
    return open_valid(path)


def release(conn) -> None:
    """Done with `conn`: kept for the next call when keeping and still the file at its path, else closed."""
    with _lock:
        known = _ident.pop(id(conn), None)
        if _keeping and known is not None and not _busy(conn):
            path, ident = known
            idle = _idle.setdefault(path, [])
            if len(idle) < IDLE_PER_INDEX and _identity(path) == ident:
                idle.append((conn, ident))
                return
    _close(conn)


def discard(conn) -> None:
    """Close `conn` for good (a failed catch-up, damage): it is never pooled."""
    with _lock:
        _ident.pop(id(conn), None)
    _close(conn)


def clear(path: Path | None = None) -> None:
    """Close the idle connections (of one index, or all)."""
    with _lock:
        keys = [str(path)] if path is not None else list(_idle)
        conns = [c for k in keys for c, _i in _idle.pop(k, [])]
    for c in conns:
        _close(c)


def _busy(conn) -> bool:
    try:
        return bool(conn.in_transaction)
    except Exception:  # noqa: BLE001 - a closed or broken handle is not kept
        return True


def _close(conn) -> None:
    try:
        conn.close()
    except Exception:  # noqa: BLE001 - closing a broken handle
        pass
