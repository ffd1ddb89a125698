"""The calls the HTTP door makes into kyb: one function per route, each the CLI command's own call.

Every function takes the server's `Door` (the store it serves, the attribution of this request) and
the route's validated arguments, and returns the JSON the CLI prints for the same question. Only
`kyb_cli.api` is called (the porcelain every door shares); errors are its KybErrors, mapped to HTTP
statuses by the app.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from kyb_cli import api
from kyb_cli.api.operations import min_strength_arg


def _today(value: str | None) -> date:
    if not value:
        return date.today()
    if not api.is_date(value):
        raise api.UsageError(f"today: '{value}' is not a date YYYY-MM-DD")
    return date.fromisoformat(value)


def health(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli import __version__

    data = {"ok": True, "version": __version__}
    data.update(api.health(door.path()))
    data["capabilities"] = door.capabilities()
    return data


def search(door, a: dict[str, Any]) -> dict[str, Any]:
    window = a["changed_between"]
    if window is not None and len(window) != 2:
        raise api.UsageError("changed_between: give two times A,B")
    _path, response = api.query(door.path(), a["q"], history=a["history"], as_of=a["as_of"],
                                changed_between=window, tags=a["tags"], kind=a["kind"], status=a["status"],
                                service=a["service"], priority=a["priority"], assignee=a["assignee"],
                                parent=a["parent"], limit=a["limit"], recent=a["recent"], semantic=a["semantic"],
                                explain=a["explain"], as_of_event=a["as_of_event"],
                                min_strength=min_strength_arg(a["min_strength"]), also=a["also"])
    response.pop("semantic_off", None)
    return response


def get(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.read(door.path(), a["key"], at=a["at"], version=a["version"]).to_json()


def history(door, a: dict[str, Any]) -> dict[str, Any]:
    return {"key": a["key"], "versions": [r.to_json() for r in api.history(door.path(), a["key"])]}


def diff(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.diff(door.path(), a["key"], a["from"], a["to"])


def add(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.add_knowledge(door.store(), key=a["key"], title=a["title"], body=a["body"], tags=a["tags"],
                         refs=a["refs"], attribution=door.attribution(),
                         effective_at=a["effective_at"], review_by=a["review_by"]).to_json()


def retract(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.retract_knowledge(door.store(), a["key"], a["reason"], door.attribution()).to_json()


def export(door, a: dict[str, Any]) -> tuple[str, str]:
    """(text, media type): the bytes `kyb export --format F` writes."""
    _head, rows = api.export_rows(door.path(), a["at"])
    return api.export_text(rows, a["format"]), api.export_media_type(a["format"])


def tags(door, a: dict[str, Any]) -> dict[str, Any]:
    found = api.tags(door.path())
    return {"count": len(found), "tags": found}


def incidents(door, a: dict[str, Any]) -> dict[str, Any]:
    rows = api.list_incidents(door.path(), status=a["status"], service=a["service"],
                          open_only_followups=a["open_followups"], include_archived=a["all"], limit=a["limit"])
    return {"count": len(rows), "incidents": rows}


def incident(door, a: dict[str, Any]) -> dict[str, Any]:
    KEEP = api.keep()
    return api.write_incident(
        door.store(), door.attribution(), key=a["key"], title=a["title"], body=a["body"], service=a["service"],
        severity=a["severity"], status=a["status"], hosts=a["hosts"], knowledge=a["knowledge"],
        resolution=a["resolution"], detection=a["detection"], affected=api.parse_affected(a["affected"]),
        started_at=a["started"], detected_at=a["detected"], tags=KEEP if a["tags"] is None else a["tags"],
        refs=a["refs"])


def resolve(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.resolve_incident(door.store(), door.attribution(), a["key"], status=a["status"],
                            resolution=a["resolution"])


def tasks(door, a: dict[str, Any]) -> dict[str, Any]:
    rows = api.list_tasks(door.path(), status=a["status"], priority=a["priority"], assignee=a["assignee"],
                      parent=a["parent"], open_only_followups=a["open_followups"], include_archived=a["all"],
                      due_before=api.due_before_arg(a["due_before"]), limit=a["limit"], ready=a["ready"])
    return {"count": len(rows), "tasks": rows}


def task(door, a: dict[str, Any]) -> dict[str, Any]:
    KEEP = api.keep()

    def keep(name: str):
        value = a[name]
        return KEEP if value is None else value.strip() if isinstance(value, str) else value

    return api.write_task(
        door.store(), door.attribution(), key=a["key"], title=a["title"], body=a["body"], status=a["status"],
        priority=a["priority"], blocked_reason=a["blocked_reason"], assignee=a["assignee"],
        parent_task=a["parent"], knowledge=a["knowledge"], resolution=a["resolution"],
        tags=KEEP if a["tags"] is None else a["tags"], refs=a["refs"], due=keep("due"), hard=keep("hard"),
        remind_days=api.remind_days_arg(a["remind_days"]), expected=keep("expected"), waits_on=keep("waits_on"),
        blocked_by=KEEP if a["blocked_by"] is None else a["blocked_by"], effective_at=a["effective_at"] or "")


def transition(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.transition_task(door.store(), door.attribution(), a["key"], status=a["status"], assignee=a["assignee"],
                           parent_task=a["parent"], blocked_reason=a["blocked_reason"])


def close(door, a: dict[str, Any]) -> dict[str, Any]:
    status = api.check_close_status(a["key"], a["status"])
    return api.close_task(door.store(), door.attribution(), a["key"], status=status, resolution=a["resolution"])


def deadlines(door, a: dict[str, Any]) -> dict[str, Any]:
    day = _today(a["today"])
    items = api.deadlines(api.dated_tasks(door.path()), day)
    return {"today": day.isoformat(), "count": len(items), "deadlines": items}
