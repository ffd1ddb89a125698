"""Issue 36 drift 5: bounds and choices are the core's, not only the doors'. Through `api.handle`
(what every door calls, and a Python caller may too) a value outside the table's bounds or choices
is a UsageError naming the field, and nothing runs."""

from __future__ import annotations

import pytest

from kyb_cli import api
from kyb_cli.core.errors import UsageError
from tests.support.doors import StoreDoor


def _Door(store):
    return StoreDoor(store, "test")


def _defaults(operation: str) -> dict:
    from kyb_cli.api.operations import OPERATIONS

    return {f.name: f.default for f in OPERATIONS[operation].fields}


@pytest.mark.parametrize("operation, field, value", [
    ("query", "limit", -5), ("query", "limit", 10 ** 6), ("query", "kind", "nonsense"),
    ("query", "min_strength", "bogus"), ("export", "format", "xml"), ("context", "days", 10 ** 6),
    ("stale", "days", -3), ("tasks", "limit", -1),
])
def test_bounds_and_choices_are_checked_by_the_core_for_every_door(store_path, operation, field, value):
    fields = dict(_defaults(operation), **{field: value})
    if operation == "query":
        fields["text"] = "anything"
    with pytest.raises(UsageError) as caught:
        api.handle(operation, _Door(store_path), fields)
    assert caught.value.exit_code == 2 and field in caught.value.fields
    assert caught.value.message.startswith(f"{field}: ")


def test_one_bound_has_one_wording_in_the_core(store_path):
    with pytest.raises(UsageError) as caught:
        api.handle("tasks", _Door(store_path), dict(_defaults("tasks"), limit=-1))
    assert caught.value.message == "limit: must be at least 1 (1 to 200)"


def test_one_bound_reads_the_same_over_mcp_as_in_the_core_and_the_schema_still_says_it(store_path):
    """Issue 36 drift 6: MCP said pydantic's 'input should be greater than or equal to 0'; the core's
    wording is every door's now (HTTP's already was), and the schema still advertises the bounds."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from kyb_cli.mcp.server import build_server

    async def run():
        async with Client(build_server(str(store_path))) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return tools, await client.call_tool("tasks", {"limit": -1})

    tools, result = anyio.run(run)
    assert result.is_error and "limit: must be at least 1 (1 to 200)" in result.content[0].text
    limit = tools["tasks"].input_schema["properties"]["limit"]
    assert limit["minimum"] == 1 and limit["maximum"] == 200
