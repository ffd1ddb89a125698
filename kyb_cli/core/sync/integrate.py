"""Integration under the writer lock, and the sync loop: fetch, integrate record by record, push.

A peer's push is input we do not trust (incoming.py): the fetch is quarantined and checked before
anything of it enters the store; what is unsafe refuses the sync, records that break the write
rules are held out (merge.py) and reported under `held_out` on every sync while the tip holds them.

Integration is computed with pygit2 (merge.py decides per record) before the writer lock is taken;
the lock is held only to make the commit: check that HEAD did not move (else compute again under
the lock), refuse to overwrite hand edits, move the branch, bring the working tree along. A
fast-forward when one side contains the other, else one merge commit whose parents are local HEAD
and the fetched remote head, so every version written anywhere stays reachable with its own commit
time. A push that loses a race fetches and integrates again, a bounded number of times.
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import pygit2

from kyb_cli.core.canon import faults
from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.canon.diskfull import disk_full_error, is_disk_full
from kyb_cli.core.canon.transaction import publish
from kyb_cli.core.canon.tree import blob_at
from kyb_cli.core.canon.worktree import refuse_hand_edits
from kyb_cli.core.errors import RemoteError, StoreError
from kyb_cli.core.sync import clocks, incoming, merge
from kyb_cli.core.sync.remote import MAX_ATTEMPTS, REMOTE, _git_said, current_branch, push, remote_url

Progress = Callable[[str], None]
HELD_NAME = "held-out.json"


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
    """One read of the Git index for all paths (a sync may change thousands: never one read each)."""
    if not changes:
        return
    index = store.repo.index
    index.read()
    lookup = _Lookup(local.tree if local is not None else None)
    for path in sorted(changes):
        entry = lookup.entry(path)
        refuse_hand_edits(store.repo, store.path, path, entry[0] if entry else None, doing="sync", index=index)


class _Lookup:
    """Entries of one tree by path, each directory loaded once (a `tree[path]` per path re-reads
    the directory every time: quadratic in the number of records)."""

    def __init__(self, tree: pygit2.Tree | None) -> None:
        self.tree = tree
        self.dirs: dict[str, pygit2.Tree | None] = {"": tree}

    def _dir(self, name: str) -> pygit2.Tree | None:
        if name not in self.dirs:
            parent, _, leaf = name.rpartition("/")
            up = self._dir(parent)
            obj = None
            if up is not None:
                try:
                    obj = up[leaf]
                except KeyError:
                    obj = None
            self.dirs[name] = obj if isinstance(obj, pygit2.Tree) else None
        return self.dirs[name]

    def entry(self, path: str):
        parent, _, leaf = path.rpartition("/")
        sub = self._dir(parent)
        if sub is None:
            return None
        try:
            obj = sub[leaf]
        except KeyError:
            return None
        return (obj.id, int(obj.filemode))


def _move_head(store: Store, local: pygit2.Commit | None, new: pygit2.Oid, changes: dict[str, Any],
               log: str, strict: bool = False) -> None:
    """Move the branch once and bring the changed files along: the writers' rule (canon/transaction.py,
    `publish`): before the move a StoreError and nothing visible, after it success plus a warning."""
    publish(store, local, new, changes, log, what="the sync", strict=strict)


# -- held-out records: reported on every sync while the tip holds them --------------------------------

def _held_path(store: Store):
    return store.kyb_dir / HELD_NAME


def held_report(store: Store, fetched: list[incoming.Problem]) -> list[dict[str, str]]:
    """Every held-out record this sync saw (`fetched`) plus those still at HEAD from earlier syncs;
    what is still at HEAD is remembered for the next sync (`.git/kyb/held-out.json`)."""
    head = store.head_commit()
    try:
        old = [incoming.Problem(**p) for p in json.loads(_held_path(store).read_text())]
    except (OSError, ValueError, TypeError):
        old = []
    seen: dict[str, incoming.Problem] = {}
    for p in fetched + old:
        seen.setdefault(p.path, p)
    keep = [p for p in seen.values() if head is not None and str(blob_at(head, p.path) or "") == p.oid]
    try:
        store.kyb_dir.mkdir(parents=True, exist_ok=True)
        tmp = _held_path(store).with_suffix(".tmp")
        tmp.write_text(json.dumps([p.__dict__ for p in keep]))
        os.replace(tmp, _held_path(store))
    except OSError:
        pass
    report = {p.path: p for p in keep}
    for p in fetched:
        report.setdefault(p.path, p)
    return [report[k].to_json() for k in sorted(report)]


# -- sync -------------------------------------------------------------------------------------------

def sync(store: Store, *, attribution: Attribution | None = None, name: str = REMOTE,
         attempts: int = MAX_ATTEMPTS, progress: Progress | None = None) -> dict[str, Any]:
    """Fetch, integrate, push; on a lost push race fetch and integrate again (at most `attempts` times)."""
    say = progress or (lambda _msg: None)
    store.require_kyb_store()  # before fetch writes remote-tracking refs into it
    url = remote_url(store, name)
    if url is None:
        raise RemoteError(f"the store has no remote '{name}' — set one with `kyb remote URL` "
                          f"(or `git -C {store.path} remote add {name} URL`)")
    branch = current_branch(store)
    reply: dict[str, Any] = {
        "remote": name, "url": url, "branch": branch, "fetched": False, "incoming": 0,
        "fast_forward": False, "merged": False, "merges": [], "pushed": False, "conflicts": [],
        "held_out": [], "clamped": [], "head": None, "attempts": 0,
    }
    fetched: dict[str, incoming.Problem] = {}
    clamped: dict[str, dict] = {}
    for attempt in range(1, max(1, attempts) + 1):
        reply["attempts"] = attempt
        say(f"fetching from {name}")
        arrived = fetch_checked(store, name, branch)
        reply["fetched"] = True
        remote_head = store.repo[arrived.tip].peel(pygit2.Commit) if arrived is not None else None
        for p in arrived.held_out if arrived is not None else []:
            fetched.setdefault(p.path, p)
        if remote_head is not None:
            local = store.head_commit()
            for c in clocks.clamped(store.repo, remote_head.id, local.id if local else None, int(time.time())):
                clamped.setdefault(c["commit"], c)
        say("integrating")
        step = integrate(store, remote_head, attribution, name, {(p.path, p.oid) for p in fetched.values()})
        reply["incoming"] += step.incoming
        reply["fast_forward"] = reply["fast_forward"] or step.kind == "fast_forward"
        if step.kind == "merged":
            reply["merged"] = True
            reply["merges"].append(step.head)
        reply["conflicts"].extend(c.to_json() for c in step.conflicts)
        reply["head"] = step.head
        reply["held_out"] = held_report(store, list(fetched.values()))
        reply["clamped"] = sorted(clamped.values(), key=lambda c: c["commit"])
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


def fetch_checked(store: Store, name: str, branch: str) -> incoming.Incoming | None:
    """The quarantined, checked fetch (incoming.py); a concurrent fetch into the store is waited out."""
    last: Exception | None = None
    for attempt in range(MAX_ATTEMPTS):
        try:
            return incoming.fetch(store.path, store.git_dir, name, branch, store.head_sha(), _git_said)
        except RemoteError as exc:
            if "cannot lock ref" not in exc.message:
                raise
            last = exc
            time.sleep(random.uniform(0.05, 0.2) * (attempt + 1))
    assert last is not None
    raise last


# -- clone: the same doors as sync ----------------------------------------------------------------

def clone(url: str, path) -> Store:
    """A working store from a remote (`kyb init --clone`); an empty remote gives a fresh store to push.

    sync-clone-parity: built in a hidden sibling directory as an empty store that then takes the
    remote exactly as `kyb sync` would (quarantined fetch, refuse-unsafe, held-out, fast-forward
    through the no-follow working-tree writer), and renamed into place only when it is complete,
    so a refused or failed clone leaves nothing behind. `store.clone_report` carries `held_out` and
    `clamped` for the reply.
    """
    import shutil
    from pathlib import Path

    from kyb_cli.core.sync.remote import _track, remote_branch
    from kyb_cli.core.sync.urls import absolute_local

    url = absolute_local(url)  # git runs in the new store, so `../team.git` must not stay relative
    path = Path(path).absolute()
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise StoreError(f"{path} exists and is not empty; kyb init --clone wants a new or empty directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"kyb init --clone cannot create {path.parent} ({exc.strerror or exc})"
                         + (": the disk is full — free some space and run it again" if is_disk_full(exc) else ""),
                         path=str(path)) from None
    tmp = path.parent / f".{path.name}.kyb-clone-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        repo = pygit2.init_repository(str(tmp), bare=False, initial_head="main")
        repo.remotes.create(REMOTE, url)
        store = Store(tmp, repo=repo)
        store.mark()  # a clone made by kyb is a store deliberately (only stores are written)
        branch = remote_branch(store)
        report: dict[str, Any] = {"held_out": [], "clamped": []}
        arrived = None
        if branch is not None:
            repo.set_head(f"refs/heads/{branch}")
            arrived = fetch_checked(store, REMOTE, branch)
        if arrived is None:  # an empty remote: start the store here, the first sync pushes it
            store.commit_empty_root()
        else:
            remote_head = repo[arrived.tip].peel(pygit2.Commit)
            report["clamped"] = clocks.clamped(repo, remote_head.id, None, int(time.time()))
            integrate(store, remote_head, None, REMOTE, {(p.path, p.oid) for p in arrived.held_out}, strict=True)
            report["held_out"] = held_report(store, arrived.held_out)
        _track(store, REMOTE)
        store.kyb_dir.mkdir(parents=True, exist_ok=True)
        if path.exists():
            path.rmdir()
        os.replace(tmp, path)
    except BaseException as exc:
        full = isinstance(exc, (OSError, pygit2.GitError, StoreError)) and is_disk_full(exc, path.parent)
        shutil.rmtree(tmp, ignore_errors=True)
        if full:
            raise StoreError(
                f"the disk holding {path} is full: nothing was cloned and nothing was left behind — free "
                f"some space on that filesystem (the clone needs about the size of the remote) and run "
                f"`kyb init --clone {url} {path}` again", path=str(path)) from None
        if isinstance(exc, (OSError, pygit2.GitError)):
            raise StoreError(f"kyb init --clone could not write {path} ({exc}); nothing was left behind",
                             path=str(path)) from None
        raise
    done = Store(path)
    done.clone_report = report
    return done
