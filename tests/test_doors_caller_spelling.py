"""A rule is checked once, in the core, and its message names the parameter the way the caller
spelled it: `--remind-days` on the CLI, `remind_days` over MCP and HTTP (issue 23, "Rules in the
core, once"). The core raises with the table's field name; each door translates only the name.
"""

from __future__ import annotations

import asyncio
import re
import sys

import pytest

from kyb_cli import api


def _cli(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    from kyb_cli.cli.app import main

    monkeypatch.setattr(sys, "argv", ["kyb", *args])
    with pytest.raises(SystemExit) as done:
        main()
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


CASES = [  # (CLI args, MCP tool + arguments, HTTP method + path + body/query, CLI spelling, other spelling)
    (["task", "--key", "task-a", "--title", "A", "--body", "x", "--remind-days", "soon"],
     ("task", {"key": "task-a", "title": "A", "remind_days": "soon"}),
     ("POST", "/tasks", {"key": "task-a", "title": "A", "remind_days": "soon"}, ""),
     "--remind-days", "remind_days"),
    (["tasks", "--due-before", "next week"], ("tasks", {"due_before": "next week"}),
     ("GET", "/tasks", None, "due_before=next%20week"), "--due-before", "due_before"),
    (["add", "--key", "k", "--title", "K", "--body", "x", "--effective-at", "next tuesday"],
     ("add", {"key": "k", "title": "K", "body": "x", "effective_at": "next tuesday"}),
     ("POST", "/knowledge", {"key": "k", "title": "K", "body": "x", "effective_at": "next tuesday"}, ""),
     "--effective-at", "effective_at"),
    (["tasks", "--priority", "urgent"], ("tasks", {"priority": "urgent"}),
     ("GET", "/tasks", None, "priority=urgent"), "--priority", "priority"),
    (["tasks", "--ready", "--all"], ("tasks", {"ready": True, "all": True}),
     ("GET", "/tasks", None, "ready=true&all=true"), "--ready", "ready"),
    (["add", "--key", "k", "--title", "K", "--body", ""], ("add", {"key": "k", "title": "K"}),
     ("POST", "/knowledge", {"key": "k", "title": "K", "body": " "}, ""), "--body", "body"),
    (["deadlines", "--today", "2026-13-01"], ("deadlines", {"today": "2026-13-01"}),
     ("GET", "/deadlines", None, "today=2026-13-01"), "--today", "today"),
    (["query", "x", "--history", "--as-of", "2026-01-01"], ("query", {"text": "x", "history": True, "as_of": "2026-01-01"}),
     ("GET", "/search", None, "q=x&history=true&as_of=2026-01-01"), "--as-of", "as_of"),
]


@pytest.mark.parametrize("cli_args,_mcp,_http,cli_name,name", CASES, ids=[c[3] for c in CASES])
def test_cli_names_the_flag_the_caller_typed(tmp_path, monkeypatch, capsys, cli_args, _mcp, _http, cli_name, name):
    code, out, err = _cli(monkeypatch, capsys, "--store", str(tmp_path / "s"), *cli_args)
    assert code == 2 and out == ""
    assert re.search(rf"(?<![\w-]){re.escape(cli_name)}(?![\w-])", err), err
    assert f"{name} " not in err.replace(cli_name, ""), err


@pytest.mark.parametrize("_cli_args,mcp,_http,cli_name,name", CASES, ids=[c[3] for c in CASES])
def test_mcp_names_the_argument_the_caller_sent(tmp_path, _cli_args, mcp, _http, cli_name, name):
    pytest.importorskip("mcp")
    from kyb_cli.mcp.server import build_server

    api.init_store(tmp_path / "s")
    server = build_server(str(tmp_path / "s"))
    tool, arguments = mcp
    result = asyncio.run(server.call_tool(tool, arguments))
    text = result.content[0].text
    assert result.is_error and name in text and cli_name not in text, text
    assert result.structured_content["error"]["exit_code"] == 2


@pytest.mark.parametrize("_cli_args,_mcp,http,cli_name,name", CASES, ids=[c[3] for c in CASES])
def test_http_names_the_field_the_caller_sent(tmp_path, _cli_args, _mcp, http, cli_name, name):
    pytest.importorskip("starlette")
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door
    from tests.support.asgi_call import asgi_call

    api.init_store(tmp_path / "s")
    app = build_app(Door(tmp_path / "s"), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    method, path, body, query = http
    status, reply = asgi_call(app, method, path, query=query, body=body)
    assert status == 400 and reply["exit_code"] == 2, reply
    assert name in reply["error"] and cli_name not in reply["error"], reply


def test_the_core_raises_with_the_field_name_and_each_door_spells_it():
    from kyb_cli.core.kinds.tasks import remind_days_arg

    with pytest.raises(api.UsageError) as caught:
        remind_days_arg("soon")
    assert caught.value.fields == ("remind_days",)
    assert api.spelled(caught.value, "cli").startswith("--remind-days ")
    assert api.spelled(caught.value, "mcp").startswith("remind_days ")
    assert api.spelled(caught.value, "http").startswith("remind_days ")


def test_today_is_read_in_one_place_with_one_message():
    with pytest.raises(api.UsageError) as caught:
        api.today_arg("2026-02-30")
    assert caught.value.message == "today wants a date YYYY-MM-DD (got '2026-02-30')"
    assert api.today_arg(None) is None and str(api.today_arg("2026-02-28")) == "2026-02-28"


def test_a_list_is_split_by_one_rule_for_text_and_json():
    assert api.split_list(" a, b,,c ") == ["a", "b", "c"]
    assert api.split_list([" a ", "", "b"]) == ["a", "b"]
    assert api.split_list(None) == []
