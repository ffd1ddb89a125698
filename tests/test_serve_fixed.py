"""The short ways through `kyb serve` (issue 38) answer exactly what the long ones do.

`Fixed` (serve/app.py) takes a GET of the table's fixed paths by a dict lookup before Starlette's
router: the same status, headers and bytes as the router's way, answers and errors alike. The guard
skips the body read of a GET without body headers and spells its audit line by hand: the line is
json.dumps's, byte for byte, whatever the client put in the path or its label.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from kyb_cli import api

pytest.importorskip("starlette")

QUERIES = [
    ("/search", "q=port&semantic=false"),
    ("/search", "q=port&semantic=false&limit=1&also=the%20port&also=which%20port"),
    ("/search", "q=port&semantic=maybe"),  # a usage error (400)
    ("/search", "q=port&nope=1"),  # an unknown parameter (400)
    ("/search", ""),  # q missing
    ("/search", "q=%FF%FE&semantic=false"),  # not UTF-8: Starlette's latin-1 reading of the query
    ("/healthz", ""),
    ("/tags", ""),
    ("/tasks", ""),
    ("/export", "format=jsonl"),
    ("/recall", "q=port"),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    store = tmp_path_factory.mktemp("fixed") / "store"
    api.init_store(store)
    api.add_knowledge(api.open_store(str(store)), key="port", title="Port", body="The port is 9090.", tags=["net"],
                      refs=[], attribution=api.attribution("test"))
    mp = pytest.MonkeyPatch()
    mp.setenv("KYB_DEADLINES", "off")
    yield build_app(Door(store), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    mp.undo()


def _call(app, method: str, path: str, query: str = "", headers: list | None = None,
          capture: list | None = None) -> list[dict]:
    """Every message `app` sent for one request (a scope as uvicorn builds it), also kept in `capture`."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "path": path,
             "raw_path": path.encode(), "query_string": query.encode("latin-1"), "scheme": "http",
             "headers": headers or [(b"host", b"127.0.0.1:8765")], "server": ("127.0.0.1", 8765),
             "client": ("127.0.0.1", 50000), "root_path": ""}
    sent: list[dict] = [] if capture is None else capture
    messages = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent


def _strip_date(messages: list[dict]) -> list[dict]:
    """The messages with a health answer's clock fields left out (two calls are two instants)."""
    out = []
    for m in messages:
        if m["type"] == "http.response.body" and m.get("body", b"").startswith(b"{"):
            data = json.loads(m["body"])
            if isinstance(data, dict):
                data.pop("uptime_s", None)
                data.pop("now", None)
            m = dict(m, body=data)
        out.append(m)
    return out


@pytest.mark.parametrize(("path", "query"), QUERIES)
def test_the_fixed_path_answers_as_the_router_does(app, path, query):
    fixed = app.app  # the guard's app: Fixed, in front of Starlette
    assert (("GET", path) in fixed.table) is True
    short, long = _call(fixed, "GET", path, query), _call(fixed.app, "GET", path, query)
    assert _strip_date(short) == _strip_date(long)
    assert short[0]["status"] == long[0]["status"] and short[0]["headers"] == long[0]["headers"]


def test_paths_the_table_does_not_fix_go_through_the_router(app):
    fixed = app.app
    for method, path in (("GET", "/knowledge/port"), ("HEAD", "/search"), ("GET", "/search/"), ("PUT", "/tags"),
                         ("GET", "/openapi.json"), ("GET", "/no-such-route")):
        assert (method, path) not in fixed.table
    assert _call(app, "PUT", "/tags")[0]["status"] == 405
    assert _call(app, "GET", "/search/", "q=port")[0]["status"] in (307, 404)
    assert _call(app, "GET", "/knowledge/port")[0]["status"] == 200


def test_a_bug_on_the_fixed_path_is_the_routers_500_and_raised_again(app, monkeypatch):
    import kyb_cli.serve.app as app_module

    def boom(*_a, **_k):
        raise ZeroDivisionError("synthetic bug")

    monkeypatch.setattr(app_module, "parse_query", boom)  # a failure outside api.answer's envelope
    sent = {}
    for name, target in (("fixed", app.app), ("router", app.app.app)):
        with pytest.raises(ZeroDivisionError):  # raised again for the server to log, as Starlette does
            _call(target, "GET", "/tags", capture=sent.setdefault(name, []))
    assert sent["fixed"] == sent["router"] and sent["fixed"][0]["status"] == 500
    assert json.loads(sent["fixed"][1]["body"])["kind"] == "internal"


@pytest.mark.parametrize("path, agent", [
    ("/search", "human"),
    ('/a"quoted"\\path', "agent \"x\"\\y"),
    ("/ünïcödé/路径", "代理"),
    ("/ctl\x00\x1f\x7f", "tab\there"),
    ("/emoji/\U0001F600", ""),
])
@pytest.mark.parametrize("ms", [0.0, 1.3, 12345.6, 1e-05, 1e16])
def test_the_audit_line_is_json_dumps_of_its_fields(path, agent, ms):
    from kyb_cli.serve.guard import audit_line

    fields = {"ts": "2026-01-02T03:04:05+00:00", "method": "GET", "path": path, "status": 200, "ms": ms,
              "agent": agent}
    assert audit_line(**fields) == json.dumps(fields, ensure_ascii=False) + "\n"


def test_a_get_without_body_headers_reaches_the_app_with_the_clients_own_receive(tmp_path):
    from kyb_cli.serve.guard import Guard

    seen: list = []

    async def inner(scope, receive, send):
        seen.append(await receive())
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    guard = Guard(inner, bind_host="127.0.0.1", port_of=lambda: 8765, token=None, readonly=False,
                  audit_path=tmp_path / "kyb" / "audit.jsonl")
    for headers in ([], [(b"content-length", b"0")], [(b"transfer-encoding", b"chunked")]):
        sent = _call(guard, "GET", "/x", headers=[(b"host", b"127.0.0.1:8765"), *headers])
        assert sent[0]["status"] == 200 and (b"x-frame-options", b"DENY") in sent[0]["headers"]
    assert seen == [{"type": "http.request", "body": b"", "more_body": False}] * 3
    lines = [json.loads(line) for line in (tmp_path / "kyb" / "audit.jsonl").read_text().splitlines()]
    assert [(r["method"], r["path"], r["status"]) for r in lines] == [("GET", "/x", 200)] * 3


class _Wire:
    """A transport that records each write (one write is one send on a real socket)."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name, default=None):
        return default


def test_a_responses_head_goes_out_with_its_body_in_one_write():
    from kyb_cli.serve.run import HeadWithBody

    async def run():
        wire = _Wire()
        t = HeadWithBody(wire)
        head = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"
        t.write(head)
        assert wire.writes == [] and t.get_write_buffer_size() == len(head)
        t.write(b"{}")
        assert wire.writes == [head + b"{}"]
        t.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # a head with no body at once: sent when the step ends
        await asyncio.sleep(0)
        assert wire.writes[-1] == b"HTTP/1.1 100 Continue\r\n\r\n"
        t.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        t.close()  # a close sends what is held first
        assert wire.writes[-1] == b"HTTP/1.1 204 No Content\r\n\r\n" and wire.closed
        t.write(b"body only")
        assert wire.writes[-1] == b"body only" and t.get_extra_info("peername", "x") == "x"

    asyncio.run(run())
