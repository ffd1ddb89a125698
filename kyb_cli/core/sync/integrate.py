"""Integration: bring a fetched, checked remote head into local HEAD under the writer lock.

The flow around it (fetch, integrate, push; clone) is flow.py; what arrives was checked first by
incoming.py, the trust boundary. Integration is computed with pygit2 (merge.py decides per record) before the writer lock is taken;
the lock is held only to make the commit: check that HEAD did not move (else compute again under
the lock), refuse to overwrite hand edits, move the branch, bring the working tree along. A
fast-forward when one side contains the other, else one merge commit whose parents are local HEAD
and the fetched remote head, so every version written anywhere stays reachable with its own commit
time. A push that loses a race fetches and integrates again, a bounded number of times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pygit2

from kyb_cli.core.canon import faults
from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.canon.diskfull import disk_full_error, is_disk_full
from kyb_cli.core.canon.transaction import publish
from kyb_cli.core.canon.worktree import refuse_hand_edits
from kyb_cli.core.errors import StoreError
from kyb_cli.core.sync import merge
from kyb_cli.core.sync.remote import REMOTE

@dataclass
class Step:
    """What one integration did to local HEAD."""

    head: str | None
    kind: str  # up_to_date | ahead | fast_forward | merged | no_remote_branch
    incoming: int = 0
    conflicts: list[merge.Conflict] = field(default_factory=list)


def _count(repo: pygit2.Repository, tip: pygit2.Oid, hide: pygit2.Oid | None) -> int:
    walker = repo.walk(tip)
    if hide is not None:
        walker.hide(hide)
    return sum(1 for _ in walker)


@dataclass
class _Plan:
    local: pygit2.Commit | None
    kind: str
    new: pygit2.Oid | None = None
    tree: pygit2.Oid | None = None
    changes: dict[str, Any] = field(default_factory=dict)
    result: merge.Integration | None = None


def _plan(store: Store, remote_head: pygit2.Commit, held: set[tuple[str, str]]) -> _Plan:
    """What integrating `remote_head` into the current HEAD would do (no lock, nothing written)."""
    repo = store.repo
    local = store.head_commit()
    if local is not None and (local.id == remote_head.id or repo.descendant_of(local.id, remote_head.id)):
        return _Plan(local, "up_to_date" if local.id == remote_head.id else "ahead")
    if local is None or repo.descendant_of(remote_head.id, local.id):
        changes = merge.tree_changes(repo, local.tree if local else None, remote_head.tree)
        return _Plan(local, "fast_forward", new=remote_head.id, changes=changes)
    base_id = repo.merge_base(local.id, remote_head.id)
    base = repo[base_id] if base_id is not None else None
    result = merge.integrate(repo, local, remote_head, base, held=held, now=store.signature().time)
    return _Plan(local, "merged", tree=result.tree, changes=result.changes, result=result)


def integrate(store: Store, remote_head: pygit2.Commit | None, attribution: Attribution | None,
              name: str = REMOTE, held: set[tuple[str, str]] | None = None, *, strict: bool = False) -> Step:
    """Bring `remote_head` into local HEAD: plan without the lock, commit under it (`strict`: a clone,
    where an unfinished working tree is an error, not a warning: transaction.publish)."""
    repo = store.repo
    if remote_head is None:
        with store.locked():
            local = store.head_commit()
            return Step(head=str(local.id) if local else None, kind="no_remote_branch")
    held = held or set()
    plan = _plan(store, remote_head, held)
    with store.locked():
        if store.head_sha() != (str(plan.local.id) if plan.local else None):
            plan = _plan(store, remote_head, held)  # someone wrote meanwhile: plan again, now locked
        local = plan.local
        if plan.kind in ("up_to_date", "ahead"):
            return Step(head=str(local.id), kind=plan.kind)
        incoming_count = _count(repo, remote_head.id, local.id if local else None)
        _refuse_hand_edits(store, local, plan.changes)
        if plan.kind == "fast_forward":
            elsewhere = merge.decided_elsewhere(repo, remote_head.id, local.id if local else None)
            _move_head(store, local, remote_head.id, plan.changes, f"kyb: sync fast-forward to {name}", strict)
            return Step(head=str(remote_head.id), kind="fast_forward", incoming=incoming_count,
                        conflicts=elsewhere)
        assert plan.result is not None and local is not None
        message = _merge_message(name, incoming_count, _count(repo, local.id, remote_head.id), plan.result,
                                 attribution)
        sig = store.signature()
        try:
            faults.step("before-commit")
            commit = repo.create_commit(None, sig, sig, message, plan.result.tree, [local.id, remote_head.id])
        except (OSError, pygit2.GitError) as exc:
            if is_disk_full(exc):
                raise disk_full_error(store.path) from None
            raise StoreError(f"sync could not write its merge commit, nothing was changed: {exc}") from None
        elsewhere = merge.decided_elsewhere(repo, remote_head.id, local.id)
        _move_head(store, local, commit, plan.changes, message.split("\n", 1)[0], strict)
        for conflict in plan.result.conflicts:
            conflict.merge = str(commit)
        return Step(head=str(commit), kind="merged", incoming=incoming_count,
                    conflicts=plan.result.conflicts + elsewhere)


def _merge_message(name: str, incoming_count: int, outgoing: int, result: merge.Integration,
                   attribution: Attribution | None) -> str:
    lines = [f"kyb: sync merge {name}", "",
             f"Integrated {incoming_count} remote and {outgoing} local commit(s) record by record; "
             f"{len(result.conflicts)} conflict(s).", ""]
    trailers = [("Kyb-Action", "sync")]
    trailers += [("Kyb-Conflict", c.trailer()) for c in result.conflicts]
    if attribution is not None:
        trailers += attribution.trailers()
    lines += [f"{k}: {v}" for k, v in trailers if v]
    return "\n".join(lines) + "\n"


def _refuse_hand_edits(store: Store, local: pygit2.Commit | None, changes: dict[str, Any]) -> None:
    """One read of the Git index for all paths (a sync may change thousands: never one read each).
    A path the canon lacks, with nothing staged and no file in its directory's listing, holds no
    hand edit (has_hand_edits says the same): a peer's 50,000 new records are not 50,000 opens."""
    if not changes:
        return
    from kyb_cli.core.canon.nofollow import names_in
    from kyb_cli.core.canon.tree import TreeListing

    index = store.repo.index
    index.read()
    listing = TreeListing(local.tree if local is not None else None)
    present: dict[str, set[str] | None] = {}
    for path in sorted(changes):
        entry = listing.get(path)
        if entry is None:
            folder, _, name = path.rpartition("/")
            if folder not in present:
                present[folder] = names_in(store.path, folder)
            names = present[folder]
            if names is not None and name not in names and path not in index:
                continue
        refuse_hand_edits(store.repo, store.path, path, entry[0] if entry else None, doing="sync", index=index)


def _move_head(store: Store, local: pygit2.Commit | None, new: pygit2.Oid, changes: dict[str, Any],
               log: str, strict: bool = False) -> None:
    """Move the branch once and bring the changed files along: the writers' rule (canon/transaction.py,
    `publish`): before the move a StoreError and nothing visible, after it success plus a warning."""
    publish(store, local, new, changes, log, what="the sync", strict=strict)
