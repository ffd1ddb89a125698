"""One commit per write: `writing(store, attribution)` holds the lock and yields a Transaction.

A write builds the new tree in memory from HEAD's tree, makes one commit that touches only that
record's file, moves the branch, then brings that one file of the working tree and the Git index
along. Other files, staged or not, are never touched. Nothing is ever lost:
- writers are serialized by `lock.exclusive` (bounded wait, released by the kernel if a writer dies);
- the branch moves in one atomic ref update, so the canon is exactly as before or exactly as after;
- the journal (journal.py) lets the next writer finish bringing the working tree along if a
  process died between the ref update and the file write;
- a working-tree file with uncommitted hand edits is never overwritten (Rejected instead).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import pygit2

from kyb_cli.core.canon import journal
from kyb_cli.core.canon import lock as store_lock
from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.canon.tree import advance_head, apply_changes, blob_at, blob_entry
from kyb_cli.core.canon.worktree import refuse_hand_edits, update_worktree
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
    """Hold the writer lock, having first finished what a writer or a sync that died left behind."""
    with store_lock.exclusive(store.kyb_dir / "write.lock"):
        journal.recover(store.repo, store.kyb_dir)
        yield


@contextmanager
def writing(store, attribution: Attribution) -> Iterator["Transaction"]:
    """Hold the writer lock; every put/remove inside is one commit on top of the fresh HEAD."""
    with locked(store):
        yield Transaction(store, attribution)


class Transaction:
    """Writes made while holding the lock; each method is one commit on the current HEAD."""

    def __init__(self, store, attribution: Attribution) -> None:
        self.store = store
        self.attribution = attribution

    # reads that see the transaction's own writes

    def current(self, key: str) -> Record | None:
        """The record in HEAD's tree, or None — also when the file there is held out (unparseable or
        breaking a write rule, e.g. a peer's typo): an upsert then writes a fresh, valid version over it."""
        head = self.store.head_commit()
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
        head = store.head_commit()
        old_blob = blob_at(head, path) if head is not None else None
        refuse_hand_edits(store.repo, store.path, path, old_blob)
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
        blob = store.repo.create_blob(new_bytes)
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
        store = self.store
        path = path_of_key(key)
        head = store.head_commit()
        old_blob = blob_at(head, path) if head is not None else None
        if old_blob is None:
            raise NotFound(f"no record '{key}'")
        refuse_hand_edits(store.repo, store.path, path, old_blob)
        sha = self._commit(head, path, None, verb, key, reason=reason)
        return WriteResult(key, changed=True, action=action, sha=sha)

    # plumbing

    def _commit(self, head: pygit2.Commit | None, path: str, blob: pygit2.Oid | None, verb: str,
                key: str, *, reason: str | None = None) -> str:
        store = self.store
        repo = store.repo
        change = {path: blob_entry(blob)}
        tree = apply_changes(repo, head.tree if head is not None else None, change)
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
            commit = repo.create_commit(None, sig, sig, message, tree, parents)
            branch = None if repo.head_is_detached else repo.lookup_reference("HEAD").target
            journal.write(store.kyb_dir, commit, [path], branch)
            _fault("before-ref")
            advance_head(repo, head, commit, message.split("\n", 1)[0])
            _fault("after-ref")
            update_worktree(repo, change)
            _fault("after-worktree")
            journal.clear(store.kyb_dir)
        except (OSError, pygit2.GitError) as exc:
            raise StoreError(f"write failed, the store is unchanged or recoverable: {exc}") from None
        return str(commit)


def _fault(point: str) -> None:
    """TEST-ONLY fault injection: `KYB_FAULT=<point>` SIGKILLs this process at that point of a write.

    Points: `before-ref` (commit object and journal written, branch not moved), `after-ref` (branch
    moved, working tree not yet updated), `after-worktree` (working tree updated, journal not yet
    removed). The crash tests use it to prove a killed writer leaves the canon exactly as before or
    exactly as after, and that the next write heals the working tree. Never set it in real use.
    """
    if os.environ.get("KYB_FAULT") == point:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
