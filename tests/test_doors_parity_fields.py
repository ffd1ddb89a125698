"""Issue 36: parity of whole fields, not only names. For every operation, every door's declaration
of each table field has the table's default, bounds, choices and description, and a door-only
parameter belongs to the operations that declare it, not to the door. Each check is one of the five
mutations the review made that the name test let through (a changed default, a removed bound, a
door-only parameter spreading, a hand-written option; a handler dropping a field is an answer-shape
check in tests/test_doors_query_one_handler.py)."""

from __future__ import annotations

import anyio
import click
import pytest

from kyb_cli.api.operations import OPERATIONS

pytest.importorskip("mcp")

# The one door-only MCP parameter and the operations that have it (the deadlines block's day).
MCP_EXTRAS = {"today": {"get", "tasks", "incidents", "query"}}


@pytest.fixture(scope="module")
def mcp_tools(tmp_path_factory):
    from mcp import Client

    from kyb_cli import api
    from kyb_cli.mcp.server import build_server

    store = tmp_path_factory.mktemp("parity") / "store"
    api.init_store(store)

    async def run():
        async with Client(build_server(str(store))) as client:
            return {t.name: t.input_schema for t in (await client.list_tools()).tools}

    return anyio.run(run)


def _walk(prop: dict, key: str):
    """A schema keyword wherever pydantic put it (beside `anyOf` or inside one branch)."""
    if key in prop:
        return prop[key]
    for branch in prop.get("anyOf", []):
        if key in branch:
            return branch[key]
    return None


def _mcp_ops():
    return sorted(n for n, op in OPERATIONS.items() if "mcp" in op.doors)


@pytest.mark.parametrize("name", _mcp_ops())
def test_every_mcp_field_has_the_tables_default_bounds_choices_and_description(mcp_tools, name):
    op = OPERATIONS[name]
    schema = mcp_tools[op.tool]
    props = schema["properties"]
    for f in op.fields_of("mcp"):
        prop = props[f.name]
        if not f.required:
            assert prop.get("default") == f.default, (name, f.name, prop.get("default"), f.default)
        if f.type == "integer":
            assert (_walk(prop, "minimum"), _walk(prop, "maximum")) == (f.minimum, f.maximum), (name, f.name)
        elif f.type in ("strings", "texts", "objects"):
            assert (_walk(prop, "minItems"), _walk(prop, "maxItems")) == (f.minimum, f.maximum), (name, f.name)
        if f.enum:
            assert tuple(_walk(prop, "enum") or ()) == tuple(f.enum), (name, f.name)
        assert prop.get("description") == f.description, (name, f.name)
    extras = set(props) - {f.name for f in op.fields_of("mcp")}
    assert all(name in MCP_EXTRAS.get(x, ()) for x in extras), (name, sorted(extras))


def _cli_ops():
    return sorted(n for n, op in OPERATIONS.items() if "cli" in op.doors)


@pytest.mark.parametrize("name", _cli_ops())
def test_every_cli_option_has_the_tables_bounds_and_choices(name):
    """(Click's defaults are made by cli/options.py from the table; None there means "not given".)"""
    from kyb_cli.cli.app import cli

    op = OPERATIONS[name]
    params = {p.name: p for p in cli.get_command(click.Context(cli), name).params}
    for f in op.fields_of("cli"):
        p = params[f.cli or f.name]
        if isinstance(p.type, click.IntRange):
            assert (p.type.min, p.type.max) == (f.minimum, f.maximum), (name, f.name)
        elif f.type == "integer" and (f.minimum is not None or f.maximum is not None):
            pytest.fail(f"{name}: --{f.name} lost the table's bounds")
        if f.enum:
            assert isinstance(p.type, click.Choice) and tuple(p.type.choices) == tuple(f.enum), (name, f.name)


def test_every_list_limit_of_the_table_is_bounded():
    """A `limit` without bounds reaches the core as -5 or 10**6 (the review's third mutation)."""
    for name, op in OPERATIONS.items():
        for f in op.fields:
            if f.name == "limit":
                assert f.minimum == 1 and f.maximum, (name, f.minimum, f.maximum)


def test_every_http_route_of_the_table_is_described_by_the_tables_summary():
    """One description per operation: /openapi.json reads the table's `summary` (the MCP and HTTP
    copies of query's had lost `as_of_event`)."""
    pytest.importorskip("starlette")
    from kyb_cli.serve.openapi import openapi
    from kyb_cli.serve.routes import ROUTES

    spec = openapi(ROUTES)
    for route in ROUTES:
        if route.op:
            assert route.about == ""
            summary = spec["paths"][route.path][route.method.lower()]["summary"]
            assert summary.startswith(OPERATIONS[route.op].summary), route.path
    assert "as_of_event" in spec["paths"]["/search"]["get"]["summary"]


def test_the_mcp_query_tool_names_every_time_mode_the_table_names(mcp_tools):
    """The MCP copy of query's description had lost `as_of_event` (issue 36)."""
    from kyb_cli.mcp.tools import Tools

    described = Tools(None).query.__doc__
    for mode in ("history", "as_of", "as_of_event", "changed_between"):
        assert mode in OPERATIONS["query"].summary and f"`{mode}`" in described, mode
