"""Records: write and retract knowledge, read a record now or at a revision, its history, tags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kyb_cli.api._writes import writes


def add_knowledge(store, *, key: str, title: str, body: str, tags: list[str], refs: list[str], attribution,
                  effective_at: str | None = None):
    """Write knowledge under `key` (an upsert): a WriteResult (`changed: false` when nothing changed).

    `effective_at`: when the fact became true in the world (a date or datetime; default: when written)."""
    from kyb_cli.core.kinds.knowledge import add_knowledge as core
    from kyb_cli.core.times.parse import event_time_arg

    when = event_time_arg(effective_at)
    with writes(store):
        return core(store, key=key, title=title, body=body, tags=tags, refs=refs, attribution=attribution,
                    effective_at=when)


def retract_knowledge(store, key: str, reason: str, attribution):
    """Retract knowledge that was wrong; the commit records the reason."""
    from kyb_cli.core.kinds.knowledge import retract_knowledge as core

    with writes(store):
        return core(store, key, reason, attribution)


def check_knowledge_key(key: str, title: str) -> None:
    """The key and title rules of a knowledge write, checked before anything else is (Rejected, exit 3)."""
    from kyb_cli.core.errors import Rejected
    from kyb_cli.core.records.validate import check_key_for_kind

    check_key_for_kind(key, "knowledge")
    if not title.strip():
        raise Rejected("title is empty")


def split_list(value: str | None) -> list[str]:
    """`a, b,,c` -> ["a", "b", "c"]: comma lists as the doors take them."""
    from kyb_cli.core.kinds.knowledge import split_list as core

    return core(value)


def read(store: Any, key: str, at: str | None = None, *, version: int | None = None):
    """The record KEY now (or at revision `at`, or its content version number `version`) as a Version;
    `store` is a Store or a path. `version` counts from 1 (the first), or back from -1 (the one before
    the current); past either end is NotFound naming the range."""
    if version is not None:
        from kyb_cli.core.errors import UsageError
        from kyb_cli.core.index.numbering import read_version

        if at is not None:
            raise UsageError("give --at or --version, not both")
        return _with_blocks(store, read_version(store, key, version))
    from kyb_cli.core.index.reads import read as core

    return _with_blocks(store, core(store, key, at=at))


def _with_blocks(store: Any, found):
    """A task's reading also says which live tasks it blocks (`blocks`, from their `blocked_by`)."""
    if found.record.kind == "task":
        from kyb_cli.core.kinds.catalog import catalog
        from kyb_cli.core.kinds.tasks import blocks_of

        found.related["blocks"] = blocks_of(catalog(store, "task"), found.record.key)
    return found


def history(store: Any, key: str):
    """Every version of KEY, newest first (HistoryRow list); content versions carry their number
    (`version`: 1 is the first, as `get --version` counts)."""
    from kyb_cli.core.index.numbering import number
    from kyb_cli.core.index.reads import history as core

    return number(core(store, key))


def tags(store: Any) -> list[dict[str, Any]]:
    """Tags of live records with counts, most used first."""
    from kyb_cli.core.index.reads import tags as core

    return core(store)


def is_date(value: str) -> bool:
    """True for a valid YYYY-MM-DD date."""
    from kyb_cli.core.records.validate import is_date as core

    return core(value)


def is_store(path: Path) -> bool:
    """True when `path` holds a Git repository kyb can use as a store."""
    return (Path(path) / ".git").exists()


def event_time(value: str | None) -> str:
    """`--effective-at` as stored ('' when not given; RFC 3339 UTC); a bad value is a UsageError."""
    from kyb_cli.core.times.parse import event_time_arg

    return event_time_arg(value)


def edit_text(store, key: str) -> str:
    """The record file of KEY as it is now: what `kyb edit` hands the editor."""
    from kyb_cli.core.kinds.edit import edit_text as core

    return core(store, key)


def save_edit(store, attribution, key: str, text: str) -> dict[str, Any]:
    """Write an edited record file as KEY's next version (checked as every write; unchanged: no commit)."""
    from kyb_cli.core.kinds.edit import save_edit as core

    with writes(store):
        return core(store, attribution, key, text)
