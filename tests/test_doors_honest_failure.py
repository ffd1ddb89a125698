"""A bug is told as a bug in every door (exit 70, kind `internal`), and every HTTP refusal has the error shape.

The CLI side is tests/test_cli_usage.py::test_internal_errors_are_one_line_and_exit_70 (a process).
"""

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


def _boom(*_a, **_k):
    raise ZeroDivisionError("synthetic bug")


def test_http_unexpected_exception_is_500_exit_70_internal(app, monkeypatch):
    import kyb_cli.core.index.reads

    monkeypatch.setattr(kyb_cli.core.index.reads, "tags", _boom)  # what the tags handler calls
    status, body = asgi_call(app, "GET", "/tags")
    assert status == 500
    assert body == {"error": "internal error: ZeroDivisionError: synthetic bug (a bug: please report it)",
                    "exit_code": 70, "kind": "internal"}


@pytest.mark.parametrize(("method", "path", "host", "status", "exit_code", "kind"), [
    ("GET", "/no-such-route", "127.0.0.1:8765", 404, 1, "not_found"),
    ("PUT", "/tags", "127.0.0.1:8765", 405, 2, "usage"),
    ("GET", "/tags", "evil.example:8765", 421, 2, "misdirected"),
])
def test_every_http_refusal_carries_error_exit_code_and_kind(app, method, path, host, status, exit_code, kind):
    got, body = asgi_call(app, method, path, host=host)
    assert (got, body["exit_code"], body["kind"]) == (status, exit_code, kind)
    assert body["error"]


def test_http_readonly_refusal_carries_error_exit_code_and_kind(tmp_path):
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    api.init_store(tmp_path / "store")
    app = build_app(Door(tmp_path / "store", readonly=True), bind_host="127.0.0.1", port_of=lambda: 8765,
                    token=None, mcp=False)
    status, body = asgi_call(app, "POST", "/knowledge", body={"key": "k", "title": "T"})
    assert (status, body["exit_code"], body["kind"]) == (403, 3, "forbidden")


def test_mcp_unexpected_exception_is_an_error_result_saying_internal():
    pytest.importorskip("mcp")
    from kyb_cli.mcp.server import Door

    result = Door(None).call(lambda: _boom())
    assert result.is_error
    assert result.structured_content["error"] == {
        "message": "internal error: ZeroDivisionError: synthetic bug (a bug: please report it)",
        "exit_code": 70, "kind": "internal"}
    assert "(exit 70: internal)" in result.content[0].text
