"""One handler per operation of the table: the table's fields in, the answer out (the writes here,
the reads and listings in _read_handlers.py).

Every door calls `handle(name, door, fields)` with the fields under the table's names (a door
renames its own spellings first: `include_all` on the CLI is `all`), and `door` gives the store
(`store()` to write, `path()` to read) and who writes (`attribution()`). What used to be done three
times, once per door, is done here once: null keeps the stored value (KEEP), lists follow one
rule, `remind_days`/`due_before`/`effective_at` are read by the core, `ready` does not combine with
other filters, an empty knowledge body is refused. The renderers stay in the doors.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any, Callable, Protocol

    class _Door(Protocol):  # what a handler needs from the door calling it
        def store(self) -> Any: ...  # pragma: no cover

        def path(self) -> Any: ...  # pragma: no cover

        # the store as the caller named it (None: the usual lookup), for `query`, which checks its
        # arguments before a missing default store is created (a bad --as-of writes nothing)
        store_arg: Any

        def attribution(self) -> Any: ...  # pragma: no cover

from kyb_cli.api._read_handlers import READS
from kyb_cli.api._store_handlers import STORE_HANDLERS
from kyb_cli.api._receipts import RECEIPTED, reads, receipted
from kyb_cli.api.work import (
    KEEP, close_task, resolve_incident, transition_task, write_incident, write_task,
)


def _split_list(value: Any) -> list[str]:
    """The doors' one list rule (api.records.split_list), from its core leaf when a write asks: api/records.py
    is not on a `kyb query`'s imports (one module fewer, issue 38), and the leaf is loaded by then."""
    from kyb_cli.core.records.lists import split_list as core

    return core(value)


def _given(value: Any) -> Any:
    """A text a door may hand over unread (the CLI's stdin), read only once the other fields passed."""
    return value() if callable(value) else value


def _keep(value: Any) -> Any:
    """null keeps the stored value; a text is trimmed."""
    return KEEP if value is None else value.strip() if isinstance(value, str) else value


def _keep_list(value: Any) -> Any:
    return KEEP if value is None else _split_list(value)


def _event_time(value: str | None) -> str:
    """`effective_at` as stored ('' when not given; RFC 3339 UTC); a bad value is a UsageError naming it."""
    from kyb_cli.core.timeargs import event_time_arg

    return event_time_arg(value)


def _add(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.records import add_knowledge
    from kyb_cli.core.errors import Rejected, UsageError
    from kyb_cli.core.records.validate import check_key_for_kind

    _event_time(a["effective_at"])  # a bad time is said before the body is read
    body = _given(a["body"])
    if not body.strip():  # a forgotten text (`</dev/null`, `body: ""`), not a record
        check_key_for_kind(a["key"], "knowledge")  # a bad key or title is still the first thing said
        if not a["title"].strip():
            raise Rejected("title is empty")
        raise UsageError("body is empty: nothing was written — knowledge is its text", field="body")
    return add_knowledge(door.store(), key=a["key"], title=a["title"], body=body, tags=_split_list(a["tags"]),
                         refs=_split_list(a["refs"]), attribution=door.attribution(), effective_at=a["effective_at"],
                         review_by=a["review_by"]).to_json()


def _add_many(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    """One lock, one branch move, one commit per record (or one with `one_commit`); a record that
    breaks a rule is in `skipped` (path `records[N]`), the others are written."""
    from kyb_cli.api._writes import writes
    from kyb_cli.api.operations import FACT
    from kyb_cli.core.tools.importer import add_many

    rows = [{f.name: _split_list(r.get(f.name)) if f.type == "strings" else r.get(f.name, f.default) for f in FACT}
            for r in a["records"]]
    store = door.store()
    with writes(store):
        return add_many(store, rows, attribution=door.attribution(), one_commit=a["one_commit"],
                        dry_run=a["dry_run"])


def _task(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.kinds.tasks import remind_days_arg

    days = remind_days_arg(a["remind_days"])
    when = _event_time(a["effective_at"])
    body = _given(a["body"])
    return write_task(
        door.store(), door.attribution(), key=a["key"], title=a["title"], body=body, status=a["status"],
        priority=a["priority"], blocked_reason=a["blocked_reason"], assignee=a["assignee"],
        parent=a["parent"], knowledge=_split_list(a["knowledge"]), resolution=a["resolution"],
        tags=_keep_list(a["tags"]), refs=_split_list(a["refs"]), due=_keep(a["due"]), hard=_keep(a["hard"]),
        remind_days=days, expected=_keep(a["expected"]), waits_on=_keep(a["waits_on"]),
        blocked_by=_keep_list(a["blocked_by"]), effective_at=when)


def _incident(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.kinds.incidents import parse_affected

    windows = parse_affected(a["affected"])
    when = _event_time(a["effective_at"])
    body = _given(a["body"])
    return write_incident(
        door.store(), door.attribution(), key=a["key"], title=a["title"], body=body, service=a["service"],
        severity=a["severity"], status=a["status"], hosts=_split_list(a["hosts"]),
        knowledge=_split_list(a["knowledge"]), resolution=a["resolution"], detection=a["detection"],
        affected=windows, started=a["started"], detected=a["detected"], tags=_keep_list(a["tags"]),
        refs=_split_list(a["refs"]), effective_at=when)


def _task_status(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    return transition_task(door.store(), door.attribution(), a["key"], status=a["status"], assignee=a["assignee"],
                           parent=a["parent"], blocked_reason=a["blocked_reason"])


def _done(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.kinds.tasks import check_close_status

    status = check_close_status(a["key"], a["status"])
    resolution = _given(a["resolution"])
    return close_task(door.store(), door.attribution(), a["key"], status=status, resolution=resolution)


def _resolve(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    resolution = _given(a["resolution"])
    return resolve_incident(door.store(), door.attribution(), a["key"], status=a["status"], resolution=resolution)


def _rm(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.records import retract_knowledge

    return retract_knowledge(door.store(), a["key"], a["reason"], door.attribution()).to_json()


def _verify(door: _Door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.trust import verify

    return verify(door.store(), a["key"], source=a["source"], rev=a["rev"], note=a["note"],
                  attribution=door.attribution()).to_json()


WRITES: dict[str, Callable[[_Door, dict[str, Any]], dict[str, Any]]] = {
    "add": _add, "add-many": _add_many, "rm": _rm, "verify": _verify, "task": _task, "incident": _incident,
    "task-status": _task_status, "done": _done, "resolve": _resolve,
}
HANDLERS: dict[str, Callable[[_Door, dict[str, Any]], dict[str, Any]]] = {
    **WRITES, **READS, "reads": reads, **STORE_HANDLERS}


def handle(operation: str, door: _Door, fields: dict[str, Any]) -> dict[str, Any]:
    """Run table operation `operation` (query, add, add-many, context, get, history, diff, rm, verify, stale, rules,
    tags, log, deadlines, task, incident, task-status, done, resolve, tasks, incidents, reads) with
    `fields` under the table's names (every field of the operation, defaults filled in); `door` gives
    `store()`, `path()` and `attribution()` (and `store_arg`, the store as the caller named it, for query); `body`/`resolution` may be a callable that reads them
    (called once the other fields are checked, so a bad flag never waits for stdin). Returns the JSON answer every door renders. Raises the
    operation's KybErrors, each naming its field (`exc.fields`) so the door can spell it its own way."""
    _check_dates(operation, fields)
    _check_bounds(operation, fields)
    answer = HANDLERS[operation](door, fields)
    # the read log (api/_receipts.py): one row per record shown, and `changed_since_your_read`
    return receipted(operation, door, fields, answer) if operation in RECEIPTED else answer


def handle_dated(operation: str, door: _Door, fields: dict[str, Any]) -> dict[str, Any]:
    """`handle` for get, query, tasks and incidents as MCP and HTTP answer them: `fields` may hold
    `today`, the reader's day, and the deadlines block rides along as `deadlines` (api.with_deadlines;
    the CLI prints it on stderr instead). A bad `today` is a UsageError before anything runs."""
    from kyb_cli.api.trust import reader_day
    from kyb_cli.api.work import with_deadlines

    rest = dict(fields)
    day = reader_day(rest.pop("today", None))
    return with_deadlines(handle(operation, door, rest), door.path(), day)


def _fields(operation: str) -> tuple:
    """The table's fields of `operation`; `query`'s from its own module, so a `kyb query` does not
    build the whole table (~1.5 ms of each one-shot query, issue 38)."""
    if operation == "query":
        from kyb_cli.api._query_op import QUERY

        return QUERY.fields
    from kyb_cli.api.operations import OPERATIONS

    return OPERATIONS[operation].fields


def _check_bounds(operation: str, fields: dict[str, Any]) -> None:
    """The table's bounds and choices, checked here for every door and every Python caller (the doors'
    own checks say the same earlier, in their words): an integer outside minimum..maximum, or a value
    not among a field's `enum`, is a UsageError naming the field (exit 2 / HTTP 400 / MCP exit 2).
    None keeps its meaning (the default, or keep)."""
    from kyb_cli.core.errors import UsageError

    def shown(value: Any) -> str:  # only on a refusal: the secret scanner is off the query path
        from kyb_cli.core.records.secrets import shown as scanned

        return scanned(str(value))

    for f in _fields(operation):
        value = fields.get(f.name)
        if value is None:
            continue
        if f.type == "integer" and (f.minimum is not None or f.maximum is not None):
            if isinstance(value, bool) or not isinstance(value, int):
                raise UsageError(f"{f.name}: wants a whole number (got '{shown(value)}')", field=f.name)
            if (f.minimum is not None and value < f.minimum) or (f.maximum is not None and value > f.maximum):
                from kyb_cli.api.operations import out_of_bounds  # the one wording; the table only on a refusal

                raise UsageError(f"{f.name}: {out_of_bounds(f.minimum, f.maximum, value)}", field=f.name)
        if f.enum and f.type == "string" and value != "" and value not in f.enum:
            raise UsageError(f"{f.name}: must be one of {', '.join(f.enum)} (got '{shown(value)}')",
                             field=f.name)


def _check_dates(operation: str, fields: dict[str, Any]) -> None:
    """Every calendar-date field of the table (metavar DATE: `due`, `expected`, `review_by`, `due_before`,
    `today`) read by one rule before anything else: a value that is not a date YYYY-MM-DD is a
    UsageError naming the field (exit 2 / HTTP 400) in every door — the same class as `effective_at`,
    never the write rule's exit 3. Empty or null keeps its meaning (clear / keep)."""
    dated = [f.name for f in _fields(operation) if f.metavar == "DATE"]
    given = [(name, fields[name]) for name in dated if isinstance(fields.get(name), str) and fields[name].strip()]
    if given:
        from kyb_cli.core.records.validate import day_arg

        for name, value in given:
            day_arg(value.strip(), name)
