"""`kyb query`, the MCP `query` tool and `GET /search` are one handler (api.handle("query")): the same
question asked through each door gets the same hits, in-process (tests/test_cli_fast.py covers the
fast path against Click across the process boundary)."""

from __future__ import annotations

import json

import pytest

from kyb_cli import api

pytest.importorskip("mcp")
pytest.importorskip("starlette")

from tests.support.asgi_call import asgi_call  # noqa: E402


@pytest.fixture
def seeded(store_path):
    store = api.open_store(store_path)
    who = api.attribution("test")
    api.add_knowledge(store, key="pool-size", title="Pool size", body="The db pool holds 20 connections.",
                      tags=["db", "Infra"], refs=[], attribution=who)
    api.add_knowledge(store, key="pool-cache", title="Cache pool", body="The cache pool holds 5 slots.",
                      tags=["cache"], refs=[], attribution=who)
    return store_path


def _mcp(store_path, **args):
    from kyb_cli.mcp.server import Door
    from kyb_cli.mcp.tools import Tools

    result = Tools(Door(str(store_path))).query(**args)
    assert not result.is_error, result.content[0].text
    return result.structured_content


def _http(store_path, query: str):
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    app = build_app(Door(store_path), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    status, body = asgi_call(app, "GET", "/search", query=query)
    assert status == 200, body
    return body


def _keys(response) -> list[str]:
    return [h["key"] for h in response["hits"]]


def test_a_tag_list_means_the_same_in_every_door(seeded, cli):
    """--tag db,infra on the CLI, ["db", "infra"] or ["db,infra"] over MCP, tags=db,infra over HTTP."""
    by_cli = json.loads(cli("query", "pool", "--tag", "db,infra", "--no-semantic").stdout)
    repeated = json.loads(cli("query", "pool", "--tags", "db", "--tag", "INFRA", "--no-semantic").stdout)
    by_mcp = _mcp(seeded, text="pool", tags=["db", "infra"], semantic=False)
    comma_item = _mcp(seeded, text="pool", tags=["db,infra"], semantic=False)
    by_http = _http(seeded, "q=pool&tags=db,infra&semantic=false")
    assert _keys(by_cli) == _keys(repeated) == _keys(by_mcp) == _keys(comma_item) == _keys(by_http) == ["pool-size"]


def test_min_strength_weak_is_the_default_in_every_door(seeded, cli):
    """No door translates `weak` any more: the core reads it as no floor, as when it is omitted."""
    default = json.loads(cli("query", "pool", "--no-semantic").stdout)
    weak = json.loads(cli("query", "pool", "--no-semantic", "--min-strength", "weak").stdout)
    assert _keys(default) == _keys(weak) == _keys(_mcp(seeded, text="pool", semantic=False, min_strength="weak")) \
        == _keys(_http(seeded, "q=pool&semantic=false&min_strength=weak"))
    assert len(_keys(default)) == 2


def test_changed_between_needs_two_times_in_every_door(seeded, cli):
    """The core's rule: exactly two times (the CLI's nargs=2 and MCP's schema say it before the core)."""
    status, body = asgi_call(_app(seeded), "GET", "/search", query="q=pool&changed_between=2026-01-01")
    assert status == 400 and "changed_between" in body["error"]
    from pydantic import TypeAdapter, ValidationError

    from kyb_cli.api.operations import QUERY
    from kyb_cli.mcp.params import annotation
    from kyb_cli.mcp.server import Door
    from kyb_cli.mcp.tools import Tools

    with pytest.raises(ValidationError):  # the tool's schema, from the table's item counts
        TypeAdapter(annotation(QUERY.field("changed_between"))).validate_python(["2026-01-01"])
    result = Tools(Door(str(seeded))).query(text="pool", changed_between=["2026-01-01"])
    assert result.is_error and result.structured_content["error"]["exit_code"] == 2
    assert "changed_between" in result.structured_content["error"]["message"]
    res = cli("query", "pool", "--changed-between", "2026-01-01")
    assert res.code == 2 and res.stdout == ""


def _app(store_path):
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    return build_app(Door(store_path), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)


def test_a_bad_mode_combination_names_the_callers_own_spelling(seeded, cli):
    """One message in the porcelain, spelled per door: `--as-of-event` on the CLI, `as_of_event` elsewhere."""
    from kyb_cli.mcp.server import Door
    from kyb_cli.mcp.tools import Tools

    res = cli("query", "pool", "--as-of-event", "2026-01-01", "--history")
    assert res.code == 2 and res.stdout == ""
    assert "--as-of-event combines with --as-of only (not --history or --changed-between)" in res.stderr
    error = Tools(Door(str(seeded))).query(text="pool", as_of_event="2026-01-01", history=True).structured_content
    assert error["error"]["message"] == "as_of_event combines with as_of only (not history or changed_between)"
    status, body = asgi_call(_app(seeded), "GET", "/search", query="q=pool&as_of_event=2026-01-01&history=true")
    assert status == 400 and body["error"].startswith("as_of_event combines with as_of only")


def test_the_answer_says_why_semantic_search_is_off_in_every_door(seeded, cli):
    """Issue 36 drift 3: HTTP dropped `semantic_off`; an answer is the same in every door."""
    by_cli = json.loads(cli("query", "pool").stdout)
    by_mcp = _mcp(seeded, text="pool")
    by_http = _http(seeded, "q=pool")
    assert by_cli["semantic"] is False and by_cli["semantic_off"]
    assert by_cli["semantic_off"] == by_mcp["semantic_off"] == by_http["semantic_off"]
    assert set(by_cli) == set(by_http) and set(by_cli) <= set(by_mcp)


def test_context_has_one_answer_shape_in_every_door(seeded, cli):
    """Issue 36 drift 1: the CLI answered {brief, digest, text}, MCP and HTTP a flat digest + text."""
    from kyb_cli.mcp.server import Door
    from kyb_cli.mcp.tools import Tools

    by_cli = json.loads(cli("context").stdout)
    by_mcp = Tools(Door(str(seeded))).context().structured_content
    status, by_http = asgi_call(_app(seeded), "GET", "/context")
    assert status == 200
    assert set(by_cli) == set(by_mcp) == set(by_http) == {"text", "brief", "digest"}
    assert by_cli["digest"]["counts"] == by_mcp["digest"]["counts"] == by_http["digest"]["counts"]
    brief = json.loads(cli("context", "--brief").stdout)
    assert set(brief) == set(Tools(Door(str(seeded))).context(brief=True).structured_content) == {"text", "brief"}
