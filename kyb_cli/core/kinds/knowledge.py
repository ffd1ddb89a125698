"""Knowledge records: add (an upsert under a stable key) and retract (this was wrong)."""

from __future__ import annotations

from kyb_cli.core.attribution import Attribution
from kyb_cli.core.record import Record, RecordFormatError
from kyb_cli.core.store import Store, WriteResult
from kyb_cli.core.validate import check_key_for_kind


def split_list(value: str | None) -> list[str]:
    """`a, b,,c` -> ["a", "b", "c"]: comma lists as the CLI takes them."""
    if not value:
        return []
    return [item.strip() for item in value.split(",") if item.strip()]


def add_knowledge(store: Store, *, key: str, title: str, body: str, tags: list[str], refs: list[str],
                  attribution: Attribution) -> WriteResult:
    """Write knowledge under `key`: a new version when anything changed, no commit when nothing did.

    Knowledge is a full replace of title, body, tags and refs. Front matter keys kyb does not know
    (added by hand) are carried over from the current version, so a person's additions survive.
    """
    check_key_for_kind(key, "knowledge")
    record = Record(key=key, title=title, body=body, tags=tags, refs=refs)
    with store.writing(attribution) as tx:
        try:
            current = tx.current(key)
        except RecordFormatError:  # a broken file may be repaired by writing it anew
            current = None
        if current is not None and current.extra:
            record.extra = dict(current.extra)
        return tx.put(record)


def retract_knowledge(store: Store, key: str, reason: str, attribution: Attribution) -> WriteResult:
    return store.retract(key, reason, attribution)
