"""One handler per operation of the table (reads, writes, listings): the table's fields in, the answer out.

Every door calls `handle(name, door, fields)` with the fields under the table's names (a door
renames its own spellings first: `include_all` on the CLI is `all`), and `door` gives the store
(`store()` to write, `path()` to read) and who writes (`attribution()`). What used to be done three
times, once per door, is done here once: null keeps the stored value (KEEP), lists follow one
rule, `remind_days`/`due_before`/`effective_at` are read by the core, `ready` does not combine with
other filters. The renderers stay in the doors.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from kyb_cli.api.records import event_time, split_list
from kyb_cli.api.work import (
    KEEP, close_task, list_incidents, list_tasks, resolve_incident, transition_task, write_incident, write_task,
)


class _Door(Protocol):  # what a handler needs from the door calling it
    def store(self) -> Any: ...  # pragma: no cover

    def path(self) -> Any: ...  # pragma: no cover

    # the store as the caller named it (None: the usual lookup), for `query`, which checks its
    # arguments before a missing default store is created (a bad --as-of writes nothing)
    store_arg: Any

    def attribution(self) -> Any: ...  # pragma: no cover


def _given(value: Any) -> Any:
    """A text a door may hand over unread (the CLI's stdin), read only once the other fields passed."""
    return value() if callable(value) else value


def _keep(value: Any) -> Any:
    """null keeps the stored value; a text is trimmed."""
    return KEEP if value is None else value.strip() if isinstance(value, str) else value


def _keep_list(value: Any) -> Any:
    return KEEP if value is None else split_list(value)


def _task(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.kinds.tasks import remind_days_arg

    days = remind_days_arg(a["remind_days"])
    when = event_time(a["effective_at"])
    body = _given(a["body"])
    return write_task(
        door.store(), door.attribution(), key=a["key"], title=a["title"], body=body, status=a["status"],
        priority=a["priority"], blocked_reason=a["blocked_reason"], assignee=a["assignee"],
        parent_task=a["parent"], knowledge=split_list(a["knowledge"]), resolution=a["resolution"],
        tags=_keep_list(a["tags"]), refs=split_list(a["refs"]), due=_keep(a["due"]), hard=_keep(a["hard"]),
        remind_days=days, expected=_keep(a["expected"]), waits_on=_keep(a["waits_on"]),
        blocked_by=_keep_list(a["blocked_by"]), effective_at=when)


def _incident(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.kinds.incidents import parse_affected

    windows = parse_affected(a["affected"])
    when = event_time(a["effective_at"])
    body = _given(a["body"])
    return write_incident(
        door.store(), door.attribution(), key=a["key"], title=a["title"], body=body, service=a["service"],
        severity=a["severity"], status=a["status"], hosts=split_list(a["hosts"]),
        knowledge=split_list(a["knowledge"]), resolution=a["resolution"], detection=a["detection"],
        affected=windows, started_at=a["started"], detected_at=a["detected"], tags=_keep_list(a["tags"]),
        refs=split_list(a["refs"]), effective_at=when)


def _task_status(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    return transition_task(door.store(), door.attribution(), a["key"], status=a["status"], assignee=a["assignee"],
                           parent_task=a["parent"], blocked_reason=a["blocked_reason"])


def _done(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.kinds.tasks import check_close_status

    status = check_close_status(a["key"], a["status"])
    resolution = _given(a["resolution"])
    return close_task(door.store(), door.attribution(), a["key"], status=status, resolution=resolution)


def _resolve(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    resolution = _given(a["resolution"])
    return resolve_incident(door.store(), door.attribution(), a["key"], status=a["status"], resolution=resolution)


def _tasks(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.errors import UsageError
    from kyb_cli.core.kinds.tasks import due_before_arg

    before = due_before_arg(a["due_before"])
    if a["ready"] and (a["status"] or a["all"] or a["open_followups"]):
        raise UsageError("ready lists open tasks that can start now; it does not combine with status, all or "
                         "open_followups", field=("ready", "status", "all", "open_followups"))
    rows = list_tasks(door.path(), status=a["status"], priority=a["priority"], assignee=a["assignee"],
                      parent=a["parent"], open_only_followups=a["open_followups"], include_archived=a["all"],
                      due_before=before, limit=a["limit"], ready=a["ready"])
    return {"count": len(rows), "tasks": rows}


def _incidents(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    rows = list_incidents(door.path(), status=a["status"], service=a["service"],
                          open_only_followups=a["open_followups"], include_archived=a["all"], limit=a["limit"])
    return {"count": len(rows), "incidents": rows}


def _query(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.search import query
    from kyb_cli.core.records.lists import split_each

    _path, response = query(
        door.store_arg, a["text"], history=a["history"], as_of=a["as_of"], changed_between=a["changed_between"],
        tags=split_each(a["tags"]), kind=a["kind"], status=a["status"], service=a["service"],
        priority=a["priority"], assignee=a["assignee"], parent=a["parent"], limit=a["limit"], recent=a["recent"],
        semantic=a["semantic"], explain=a["explain"], as_of_event=a["as_of_event"],
        min_strength=a["min_strength"], also=list(a["also"] or ()))
    return response


def _get(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.records import read

    return read(door.path(), a["key"], a["at"], version=a["version"]).to_json()


def _history(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.records import history

    return {"key": a["key"], "versions": [r.to_json() for r in history(door.path(), a["key"])]}


def _diff(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.records import diff

    return diff(door.path(), a["key"], a["from_rev"], a["to_rev"])


def _rm(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.records import retract_knowledge

    return retract_knowledge(door.store(), a["key"], a["reason"], door.attribution()).to_json()


def _verify(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.trust import verify

    return verify(door.store(), a["key"], source=a["source"], rev=a["rev"], note=a["note"],
                  attribution=door.attribution()).to_json()


def _stale(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.trust import stale

    return stale(door.path(), days=a["days"], today=a["today"])


def _rules(door: _Door, _a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.trust import rules

    return rules(door.path())


def _tags(door: _Door, _a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.records import tags

    found = tags(door.path())
    return {"count": len(found), "tags": found}


def _log(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.tools import log

    rows = log(door.path(), since=a["since"], until=a["until"], agent=a["agent"], author=a["author"],
               kind=a["kind"] or "", key=a["key"], limit=a["limit"])
    return {"count": len(rows), "log": rows}


def _deadlines(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from datetime import date

    from kyb_cli.api.trust import today_arg
    from kyb_cli.api.work import dated_tasks, deadlines

    day = today_arg(a["today"]) or date.today()
    items = deadlines(dated_tasks(door.path()), day)
    return {"today": day.isoformat(), "count": len(items), "deadlines": items}


HANDLERS: dict[str, Callable[[_Door, dict[str, Any]], dict[str, Any]]] = {
    "query": _query, "get": _get, "history": _history, "diff": _diff, "rm": _rm, "verify": _verify, "stale": _stale,
    "rules": _rules, "tags": _tags, "log": _log, "deadlines": _deadlines,
    "task": _task, "incident": _incident, "task-status": _task_status, "done": _done, "resolve": _resolve,
    "tasks": _tasks, "incidents": _incidents,
}


def handle(operation: str, door: _Door, fields: dict[str, Any]) -> dict[str, Any]:
    """Run table operation `operation` (query, get, history, diff, rm, verify, stale, rules, tags, log, deadlines,
    task, incident, task-status, done, resolve, tasks, incidents) with
    `fields` under the table's names (every field of the operation, defaults filled in); `door` gives
    `store()`, `path()` and `attribution()` (and `store_arg`, the store as the caller named it, for query); `body`/`resolution` may be a callable that reads them
    (called once the other fields are checked, so a bad flag never waits for stdin). Returns the JSON answer every door renders. Raises the
    operation's KybErrors, each naming its field (`exc.fields`) so the door can spell it its own way."""
    return HANDLERS[operation](door, fields)
