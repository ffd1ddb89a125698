"""Every value a record stores, as (field, text): the one list the secret scan (a local write and
the held-out check of a peer's records alike) and the front-matter size limit read."""

from __future__ import annotations

from kyb_cli.core.records.model import Record

_LISTS = ("tags", "refs", "hosts", "knowledge", "blocked_by")
_SCALARS = ("service", "detection", "resolution", "blocked_reason", "assignee", "parent_task", "waits_on")


def stored_fields(record: Record) -> list[tuple[str, str]]:
    """(field, text) for every value a write stores, so each is scanned for secrets (secrets rule:
    the key, titles, tags, refs, every incident/task field, the `[verified]` table and every
    hand-added front-matter key, not only the body). The one list both a local write and the
    held-out check for a peer's records scan (issue 24, failure 2). A list, built without a
    generator: every record a snapshot or a history build indexes comes here (issue 39)."""
    out = [("key", record.key), ("title", record.title), ("body", record.body)]
    append = out.append
    for name in _LISTS:
        for value in getattr(record, name):
            append((name, value))
    for name in _SCALARS:  # the other fields are closed sets or dates, checked by their own rules
        append((name, getattr(record, name)))
    for window in record.affected:
        for value in window.values():
            if isinstance(value, str):
                append(("affected", value))
    for name, value in record.verified.items():
        append((f"verified {name}", str(value)))
    for name, value in record.extra.items():
        append((name, name))
        for text in _strings(value):
            append((name, text))
    return out


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)

