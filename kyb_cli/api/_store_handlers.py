"""Handlers of the store operations the CLI alone offers (index, reindex, remote, sync, import, edit, migrate): one per table
operation, so the command does what every door does — api.handle with the table's fields — and
renders the answer. A long job reports through the door's `progress` when it has one
(`progress(done, total)`; sync: `progress(message)`)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
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


def _import(door, a: dict[str, Any]) -> dict[str, Any]:
    """Files and folders, or `kyb export` output, in one batch: api.import_records's reply.
    (Its progress is `progress(phase, done, total)`.)"""
    from kyb_cli.api.records import split_list
    from kyb_cli.api.tools import import_records

    return import_records(door.store(), list(a["paths"]), attribution=door.attribution(), format=a["format"],
                          kind=a["kind"], tags=split_list(a["tags"]), key_from=a["key_from"],
                          exclude=list(a["exclude"] or []), dry_run=a["dry_run"], one_commit=a["one_commit"],
                          sync_deletes=a["sync_deletes"], progress=_progress(door))


def _edit(door, a: dict[str, Any]) -> dict[str, Any]:
    """KEY's record file handed to the door's editor (`door.edit(original, save)`, which calls `save`
    with each edited text until one is kept or it gives up); unchanged text makes no commit."""
    from kyb_cli.api.records import edit_text, save_edit

    store, key = door.store(), a["key"]
    original = edit_text(store, key)

    def save(text: str) -> dict[str, Any]:
        if text == original:
            return {"changed": False, "key": key}
        return save_edit(store, door.attribution(), key, text)

    return door.edit(original, save)


def _migrate(door, a: dict[str, Any]) -> dict[str, Any]:
    """The move to the fanned-out layout, on its own: what it moved (api.migrate_store's reply)."""
    from kyb_cli.api.tools import migrate_store

    return migrate_store(door.store(), door.attribution())


STORE_HANDLERS = {"index": _index, "reindex": _reindex, "remote": _remote, "sync": _sync, "import": _import,
                  "edit": _edit, "migrate": _migrate}
