"""Issue 36: one description per operation, in the table (`Operation.text`), read by every door.

The Click command's --help, the MCP tool's description and the HTTP route's OpenAPI summary and
description are the table's text, each parameter spelled as that door's callers spell it; a door
that writes its own description (or drops a sentence of the table's) fails here."""

from __future__ import annotations

import anyio
import click
import pytest

from kyb_cli.api.operations import OPERATIONS


def _ops(door: str) -> list[str]:
    return [name for name, op in OPERATIONS.items() if door in op.doors]


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", _ops("cli"))
def test_the_cli_help_of_each_command_is_the_tables_description(name):
    from kyb_cli.cli.app import cli

    command = cli.get_command(click.Context(cli), name)
    text = OPERATIONS[name].text("cli")
    assert _flat(command.help).startswith(_flat(text)), name  # the table's first; a CLI-only note may follow
    assert command.get_short_help_str(200).rstrip(".") in _flat(text), name  # `kyb --help`'s line is the summary's


def test_the_cli_spells_a_parameter_of_the_description_as_its_flag():
    query, diff = OPERATIONS["query"].text("cli"), OPERATIONS["diff"].text("cli")
    assert "`--as-of-event`" in query and "`as_of_event`" not in query and "`--also`" in query
    assert "TO is the latest version, FROM the version before it" in diff
    assert "`as_of_event`" in OPERATIONS["query"].text("mcp") and "`to_rev` is the latest" in OPERATIONS["diff"].text("mcp")


@pytest.fixture(scope="module")
def mcp_tools(tmp_path_factory):
    pytest.importorskip("mcp")
    from mcp import Client

    from kyb_cli import api
    from kyb_cli.mcp.server import build_server

    store = tmp_path_factory.mktemp("described") / "store"
    api.init_store(store)

    async def run():
        async with Client(build_server(str(store))) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    return anyio.run(run)


def test_the_mcp_tools_are_the_tables_operations_each_described_by_the_table(mcp_tools):
    """The tools are made by a loop over the table: one per MCP operation, named `Operation.tool`,
    its description the table's, and the read-only ones marked so."""
    from kyb_cli.mcp.tools import EFFECTS

    assert set(mcp_tools) == {OPERATIONS[name].tool for name in _ops("mcp")}
    for name in _ops("mcp"):
        tool = mcp_tools[OPERATIONS[name].tool]
        assert tool.description == OPERATIONS[name].text("mcp"), name
        assert tool.annotations.read_only_hint is (name not in EFFECTS), name
    assert mcp_tools["retract"].annotations.destructive_hint is True
    query = mcp_tools["query"].description
    for kept in ("as_of_event", "do not treat weak hits as answers", "Several phrasings", "`also`"):
        assert kept in query, kept


def test_the_openapi_summary_and_description_of_each_route_are_the_tables():
    pytest.importorskip("starlette")
    from kyb_cli.serve.openapi import openapi
    from kyb_cli.serve.routes import ROUTES

    spec = openapi(ROUTES)
    routed = set()
    for route in ROUTES:
        if not route.op:
            continue
        routed.add(route.op)
        op = spec["paths"][route.path][route.method.lower()]
        text = OPERATIONS[route.op].text("http")
        assert op["summary"] == f"{text.split(chr(10) * 2)[0]} (`kyb {route.op}`)", route.path
        assert op["description"].startswith(text), route.path
    assert routed == set(_ops("http"))
    assert "as_of_event" in spec["paths"]["/search"]["get"]["description"]
