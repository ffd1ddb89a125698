"""Handlers of the store operations the CLI alone offers (index, reindex, remote, sync): one per table
operation, so the command does what every door does — api.handle with the table's fields — and
renders the answer. A long job reports through the door's `progress` when it has one
(`progress(done, total)`; sync: `progress(message)`)."""

from __future__ import annotations

from typing import Any


def _progress(door):
    return getattr(door, "progress", None)


def _index(door, a: dict[str, Any]) -> dict[str, Any]:
    """The index's state, or with `embed` every missing vector filled now."""
    from kyb_cli.api.search import embed_all, index_status

    if not a["embed"]:
        return index_status(door.path())
    return embed_all(door.path(), progress=_progress(door))


def _reindex(door, a: dict[str, Any]) -> dict[str, Any]:
    """The index rebuilt from every commit: its counts and time, and how many versions were skipped."""
    from kyb_cli.api.search import rebuild_index

    work = rebuild_index(door.path(), progress=_progress(door))
    return ({k: work[k] for k in ("head", "commits", "keys", "versions", "events", "seconds") if k in work}
            | {"skipped": len(work.get("skipped", []))})


def _remote(door, a: dict[str, Any]) -> dict[str, Any]:
    """`{remote, url}` as Git has it; with `url` the remote set to it (`changed: true`)."""
    from kyb_cli.api.sync import REMOTE, remote_url, set_remote

    store = door.store()
    if a["url"] is None:
        return {"remote": REMOTE, "url": remote_url(store, REMOTE)}
    return {**set_remote(store, a["url"], REMOTE), "changed": True}


def _sync(door, a: dict[str, Any]) -> dict[str, Any]:
    """Fetch, integrate record by record, push: what happened (api.sync's reply)."""
    from kyb_cli.api.sync import sync

    return sync(door.store(), attribution=door.attribution(), progress=_progress(door))


STORE_HANDLERS = {"index": _index, "reindex": _reindex, "remote": _remote, "sync": _sync}
