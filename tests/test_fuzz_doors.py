"""Issue 24, "every decoder total": one bounded hypothesis fuzz test per door, asserting only what is
documented — the CLI's exit codes (0 ok, 1 not found, 2 usage, 3 rejected, 4 store, 5 remote; never
70 internal), MCP stdio's JSON-RPC replies (a result, a tool error with a documented exit code, or
-32700/-32600/-32601/-32602; always a reply, never a hang), HTTP's 2xx/4xx (never 5xx), and the
same frames as bodies to HTTP /mcp (a JSON-RPC reply or a 4xx refusal, never an empty answer to a
request) — and never a traceback. Slow lane: each spends a few seconds per example budget."""

from __future__ import annotations

import json
import os
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.slow

EXIT_CODES = {0, 1, 2, 3, 4, 5}
FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# Text that reaches the decoders: control characters, NUL, lone surrogates, escapes, long runs.
NASTY = st.text(alphabet=st.sampled_from(list(string.printable) + ["\x00", "\x1b", "\x1e", "\ud800", "\udfff",
                                                                  "é", "\u202e", "\ufeff", "="]),
                max_size=40)
WORDS = st.one_of(NASTY, st.sampled_from(["k", "task-a", "inc-a", "2026-01-01", "yesterday", "-1", "0",
                                          "9" * 30, "a" * 300, ""]))


class Ran:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr


# -- the CLI, in-process through Click's runner --------------------------------------------------

COMMANDS = ["add", "get", "query", "history", "diff", "tasks", "incidents", "task", "incident", "log",
            "export", "tags", "stale", "rules", "context", "rm", "done", "resolve", "verify", "deadlines"]
OPTIONS = ["--key", "--title", "--body", "--tags", "--at", "--as-of", "--limit", "--version", "--due",
           "--reason", "--status", "--fields", "--format", "--since", "--kind", "--brief", "--all"]


@FUZZ
@given(command=st.sampled_from(COMMANDS), positional=st.lists(WORDS, max_size=2),
       options=st.lists(st.tuples(st.sampled_from(OPTIONS), WORDS), max_size=3),
       stdin=st.one_of(st.none(), NASTY),
       raw=st.one_of(st.none(), st.lists(st.one_of(st.sampled_from(OPTIONS), WORDS), max_size=6)))
def test_fuzz_cli_answers_only_documented_exit_codes(cli, command, positional, options, stdin, raw):
    args = [*positional, *(part for pair in options for part in pair)] if raw is None else raw
    res = cli(command, *args, input=stdin)
    assert res.code in EXIT_CODES, (command, args, res.code, res.stderr[-2000:])
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr, (command, args, res.stderr)
    if res.code != 0:
        assert res.stdout == "", (command, args, res.stdout[:500])


@pytest.fixture
def cli(store_path, monkeypatch):
    """In-process runner that keeps exceptions (an escaped exception is a failure, not exit 1)."""
    from click.testing import CliRunner

    from kyb_cli.cli.app import cli as kyb_cli

    monkeypatch.setenv("KYB_STORE", str(store_path))
    monkeypatch.setenv("KYB_BACKGROUND", "off")
    runner = CliRunner()

    def run(*args: str, input: str | None = None):
        res = runner.invoke(kyb_cli, list(args), input=input.encode("utf-8", "surrogatepass")
                            if input is not None else None, catch_exceptions=True)
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            raise res.exception
        return Ran(res.exit_code, res.stdout, res.stderr)

    return run


# -- MCP over stdio: raw frames to `kyb mcp` -----------------------------------------------------

JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), NASTY),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(NASTY, inner, max_size=4)),
    max_leaves=12)
TOOLS = ["query", "get", "history", "add", "rm", "incident", "resolve", "task", "tasks", "incidents",
         "log", "verify", "stale", "rules", "context", "nope"]


def _tool_call(n: int, name: str, arguments) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()


FRAMES = st.one_of(
    st.builds(lambda n, name, args: _tool_call(n, name, args), st.integers(1, 10**6), st.sampled_from(TOOLS),
              st.dictionaries(st.sampled_from(["key", "title", "body", "text", "tags", "limit", "at", "as_of",
                                               "reason", "status", "x"]), JSON_VALUES, max_size=4)),
    st.builds(lambda n, value: json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": value}).encode(),
              st.integers(1, 10**6), JSON_VALUES),
    st.builds(lambda value: json.dumps(value).encode(), JSON_VALUES),
    st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=60).map(
        lambda t: t.encode("utf-8", "surrogatepass")),
)


def _wants_reply(frame: bytes) -> bool:
    """A notification (an object with a method and no id) gets none, as JSON-RPC says; nor does a
    blank line (no frame at all)."""
    if not frame.strip(b" \t\r\n"):
        return False
    try:
        value = json.loads(frame.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return True
    return not (isinstance(value, dict) and "id" not in value and isinstance(value.get("method"), str)
                and value.get("jsonrpc") == "2.0")


@pytest.fixture(scope="module")
def mcp_client(tmp_path_factory):
    from kyb_cli.core.canon.repo import init_store
    from test_hostile_round_two_more import _RawMcp

    root = tmp_path_factory.mktemp("fuzz-mcp")
    init_store(root / "store")
    (root / "home").mkdir()
    client = _RawMcp(root / "store", root / "home")
    yield client
    assert "Traceback" not in client.close()


@FUZZ
@given(frame=FRAMES)
def test_fuzz_mcp_stdio_every_frame_gets_a_documented_reply(mcp_client, frame):
    if not _wants_reply(frame):
        mcp_client.send(frame)
        frame = b'{"jsonrpc":"2.0","id":0,"method":"ping"}'  # still alive, still answering in order
    reply = mcp_client.ask(frame, timeout=30)
    assert reply.get("jsonrpc") == "2.0", reply
    if "error" in reply:
        assert reply["error"]["code"] in (-32700, -32600, -32601, -32602), (frame[:200], reply)
    else:
        result = reply["result"]
        if isinstance(result, dict) and result.get("isError"):
            error = (result.get("structuredContent") or {}).get("error") or {}
            assert error.get("exit_code") in EXIT_CODES - {0}, (frame[:200], result)
    assert "Traceback" not in json.dumps(reply)


# -- HTTP against `kyb serve` --------------------------------------------------------------------

@pytest.fixture(scope="module")
def served(tmp_path_factory):
    pytest.importorskip("uvicorn")
    import subprocess
    import sys

    from tests.support.serve_proc import Served

    store = tmp_path_factory.mktemp("fuzz-http") / "store"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KYB_")}
    env["KYB_BACKGROUND"] = "off"
    assert subprocess.run([sys.executable, "-m", "kyb_cli", "init", str(store)], env=env,
                          capture_output=True).returncode == 0
    server = Served.start(store, env=env)
    yield server
    server.stop()


PATHS = st.sampled_from(["/search", "/knowledge/{}", "/knowledge/{}/history", "/knowledge/{}/diff", "/export",
                         "/tags", "/incidents", "/tasks", "/deadlines", "/healthz"])
QUERY_KEYS = st.sampled_from(["q", "at", "as_of", "limit", "kind", "tags", "format", "version", "min_strength", "x"])


def _quoted(text: str) -> str:
    from urllib.parse import quote

    return quote(text.encode("utf-8", "surrogatepass"), safe="")


@FUZZ
@given(path=PATHS, key=WORDS, query=st.dictionaries(QUERY_KEYS, WORDS, max_size=3))
def test_fuzz_http_get_answers_2xx_or_4xx_never_a_traceback(served, path, key, query):
    url = path.format(_quoted(key) or "k")
    if query:
        url += "?" + "&".join(f"{k}={_quoted(v)}" for k, v in query.items())
    reply = served.get(url)
    assert 200 <= reply.status < 500, (url, reply.status, reply.raw[:500])
    assert b"Traceback" not in reply.raw


BODIES = st.one_of(JSON_VALUES.map(lambda v: json.dumps(v).encode()),
                   st.dictionaries(st.sampled_from(["key", "title", "body", "tags", "refs", "service", "severity",
                                                    "status", "due", "reason", "at", "x"]), JSON_VALUES, max_size=5)
                   .map(lambda v: json.dumps(v).encode()),
                   st.binary(max_size=80))


@FUZZ
@given(path=st.sampled_from(["/knowledge", "/incidents", "/tasks", "/tasks/{}/transition", "/incidents/{}/resolve",
                             "/tasks/{}/resolve"]), key=WORDS, body=BODIES)
def test_fuzz_http_post_answers_2xx_or_4xx_never_a_traceback(served, path, key, body):
    url = path.format(_quoted(key) or "k")
    reply = served.request("POST", url, raw=body, headers={"Content-Type": "application/json"})
    assert 200 <= reply.status < 500, (url, body[:200], reply.status, reply.raw[:500])
    assert b"Traceback" not in reply.raw


# -- MCP over HTTP: the same frames as bodies to /mcp of `kyb serve`, in process --------------------

@pytest.fixture(scope="module")
def mcp_http(tmp_path_factory):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from kyb_cli import api
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    store = tmp_path_factory.mktemp("fuzz-mcp-http") / "store"
    api.init_store(store)
    app = build_app(Door(store), bind_host="127.0.0.1", port_of=lambda: 8765, token=None)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


@FUZZ
@given(frame=FRAMES)
def test_fuzz_mcp_http_every_body_gets_a_json_rpc_reply_or_a_4xx_refusal(mcp_http, frame):
    reply = mcp_http.post("/mcp", content=frame, headers={
        "host": "127.0.0.1:8765", "content-type": "application/json", "accept": "application/json, text/event-stream"})
    assert reply.status_code < 500 and "Traceback" not in reply.text, (frame[:200], reply.status_code, reply.text[:500])
    if reply.status_code == 202:  # a well-formed notification: accepted, nothing to answer (JSON-RPC)
        assert not _wants_reply(frame), frame[:200]
        return
    body = reply.json()
    if "jsonrpc" not in body:
        assert 400 <= reply.status_code < 500 and body["exit_code"] in EXIT_CODES - {0} and body["kind"], body
    elif "error" in body:
        assert body["error"]["code"] in (-32700, -32600, -32601, -32602), (frame[:200], body)
    elif isinstance(body["result"], dict) and body["result"].get("isError"):
        error = (body["result"].get("structuredContent") or {}).get("error") or {}
        assert error.get("exit_code") in EXIT_CODES - {0}, (frame[:200], body)
