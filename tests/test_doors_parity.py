"""Every door accepts exactly the operations table's parameters (kyb_cli/api/operations.py).

A door-only option is listed in DOOR_ONLY with the reason it belongs to that door alone; anything
else one door has and the table lacks (or the reverse) fails here, naming the door and the field.
"""

from __future__ import annotations

import inspect

import click
import pytest

from kyb_cli.api.operations import OPERATIONS

DEADLINES_DAY = "the day of the deadlines block the CLI prints on stderr and MCP adds as `deadlines`"
DOOR_ONLY: dict[str, dict[str, str]] = {
    "cli": {
        "as_json": "--json: JSON instead of readable output on a terminal (other doors always answer JSON)",
        "store": "--store: the CLI picks its store per call; MCP and HTTP serve the store they were started on",
        "fields": "--fields: columns of the readable table on a terminal",
        "no_deadlines": "--no-deadlines: silences the stderr deadlines block, which only the CLI prints",
        "no_wait": "--no-wait: answer before a new index's history is in (a process-per-call concern)",
        "today": DEADLINES_DAY,
        "body_file": "--file: read the body from a file or stdin (a terminal/pipe concern)",
    },
    "mcp": {"today": DEADLINES_DAY},
    "http": {},
}


def _click_params(name: str) -> set[str]:
    from kyb_cli.cli.app import cli

    return {p.name for p in cli.get_command(click.Context(cli), name).params}


def _mcp_params(name: str) -> set[str]:
    pytest.importorskip("mcp")
    from kyb_cli.mcp.tools import Tools

    return set(inspect.signature(getattr(Tools, name)).parameters) - {"self"}


def _http_params(name: str) -> set[str]:
    pytest.importorskip("starlette")
    from kyb_cli.serve.routes import ROUTES

    write = {"query": ("GET", "/search"), "add": ("POST", "/knowledge"), "task": ("POST", "/tasks"),
             "tasks": ("GET", "/tasks")}[name]
    route = next(r for r in ROUTES if (r.method, r.path) == write)
    return {p.name for p in route.query + route.body}


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_cli_accepts_exactly_the_tables_parameters(name):
    op = OPERATIONS[name]
    table = {f.cli or f.name for f in op.fields}
    door = _click_params(name) - set(DOOR_ONLY["cli"])
    assert door == table, (sorted(door - table), sorted(table - door))


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_mcp_accepts_exactly_the_tables_parameters(name):
    table = {f.name for f in OPERATIONS[name].fields}
    door = _mcp_params(name) - set(DOOR_ONLY["mcp"])
    assert door == table, (sorted(door - table), sorted(table - door))


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_http_accepts_exactly_the_tables_parameters(name):
    table = {f.http or f.name for f in OPERATIONS[name].fields}
    door = _http_params(name) - set(DOOR_ONLY["http"])
    assert door == table, (sorted(door - table), sorted(table - door))


def test_every_door_only_option_says_why():
    assert all(reason.strip() for door in DOOR_ONLY.values() for reason in door.values())


def test_every_operation_has_an_example_and_every_field_help():
    for op in OPERATIONS.values():
        assert op.example.startswith("kyb "), op.name
        assert all(f.description for f in op.fields), op.name
