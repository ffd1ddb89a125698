"""Records: write and retract knowledge, read a record now or at a revision, its history, tags."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`
    from typing import Any

from kyb_cli.api._writes import writes


def add_knowledge(store, *, key: str, title: str, body: str, tags: list[str], refs: list[str], attribution,
                  effective_at: str | None = None, review_by: str | None = None):
    """Write knowledge under `key` (an upsert, a full replace of title, body, tags and refs), as
    `kyb add` does: one commit when anything changed, none when nothing did.

    `effective_at`: when the fact became true in the world (a date or datetime; default: when written).
    `review_by`: None keeps the current one, "" clears it, YYYY-MM-DD sets it.
    Returns a WriteResult (`key`, `changed`, `action` created|updated, `sha`; `to_json()` gives the
    door's reply: a create's carries `similar` (and `revived` for a retracted key), an update's
    `retired_elsewhere`). Raises UsageError (exit 2: a bad `effective_at`), Rejected (exit 3: a bad key or
    field, a secret in the text, a bad `review_by`; nothing written), StoreError / LockTimeout (exit 4)."""
    from kyb_cli.core.kinds.knowledge import add_knowledge as core
    from kyb_cli.core.timeargs import event_time_arg

    when = event_time_arg(effective_at)
    with writes(store):
        return core(store, key=key, title=title, body=body, tags=tags, refs=refs, attribution=attribution,
                    effective_at=when, review_by=review_by)


def retract_knowledge(store, key: str, reason: str, attribution):
    """Retract knowledge that was wrong (`kyb retract`): it leaves the tree in a commit recording
    `reason`; its versions stay in history. Returns a WriteResult (`action: retracted`). Raises
    NotFound (exit 1: no such live record), Rejected (exit 3: not knowledge, no reason), StoreError /
    LockTimeout (exit 4)."""
    from kyb_cli.core.kinds.knowledge import retract_knowledge as core

    with writes(store):
        return core(store, key, reason, attribution)


def split_list(value: str | list[str] | None) -> list[str]:
    """`a, b,,c` -> ["a", "b", "c"]; a list keeps its trimmed non-blank items (None -> []): the doors' one
    list rule."""
    from kyb_cli.core.records.lists import split_list as core  # a leaf: no record model, no pygit2

    return core(value)


def read(store: Any, key: str, at: str | None = None, *, version: int | None = None):
    """The record KEY now (or at revision `at`, or its content version number `version`) as a Version;
    `store` is a Store or a path. `version` counts from 1 (the first), or back from -1 (the one before
    the current); past either end is NotFound naming the range.

    A Version has `record` (the Record: key, kind, title, body, tags, ...), `sha`, `committed_at`,
    `state` (active|archived|retracted), `is_head` and `related` (a task's says which live tasks it
    `blocks`); `to_json()` gives the door's reply. Raises NotFound (exit 1: no such key, revision or
    version), UsageError (exit 2: both `at` and `version`), StoreError (exit 4: not a store)."""
    from kyb_cli.core.index.fresh import with_index

    if version is not None and at is not None:
        from kyb_cli.core.errors import UsageError

        raise UsageError("give at or version, not both", field=("at", "version"))
    # One answer, one index session: the read, a task's blocks and the trust annotation share it.
    return with_index(getattr(store, "path", store), lambda _f: _read(store, key, at, version),
                      history=at is not None or version is not None)


def _read(store: Any, key: str, at: str | None, version: int | None):
    if version is not None:
        from kyb_cli.core.index.numbering import read_version

        return _with_trust(store, _with_blocks(store, read_version(store, key, version)))
    from kyb_cli.core.index.reads import read as core

    return _with_trust(store, _with_blocks(store, core(store, key, at=at)))


def _with_trust(store: Any, found):
    """The Version with `verified` (who, when, source, current) and, for knowledge, `stale`."""
    from kyb_cli.api.trust import trust_of

    found.trust = trust_of(store, found)
    return found


def _with_blocks(store: Any, found):
    """A task's reading also says which live tasks it blocks (`blocks`, from their `blocked_by`)."""
    if found.record.kind == "task":
        from kyb_cli.core.kinds.catalog import catalog
        from kyb_cli.core.kinds.tasks import blocks_of

        found.related["blocks"] = blocks_of(catalog(store, "task"), found.record.key)
    return found


def history(store: Any, key: str):
    """Every version of KEY, newest first along the branch's first-parent line (`kyb history`): a list
    of HistoryRow (`sha`, `committed_at`, `change` added|modified|deleted, `message`, `labels` with
    `current`, `on_line` and `lost_merge`: the merge a side version lost, or None); content versions carry their number
    (`version`: 1 is the first, as `get --version` counts). Raises NotFound (exit 1: a key never
    written), StoreError (exit 4)."""
    from kyb_cli.core.index.line import along_line
    from kyb_cli.core.index.numbering import number
    from kyb_cli.core.index.reads import history as core

    return number(along_line(store, key, core(store, key)))


def is_store(path: Path) -> bool:
    """True when `path` holds a Git repository kyb can use as a store (a cheap look, raises nothing)."""
    return os.path.exists(os.path.join(path, ".git"))


def edit_text(store, key: str) -> str:
    """The record file of KEY as it is at HEAD (front matter and body, a text): what `kyb edit` hands
    the editor. Raises NotFound (exit 1: no live record KEY), StoreError (exit 4)."""
    from kyb_cli.core.kinds.edit import edit_text as core

    return core(store, key)


def save_edit(store, attribution, key: str, text: str) -> dict[str, Any]:
    """Write an edited record file `text` as KEY's next version (checked as every write), as `kyb edit`
    does. Returns the write reply (`{changed, key}` + `action`, `sha` when changed; unchanged: no
    commit). Raises NotFound (exit 1), Rejected (exit 3: the text does not parse or breaks a rule;
    nothing written), StoreError / LockTimeout (exit 4)."""
    from kyb_cli.core.kinds.edit import save_edit as core

    with writes(store):
        return core(store, attribution, key, text)
