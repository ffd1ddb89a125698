"""Knowledge records: add (an upsert under a stable key) and retract (this was wrong)."""

from __future__ import annotations

from typing import Any

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.kinds import wording
from kyb_cli.core.markers import KEEP
from kyb_cli.core.records.lists import split_list  # noqa: F401 - re-exported: the one list rule
from kyb_cli.core.records.model import Record, RecordFormatError
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.canon.transaction import WriteResult
from kyb_cli.core.errors import NotFound
from kyb_cli.core.records.validate import check_key_for_kind, check_no_secret, fold_tags


def add_knowledge(store: Store, *, key: str, title: str, body: str, tags: list[str], refs: list[str],
                  attribution: Attribution, effective_at: str = "", review_by: Any = None) -> WriteResult:
    """Write knowledge under `key`: a new version when anything changed, no commit when nothing did.

    Knowledge is a full replace of title, body, tags and refs. Front matter keys kyb does not know
    (added by hand) are carried over from the current version, so a person's additions survive, and
    so is the last verification (`current` says whether it still covers the text). `review_by`:
    None keeps it, "" clears it, a date sets it (as task deadlines). The reply carries the write-time
    checks of kinds/wording.py: `similar` (+ `revived`) on a create, `retired_elsewhere` on an update.
    `effective_at` (event time) belongs to this version only: a rewrite without it is effective when written.
    """
    check_key_for_kind(key, "knowledge")
    record = Record(key=key, title=title, body=body, tags=fold_tags(tags), refs=refs, effective_at=effective_at)
    # Read before the writer lock (never inside it: every other writer would wait while the index
    # catches up); used only when the key turns out new under the lock.
    was_retracted = _checked(store, lambda f: wording.retraction(f.conn, store.path, key))
    revived = None
    with store.writing(attribution) as tx:
        try:
            current = tx.current(key)
        except RecordFormatError:  # a broken file may be repaired by writing it anew
            current = None
        if current is not None:
            record.extra = dict(current.extra)
            record.verified = dict(current.verified)
            record.review_by = current.review_by
        if review_by is not None and review_by is not KEEP:
            record.review_by = str(review_by).strip()
        if current is None:
            revived = was_retracted
        result = tx.put(record)
    if not result.changed:
        return result
    if result.action == "created":
        result.extras["similar"] = _checked(store, lambda f: wording.similar(f.conn, record)) or []
        if revived is not None:
            result.extras["revived"] = True
            result.extras.update(revived)
    elif current is not None:
        phrases = wording.retired_phrases(current, record)
        result.extras["retired_elsewhere"] = (
            _checked(store, lambda f: wording.retired_elsewhere(f.conn, key, phrases, current)) or []) if phrases else []
    return result


def _checked(store: Store, fn):
    """A write-time check read from the index; a check that cannot run never fails the write."""
    from kyb_cli.core.index.fresh import with_index

    try:
        return with_index(store.path, fn)
    except Exception:  # the write is made; a hint that cannot be computed is left out
        return None


def retract_knowledge(store: Store, key: str, reason: str, attribution: Attribution) -> WriteResult:
    """Knowledge that was wrong leaves the tree in a commit recording why; its versions stay in history.

    The reason is stored for ever (commit message and `Kyb-Reason` trailer), so it passes the secrets
    rule like every other stored field."""
    check_no_secret("reason", reason or "")
    with store.writing(attribution) as tx:
        try:
            return tx.retract(key, reason)
        except NotFound:
            raise _gone(store, key) from None


def _gone(store: Store, key: str) -> NotFound:
    """Why `key` cannot be retracted: it never existed, or it is already retracted (from the index)."""
    from kyb_cli.core.index.reads import read

    try:
        read(store.path, key)
    except NotFound as exc:
        if exc.details.get("state") == "retracted":
            return NotFound(f"'{key}' is already retracted")
        return NotFound(f"no record '{key}'")
    return NotFound(f"'{key}' is already archived")
