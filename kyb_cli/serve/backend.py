"""The calls the HTTP door makes into kyb: one function per route, each the CLI command's own call.

Every function takes the server's `Door` (the store it serves, the attribution of this request) and
the route's validated arguments, and returns the JSON the CLI prints for the same question. Only
`kyb_cli.api` is called (the porcelain every door shares); errors are its KybErrors, mapped to HTTP
statuses by the app.
"""

from __future__ import annotations

from typing import Any

from kyb_cli import api
from kyb_cli.api.operations import OPERATIONS


def health(door, a: dict[str, Any]) -> dict[str, Any]:
    from kyb_cli import __version__

    data = {"ok": True, "version": __version__}
    data.update(api.health(door.path()))
    data["capabilities"] = door.capabilities()
    return data


def search(door, a: dict[str, Any]) -> dict[str, Any]:
    # `q` is the table's `text`; the answer is the one every door gives (semantic_off included)
    return api.handle_dated("query", door, {**OPERATIONS["query"].named(a, "http"), "today": a.get("today")})


def get(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle_dated("get", door, a)  # the deadlines block rides along, as over MCP


def history(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("history", door, a)


def diff(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("diff", door, OPERATIONS["diff"].named(a, "http"))  # `from`/`to` are from_rev/to_rev


def add(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("add", door, a)


def retract(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("rm", door, a)


def export(door, a: dict[str, Any]) -> tuple[str, str]:
    """(text, media type): the bytes `kyb export --format F` writes."""
    rows = api.handle("export", door, a)["rows"]
    return api.export_text(rows, a["format"]), api.export_media_type(a["format"])


def tags(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("tags", door, a)


def incidents(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle_dated("incidents", door, a)  # the deadlines block rides along, as over MCP


def incident(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("incident", door, a)


def resolve(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("resolve", door, a)


def tasks(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle_dated("tasks", door, a)  # the deadlines block rides along, as over MCP


def task(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("task", door, a)


def transition(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("task-status", door, a)


def close(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("done", door, a)


def deadlines(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("deadlines", door, a)


def context(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("context", door, a)


def recall(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("recall", door, a)


def reads(door, a: dict[str, Any]) -> dict[str, Any]:
    return api.handle("reads", door, a)
