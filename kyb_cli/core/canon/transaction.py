"""One user action = one branch move: `writing(store, attribution)` holds the lock and yields a Transaction.

Each put/retract/archive inside builds its commit in memory (objects only) on top of the previous
one; when the `with` block ends the branch moves once, from the HEAD found under the lock to the
last commit (closing an incident or task is two commits, the closing version and the archive, and
one ref move). Then the working tree and the Git index of the touched paths are brought along.
Other files, staged or not, are never touched. The rules (tests/test_faults.py):
- writers are serialized by `lock.exclusive` (bounded wait, released by the kernel if a writer dies);
- before the branch moves nothing is visible: a failure is a StoreError (exit 4), a full disk says
  which store and what to free (canon/diskfull.py), a directory this user cannot write is refused
  before the lock is taken, naming it and the fix (canon/permissions.py);
- once it moved, the write happened: the answer is success; what could not be finished (the
  working tree, the journal) is a warning on stderr, and the next call finishes it (journal.py;
  a read too, index/fresh.py);
- a working-tree file with uncommitted hand edits is never overwritten (Rejected instead);
- objects, refs and the journal are fsynced (canon/durability.py) unless `KYB_FSYNC=off`.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import pygit2

from kyb_cli.core.canon import durability, faults, journal, migrate as layout
from kyb_cli.core.canon.mend import mend_after_set_aside
from kyb_cli.core.canon import lock as store_lock
from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.canon.diskfull import disk_full_error, is_disk_full, low_space
from kyb_cli.core.canon.permissions import denied_path, denied_reason, permission_error, refuse_unwritable
from kyb_cli.core.canon.tree import Entry, advance_head, apply_changes, blob_at, blob_entry, entries_at
from kyb_cli.core.canon.worktree import git_index, refuse_hand_edits, remove_dead_temp_files, update_worktree
from kyb_cli.core.errors import NotFound, Rejected, StoreError
from kyb_cli.core.records.keys import kind_of_key, path_of_key
from kyb_cli.core.records.model import Record, RecordFormatError, parse
from kyb_cli.core.records.validate import check_key


@dataclass
class WriteResult:
    key: str
    changed: bool
    action: str | None = None  # created | updated | retracted | archived
    sha: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        if not self.changed:
            return {"changed": False, "key": self.key}
        out: dict[str, Any] = {"action": self.action, "changed": True, "key": self.key, "sha": self.sha}
        out.update(self.extras)
        return out


@contextmanager
def locked(store) -> Iterator[None]:
    """Hold the writer lock of a kyb store (never of another Git repository), having first finished
    what a writer or a sync that died left behind."""
    store.require_kyb_store()
    durability.configure_libgit2()
    refuse_unwritable(store.path, store.git_dir)
    try:
        with store_lock.exclusive(store.kyb_dir / "write.lock"):
            try:
                journal.recover(store.repo, store.kyb_dir)
            except (OSError, pygit2.GitError) as exc:
                if denied_path(exc) is not None:
                    raise permission_error(store.path, denied_path(exc)) from None
                if not is_disk_full(exc):
                    raise StoreError(f"cannot finish an earlier interrupted write in {store.path}: {exc}") from None
                # no room to finish the earlier write's files: this write can still be refused cleanly
            mend_after_set_aside(store)  # a journal set aside: every record file an interrupted write left
            yield
    except OSError as exc:
        if is_disk_full(exc):
            raise disk_full_error(store.path) from None
        if denied_path(exc) is not None:
            raise permission_error(store.path, denied_path(exc)) from None
        raise


@contextmanager
def writing(store, attribution: Attribution) -> Iterator["Transaction"]:
    """Hold the writer lock; the commits made inside move the branch once, when the block ends."""
    with locked(store):
        tx = Transaction(store, attribution)
        yield tx
        tx.publish()


def warn(message: str) -> None:
    """A remark that is not the answer (the door prints the answer): one `kyb: warning:` line."""
    sys.stderr.write(f"kyb: warning: {message}\n")
    sys.stderr.flush()


def publish(store, old: pygit2.Commit | None, new: pygit2.Oid, changes: dict[str, Entry | None],
            log: str, *, what: str = "the write", strict: bool = False) -> list[str]:
    """Move the branch from `old` to `new` in one ref update, then bring `changes` along.

    Before the move: StoreError and nothing visible. After it: never an error; the returned
    warnings (also printed) say what is left for the next write to finish. `strict` (a clone, whose
    half-made directory is thrown away on failure): a working tree left unfinished is an error."""
    repo = store.repo
    if not objects_present(repo, new, changes):
        raise _unwritten_objects(store)
    try:
        branch = None if repo.head_is_detached else repo.lookup_reference("HEAD").target
        journal.write(store.kyb_dir, new, sorted(changes), branch)
        faults.step("before-ref")
        advance_head(repo, old, new, log)
    except StoreError:
        _forget_journal(store)
        raise
    except (OSError, pygit2.GitError) as exc:
        if not _branch_is_at(store, new):  # the truth is the branch, not the exception
            _forget_journal(store)
            if is_disk_full(exc, store.git_dir):
                raise disk_full_error(store.path) from None
            if denied_path(exc) is not None:
                raise permission_error(store.path, denied_path(exc)) from None
            raise StoreError(f"{what} failed, nothing was written: {exc}") from None
    warnings: list[str] = []
    try:
        faults.step("after-ref")
        commit = repo[new].peel(pygit2.Commit)
        update_worktree(repo, entries_at(commit, list(changes)))  # each directory read once
        faults.step("after-worktree")
        journal.clear(store.kyb_dir)
        remove_dead_temp_files(repo, sorted(changes))
    except (OSError, pygit2.GitError) as exc:
        if strict:
            raise
        denied = denied_path(exc)
        reason = ("the disk is full" if is_disk_full(exc, store.git_dir) else
                  denied_reason(store.path, denied) if denied is not None else str(exc))
        warnings.append(f"{what} is committed ({str(new)[:12]}), but kyb could not finish updating the "
                        f"store's working tree ({reason}); the next kyb command finishes it")
    for message in warnings:
        warn(message)
    return warnings


def objects_present(repo: pygit2.Repository, new: pygit2.Oid, changes: dict[str, Entry | None]) -> bool:
    """The commit `new`, its tree and every changed path's object can be read back. On a full disk
    libgit2 can return an object id whose file never made it to disk; moving the branch to it would
    break the store, so the branch moves only once everything it points at is there."""
    try:
        commit = repo[new].peel(pygit2.Commit)
        found = entries_at(commit, [p for p, e in changes.items() if e is not None])  # a batch: thousands
        for path, got in found.items():
            if got is None or got[0] != changes[path][0] or got[0] not in repo:
                return False
    except (KeyError, ValueError, pygit2.GitError):
        return False
    return True


def _unwritten_objects(store) -> StoreError:
    if low_space(store.git_dir):
        return disk_full_error(store.path)
    return StoreError(f"the write's objects could not be read back from {store.git_dir}; nothing was written")


def _branch_is_at(store, new: pygit2.Oid) -> bool:
    try:
        return store.head_sha() == str(new)
    except (StoreError, pygit2.GitError, OSError):
        return False


def _forget_journal(store) -> None:
    try:
        journal.clear(store.kyb_dir)
    except OSError:
        pass  # a journal whose commit is not HEAD is harmless: recovery removes it


class Transaction:
    """Writes made while holding the lock; each method is one commit on the current HEAD."""

    def __init__(self, store, attribution: Attribution) -> None:
        self.store = store
        self.attribution = attribution
        self.base = store.head_commit()  # HEAD under the lock: where the branch moves from
        self.tip = self.base  # the last commit made in this transaction (not yet on the branch)
        self.changes: dict[str, Entry | None] = {}
        self.moved = 0  # record files the move to the fanned-out layout moves (canon/migrate.py)
        self.keep_move = False  # publish the move even when nothing else is written (`kyb migrate`)
        self._move_tip: pygit2.Commit | None = None
        self._start_move()

    def _start_move(self) -> None:
        """An old-shape store: the move commit first, so every read and write of this transaction
        sees the fanned-out tree; it is published with the write (or not at all, if nothing is)."""
        if self.base is None:
            return
        try:
            made = layout.move_commit(self.store, self.base, self.attribution.trailers())
        except (OSError, pygit2.GitError) as exc:
            raise self._unwritten(exc) from None
        if made is None:
            return
        tip, changes, moved, held = made
        repo = self.store.repo
        if repo.workdir is not None:  # the move never overwrites a hand edit, old path or new
            index = git_index(repo)
            for path in changes:  # what base held there: an old file, or nothing at a new path
                was = held[path][0] if path in held else None  # (no path lookup per key: O(keys²))
                refuse_hand_edits(repo, self.store.path, path, was, index=index)
        self.tip, self._move_tip, self.moved = tip, tip, moved
        self.changes.update(changes)

    def publish(self) -> None:
        """Move the branch once, from `base` to `tip` (nothing to do when nothing was committed)."""
        if self.tip is None or self.tip is self.base:
            return
        if self.tip is self._move_tip and not self.keep_move:
            return  # only the move: a write that changed nothing does not move the store
        log = self.tip.message.split("\n", 1)[0]
        publish(self.store, self.base, self.tip.id, self.changes, log)

    # reads that see the transaction's own writes

    def current(self, key: str) -> Record | None:
        """The record in the transaction's tree (HEAD plus its own commits), or None — also when the
        file there is held out (unparseable or breaking a write rule, e.g. a peer's typo): an upsert
        then writes a fresh, valid version over it."""
        head = self.tip
        if head is None:
            return None
        path = path_of_key(key)
        blob = blob_at(head, path)
        if blob is None:
            return None
        try:
            return self.store.parse_blob(blob, path)
        except RecordFormatError:
            return None

    def put(self, record: Record, *, action: str | None = None, validate: bool = True,
            reason: str | None = None) -> WriteResult:
        """Write a record (an upsert): one commit, or none when nothing would change."""
        if validate:
            from kyb_cli.core.records.validate import validate as validate_record

            validate_record(record)
        store = self.store
        path = record.path
        head = self.tip
        old_blob = blob_at(head, path) if head is not None else None
        self._refuse_hand_edits(path)
        new_bytes = record.to_markdown().encode("utf-8")
        if old_blob is not None:
            old_bytes = store.blob_bytes(old_blob)
            if old_bytes == new_bytes:
                return WriteResult(record.key, changed=False)
            try:
                if parse(old_bytes, path=path).to_markdown().encode("utf-8") == new_bytes:
                    return WriteResult(record.key, changed=False)
            except RecordFormatError:
                pass
        created = old_blob is None
        verb = action or ("add" if created else "update")
        try:
            blob = store.repo.create_blob(new_bytes)
        except (OSError, pygit2.GitError) as exc:
            raise self._unwritten(exc) from None
        sha = self._commit(head, path, blob, verb, record.key, reason=reason)
        return WriteResult(record.key, changed=True, action="created" if created else "updated", sha=sha)

    def retract(self, key: str, reason: str) -> WriteResult:
        """Knowledge that was wrong leaves the tree; the commit records why.

        NotFound (no details) when the key is not in the tree; kinds/knowledge.py words it."""
        check_key(key)
        if kind_of_key(key) != "knowledge":
            what = "an incident" if kind_of_key(key) == "incident" else "a task"
            closer = "kyb resolve" if kind_of_key(key) == "incident" else "kyb done"
            raise Rejected(f"'{key}' is {what}: finished work is closed with `{closer}`, not retracted")
        if not reason or not reason.strip():
            raise Rejected("retracting needs a reason: say why this knowledge was wrong (--reason)")
        return self._remove(key, "retract", "retracted", reason.strip())

    def archive(self, key: str) -> WriteResult:
        """A closed incident or task leaves the tree; its final version stays in history and search."""
        return self._remove(key, "archive", "archived", None)

    def _remove(self, key: str, verb: str, action: str, reason: str | None) -> WriteResult:
        path = path_of_key(key)
        head = self.tip
        old_blob = blob_at(head, path) if head is not None else None
        if old_blob is None:
            raise NotFound(f"no record '{key}'")
        self._refuse_hand_edits(path)
        sha = self._commit(head, path, None, verb, key, reason=reason)
        return WriteResult(key, changed=True, action=action, sha=sha)

    # plumbing

    def _refuse_hand_edits(self, path: str) -> None:
        """The working tree still shows `base` for every path this transaction touches."""
        if path in self.changes:
            return
        base_blob = blob_at(self.base, path) if self.base is not None else None
        refuse_hand_edits(self.store.repo, self.store.path, path, base_blob)

    def _unwritten(self, exc: BaseException) -> StoreError:
        if is_disk_full(exc, self.store.git_dir):
            return disk_full_error(self.store.path)
        if denied_path(exc) is not None:
            return permission_error(self.store.path, denied_path(exc))
        return StoreError(f"write failed, nothing was written: {exc}")

    def _commit(self, head: pygit2.Commit | None, path: str, blob: pygit2.Oid | None, verb: str,
                key: str, *, reason: str | None = None) -> str:
        """A commit object on `head` changing `path`; it becomes the transaction's tip (not the branch's)."""
        store = self.store
        repo = store.repo
        change = {path: blob_entry(blob)}
        message = f"kyb: {verb} {key}\n"
        if reason:
            message += f"\n{reason}\n"
        trailers = [("Kyb-Action", verb)]
        if reason:
            trailers.append(("Kyb-Reason", " ".join(reason.split())))
        trailers += self.attribution.trailers()
        message += "\n" + "".join(f"{k}: {v}\n" for k, v in trailers if v)
        sig = store.signature()
        parents = [head.id] if head is not None else []
        try:
            tree = apply_changes(repo, head.tree if head is not None else None, change)
            faults.step("before-commit")
            commit = repo.create_commit(None, sig, sig, message, tree, parents)
        except (OSError, pygit2.GitError) as exc:
            raise self._unwritten(exc) from None
        if not objects_present(repo, commit, change):
            raise _unwritten_objects(store)
        self.tip = repo[commit].peel(pygit2.Commit)
        self.changes.update(change)
        return str(commit)


def migrate(store, attribution: Attribution) -> dict:
    """`kyb migrate`: the move to the fanned-out layout (canon/migrate.py) published on its own,
    `{changed, moved, sha}`; a new-shape store answers `changed: false` and writes nothing (the
    first write would have made the same move)."""
    with writing(store, attribution) as tx:
        tx.keep_move = True
        moved = tx.moved
        sha = str(tx.tip.id) if moved else None
    if not moved:
        return {"changed": False, "moved": 0}
    return {"changed": True, "moved": moved, "sha": sha}
