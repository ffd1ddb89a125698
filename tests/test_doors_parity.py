"""Every door accepts exactly the operations table's parameters (kyb_cli/api/operations.py).

A door-only option is listed in DOOR_ONLY with the reason it belongs to that door alone; anything
else one door has and the table lacks (or the reverse) fails here, naming the door and the field.
"""

from __future__ import annotations

import inspect
import re

import click
import pytest

from kyb_cli.api.operations import OPERATIONS

DEADLINES_DAY = "the day of the deadlines block the CLI prints on stderr and MCP and HTTP add as `deadlines`"
DOOR_ONLY: dict[str, dict[str, str]] = {
    "cli": {
        "as_json": "--json: JSON instead of readable output on a terminal (other doors always answer JSON)",
        "store": "--store: the CLI picks its store per call; MCP and HTTP serve the store they were started on",
        "fields": "--fields: columns of the readable table on a terminal",
        "no_deadlines": "--no-deadlines: silences the stderr deadlines block, which only the CLI prints",
        "no_wait": "--no-wait: answer before a new index's history is in (a process-per-call concern)",
        "today": DEADLINES_DAY,
        "body_file": "--file: read the body from a file or stdin (a terminal/pipe concern)",
        "template": "--template: print the incident skeleton for a person at a terminal to fill in",
        "background": "--background (hidden): the detached automatic sync a write starts, not a caller's option",
    },
    "mcp": {"today": DEADLINES_DAY},
    "http": {"today": DEADLINES_DAY},
}


def _click_params(name: str) -> set[str]:
    from kyb_cli.cli.app import cli

    return {p.name for p in cli.get_command(click.Context(cli), name).params}


def _mcp_params(name: str) -> set[str]:
    pytest.importorskip("mcp")
    from kyb_cli.mcp.tools import Tools

    return set(inspect.signature(getattr(Tools(None), OPERATIONS[name].tool)).parameters) - {"self"}


def _route(name: str):
    pytest.importorskip("starlette")
    from kyb_cli.serve.routes import ROUTES

    found = [r for r in ROUTES if r.op == name]
    assert len(found) == 1, f"{name}: {len(found)} routes say they serve it"
    return found[0]


def _http_params(name: str) -> set[str]:
    route = _route(name)
    return {p.name for p in route.query + route.body} | set(re.findall(r"{(\w+)}", route.path))


def _in(door: str) -> list[str]:
    return sorted(n for n, op in OPERATIONS.items() if door in op.doors)


def _table(name: str, door: str, spelling) -> set[str]:
    return {spelling(f) for f in OPERATIONS[name].fields_of(door)}


def _door(params: set[str], door: str, table: set[str]) -> set[str]:
    return params - (set(DOOR_ONLY[door]) - table)  # a door-only name the table declares is the table's


@pytest.mark.parametrize("name", _in("cli"))
def test_cli_accepts_exactly_the_tables_parameters(name):
    table = _table(name, "cli", lambda f: f.cli or f.name)
    door = _door(_click_params(name), "cli", table)
    assert door == table, (sorted(door - table), sorted(table - door))


@pytest.mark.parametrize("name", _in("mcp"))
def test_mcp_accepts_exactly_the_tables_parameters(name):
    table = _table(name, "mcp", lambda f: f.name)
    door = _door(_mcp_params(name), "mcp", table)
    assert door == table, (sorted(door - table), sorted(table - door))


@pytest.mark.parametrize("name", _in("http"))
def test_http_accepts_exactly_the_tables_parameters(name):
    table = _table(name, "http", lambda f: f.http or f.name)
    door = _door(_http_params(name), "http", table)
    assert door == table, (sorted(door - table), sorted(table - door))


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_a_door_without_an_operation_really_lacks_it(name):
    from kyb_cli.cli.app import cli

    op = OPERATIONS[name]
    assert (cli.get_command(click.Context(cli), name) is not None) == ("cli" in op.doors), name
    pytest.importorskip("mcp")
    from kyb_cli.mcp.tools import TOOLS

    assert (op.tool in TOOLS) == ("mcp" in op.doors), name
    pytest.importorskip("starlette")
    from kyb_cli.serve.routes import ROUTES

    assert any(r.op == name for r in ROUTES) == ("http" in op.doors), name


def test_every_door_only_option_says_why():
    assert all(reason.strip() for door in DOOR_ONLY.values() for reason in door.values())


def test_every_operation_has_an_example_and_every_field_help():
    for op in OPERATIONS.values():  # a CLI call, or the tool call of an operation the CLI lacks
        assert op.example.startswith(f"kyb {op.name}" if "cli" in op.doors else f"{op.tool} "), op.name
        assert all(f.description for f in op.fields), op.name


def test_the_tables_limits_are_the_cores():
    from kyb_cli.api.operations import LOG_LIMIT
    from kyb_cli.core.tools.activity import MAX_LIMIT

    assert LOG_LIMIT == MAX_LIMIT


def test_the_tables_query_counts_are_the_cores():
    """`also` and `changed_between` advertise the item counts the core enforces (schemas, nargs=2)."""
    from kyb_cli.api.operations import QUERY
    from kyb_cli.core.search.phrasings import MAX_PHRASINGS

    assert QUERY.field("also").maximum == MAX_PHRASINGS - 1
    assert (QUERY.field("changed_between").minimum, QUERY.field("changed_between").maximum) == (2, 2)


# The fast path (cli/fast.py) is a fourth parser of `kyb query`: it must take every spelling Click takes
# (else a call silently pays for Click) and read each one as Click does.
FAST_FORMS = [
    ["checkout", "port", "--also", "a", "--also=b c", "--limit", "3", "--tag", "x,y", "--tags", "z", "--kind", "task"],
    ["--history", "--explain", "--full", "--recent", "--no-semantic", "--min-strength", "strong", "--status", "open",
     "--service", "svc", "--priority", "high", "--assignee", "me", "--parent", "task-p"],
    ["--as-of", "2026-01-01", "--as-of-event=2026-01-02", "--semantic", "--", "--limit", "is", "text"],
    ["--changed-between", "2026-01-01", "2026-01-03", "--json", "--no-deadlines", "--no-wait", "--today",
     "2026-01-05", "--store", "/nowhere"],
]
FAST_HANDS_OVER = {"--fields": "a readable-table option: a call with it goes to Click", "--help": "help is Click's"}


def _query_command():
    from kyb_cli.cli.app import cli

    return cli.get_command(click.Context(cli), "query")


def test_fast_path_knows_exactly_the_click_query_options():
    from kyb_cli.cli import fast

    flags, valued, _fields = fast._options()
    spellings = set(flags) | set(valued) | set(fast._DOOR_VALUED)
    click_spellings = {o for p in _query_command().params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}
    assert spellings == click_spellings - set(FAST_HANDS_OVER), (sorted(spellings - click_spellings),
                                                                 sorted(click_spellings - spellings))
    used = {a.split("=")[0] for form in FAST_FORMS for a in (form[:form.index("--")] if "--" in form else form)}
    assert spellings <= used, sorted(spellings - used)  # every spelling is checked below


@pytest.mark.parametrize("form", FAST_FORMS, ids=[" ".join(f) for f in FAST_FORMS])
def test_fast_path_reads_every_query_option_as_click_does(form):
    from kyb_cli.cli import fast

    ours = fast.parse(["query", *form])
    assert ours is not None, "the fast path handed a plain form to Click"
    ctx = _query_command().make_context("query", list(form))
    theirs = OPERATIONS["query"].named(ctx.params, "cli")

    def norm(value):
        return list(value) if isinstance(value, tuple) else value

    assert {name: norm(ours[name]) for name in theirs} == {name: norm(v) for name, v in theirs.items()}
    assert set(theirs) == {f.name for f in OPERATIONS["query"].fields_of("cli")}


def test_add_many_takes_records_of_exactly_adds_record_fields():
    """`add_many`'s records are `add`'s record (FACT), declared once: the MCP schema of an item says so."""
    pytest.importorskip("mcp")
    import asyncio

    from kyb_cli.api.operations import FACT
    from kyb_cli.mcp.server import build_server

    tools = {t.name: t for t in asyncio.run(build_server(None).list_tools())}
    records = tools["add_many"].input_schema["properties"]["records"]
    item = records["items"]
    item = tools["add_many"].input_schema.get("$defs", {}).get(item.get("$ref", "").rsplit("/", 1)[-1], item)
    assert set(item["properties"]) == {f.name for f in FACT}
    assert set(item["required"]) == {"key", "title"}
    assert (records["minItems"], records["maxItems"]) == (1, 10000)


def test_the_context_digest_is_one_answer_over_mcp_and_http(tmp_path):
    """GET /context answers what the MCP `context` tool answers: the one handler's digest and text."""
    pytest.importorskip("mcp")
    pytest.importorskip("starlette")
    import asyncio

    from kyb_cli import api
    from kyb_cli.mcp.server import build_server
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door
    from tests.support.asgi_call import asgi_call

    store = tmp_path / "s"
    api.init_store(store)
    api.add_knowledge(api.open_store(str(store)), key="port", title="Port", body="9090", tags=["infra"], refs=[],
                      attribution=api.attribution("test"))
    app = build_app(Door(store), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    status, http = asgi_call(app, "GET", "/context", query="brief=true&today=2026-12-01")
    mcp = asyncio.run(build_server(str(store)).call_tool("context", {"brief": True, "today": "2026-12-01"}))
    assert status == 200 and http["text"] == mcp.structured_content["text"] and "knowledge" in http["text"]
    assert set(http) == set(mcp.structured_content)
    bad, refused = asgi_call(app, "GET", "/context", query="today=tomorrow")
    assert bad == 400 and "today" in refused["error"]
