"""`kyb edit KEY`: a record changed as a file (front matter and body), checked as any write is.

The door opens the user's editor on the text `edit_text` gives; `save_edit` takes what was saved back.
The saved text must still be KEY's record (the key comes from the path, so changing `key` is refused),
pass every write rule, and not close work: closing an incident or a task needs its resolution and the
archive step (`kyb resolve`, `kyb done`), so an edit that sets a closing status is refused with that
pointer. Unchanged text makes no commit.
"""

from __future__ import annotations

from typing import Any

from kyb_cli.core.errors import NotFound, Rejected
from kyb_cli.core.records.keys import path_of_key, paths_of_key
from kyb_cli.core.records.model import RecordFormatError, parse

CLOSING = {"incident": ("resolved", "kyb resolve"), "task": ("done|dropped", "kyb done")}


def edit_text(store, key: str) -> str:
    """The record file of KEY as it is at HEAD (the text the editor starts from)."""
    from kyb_cli.core.canon.tree import blob_at
    from kyb_cli.core.records.validate import check_key

    check_key(key)
    head = store.head_commit()
    blob = None
    for path in paths_of_key(key) if head is not None else ():  # an old-shape store: its flat path
        blob = blob or blob_at(head, path)
    if blob is None:
        raise NotFound(f"no live record '{key}' to edit (kyb get {key} says why; kyb add writes a new one)")
    return store.blob_bytes(blob).decode("utf-8", errors="replace")


def save_edit(store, attribution, key: str, text: str) -> dict[str, Any]:
    """Write the edited text as KEY's next version: the usual reply, `changed: false` when unchanged."""
    from kyb_cli.core.kinds.tasks import check_blocker_graph, check_parent_chain
    from kyb_cli.core.records.validate import validate

    path = path_of_key(key)
    try:
        record = parse(text, path=path)
    except RecordFormatError as exc:
        raise Rejected(f"the edited file does not parse: {exc.message}") from None
    if record.key != key:
        raise Rejected(f"the edited file says key = \"{record.key}\"; the key is the file's name ('{key}') — "
                       "to rename, add the new key and retract the old one")
    kind = record.kind
    closing = CLOSING.get(kind)
    if closing and (record.status or "") in closing[0].split("|"):
        raise Rejected(f"status '{record.status}' closes this {kind}: use `{closing[1]} {key}` with a "
                       "resolution (closing archives it)")
    validate(record)
    with store.writing(attribution) as tx:
        if tx.current(key) is None:
            raise NotFound(f"'{key}' is no longer in the tree (retracted or archived while you edited)")
        if kind == "task":
            check_parent_chain(tx, key, record.parent_task)
            check_blocker_graph(tx, key, record.blocked_by)
        return tx.put(record, action="edit").to_json()
