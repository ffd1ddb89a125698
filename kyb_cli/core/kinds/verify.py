"""`kyb verify KEY --source TEXT [--rev REV] [--note TEXT]`: record that knowledge was checked.

One commit `kyb: verify KEY` writes the `[verified]` table (source, rev, note and a digest of the
title and body checked); who and when are that commit's attribution and time (rule "verification").
A repeat with the same source, rev and note on unchanged text writes nothing (`changed: false`),
as any identical write.
"""

from __future__ import annotations

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.canon.transaction import WriteResult
from kyb_cli.core.errors import Rejected, UsageError
from kyb_cli.core.records.keys import kind_of_key
from kyb_cli.core.records.model import content_digest
from kyb_cli.core.records.validate import check_key

NOTE_MAX = 500


def verify(store: Store, key: str, *, source: str, rev: str = "", note: str = "",
           attribution: Attribution) -> WriteResult:
    check_key(key)
    if kind_of_key(key) != "knowledge":
        raise Rejected(f"'{key}' is not knowledge: only knowledge records are verified")
    source, rev, note = (" ".join((v or "").split()) for v in (source, rev, note))
    if not source:
        raise UsageError("verify needs source: what the fact was checked against (a file, a URL, a command)",
                         field="source")
    if len(note) > NOTE_MAX or len(source) > NOTE_MAX:
        raise Rejected(f"--source and --note are at most {NOTE_MAX} characters")
    with store.writing(attribution) as tx:
        current = tx.current(key)
        if current is None:
            from kyb_cli.core.kinds.knowledge import _gone

            raise _gone(store, key)
        table = {"source": source}
        if rev:
            table["rev"] = rev
        if note:
            table["note"] = note
        table["content"] = content_digest(current.title, current.body)
        result = tx.put(current.copy(verified=table), action="verify")
    if result.changed:
        result.action = "verified"
    return result
