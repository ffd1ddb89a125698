"""Sharing a store through a Git remote: sync, the background sync, remotes, clone."""

from __future__ import annotations


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`
    from typing import Any

REMOTE = "origin"  # the remote kyb syncs with (kyb_cli.core.sync.remote.REMOTE)


def sync(store, *, attribution=None, name: str = REMOTE, attempts: int = 10,
         progress=None) -> dict[str, Any]:
    """`kyb sync`: fetch from remote `name`, integrate record by record (under the writer lock), push;
    on a lost push race fetch and integrate again, at most `attempts` times.

    Returns the reply saying what happened (`{remote, url, branch, fetched, incoming,
    fast_forward, merged, merges, pushed, conflicts, head, attempts}`).
    Raises RemoteError (exit 5: no remote, unreachable, refused), StoreError / LockTimeout (exit 4)."""
    from kyb_cli.core.sync.flow import sync as core

    return core(store, attribution=attribution, name=name, attempts=attempts, progress=progress)


def background_sync(store, attribution=None) -> None:
    """`kyb sync --background`: start one background sync per store (a request arriving meanwhile
    makes the running one go again). Returns nothing, raises nothing: failures go to its log."""
    from kyb_cli.core.sync.background import background_sync as core

    core(store, attribution)


def remote_url(store, name: str = REMOTE) -> str | None:
    """The URL of remote `name` as Git has it (set by `kyb remote`, `kyb init --clone` or plain
    `git remote`), None when there is none."""
    from kyb_cli.core.sync.remote import remote_url as core

    return core(store, name)


def set_remote(store, url: str, name: str = REMOTE) -> dict[str, Any]:
    """`kyb remote URL`: point `name` at `url` (create or change it) and make the current branch track
    it. Returns `{remote, url}`. Raises UsageError (exit 2: an empty URL), RemoteError (exit 5: Git
    refused it)."""
    from kyb_cli.core.sync.remote import set_remote as core

    return core(store, url, name)


def clone(url: str, path: Path):
    """`kyb init --clone URL PATH`: a working store from a remote (an empty remote gives a fresh store
    to push); the background filler starts building its index at once (HEAD first, then the
    history), so the first question finds it. Returns the Store. Raises RemoteError (exit 5:
    unreachable, refused), StoreError (exit 4: PATH exists and is not empty)."""
    from kyb_cli.core.index.staged import after_clone
    from kyb_cli.core.sync.flow import clone as core

    from pathlib import Path

    store = core(url, Path(path))
    after_clone(Path(path))
    return store
