"""Knowledge records: add (an upsert under a stable key) and retract (this was wrong)."""

from __future__ import annotations

from kyb_cli.core.attribution import Attribution
from kyb_cli.core.errors import Rejected
from kyb_cli.core.record import Record
from kyb_cli.core.store import Store, WriteResult
from kyb_cli.core.validate import check_key


def split_list(value: str | None) -> list[str]:
    """`a, b,,c` -> ["a", "b", "c"]: comma lists as the CLI takes them."""
    if not value:
        return []
    return [item.strip() for item in value.split(",") if item.strip()]


def add_knowledge(store: Store, *, key: str, title: str, body: str, tags: list[str], refs: list[str],
                  attribution: Attribution) -> WriteResult:
    """Write knowledge under `key`: a new version when anything changed, no commit when nothing did."""
    check_key(key)
    if key.startswith("inc-"):
        raise Rejected("keys starting with 'inc-' are reserved for incident reports")
    if key.startswith("task-"):
        raise Rejected("keys starting with 'task-' are reserved for tasks")
    record = Record(key=key, title=title, body=body, tags=tags, refs=refs)
    return store.put(record, attribution)


def retract_knowledge(store: Store, key: str, reason: str, attribution: Attribution) -> WriteResult:
    return store.retract(key, reason, attribution)
