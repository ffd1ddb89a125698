"""Sharing a store through a Git remote: sync, the background sync, remotes, clone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

REMOTE = "origin"  # the remote kyb syncs with (kyb_cli.core.sync.remote.REMOTE)


def sync(store, *, attribution=None, progress=None) -> dict[str, Any]:
    """Fetch, integrate record by record, push; the reply says what happened."""
    from kyb_cli.core.sync.integrate import sync as core

    return core(store, attribution=attribution, progress=progress)


def background_sync(store, attribution=None) -> None:
    """`kyb sync --background`: one background sync at a time per store."""
    from kyb_cli.core.sync.background import background_sync as core

    core(store, attribution)


def remote_url(store, name: str = REMOTE) -> str | None:
    from kyb_cli.core.sync.remote import remote_url as core

    return core(store, name)


def set_remote(store, url: str, name: str = REMOTE) -> dict[str, Any]:
    from kyb_cli.core.sync.remote import set_remote as core

    return core(store, url, name)


def clone(url: str, path: Path):
    """`kyb init --clone URL PATH`: a working store from a remote."""
    from kyb_cli.core.sync.remote import clone as core

    return core(url, Path(path))
