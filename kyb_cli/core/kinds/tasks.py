"""Tasks (`task-…`): write, move between live statuses, close (done/dropped archive), list.

Rules are the original's (rules "task rules", "task resolved_at", "close with a resolution", "task transitions"): the parent chain is checked for cycles through
stored versions under the writer lock, so a rejected write changes nothing; a dangling parent is
allowed and reported. Tags and deadline fields a rewrite omits are kept; an explicit empty clears.
"""

from __future__ import annotations

from kyb_cli.core.records.validate import fold_tags

from datetime import date
from typing import Any

from kyb_cli.core.errors import Rejected
from kyb_cli.core.kinds.incidents import is_closed, stamp_timeline
from kyb_cli.core.kinds.lifecycle import (
    KEEP,
    check_filter,
    copy_of,
    kept,
    open_followups,
    select_rows,
    stored_of_kind,
    read_before_lock,
    stored_version,
    unknown_links,
    write_and_close,
)
from kyb_cli.core.records.keys import kind_of_key
from kyb_cli.core.records.model import Record
from kyb_cli.core.timestamps import now_utc_z
from kyb_cli.core.timeargs import event_time_arg
from kyb_cli.core.records.validate import (
    PRIORITIES,
    TASK_LIVE,
    TASK_STATUSES,
    TASK_TERMINAL,
    check_key,
    validate,
)
from kyb_cli.core.records.secrets import shown

STATUS_ORDER = TASK_STATUSES
DEADLINE_FIELDS = ("due", "hard", "remind_days", "expected", "waits_on")
DEADLINE_DEFAULTS = {"due": "", "hard": False, "remind_days": None, "expected": "", "waits_on": ""}


def check_parent_chain(tx, key: str, parent: str) -> None:
    """Walk parent links through stored versions (tree, else archived); refuse to close a cycle."""
    seen: set[str] = set()
    node = parent
    while node:
        if node == key:
            raise Rejected(f"parent_task would create a cycle containing '{key}'")
        if node in seen:
            raise Rejected(f"parent_task points into an existing task cycle at '{node}'")
        seen.add(node)
        found = stored_version(tx, node) if kind_of_key(node) == "task" else None
        if found is None:
            return
        node = found[0].parent_task.strip()


def check_blocker_graph(tx, key: str, blockers: list[str]) -> None:
    """Follow `blocked_by` links through stored versions; refuse a write that would close a cycle.

    Cycles are refused as parent cycles are (rule "task rules"): a task that waits on itself, however
    far round, could never become ready."""
    stack = [(b, [key, b]) for b in blockers]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        if node == key:
            raise Rejected("blocked_by would create a cycle: " + " -> ".join(path))
        if node in seen:
            continue
        seen.add(node)
        found = stored_version(tx, node) if kind_of_key(node) == "task" else None
        if found is None:
            continue
        stack += [(n, path + [n]) for n in found[0].blocked_by]


def check_blockers_exist(tx, blockers: list[str], kept: list[str]) -> None:
    """Rule "task rules": a blocker named in this write is a task that exists (live or archived); one
    that does not is NotFound (exit 1, HTTP 404) naming it, nothing written — a misspelled blocker
    would otherwise block nothing and the task would count as ready. A blocker the stored version
    already lists (a peer's, an older write's) is kept as it is: it never locks the task."""
    missing = [b for b in blockers if b not in kept and stored_version(tx, b) is None]
    if missing:
        from kyb_cli.core.errors import NotFound

        names = ", ".join(f"'{b}'" for b in missing)
        raise NotFound(f"blocked_by: no task {names} — a blocker is a task that exists (write it first)",
                       field="blocked_by")


def past_due_warning(record: Record, prev: Record | None, today: date | None = None) -> str | None:
    """A live task written with a due date already behind today (new, or its date just changed) is
    overdue from its first commit: say so, never refuse (a late entry is still worth recording)."""
    if not record.due or record.status not in TASK_LIVE or (prev is not None and prev.due == record.due):
        return None
    today = today or date.today()
    try:
        due = date.fromisoformat(record.due)
    except ValueError:
        return None
    if due >= today:
        return None
    days = (today - due).days
    return (f"due date {record.due} is already past ({days} day{'s' if days != 1 else ''} before today, "
            f"{today.isoformat()}): the task is overdue from the start")


def _task_extras(tx, record: Record, reply: dict[str, Any]) -> dict[str, Any]:
    if not reply.get("changed"):
        return reply
    unknown = unknown_links(tx, record.knowledge)
    if unknown:
        reply["unknown_knowledge"] = unknown
    if record.parent_task and stored_version(tx, record.parent_task) is None:
        reply["unknown_parent"] = record.parent_task
    unknown_blockers = [b for b in record.blocked_by if stored_version(tx, b) is None]
    if unknown_blockers:
        reply["unknown_blockers"] = unknown_blockers
    return reply


def write_task(store, attribution, *, key: str, title: str, body: str = "", status: str = "open",
               priority: str = "", blocked_reason: str = "", assignee: str = "", parent_task: str = "",
               knowledge: list[str] | None = None, resolution: str = "", tags: Any = KEEP,
               refs: list[str] | None = None, due: Any = KEEP, hard: Any = KEEP, remind_days: Any = KEEP,
               expected: Any = KEEP, waits_on: Any = KEEP, blocked_by: Any = KEEP,
               effective_at: str = "", today: date | None = None) -> dict[str, Any]:
    """Write a task wholesale; done/dropped need a resolution and archive the task.

    `blocked_by` (task keys this one waits on) follows the tags rule: omitted keeps, [] clears.
    `today` (default: the local date) only decides the past-due warning."""
    effective_at = event_time_arg(effective_at)  # 'next tuesday' is a usage error, never stored as given
    check_key(key)
    if kind_of_key(key) != "task":
        raise Rejected("task keys must start with 'task-' (e.g. task-raise-log-retention)")
    record = Record(
        key=key, title=title, body=body, status=status, priority=priority,
        blocked_reason=blocked_reason, assignee=assignee.strip(), parent_task=parent_task.strip(),
        knowledge=list(knowledge or []), resolution=resolution, refs=list(refs or []), effective_at=effective_at,
    )
    given = {"due": due, "hard": hard, "remind_days": remind_days, "expected": expected, "waits_on": waits_on}
    before = read_before_lock(store, key)  # never an index read under the writer lock
    with store.writing(attribution) as tx:
        found = stored_version(tx, key, before=before)
        prev = found[0] if found else None
        record.tags = list(kept(tags, prev.tags if prev else None, []))
        if tags is not KEEP:
            record.tags = fold_tags(record.tags)
        record.blocked_by = _unique(kept(blocked_by, prev.blocked_by if prev else None, []))
        for name in DEADLINE_FIELDS:
            value = kept(given[name], getattr(prev, name) if prev else None, DEADLINE_DEFAULTS[name])
            setattr(record, name, DEADLINE_DEFAULTS[name] if value in ("", None) else value)
        if not (record.due or record.expected):  # the date is gone: kept qualifiers go with it
            for name in ("hard", "remind_days"):
                if given[name] is KEEP:
                    setattr(record, name, DEADLINE_DEFAULTS[name])
        if prev is not None:
            record.extra = dict(prev.extra)
        # Rule "task resolved_at": a terminal write keeps the tree file's resolved_at, else stamps now; a live one has none.
        if status in TASK_TERMINAL:
            live = tx.current(key)
            record.resolved_at = live.resolved_at if live is not None and live.resolved_at else now_utc_z()
        validate(record)
        check_parent_chain(tx, key, record.parent_task)
        check_blockers_exist(tx, record.blocked_by, prev.blocked_by if prev else [])
        check_blocker_graph(tx, key, record.blocked_by)
        reply = write_and_close(tx, record, verb=None, closed=is_closed(record))
        warning = past_due_warning(record, prev, today) if reply.get("changed") else None
        if warning:
            reply["warning"] = warning
        return _task_extras(tx, record, reply)


def transition_task(store, attribution, key: str, *, status: str, assignee: str | None = None,
                    parent_task: str | None = None, blocked_reason: str | None = None) -> dict[str, Any]:
    """Rule "task transitions": move between live statuses, changing only what is named; never closes or archives."""
    check_key(key)
    status = status.strip()
    if status in TASK_TERMINAL:
        raise Rejected(
            f"'{status}' closes a task and needs an outcome — use `kyb done {key}` with a resolution; "
            "a transition only moves between open|in_progress|blocked"
        )
    if status not in TASK_LIVE:
        raise Rejected("status must be one of: open|in_progress|blocked")
    with store.writing(attribution) as tx:
        prev = stored_of_kind(tx, key, "task", "a task")
        record = copy_of(prev, status=status)
        if assignee is not None:
            record.assignee = assignee.strip()
        if parent_task is not None:
            record.parent_task = parent_task.strip()
        if status == "blocked":
            if blocked_reason is not None:
                record.blocked_reason = blocked_reason
        else:
            record.blocked_reason = ""
        validate(record)
        check_parent_chain(tx, key, record.parent_task)
        reply = write_and_close(tx, record, verb="task-status", closed=False)
        reply = _task_extras(tx, record, reply)
        if reply.get("changed"):
            reply["status"] = record.status
            reply["assignee"] = record.assignee
        return reply


def close_task(store, attribution, key: str, *, status: str = "done", resolution: str = "") -> dict[str, Any]:
    """Rule "close with a resolution" for tasks: default done; a blank resolution keeps the stored one (closing twice is safe)."""
    check_key(key)
    with store.writing(attribution) as tx:
        prev = stored_of_kind(tx, key, "task", "a task")
        record = copy_of(prev, status=status)
        if status != "blocked":
            record.blocked_reason = ""
        if resolution.strip():
            record.resolution = resolution.strip()
        stamp_timeline(record, prev)
        validate(record)
        check_parent_chain(tx, key, record.parent_task)
        return write_and_close(tx, record, verb="close" if is_closed(record) else "task-status",
                               closed=is_closed(record))


def task_row(entry) -> dict[str, Any]:
    r = entry.record
    return {
        "key": r.key, "title": r.title, "status": r.status or "open", "priority": r.priority,
        "blocked_reason": r.blocked_reason, "assignee": r.assignee, "parent_task": r.parent_task,
        "blocked_by": list(r.blocked_by),
        "knowledge": r.knowledge, "resolution": r.resolution, "resolved_at": r.resolved_at,
        "due": r.due, "hard": r.hard, "remind_days": r.remind_days, "expected": r.expected,
        "waits_on": r.waits_on, "open_followups": open_followups(r.body), "tags": r.tags,
        "sha": entry.sha, "committed_at": entry.committed_at, "archived": entry.archived, "state": entry.state,
    }


def list_tasks(store, *, status: str = "", priority: str = "", assignee: str = "", parent: str = "",
               open_only_followups: bool = False, include_archived: bool = False,
               due_before: date | None = None, limit: int = 50, ready: bool = False) -> list[dict[str, Any]]:
    """Rule "listings" for tasks; `due_before` keeps tasks due on or before that date; `ready`: see ready_rows."""
    from kyb_cli.core.kinds.catalog import catalog

    check_filter("status", status, TASK_STATUSES)
    check_filter("priority", priority, PRIORITIES)
    if ready:
        return ready_rows(catalog(store, "task"), priority=priority.strip(), assignee=assignee.strip(),
                          parent=parent.strip(), due_before=due_before, limit=limit)

    def due_ok(entry) -> bool:
        return bool(entry.record.due) and entry.record.due <= due_before.isoformat()

    return select_rows(
        catalog(store, "task"), task_row, STATUS_ORDER, status=status,
        filters={"priority": priority.strip(), "assignee": assignee.strip(), "parent_task": parent.strip()},
        open_only_followups=open_only_followups, include_archived=include_archived, limit=limit,
        extra=due_ok if due_before is not None else None,
    )


def remind_days_arg(value: Any) -> Any:
    """`remind_days` as given: None keeps the stored value, '' clears it, else a whole number of days."""
    from kyb_cli.core.errors import UsageError

    if value is None:
        return KEEP
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not str(value).strip():
        return None
    try:
        return int(str(value))
    except ValueError:
        raise UsageError(f"remind_days must be a whole number of days (got '{shown(value)}')",
                         field="remind_days") from None


def due_before_arg(value: str | None) -> date | None:
    """The `due_before` date, checked."""
    from kyb_cli.core.records.validate import day_arg

    return day_arg(value, "due_before")


def check_close_status(key: str, status: str) -> str:
    """`kyb done` closes: done|dropped only; moving between live statuses is `task-status`."""
    if status.strip() not in ("done", "dropped"):
        raise Rejected(f"kyb done closes a task: --status done|dropped (got '{status}'); "
                       f"use `kyb task-status {key} --status …` to move it between live statuses")
    return status.strip()


PRIORITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3, "": 4}


def ready_rows(entries, *, priority: str = "", assignee: str = "", parent: str = "",
               due_before: date | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """`kyb tasks --ready`: open tasks none of whose blockers is still live, what can be started now.

    A blocker that is done or dropped (archived) no longer blocks; one that is open, in progress or
    blocked does; a blocker key that names no task blocks nothing (the write reported it as
    `unknown_blockers`). Order: priority (critical first, unranked last), then due date (earliest
    first, none last), then the most recently written."""
    entries = list(entries)
    live = {e.record.key for e in entries if not e.archived}
    rows = []
    for entry in entries:
        r = entry.record
        if entry.archived or (r.status or "open") != "open":
            continue
        if any(b in live for b in r.blocked_by):
            continue
        if (priority and r.priority != priority) or (assignee and r.assignee != assignee) or \
                (parent and r.parent_task != parent):
            continue
        if due_before is not None and not (r.due and r.due <= due_before.isoformat()):
            continue
        rows.append((entry, task_row(entry)))
    rows.sort(key=lambda er: (PRIORITY_RANK.get(er[0].record.priority, 4), er[0].record.due or "9999-99-99",
                              er[0].order, er[0].record.key))
    limit = max(0, min(int(limit), 200))
    return [row for _entry, row in rows[:limit]]


def blocks_of(entries, key: str) -> list[str]:
    """Live tasks that list `key` in their `blocked_by` (what `kyb get` of a task shows as `blocks`)."""
    return sorted(e.record.key for e in entries if not e.archived and key in e.record.blocked_by)


def _unique(values) -> list[str]:
    out: list[str] = []
    for v in values or []:
        v = v.strip()
        if v and v not in out:
            out.append(v)
    return out
