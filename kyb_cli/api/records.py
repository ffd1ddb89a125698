"""Records: write and retract knowledge, read a record now or at a revision, its history, tags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kyb_cli.api._writes import writes


def add_knowledge(store, *, key: str, title: str, body: str, tags: list[str], refs: list[str], attribution):
    """Write knowledge under `key` (an upsert): a WriteResult (`changed: false` when nothing changed)."""
    from kyb_cli.core.kinds.knowledge import add_knowledge as core

    with writes(store):
        return core(store, key=key, title=title, body=body, tags=tags, refs=refs, attribution=attribution)


def retract_knowledge(store, key: str, reason: str, attribution):
    """Retract knowledge that was wrong; the commit records the reason."""
    from kyb_cli.core.kinds.knowledge import retract_knowledge as core

    with writes(store):
        return core(store, key, reason, attribution)


def split_list(value: str | None) -> list[str]:
    """`a, b,,c` -> ["a", "b", "c"]: comma lists as the doors take them."""
    from kyb_cli.core.kinds.knowledge import split_list as core

    return core(value)


def read(store: Any, key: str, at: str | None = None):
    """The record KEY now (or at revision `at`) as a Version; `store` is a Store or a path."""
    from kyb_cli.core.index.reads import read as core

    return core(store, key, at=at)


def history(store: Any, key: str):
    """Every version of KEY, newest first (HistoryRow list)."""
    from kyb_cli.core.index.reads import history as core

    return core(store, key)


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
