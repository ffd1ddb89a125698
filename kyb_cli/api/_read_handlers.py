"""The table's reads and listings (query, get, history, diff, tags, log, stale, rules, tasks, incidents,
export, deadlines, context, recall, doctor): each the core call every door used to make with its own copy
of the arguments.

They call the core directly (no porcelain function that only forwards to it); `handle` in
handlers.py dispatches to them. `door.path()` is the store to read; nothing here commits (doctor's
`fix` only brings record files back to HEAD).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any, Callable


def _reader_day(today: str | None):
    """api.trust.reader_day, imported when a handler asks for the day: a query never does, and
    api/trust.py was one module more on every `kyb query`'s imports (issue 38)."""
    from kyb_cli.api.trust import reader_day as day

    return day(today)


def _tasks(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.errors import UsageError
    from kyb_cli.core.kinds.tasks import due_before_arg, list_tasks

    before = due_before_arg(a["due_before"])
    if a["ready"] and (a["status"] or a["all"] or a["open_followups"]):
        raise UsageError("ready lists open tasks that can start now; it does not combine with status, all or "
                         "open_followups", field=("ready", "status", "all", "open_followups"))
    rows = list_tasks(door.path(), status=a["status"], priority=a["priority"], assignee=a["assignee"],
                      parent=a["parent"], open_only_followups=a["open_followups"], include_archived=a["all"],
                      due_before=before, limit=a["limit"], ready=a["ready"])
    return {"count": len(rows), "tasks": rows}


def _incidents(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.kinds.incidents import list_incidents

    rows = list_incidents(door.path(), status=a["status"], service=a["service"],
                          open_only_followups=a["open_followups"], include_archived=a["all"], limit=a["limit"])
    return {"count": len(rows), "incidents": rows}


def _query(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.search import _query  # the path as a string: no pathlib on a `kyb query` (issue 38)
    from kyb_cli.core.records.lists import split_each

    _path, response = _query(
        door.store_arg, a["text"], history=a["history"], as_of=a["as_of"], changed_between=a["changed_between"],
        tags=split_each(a["tags"]), kind=a["kind"], status=a["status"], service=a["service"],
        priority=a["priority"], assignee=a["assignee"], parent=a["parent"], limit=a["limit"], recent=a["recent"],
        semantic=a["semantic"], explain=a["explain"], as_of_event=a["as_of_event"],
        min_strength=a["min_strength"], also=list(a["also"] or ()))
    if not a["full"]:  # an answer to choose from: the snippet says why a hit matched, `get` gives the record
        from kyb_cli.api._query_op import compact  # not the whole table

        compact(response.get("hits", ()), as_of_event=bool(a["as_of_event"]))
    return response


def _get(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.records import read

    return read(door.path(), a["key"], a["at"], version=a["version"]).to_json()


def _history(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.records import history

    return {"key": a["key"], "versions": [r.to_json() for r in history(door.path(), a["key"])]}


def _diff(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.kinds.diff import diff

    return diff(door.path(), a["key"], a["from_rev"], a["to_rev"])


def _stale(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.api.trust import today_arg
    from kyb_cli.core.tools.stale import stale

    return stale(door.path(), days=a["days"], today=today_arg(a["today"]))


def _rules(door, _a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.tools.rules import rules

    return rules(door.path())


def _tags(door, _a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.index.reads import tags

    found = tags(door.path())
    return {"count": len(found), "tags": found}


def _log(door, a: dict[str, Any]) -> dict[str, Any]:
    """`since`/`until` take what `--as-of` takes (a date, a datetime, a revision)."""
    from kyb_cli.core.timeargs import END, START, parse_time
    from kyb_cli.core.tools.activity import log

    path = door.path()
    lo = parse_time(a["since"], bound=START, store_path=path) if a["since"] else None
    hi = parse_time(a["until"], bound=END, store_path=path) if a["until"] else None
    rows = log(path, since=lo, until=hi, agent=a["agent"], author=a["author"], kind=a["kind"] or "",
               key=a["key"], limit=a["limit"])
    return {"count": len(rows), "log": rows}


def _export(door, a: dict[str, Any]) -> dict[str, Any]:
    """The snapshot's rows at `at` (default HEAD); a door renders them as `format` (MCP: as JSON)."""
    from kyb_cli.core.tools.export import export_rows

    head, rows = export_rows(door.path(), a["at"])
    return {"head": head, "count": len(rows), "rows": rows}


def _deadlines(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.kinds.deadlines import dated_tasks, deadlines

    day = _reader_day(a["today"])
    items = deadlines(dated_tasks(door.path()), day)
    return {"today": day.isoformat(), "count": len(items), "deadlines": items}


def _context(door, a: dict[str, Any]) -> dict[str, Any]:
    """`{text, brief, digest}`: the digest as text (about 1900 tokens) with its data; with `brief`
    `{text, brief}`, about 50 tokens (brief in every format). One shape in every door."""
    from kyb_cli.core.tools.context import gather, render, render_brief

    data = gather(door.path(), days=a["days"], today=_reader_day(a["today"]))
    if a["brief"]:
        return {"text": render_brief(data), "brief": True}
    return {"text": render(data), "brief": False, "digest": data}


def _recall(door, a: dict[str, Any]) -> dict[str, Any]:
    """`{confident, count, hits}`: strong hits only (api/recalls.py); the hook mode is the CLI's."""
    from kyb_cli.api.recalls import recall

    return recall(door.store_arg, a["text"], limit=a["limit"])


def _doctor(door, a: dict[str, Any]) -> dict[str, Any]:
    """What works and what to fix (problems are reported, not raised); `fix` first repairs the
    working tree (an interrupted update, record files missing or staged wrong; never a hand edit)."""
    from kyb_cli.core.tools.doctor import diagnose

    return diagnose(door.path(), True, a["fix"])


READS: dict[str, Callable[[Any, dict[str, Any]], dict[str, Any]]] = {
    "query": _query, "get": _get, "history": _history, "diff": _diff, "stale": _stale, "rules": _rules, "tags": _tags, "log": _log,
    "export": _export, "doctor": _doctor, "deadlines": _deadlines, "context": _context, "recall": _recall, "tasks": _tasks, "incidents": _incidents,
}
