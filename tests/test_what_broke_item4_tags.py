"""Issue 37, item 4: `GET /search?tags=t,t,…` with 1,001 tags answered 500 "Expression tree is too large":
the tag filter grew one SQL expression per tag. Now the filter is one condition however many tags
(`json_each` of the wanted list), repeats count once, and more tags than a record can hold is a usage
error declared once in the table (FILTER_TAGS_MAX): exit 2 on the CLI, 400 over HTTP, an error result
(exit 2) over MCP. In process."""

from __future__ import annotations

import pytest

from kyb_cli.api.operations import FILTER_TAGS_MAX, OPERATIONS
from kyb_cli.core.records.limits import TAGS_MAX

MANY = ",".join(["t"] * 1001)


@pytest.fixture
def tagged(cli):
    assert cli("add", "--key", "both", "--title", "Both", "--tags", "t,u", input="redis body").code == 0
    assert cli("add", "--key", "one", "--title", "One", "--tags", "t", input="redis body").code == 0
    return cli


def test_the_search_tag_bound_is_the_record_tag_bound_declared_once():
    assert FILTER_TAGS_MAX == TAGS_MAX
    assert OPERATIONS["query"].field("tags").maximum == FILTER_TAGS_MAX
    assert OPERATIONS["query"].field("tags").schema()["maxItems"] == FILTER_TAGS_MAX


def test_a_tag_filter_is_one_sql_condition_however_many_tags_and_repeats_count_once(tagged, store_path):
    from kyb_cli.api.search import query

    _p, all_t = query(store_path, "", tags=["T"] * FILTER_TAGS_MAX, semantic=False)
    assert sorted(h["key"] for h in all_t["hits"]) == ["both", "one"]
    _p, both = query(store_path, "", tags=["t", "U", "t"], semantic=False)
    assert [h["key"] for h in both["hits"]] == ["both"]  # all must match, still
    _p, none = query(store_path, "", tags=["t", "nope"], semantic=False)
    assert none["count"] == 0


def test_too_many_search_tags_is_a_usage_error_on_the_cli(tagged):
    res = tagged("query", "redis", "--tags", MANY)
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr.startswith("kyb: ") and f"at most {FILTER_TAGS_MAX} tags" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "SQL" not in res.stderr


def _http(store):
    from starlette.testclient import TestClient

    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    return TestClient(build_app(Door(store), bind_host="127.0.0.1", port_of=lambda: 8765, token=None),
                      raise_server_exceptions=False, base_url="http://127.0.0.1:8765")


def test_too_many_search_tags_is_a_400_over_http_not_a_500(tagged, store_path):
    pytest.importorskip("starlette")
    with _http(store_path) as client:
        reply = client.get("/search", params={"q": "redis", "tags": MANY})
        assert reply.status_code == 400, reply.text
        assert f"at most {FILTER_TAGS_MAX} tags" in reply.text
        fine = client.get("/search", params={"q": "", "tags": ",".join(["t"] * 50)})
        assert fine.status_code == 200 and fine.json()["count"] == 2


def test_too_many_search_tags_is_a_usage_error_over_mcp(tagged, store_path):
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from kyb_cli.mcp.server import build_server

    async def run():
        async with Client(build_server(str(store_path))) as client:
            return await client.call_tool("query", {"text": "redis", "tags": ["t"] * 1001})

    result = anyio.run(run)
    assert result.is_error
    text = result.content[0].text
    assert "exit 2" in text and "SQL" not in text, text
