"""What incidents and tasks share: keep-if-omitted fields, follow-ups, links, and close = archive.

Finished is not wrong: a closed incident or task is written (its closing version is one commit) and
then leaves the tree in a second commit, `kyb: archive <key>`; both are built in memory and the
branch moves once, to the archive (canon/transaction.py), so no reader, writer or crash ever sees
the closed file in the tree. Its final version stays readable (`get`, listings with `--all`,
default search) with state `archived`.
"""

from __future__ import annotations

from typing import Any

from kyb_cli.core.errors import NotFound, Rejected, StoreError, UsageError
from kyb_cli.core.records.keys import kind_of_key

# Listings (`kyb tasks`, `kyb incidents`) answer at most this many rows; asking for more is a usage
# error in every door, never a silent cut (rule: a limit over the maximum is exit 2; `kyb query
# --limit`'s maximum is 100).
LISTING_MAX_LIMIT = 200


from kyb_cli.core.markers import KEEP  # noqa: E402,F401 - re-exported: the writers' marker
from kyb_cli.core.records.secrets import shown


FOLLOWUP_WARNING = "{n} unfinished follow-up(s) (`- [ ]`) remain in the body — reassign or finish them"


def kept(value: Any, stored: Any, default: Any) -> Any:
    """`value` unless it is KEEP; then the stored value, or `default` when nothing is stored."""
    if value is KEEP:
        return stored if stored is not None else default
    return value


def open_followups(body: str) -> int:
    """Lines whose left-trimmed text starts with `- [ ]` (rule "follow-ups"); `- [x]` and `- []` do not count."""
    return sum(1 for line in body.splitlines() if line.lstrip().startswith("- [ ]"))


def read_before_lock(store, key: str):
    """(HEAD, stored version) read from the index BEFORE the writer lock, for `stored_version(...,
    before=)`: the index catch-up and read must not run while every other writer waits. None when
    the read failed (then the lock-held read decides, with its errors)."""
    if kind_of_key(key) == "knowledge":
        return None
    from kyb_cli.core.index.reads import read

    head = store.head_sha()
    try:
        return head, (read(store.path, key).record, True)
    except NotFound:
        return head, None
    except Exception:  # noqa: BLE001 - the read under the lock reports it, as before
        return None


def stored_version(tx, key: str, *, strict: bool = False, before=None):
    """(record, archived): the live record in HEAD's tree, else for incidents and tasks the last
    archived version (from the index: `before`, read before the lock at the same HEAD, else read
    here, under the writer lock); None when neither.

    A held-out file at HEAD (records/keys.py `load` refuses it) counts as nothing stored, so an
    upsert writes a fresh valid version over it (the repair); with `strict` it is the error that
    says so (closing or changing the status of a record kyb cannot read)."""
    live = tx.current(key)
    if live is not None:
        return live, False
    if kind_of_key(key) == "knowledge":
        return None
    if before is not None and tx.base is not None and before[0] == str(tx.base.id):
        return before[1]  # read before the lock at this same HEAD: no index read under it
    from kyb_cli.core.index.reads import read

    try:
        version = read(tx.store.path, key)
    except NotFound:
        return None
    except StoreError as exc:
        if exc.details.get("reason") is None or strict:
            raise
        return None
    return version.record, True


def stored_of_kind(tx, key: str, kind: str, what: str):
    """The stored version (live, else archived) a status change starts from: NotFound when there is
    none, Rejected when `key` is not of `kind` (`what` names the kind in the message)."""
    found = stored_version(tx, key, strict=True)
    if found is None:
        raise NotFound(f"no record '{key}'")
    if kind_of_key(key) != kind:
        raise Rejected(f"'{key}' is not {what}")
    return found[0]


def copy_of(prev, **changes: Any):
    """`prev` with `changes`, sharing no list or dict with it."""
    return prev.copy(hosts=list(prev.hosts), knowledge=list(prev.knowledge), affected=list(prev.affected),
                     tags=list(prev.tags), refs=list(prev.refs), extra=dict(prev.extra), **changes)


def unknown_links(tx, links: list[str]) -> list[str]:
    """Knowledge links that name no record in the tree: allowed, and reported so typos show."""
    return [link for link in links if tx.current(link) is None]


def write_and_close(tx, record, *, verb: str | None, closed: bool) -> dict[str, Any]:
    """Write `record`; when it is closed, archive it in a second commit of the same transaction
    (one branch move for both).

    Closing an archived record again with nothing changed makes no commit (`changed: false`)."""
    if closed and tx.current(record.key) is None:
        found = stored_version(tx, record.key)
        if found is not None and found[1] and found[0].same_content(record):
            return {"changed": False, "key": record.key}
    result = tx.put(record, action=verb)
    reply = result.to_json()
    if closed and tx.current(record.key) is not None:
        archived = tx.archive(record.key)
        if not result.changed:  # an already-closed file was still in the tree: only the archive happened
            reply = {"action": "archived", "changed": True, "key": record.key, "sha": archived.sha}
        reply["archived"] = True
        reply["archive_sha"] = archived.sha
    if closed and reply.get("changed"):
        count = open_followups(record.body)
        if count:
            reply["open_followups"] = count
            reply["warning"] = FOLLOWUP_WARNING.format(n=count)
    return reply


def check_filter(name: str, value: str, allowed: tuple[str, ...]) -> None:
    """A listing filter outside its closed set is a typo, not an empty answer (UsageError, exit 2)."""
    if value.strip() and value.strip() not in allowed:
        raise UsageError(f"{name} must be one of: {'|'.join(allowed)} (got '{shown(value)}')", field=name)


def select_rows(entries, to_row, order, *, status: str, filters: dict[str, str], open_only_followups: bool,
                include_archived: bool, limit: int, extra=None) -> list[dict[str, Any]]:
    """Shared listing rule (rule "listings") for incidents and tasks; `filters` are exact (service: any case)."""
    status = status.strip()
    show_archived = include_archived or bool(status) or open_only_followups
    rows = []
    for entry in entries:
        if entry.archived and not show_archived:
            continue
        row = to_row(entry)
        if status and row["status"] != status:
            continue
        if any(value and _field(row, name) != value for name, value in filters.items()):
            continue
        if open_only_followups and row["open_followups"] <= 0:
            continue
        if extra is not None and not extra(entry):
            continue
        rows.append((entry, row))
    rank = {s: i for i, s in enumerate(order)}
    rows.sort(key=lambda er: (rank.get(er[1]["status"], 9), er[0].order, er[1]["key"]))
    if not 0 <= int(limit) <= LISTING_MAX_LIMIT:
        raise UsageError(f"limit must be between 0 and {LISTING_MAX_LIMIT} (got {limit})")
    return [row for _entry, row in rows[:limit]]


def _field(row: dict[str, Any], name: str) -> str:
    value = row.get(name, "")
    return value.lower() if name == "service" else value
