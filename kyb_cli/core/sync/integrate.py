"""Integration under the writer lock, and the sync loop: fetch, integrate record by record, push.

Integration runs in-process with pygit2 under the store's writer lock (merge.py decides per record):
a fast-forward when one side contains the other, else one merge commit whose parents are local HEAD
and the fetched remote head, so every version written anywhere stays reachable with its own commit
time. A push that loses a race (someone pushed between our fetch and push) fetches and integrates
again, a bounded number of times. The network is remote.py; nothing here talks to a remote.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import pygit2

from kyb_cli.core.canon import journal
from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.canon.tree import advance_head
from kyb_cli.core.canon.worktree import refuse_hand_edits, update_worktree
from kyb_cli.core.errors import RemoteError, StoreError
from kyb_cli.core.sync import merge
from kyb_cli.core.sync.remote import MAX_ATTEMPTS, REMOTE, current_branch, fetch, push, remote_url

Progress = Callable[[str], None]


# -- sync -------------------------------------------------------------------------------------------

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


def integrate(store: Store, remote_head: pygit2.Commit | None, attribution: Attribution | None,
              name: str = REMOTE) -> Step:
    """Bring `remote_head` into local HEAD under the writer lock: fast-forward, or one merge commit."""
    repo = store.repo
    with store.locked():
        local = store.head_commit()
        if remote_head is None:
            return Step(head=str(local.id) if local else None, kind="no_remote_branch")
        if local is not None and (local.id == remote_head.id or repo.descendant_of(local.id, remote_head.id)):
            kind = "up_to_date" if local.id == remote_head.id else "ahead"
            return Step(head=str(local.id), kind=kind)
        incoming = _count(repo, remote_head.id, local.id if local else None)
        if local is None or repo.descendant_of(remote_head.id, local.id):
            changes = merge.tree_changes(repo, local.tree if local else None, remote_head.tree)
            merge.check_records(repo, remote_head.tree.id, list(changes), {p: remote_head for p in changes})
            _refuse_hand_edits(store, local, changes)
            elsewhere = merge.decided_elsewhere(repo, remote_head.id, local.id if local else None)
            _move_head(store, local, remote_head.id, changes, f"kyb: sync fast-forward to {name}")
            return Step(head=str(remote_head.id), kind="fast_forward", incoming=incoming, conflicts=elsewhere)
        base_id = repo.merge_base(local.id, remote_head.id)
        base = repo[base_id] if base_id is not None else None
        result = merge.integrate(repo, local, remote_head, base)
        ours = merge.tree_changes(repo, base.tree if base else None, local.tree)
        merge.check_records(repo, result.tree, sorted(set(ours) | set(result.changes)),
                            {**{p: local for p in ours}, **{p: remote_head for p in result.changes}})
        _refuse_hand_edits(store, local, result.changes)
        message = _merge_message(name, incoming, _count(repo, local.id, remote_head.id), result, attribution)
        sig = store.signature()
        commit = repo.create_commit(None, sig, sig, message, result.tree, [local.id, remote_head.id])
        elsewhere = merge.decided_elsewhere(repo, remote_head.id, local.id)
        _move_head(store, local, commit, result.changes, message.split("\n", 1)[0])
        for conflict in result.conflicts:
            conflict.merge = str(commit)
        return Step(head=str(commit), kind="merged", incoming=incoming, conflicts=result.conflicts + elsewhere)


def _merge_message(name: str, incoming: int, outgoing: int, result: merge.Integration,
                   attribution: Attribution | None) -> str:
    lines = [f"kyb: sync merge {name}", "",
             f"Integrated {incoming} remote and {outgoing} local commit(s) record by record; "
             f"{len(result.conflicts)} conflict(s).", ""]
    trailers = [("Kyb-Action", "sync")]
    trailers += [("Kyb-Conflict", c.trailer()) for c in result.conflicts]
    if attribution is not None:
        trailers += attribution.trailers()
    lines += [f"{k}: {v}" for k, v in trailers if v]
    return "\n".join(lines) + "\n"


def _refuse_hand_edits(store: Store, local: pygit2.Commit | None, changes: dict[str, Any]) -> None:
    for path in sorted(changes):
        committed = merge.entry_at(local, path) if local is not None else None
        refuse_hand_edits(store.repo, store.path, path, committed[0] if committed else None, doing="sync")


def _move_head(store: Store, local: pygit2.Commit | None, new: pygit2.Oid, changes: dict[str, Any],
               log: str) -> None:
    """Move the branch, then bring the changed files and the Git index along (journaled for crashes)."""
    try:
        branch = None if store.repo.head_is_detached else store.repo.lookup_reference("HEAD").target
        journal.write(store.kyb_dir, new, sorted(changes), branch)
        advance_head(store.repo, local, new, log)
        commit = store.repo[new].peel(pygit2.Commit)
        update_worktree(store.repo, {p: merge.entry_at(commit, p) for p in changes})
        journal.clear(store.kyb_dir)
    except (OSError, pygit2.GitError) as exc:
        raise StoreError(f"sync could not update the store, it is unchanged or recoverable: {exc}") from None


def sync(store: Store, *, attribution: Attribution | None = None, name: str = REMOTE,
         attempts: int = MAX_ATTEMPTS, progress: Progress | None = None) -> dict[str, Any]:
    """Fetch, integrate, push; on a lost push race fetch and integrate again (at most `attempts` times)."""
    say = progress or (lambda _msg: None)
    url = remote_url(store, name)
    if url is None:
        raise RemoteError(f"the store has no remote '{name}' — set one with `kyb remote URL` "
                          f"(or `git -C {store.path} remote add {name} URL`)")
    branch = current_branch(store)
    reply: dict[str, Any] = {
        "remote": name, "url": url, "branch": branch, "fetched": False, "incoming": 0,
        "fast_forward": False, "merged": False, "merges": [], "pushed": False, "conflicts": [],
        "head": None, "attempts": 0,
    }
    for attempt in range(1, max(1, attempts) + 1):
        reply["attempts"] = attempt
        say(f"fetching from {name}")
        fetch(store, name)
        reply["fetched"] = True
        ref = store.repo.references.get(f"refs/remotes/{name}/{branch}")
        remote_head = ref.peel(pygit2.Commit) if ref is not None else None
        say("integrating")
        step = integrate(store, remote_head, attribution, name)
        reply["incoming"] += step.incoming
        reply["fast_forward"] = reply["fast_forward"] or step.kind == "fast_forward"
        if step.kind == "merged":
            reply["merged"] = True
            reply["merges"].append(step.head)
        reply["conflicts"].extend(c.to_json() for c in step.conflicts)
        reply["head"] = step.head
        if step.head is None or (remote_head is not None and step.head == str(remote_head.id)):
            return reply
        say(f"pushing to {name}")
        if push(store, step.head, branch, name):
            reply["pushed"] = True
            return reply
        time.sleep(min(2.0, 0.05 * 2 ** attempt) * random.uniform(0.5, 1.5))
    raise RemoteError(
        f"remote '{name}' kept moving: {attempts} attempts lost the push race; everything is committed "
        "locally, sync again", remote=name, head=reply["head"])


