"""Tasks (`task-…`): write, move between live statuses, close (done/dropped archive), list.

Rules are the original's (rules "task rules", "task resolved_at", "close with a resolution", "task transitions"): the parent chain is checked for cycles through
stored versions under the writer lock, so a rejected write changes nothing; a dangling parent is
allowed and reported. Tags and deadline fields a rewrite omits are kept; an explicit empty clears.
"""

from __future__ import annotations

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
    stored_version,
    unknown_links,
    write_and_close,
)
from kyb_cli.core.records.keys import kind_of_key
from kyb_cli.core.records.model import Record
from kyb_cli.core.times.format import now_utc_z
from kyb_cli.core.records.validate import (
    PRIORITIES,
    TASK_LIVE,
    TASK_STATUSES,
    TASK_TERMINAL,
    check_key,
    validate,
)

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


def _task_extras(tx, record: Record, reply: dict[str, Any]) -> dict[str, Any]:
    if not reply.get("changed"):
        return reply
    unknown = unknown_links(tx, record.knowledge)
    if unknown:
        reply["unknown_knowledge"] = unknown
    if record.parent_task and stored_version(tx, record.parent_task) is None:
        reply["unknown_parent"] = record.parent_task
    return reply


def write_task(store, attribution, *, key: str, title: str, body: str = "", status: str = "open",
               priority: str = "", blocked_reason: str = "", assignee: str = "", parent_task: str = "",
               knowledge: list[str] | None = None, resolution: str = "", tags: Any = KEEP,
               refs: list[str] | None = None, due: Any = KEEP, hard: Any = KEEP, remind_days: Any = KEEP,
               expected: Any = KEEP, waits_on: Any = KEEP) -> dict[str, Any]:
    """Write a task wholesale; done/dropped need a resolution and archive the task."""
    check_key(key)
    if kind_of_key(key) != "task":
        raise Rejected("task keys must start with 'task-' (e.g. task-raise-log-retention)")
    record = Record(
        key=key, title=title, body=body, status=status, priority=priority,
        blocked_reason=blocked_reason, assignee=assignee.strip(), parent_task=parent_task.strip(),
        knowledge=list(knowledge or []), resolution=resolution, refs=list(refs or []),
    )
    given = {"due": due, "hard": hard, "remind_days": remind_days, "expected": expected, "waits_on": waits_on}
    with store.writing(attribution) as tx:
        found = stored_version(tx, key)
        prev = found[0] if found else None
        record.tags = list(kept(tags, prev.tags if prev else None, []))
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
        reply = write_and_close(tx, record, verb=None, closed=is_closed(record))
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
        "knowledge": r.knowledge, "resolution": r.resolution, "resolved_at": r.resolved_at,
        "due": r.due, "hard": r.hard, "remind_days": r.remind_days, "expected": r.expected,
        "waits_on": r.waits_on, "open_followups": open_followups(r.body), "tags": r.tags,
        "sha": entry.sha, "committed_at": entry.committed_at, "archived": entry.archived, "state": entry.state,
    }


def list_tasks(store, *, status: str = "", priority: str = "", assignee: str = "", parent: str = "",
               open_only_followups: bool = False, include_archived: bool = False,
               due_before: date | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """Rule "listings" for tasks; `due_before` keeps tasks due on or before that date."""
    from kyb_cli.core.kinds.catalog import catalog

    check_filter("status", status, TASK_STATUSES)
    check_filter("priority", priority, PRIORITIES)

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
        raise UsageError(f"--remind-days must be a whole number of days (got '{value}')") from None


def due_before_arg(value: str | None) -> date | None:
    """The `--due-before` date, checked."""
    from kyb_cli.core.errors import UsageError
    from kyb_cli.core.records.validate import is_date

    if value is None:
        return None
    if not is_date(value):
        raise UsageError(f"--due-before wants a date YYYY-MM-DD (got '{value}')")
    return date.fromisoformat(value)


def check_close_status(key: str, status: str) -> str:
    """`kyb done` closes: done|dropped only; moving between live statuses is `task-status`."""
    if status.strip() not in ("done", "dropped"):
        raise Rejected(f"kyb done closes a task: --status done|dropped (got '{status}'); "
                       f"use `kyb task-status {key} --status …` to move it between live statuses")
    return status.strip()
