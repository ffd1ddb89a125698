"""The HTTP door takes what the CLI and MCP take (issue 23's drift), in-process through the ASGI app."""

from __future__ import annotations

import pytest

from kyb_cli import api

pytest.importorskip("starlette")

from tests.support.asgi_call import asgi_call  # noqa: E402


@pytest.fixture
def app(tmp_path):
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    api.init_store(tmp_path / "store")
    return build_app(Door(tmp_path / "store"), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)


def _ok(app, method, path, **kw):
    status, body = asgi_call(app, method, path, **kw)
    assert status == 200, body
    return body


def test_search_takes_as_of_event_min_strength_and_explain(app):
    _ok(app, "POST", "/knowledge", body={"key": "pool-size", "title": "Pool size", "body": "pool size is 40",
                                         "effective_at": "2026-01-01", "review_by": "2027-01-31"})
    got = _ok(app, "GET", "/search", query="q=pool&as_of_event=2026-06-01&min_strength=strong&explain=true")
    assert [h["key"] for h in got["hits"]] == ["pool-size"]
    before = _ok(app, "GET", "/search", query="q=pool&as_of_event=2025-06-01")
    assert before["hits"] == []


def test_post_knowledge_stores_effective_at_and_review_by(app):
    _ok(app, "POST", "/knowledge", body={"key": "pool-size", "title": "Pool size", "body": "40",
                                         "effective_at": "2026-01-01", "review_by": "2027-01-31"})
    record = _ok(app, "GET", "/knowledge/pool-size")
    assert record["effective_at"].startswith("2026-01-01") and record["review_by"] == "2027-01-31"


def test_post_tasks_takes_blocked_by_and_get_tasks_ready_answers_the_ready_queue(app):
    _ok(app, "POST", "/tasks", body={"key": "task-order-cert", "title": "Order cert"})
    _ok(app, "POST", "/tasks", body={"key": "task-renew-cert", "title": "Renew cert",
                                     "blocked_by": ["task-order-cert"], "effective_at": "2026-01-01"})
    ready = _ok(app, "GET", "/tasks", query="ready=true")
    assert [t["key"] for t in ready["tasks"]] == ["task-order-cert"]
    assert _ok(app, "GET", "/knowledge/task-renew-cert")["blocked_by"] == ["task-order-cert"]


@pytest.mark.parametrize(("path", "body"), [
    ("/knowledge", {"key": "k", "title": "K"}),
    ("/tasks", {"key": "task-k", "title": "K"}),
    ("/incidents", {"key": "inc-2026-01-01-k", "title": "K", "service": "s", "severity": "low"}),
])
def test_effective_at_next_tuesday_is_a_usage_error_for_every_kind(app, path, body):
    status, reply = asgi_call(app, "POST", path, body={**body, "effective_at": "next tuesday"})
    assert (status, reply["exit_code"], reply["kind"]) == (400, 2, "usage"), reply
    assert _ok(app, "GET", "/search", query="q=")["hits"] == []  # nothing written


def test_api_write_task_refuses_effective_at_next_tuesday_in_the_core(tmp_path):
    api.init_store(tmp_path / "s")
    store = api.open_store(tmp_path / "s")
    with pytest.raises(api.UsageError, match="next tuesday"):
        api.write_task(store, api.attribution("script"), key="task-x", title="X", effective_at="next tuesday")
