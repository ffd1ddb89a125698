"""The calls the HTTP door makes into kyb: one function per route, each the CLI command's own call.

Every function takes the server's `Door` (the store it serves, the attribution of this request) and
the route's validated arguments, and returns the JSON the CLI prints for the same question. Errors
are the core's KybErrors, mapped to HTTP statuses by the app.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from kyb_cli.core.errors import UsageError


def _today(value: str | None) -> date:
    from kyb_cli.core.validate import is_date

    if not value:
        return date.today()
    if not is_date(value):
        raise UsageError(f"today: '{value}' is not a date YYYY-MM-DD")
    return date.fromisoformat(value)


def health(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli import __version__
    from kyb_cli.core.index.health import health as index_health

    data = {"ok": True, "version": __version__}
    data.update(index_health(door.path()))
    data["capabilities"] = door.capabilities()
    return data


def search(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.index.query import Filters
    from kyb_cli.core.index.search import search as run_search
    from kyb_cli.core.timeargs import time_mode

    window = a["changed_between"]
    if window is not None and len(window) != 2:
        raise UsageError("changed_between: give two times A,B")
    path = door.path()
    mode, as_of_t, span = time_mode(history=a["history"], as_of=a["as_of"], changed_between=window,
                                    store_path=path)
    filters = Filters(tags=a["tags"], kind=a["kind"], status=a["status"], service=a["service"],
                      priority=a["priority"], assignee=a["assignee"], parent=a["parent"])
    response = run_search(path, a["q"], mode=mode, as_of=as_of_t, window=span, filters=filters,
                          limit=a["limit"], recent=a["recent"], semantic=a["semantic"])
    response.pop("semantic_off", None)
    return response


def get(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.index.reads import read

    return read(door.path(), a["key"], at=a["at"]).to_json()


def history(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.index.reads import history as rows

    return {"key": a["key"], "versions": [r.to_json() for r in rows(door.path(), a["key"])]}


def diff(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.kinds.diff import diff as record_diff

    return record_diff(door.path(), a["key"], a["from"], a["to"])


def add(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.knowledge import add_knowledge

    return add_knowledge(door.store(), key=a["key"], title=a["title"], body=a["body"], tags=a["tags"],
                         refs=a["refs"], attribution=door.attribution()).to_json()


def retract(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.knowledge import retract_knowledge

    return retract_knowledge(door.store(), a["key"], a["reason"], door.attribution()).to_json()


def export(door, a: dict[str, Any]) -> tuple[str, str]:
    """(text, media type): the bytes `kyb export --format F` writes."""
    from kyb_cli.cli.commands.export import render
    from kyb_cli.core.index.export import export_rows

    _head, rows = export_rows(door.path(), a["at"])
    media = {"jsonl": "application/x-ndjson", "json": "application/json", "csv": "text/csv"}[a["format"]]
    return render(rows, a["format"]), media


def tags(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.index.reads import tags as live_tags

    found = live_tags(door.path())
    return {"count": len(found), "tags": found}


def incidents(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.incidents import list_incidents

    rows = list_incidents(door.store(), status=a["status"], service=a["service"],
                          open_only_followups=a["open_followups"], include_archived=a["all"], limit=a["limit"])
    return {"count": len(rows), "incidents": rows}


def incident(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.incidents import parse_affected, write_incident
    from kyb_cli.core.lifecycle import KEEP

    return write_incident(
        door.store(), door.attribution(), key=a["key"], title=a["title"], body=a["body"], service=a["service"],
        severity=a["severity"], status=a["status"], hosts=a["hosts"], knowledge=a["knowledge"],
        resolution=a["resolution"], detection=a["detection"], affected=parse_affected(a["affected"]),
        started_at=a["started"], detected_at=a["detected"], tags=KEEP if a["tags"] is None else a["tags"],
        refs=a["refs"])


def resolve(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.incidents import resolve_incident

    return resolve_incident(door.store(), door.attribution(), a["key"], status=a["status"],
                            resolution=a["resolution"])


def tasks(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.tasks import due_before_arg, list_tasks

    rows = list_tasks(door.store(), status=a["status"], priority=a["priority"], assignee=a["assignee"],
                      parent=a["parent"], open_only_followups=a["open_followups"], include_archived=a["all"],
                      due_before=due_before_arg(a["due_before"]), limit=a["limit"])
    return {"count": len(rows), "tasks": rows}


def task(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.lifecycle import KEEP
    from kyb_cli.core.tasks import remind_days_arg, write_task

    def keep(name: str):
        value = a[name]
        return KEEP if value is None else value.strip() if isinstance(value, str) else value

    return write_task(
        door.store(), door.attribution(), key=a["key"], title=a["title"], body=a["body"], status=a["status"],
        priority=a["priority"], blocked_reason=a["blocked_reason"], assignee=a["assignee"],
        parent_task=a["parent"], knowledge=a["knowledge"], resolution=a["resolution"],
        tags=KEEP if a["tags"] is None else a["tags"], refs=a["refs"], due=keep("due"), hard=keep("hard"),
        remind_days=remind_days_arg(a["remind_days"]), expected=keep("expected"), waits_on=keep("waits_on"))


def transition(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.tasks import transition_task

    return transition_task(door.store(), door.attribution(), a["key"], status=a["status"], assignee=a["assignee"],
                           parent_task=a["parent"], blocked_reason=a["blocked_reason"])


def close(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.tasks import check_close_status, close_task

    status = check_close_status(a["key"], a["status"])
    return close_task(door.store(), door.attribution(), a["key"], status=status, resolution=a["resolution"])


def deadlines(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli.core.deadlines import dated_tasks, deadlines as due

    day = _today(a["today"])
    items = due(dated_tasks(door.path()), day)
    return {"today": day.isoformat(), "count": len(items), "deadlines": items}
