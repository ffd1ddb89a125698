"""The sidecar index: a cache of every version in the canon, brought up to HEAD before each read.

`fresh(store_path)` is the one entry point for readers: it compares HEAD (read from `.git/` files,
no pygit2, no subprocess) with the indexed head and, only when they differ, catches up under the
index lock with `git log` (only the unseen commits), or rebuilds when the index is missing, corrupt, of an old schema, or HEAD is no
longer a descendant of what was indexed (reset, rebase). A reader never gets a stale answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

from kyb_cli.core.canon import headfile
from kyb_cli.core.errors import StoreError
from kyb_cli.core.index import schema

T = TypeVar("T")


@dataclass
class Fresh:
    """An open index connection that reflects `head`, and what it took to get there."""

    conn: object
    head: str | None
    store_path: Path
    git_dir: Path
    work: dict = field(default_factory=dict)
    history_complete: bool = True  # False: a snapshot of HEAD, the history is still being built


def _open_valid(path: Path):
    """(conn, meta) of a usable index, or None when missing, corrupt or of another schema."""
    import apsw

    if not path.exists():
        return None
    try:
        conn = schema.connect(path)
        meta = schema.read_meta(conn)
        if meta.get("schema") != schema.SCHEMA_VERSION:
            conn.close()
            return None
        return conn, meta
    except apsw.BusyError:
        raise
    except apsw.Error:
        return None


def fresh(store_path: Path, *, force_rebuild: bool = False, progress=None, history: bool = False) -> Fresh:
    """The index at HEAD. `history=True`: the question needs every past version, so before the
    history of a staged index is in it waits for it (staged.POLICY.wait, the default) or answers
    from what exists (`--no-wait`; staged.SEEN then says `history_complete: false`)."""
    from kyb_cli.core.index import staged

    f = _fresh(Path(store_path), force_rebuild, progress)
    if f.history_complete:
        return f
    if history and staged.POLICY.wait:
        f.conn.close()
        staged.wait_for_history(f.store_path, f.git_dir, staged.POLICY.progress)
        f = _fresh(f.store_path, False, progress)
        if f.history_complete:
            return f
    staged.SEEN.history_complete = False
    staged.start_filler(f.store_path, f.git_dir)
    return f


def _fresh(store_path: Path, force_rebuild: bool, progress) -> Fresh:
    from kyb_cli.core.index.staged import history_complete

    gdir = headfile.git_dir(store_path)
    db = schema.index_path(gdir)
    head = headfile.head_sha(gdir)
    if not force_rebuild and head is not None:
        opened = _open_valid(db)
        if opened is not None and opened[1].get("head") == head:
            return Fresh(opened[0], head, store_path, gdir, history_complete=history_complete(opened[1]))
        if opened is not None:
            opened[0].close()
    return _update(store_path, gdir, db, force_rebuild, progress)


def _update(store_path: Path, gdir: Path, db: Path, force_rebuild: bool, progress) -> Fresh:
    """Catch up or rebuild, holding the index lock so concurrent readers do the work once.

    A rebuild of a big history (staged.stage_at() commits or more) writes HEAD's snapshot first and
    leaves the history to the background filler (staged.py), unless it was asked for (`kyb reindex`)."""
    import apsw

    from kyb_cli.core.canon import lock
    from kyb_cli.core.index import build, gitlog, staged

    if not gitlog.available():
        raise StoreError("the search index is built with the `git` program, which is not on PATH")
    with lock.exclusive(gdir / "kyb" / "index.lock", timeout=max(lock.lock_timeout(), 60.0)):
        head = headfile.head_sha(gdir) or gitlog.head(store_path)
        work: dict = {}
        opened = None if force_rebuild else _open_valid(db)
        if opened is not None:
            conn, meta = opened
            complete = staged.history_complete(meta)
            if meta.get("head") == (head or ""):
                return Fresh(conn, head, store_path, gdir, {"commits": 0, "rebuilt": False}, complete)
            try:
                work = build.catch_up(conn, store_path, meta.get("head"), head) or {}
            except (apsw.BusyError, apsw.LockedError):
                raise
            except apsw.Error:  # a broken index must never crash a read: rebuild it
                work = {}
            if work:
                build.warn_skipped(work.get("skipped", []))
                return Fresh(conn, head, store_path, gdir, work, complete)
            conn.close()
        try:
            if not force_rebuild and head and gitlog.count(store_path, head) >= staged.stage_at():
                from kyb_cli.core.index import snapshot

                work = snapshot.build(store_path, db, head)
            else:
                work = build.rebuild(store_path, db, head, progress)
        except OSError as exc:
            raise StoreError(f"cannot write the index at {db}: {exc.strerror or exc}") from None
        build.warn_skipped(work.get("skipped", []))
    conn = schema.connect(db)
    return Fresh(conn, work.get("head"), store_path, gdir, work, not work.get("staged"))


def rebuild(store_path: Path, progress=None) -> dict:
    """`kyb reindex`: rebuild from Git now; returns counts and timing."""
    f = fresh(store_path, force_rebuild=True, progress=progress)
    f.conn.close()
    return f.work


def with_index(store_path: Path, fn: Callable[[Fresh], T], *, history: bool = False) -> T:
    """Run `fn` on a current index; a corrupt file found mid-read is rebuilt and the read retried.

    `history`: the question needs past versions (see `fresh`: it may wait for a staged index)."""
    import apsw

    from kyb_cli.core.errors import KybError

    f = fresh(store_path, history=history)
    try:
        return fn(f)
    except (KybError, apsw.BusyError, apsw.LockedError):
        raise
    except Exception:  # any damage met mid-read (bad pages, undecodable rows): rebuild once, retry once
        f.conn.close()
        schema.index_path(f.git_dir).unlink(missing_ok=True)
        f = fresh(store_path, force_rebuild=True)
        return fn(f)
    finally:
        try:
            f.conn.close()
        except Exception:  # pragma: no cover - closing a broken handle
            pass
