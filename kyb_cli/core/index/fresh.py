"""The sidecar index: a cache of every version in the canon, brought up to HEAD before each read.

`fresh(store_path)` is the one entry point for readers: it compares HEAD (read from `.git/` files,
no pygit2, no subprocess) with the indexed head and, only when they differ, catches up under the
index lock with `git log` (only the unseen commits), or rebuilds when the index is missing, corrupt, of an old schema, or HEAD is no
longer a descendant of what was indexed (reset, rebase). A reader never gets a stale answer.

Self-healing (tests/test_faults_index.py): an index path that is not a usable file (a directory, a
link to one) is moved aside (renamed, never deleted) and rebuilt; temp files of rebuilds whose
process is dead are removed; an index deleted or replaced between our update and our open is
opened again; a full disk is a store error saying what to free, never an internal error.
"""

from __future__ import annotations

import os
import re
import sys
import time
try:  # contextvars.py only re-exports its C module's names (index/call.py: issue 38)
    from _contextvars import ContextVar
except ImportError:
    from contextvars import ContextVar
from kyb_cli.core.plain import Factory, plain

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`
    from typing import Callable, TypeVar

    T = TypeVar("T")

from kyb_cli.core.canon import headfile
from kyb_cli.core.canon.lock import pid_alive
from kyb_cli.core.errors import StoreError
from kyb_cli.core.index import schema, warm
from kyb_cli.core.known import made_path



@plain
class Fresh:
    """An open index connection that reflects `head`, and what it took to get there."""

    conn: object
    head: str | None
    store: str  # the store's and its Git directory's paths as strings: a `kyb query` builds no Path
    gdir: str   # (importing pathlib, with urllib.parse and ipaddress, was ~4 ms of it; issue 38)
    work: dict = Factory(dict)
    history_complete: bool = True  # False: a snapshot of HEAD, the history is still being built

    @property
    def store_path(self) -> Path:
        return made_path(self.store)

    @property
    def git_dir(self) -> Path:
        return made_path(self.gdir)


def fresh(store_path: Path, *, force_rebuild: bool = False, progress=None, history: bool = False) -> Fresh:
    """The index at HEAD. `history=True`: the question needs every past version, so before the
    history of a staged index is in it waits for it (the call's `wait`, the default) or answers
    from what exists (`--no-wait`; the call then says `history_complete: false`, index/call.py)."""
    from kyb_cli.core.index import call

    if history and not force_rebuild and call.current().wait:
        _history_first(os.fspath(store_path), call.current().progress)
    f = _fresh_retrying(os.fspath(store_path), force_rebuild, progress)
    if f.history_complete:
        return f
    from kyb_cli.core.index import history as history_stage, staged  # only for a staged index: off a query's path

    this = call.current()
    if history and this.wait:
        warm.release(f.conn)
        history_stage.wait_for_history(f.store_path, f.git_dir, this.progress)
        f = _fresh_retrying(f.store, False, progress)
        if f.history_complete:
            return f
    this.history_complete = False
    staged.start_filler(f.store_path, f.git_dir)
    return f


def _history_first(store_path: str, progress) -> None:
    """A question that waits for the history on a store with no index yet (a fresh clone asked
    `--history` first) builds the full index at once: HEAD's snapshot would only be thrown away
    (at 10k keys it is a second or two of the wait, at 100k tens of seconds; issue 27). Other
    readers meanwhile build their snapshot as usual, and the history is swapped in over it."""
    gdir = headfile.git_dir_str(store_path)
    if os.path.lexists(schema.index_path_str(gdir)):
        return  # an index exists: the usual path (catch up, or wait for its history); strings (issue 38)
    from kyb_cli.core.index import gitlog, history as history_stage  # they import pathlib: past the usual return

    head = headfile.head_sha(gdir)
    store_path = made_path(store_path)
    if head is None or not gitlog.available() or not big_history(store_path, head):
        return  # small: the usual full build is as quick
    history_stage.wait_for_history(store_path, made_path(gdir), progress, missing=True)


def big_history(store_path: Path, head: str) -> bool:
    """Whether a new index is built in stages (HEAD's snapshot first): staged.stage_at() commits, or
    as many versions in fewer commits (imports, merges of a peer's batch: 100k keys in 1,100
    commits were one 369k-version build before the first answer; issue 27). Versions are estimated
    from the object count: every commit adds itself, a root tree and a directory tree."""
    from kyb_cli.core.index import gitlog, staged, walk

    at = staged.stage_at()
    known = walk.big_history(store_path, headfile.git_dir(store_path), head, at)  # in-process, if it can
    if known is not None:
        return known
    commits = gitlog.count(store_path, head, most=max(at, 0))  # min(commits, at): the walk stops there
    return commits >= at or gitlog.object_count(store_path) - 3 * commits >= at


class _Vanished(Exception):
    """The index file went away between bringing it up to date and opening it (a racing delete)."""


def _fresh_retrying(store_path: Path, force_rebuild: bool, progress) -> Fresh:
    for _attempt in range(4):
        try:
            return _fresh(store_path, force_rebuild, progress)
        except _Vanished:
            continue
    raise StoreError(f"the search index of {store_path} keeps disappearing while kyb opens it "
                     "(is another process deleting .git/kyb/index.sqlite?)")


def _fresh(store_path: str, force_rebuild: bool, progress) -> Fresh:
    gdir = headfile.git_dir_str(store_path)
    if os.path.exists(os.path.join(gdir, "kyb", "pending.json")):
        finish_interrupted_write(made_path(store_path), made_path(gdir))
    db = schema.index_path_str(gdir)
    _remove_dead_temp_files(db)  # a rebuild killed mid-way: its files go on the next read, fresh or not
    head = headfile.head_sha(gdir)
    if not force_rebuild and head is not None:
        opened = warm.take(db)  # a long-lived door's idle connection, else a new one
        if opened is not None and opened[1].get("head") == head:
            return Fresh(opened[0], head, store_path, gdir, history_complete=schema.history_complete(opened[1]))
        if opened is not None:
            warm.release(opened[0])
    return _update(made_path(store_path), made_path(gdir), made_path(db), force_rebuild, progress)


def _update(store_path: Path, gdir: Path, db: Path, force_rebuild: bool, progress) -> Fresh:
    """Catch up or rebuild, holding the index lock so concurrent readers do the work once.

    A rebuild of a big history (staged.stage_at() commits or more) writes HEAD's snapshot first and
    leaves the history to the background filler (staged.py), unless it was asked for (`kyb reindex`)."""
    import apsw

    from kyb_cli.core.canon import lock
    from kyb_cli.core.index import build, gitlog, staged

    if not gitlog.available():
        raise StoreError("the search index is built with the `git` program, which is not on PATH")
    with lock.exclusive(db.parent / "index.lock", timeout=max(lock.lock_timeout(), 60.0)):
        head = headfile.head_sha(gdir) or gitlog.head(store_path)
        work: dict = {}
        _move_aside_if_unusable(db)
        _remove_dead_temp_files(db)
        opened = None if force_rebuild else warm.take(db)
        if opened is not None:
            conn, meta = opened
            complete = staged.history_complete(meta)
            if meta.get("head") == (head or ""):
                return Fresh(conn, head, str(store_path), str(gdir), {"commits": 0, "rebuilt": False}, complete)
            try:
                work = build.catch_up(conn, store_path, meta.get("head"), head) or {}
            except (apsw.BusyError, apsw.LockedError):
                raise
            except apsw.FullError:
                warm.discard(conn)
                raise _index_disk_full(store_path, db) from None
            except apsw.Error:  # a broken index must never crash a read: rebuild it
                work = {}
            if work:
                build.warn_skipped(work.get("skipped", []))
                return Fresh(conn, head, str(store_path), str(gdir), work, complete)
            warm.discard(conn)
        try:
            if not force_rebuild and head and big_history(store_path, head):
                from kyb_cli.core.index import snapshot

                work = snapshot.build(store_path, db, head)
            else:
                work = build.rebuild(store_path, db, head, progress)
        except (OSError, apsw.Error) as exc:
            _remove_own_temp_files(db)  # a failed rebuild must not leave its half-built copy behind
            from kyb_cli.core.canon.diskfull import is_disk_full

            if is_disk_full(exc):
                raise _index_disk_full(store_path, db) from None
            if isinstance(exc, OSError):
                raise StoreError(f"cannot write the index at {db}: {exc.strerror or exc}") from None
            raise
        build.warn_skipped(work.get("skipped", []))
    try:
        conn = warm.connect(db)
    except apsw.CantOpenError:
        raise _Vanished() from None
    return Fresh(conn, work.get("head"), str(store_path), str(gdir), work, not work.get("staged"))


def finish_interrupted_write(store_path: Path, gdir: Path) -> None:
    """A journal with no writer holding the lock: a write moved the branch and could not bring the
    working tree along (killed, or out of disk). A read finishes it when the writer lock is free at
    once (it never waits for a writer, and never fails for this: the answer comes from Git anyway)."""
    from kyb_cli.core.canon import journal, lock

    fd = None
    try:
        fd = lock.try_lock(gdir / "kyb" / "write.lock")
        if fd is None:
            return  # a writer is at work: the journal is its own
        from kyb_cli.core.canon.repo import Store

        store = Store(store_path)
        if store.is_kyb_store():
            journal.recover(store.repo, store.kyb_dir)
    except Exception:  # noqa: BLE001 - best effort; the next write finishes it under the lock
        pass
    finally:
        if fd is not None:
            os.close(fd)


def _index_disk_full(store_path: Path, db: Path) -> StoreError:
    from kyb_cli.core.canon.diskfull import disk_full_error

    err = disk_full_error(store_path)
    return StoreError(err.message.replace("nothing was written", f"the search index {db} cannot be updated"),
                      path=str(store_path))


_TEMP = r"^index\.sqlite\.(?:tmp|snap)-(\d+)(?:-journal)?$"  # build.py, snapshot.py; compiled when one is there


def _move_aside_if_unusable(db: Path) -> None:
    """An index path that is not a regular file (a directory, a link to one) is renamed aside, so
    the rebuild can write a fresh file there; nothing the user may have put there is deleted."""
    if not os.path.lexists(db) or db.is_file():
        return
    aside = db.with_name(f"{db.name}.broken-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
    try:
        os.replace(db, aside)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"the search index path {db} is not a file and cannot be moved aside: "
                         f"{exc.strerror or exc} — remove it (it is a cache) and try again") from None
    sys.stderr.write(f"kyb: index: {db} was not a usable file; moved it aside to {aside.name} and rebuilt the index\n")


def _remove_dead_temp_files(db: Path) -> None:
    """Temp files of rebuilds whose process died (killed, or out of disk) go: self-cleaning."""
    where = os.path.dirname(db)
    try:
        names = os.listdir(where)
    except OSError:
        return
    for name in names:
        m = re.match(_TEMP, name) if name.startswith("index.sqlite.") else None
        if m and not pid_alive(int(m.group(1))):
            try:
                os.unlink(os.path.join(where, name))
            except OSError:
                pass


def _remove_own_temp_files(db: Path) -> None:
    for kind in ("tmp", "snap"):
        for suffix in ("", "-journal"):
            try:
                os.unlink(db.with_name(f"{db.name}.{kind}-{os.getpid()}{suffix}"))
            except OSError:
                pass


def rebuild(store_path: Path, progress=None) -> dict:
    """`kyb reindex`: rebuild from Git now; returns counts and timing."""
    f = fresh(store_path, force_rebuild=True, progress=progress)
    warm.release(f.conn)
    return f.work


# The index session of the answer being made in this context (thread, request): the reads of one
# answer (a record, its trust annotation, a task's blocks) share it instead of opening the index again.
_SESSION: ContextVar[Fresh | None] = ContextVar("kyb_index_session", default=None)


def joined(store_path: Path, history: bool = False) -> Fresh | None:
    """The index this answer already holds open for `store_path` (an enclosing `with_index`), when it
    serves: not when the question needs the history and the open one is a snapshot still waiting
    for it. None: open one (`fresh`)."""
    f = _SESSION.get()
    if f is None:
        return None
    wanted = os.fspath(store_path)
    if f.store != wanted and f.store_path != made_path(wanted):  # the Paths only when the strings differ
        return None
    if history and not f.history_complete:
        from kyb_cli.core.index import call

        if call.current().wait:
            return None
    return f


def with_index(store_path: Path, fn: Callable[[Fresh], T], *, history: bool = False) -> T:
    """Run `fn` on a current index; real damage met mid-read is rebuilt and the read retried once.

    One answer is one index session: every read inside `fn` (another `with_index`, a reads.py read)
    runs on this same connection (`joined`), so damage met there reaches this call, which heals it.
    Real damage only: a corrupt file, a file that is not a database, a row that will not decode
    (schema.Damaged). Anything else is a bug or a user error and propagates at once: a bug must
    not turn every query of a big store into a rebuild before its traceback (exit 70, errors.py).
    `history`: the question needs past versions (see `fresh`: it may wait for a staged index)."""
    import apsw

    held = joined(store_path, history)
    if held is not None:
        return fn(held)
    damage = (apsw.CorruptError, apsw.NotADBError, schema.Damaged)
    f = fresh(store_path, history=history)
    token = _SESSION.set(f)
    try:
        return fn(f)
    except damage:
        warm.discard(f.conn)
        warm.clear(schema.index_path(f.git_dir))
        schema.index_path(f.git_dir).unlink(missing_ok=True)
        f = fresh(store_path, force_rebuild=True)
        _SESSION.set(f)
        return fn(f)
    finally:
        _SESSION.reset(token)
        warm.release(f.conn)  # kept open for the next call in a long-lived door (index/warm.py)
