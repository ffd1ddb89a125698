"""The sync flow, `sync()` and `clone()`: fetch (quarantined and checked: incoming.py, the trust
boundary), integrate record by record (integrate.py), push (remote.py); a clone is an empty store
taking its first sync.

A peer's push is input we do not trust: the fetch is quarantined and checked before anything of it
enters the store; what is unsafe refuses the sync, records that break the write rules are held out
(merge.py) and reported under `held_out` on every sync while the tip holds them (held.py). A push
that loses a race fetches and integrates again, a bounded number of times.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any, Callable

import pygit2

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.canon.diskfull import is_disk_full
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.errors import RemoteError, StoreError
from kyb_cli.core.sync import clocks, incoming
from kyb_cli.core.sync.held import held_report
from kyb_cli.core.sync.integrate import integrate
from kyb_cli.core.sync.remote import MAX_ATTEMPTS, REMOTE, current_branch, git_said, push, remote_url

Progress = Callable[[str], None]


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
            return incoming.fetch(store.path, store.git_dir, name, branch, store.head_sha(), git_said)
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

    from kyb_cli.core.sync.remote import remote_branch, track
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
        track(store, REMOTE)
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
