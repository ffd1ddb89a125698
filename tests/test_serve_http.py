"""`kyb serve` as a user runs it: a real server process on a free port, checked over plain HTTP.

Every route answers the CLI's JSON for the same question; every KybError maps to its status
(exit 1 -> 404, 2 -> 400, 3 -> 422, 4 -> 503, 5 -> 502); writes are commits with transport `http`;
CLI and server see each other's writes at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("mcp.server.mcpserver")

from tests.support.serve_proc import Served  # noqa: E402


def world(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KYB_")}
    env.update({"XDG_CONFIG_HOME": str(root / "config"), "XDG_DATA_HOME": str(root / "data"),
                "XDG_CACHE_HOME": str(root / "cache"), "KYB_DEADLINES": "off", "KYB_AGENT": "cli-agent",
                "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"})
    return env


class Cli:
    def __init__(self, store: Path, env: dict[str, str]):
        self.store, self.env = store, env

    def __call__(self, *args: str, input: str = "", env: dict[str, str] | None = None):
        """`kyb ARGS` in this process, as a child would run it (the server is the other process)."""
        from tests.support.inprocess import run_inprocess

        full = dict(self.env, KYB_STORE=str(self.store), **(env or {}))
        code, out, err = run_inprocess(args, full, input=input)
        return subprocess.CompletedProcess(["kyb", *args], code, out, err)

    def json(self, *args: str, input: str = ""):
        proc = self(*args, input=input)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout) if proc.stdout.strip() else None


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve")
    env = world(root)
    store = root / "store"
    cli = Cli(store, env)
    assert cli("init", str(store)).returncode == 0
    cli.json("add", "--key", "checkout-path", "--title", "Checkout path", "--tags", "infra,checkout",
             "--body", "Checkout goes through node-3 port 8080.")
    cli.json("add", "--key", "checkout-path", "--title", "Checkout path", "--tags", "infra,checkout",
             "--body", "Checkout goes through node-3 port 9090.")
    cli.json("task", "--key", "task-renew-cert", "--title", "Renew cert", "--priority", "high",
             "--assignee", "ops", "--due", "2026-01-01", "--hard", input="Renew the wildcard cert.")
    cli.json("incident", "--key", "inc-2026-07-22-orders-oom", "--title", "orders OOM", "--service", "orders",
             "--severity", "high", input="Symptom: OOM.")
    server = Served.start(store, env=env)
    yield server, cli
    server.stop()


@pytest.fixture
def served(setup):
    return setup[0]


@pytest.fixture
def cli(setup):
    return setup[1]


def test_healthz_reports_version_head_counts_and_capabilities(served, cli):
    data = served.get("/healthz").json
    assert data["ok"] is True
    head = subprocess.run(["git", "-C", str(served.store_path), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert data["head"]["sha"] == head and data["head"]["committed_at"]
    assert data["counts"]["task"] >= 1 and data["counts"]["incident"] >= 1 and data["counts"]["knowledge"] >= 1
    assert data["history_complete"] is True and "pending_vectors" in data
    assert data["capabilities"]["write"] is True and data["capabilities"]["readonly"] is False
    from kyb_cli import __version__

    assert data["version"] == __version__


@pytest.mark.parametrize("path, args", [
    ("/knowledge/checkout-path", ["get", "checkout-path"]),
    ("/knowledge/checkout-path/history", ["history", "checkout-path"]),
    ("/knowledge/checkout-path?version=1", ["get", "checkout-path", "--version", "1"]),
    ("/knowledge/checkout-path/diff", ["diff", "checkout-path"]),
    ("/knowledge/checkout-path/diff?from=HEAD~3&to=HEAD~3", ["diff", "checkout-path", "HEAD~3", "HEAD~3"]),
    ("/search?q=checkout&semantic=false", ["query", "checkout", "--no-semantic"]),
    ("/search?q=port&history=true&semantic=false", ["query", "port", "--history", "--no-semantic"]),
    ("/search?q=port&as_of=2999-01-01&semantic=false", ["query", "port", "--as-of", "2999-01-01", "--no-semantic"]),
    ("/search?q=port&changed_between=2000-01-01,2999-01-01&semantic=false",
     ["query", "port", "--changed-between", "2000-01-01", "2999-01-01", "--no-semantic"]),
    ("/search?q=&tags=infra&kind=knowledge&limit=5", ["query", "--tag", "infra", "--kind", "knowledge", "--limit", "5"]),
    ("/tags", ["tags"]),
    ("/tasks?all=true", ["tasks", "--all"]),
    ("/tasks?priority=high&assignee=ops", ["tasks", "--priority", "high", "--assignee", "ops"]),
    ("/incidents?all=true", ["incidents", "--all"]),
    ("/deadlines?today=2026-01-05", ["deadlines", "--today", "2026-01-05"]),
])
def test_read_routes_answer_the_cli_json(served, cli, path, args):
    reply = served.get(path)
    assert reply.status == 200, reply.raw
    assert reply.headers["content-type"].startswith("application/json")
    assert reply.json == cli.json(*args)


@pytest.mark.parametrize("fmt, media", [("jsonl", "application/x-ndjson"), ("json", "application/json"),
                                        ("csv", "text/csv")])
def test_export_route_sends_the_cli_bytes(served, cli, fmt, media):
    reply = served.get(f"/export?format={fmt}")
    assert reply.status == 200 and reply.headers["content-type"].startswith(media)
    assert reply.text == cli("export", "--format", fmt).stdout
    assert served.get("/export").text == cli("export").stdout  # jsonl by default, as on the CLI


def test_writes_are_commits_with_transport_http_and_the_callers_labels(served, cli):
    reply = served.post("/knowledge", {"key": "http-fact", "title": "From HTTP", "body": "written over http",
                                       "tags": ["web"]}, headers={"X-Kyb-Agent": "dash-bot", "X-Kyb-Session": "s-1"})
    assert reply.status == 200 and reply.json["action"] == "created"
    row = cli.json("history", "http-fact")["versions"][0]
    assert (row["transport"], row["agent"], row["session"], row["sha"]) == ("http", "dash-bot", "s-1", reply.json["sha"])
    plain = served.post("/knowledge", {"key": "http-fact", "title": "From HTTP", "body": "again", "tags": "web,x"})
    # no label: the server's own KYB_AGENT (this module's server runs with KYB_AGENT=cli-agent)
    assert cli.json("history", "http-fact")["versions"][0]["agent"] == "cli-agent"
    assert cli.json("get", "http-fact")["tags"] == ["web", "x"] and plain.json["action"] == "updated"


def test_cli_writes_are_visible_to_the_server_at_once_and_back(served, cli):
    for n in range(3):
        cli.json("add", "--key", "ping-pong", "--title", f"round {n}", "--body", f"cli {n}")
        assert served.get("/knowledge/ping-pong").json["title"] == f"round {n}"
        assert served.get("/search?q=round&semantic=false").json["hits"][0]["title"] == f"round {n}"
        served.post("/knowledge", {"key": "ping-pong", "title": f"http {n}", "body": f"http {n}"})
        assert cli.json("get", "ping-pong")["title"] == f"http {n}"


def test_retract_route_needs_a_reason_and_records_it(served, cli):
    cli.json("add", "--key", "wrong-fact", "--title", "Wrong", "--body", "the sky is green")
    missing = served.request("DELETE", "/knowledge/wrong-fact")
    assert missing.status == 400 and "reason" in missing.json["error"]
    done = served.request("DELETE", "/knowledge/wrong-fact?reason=it%20is%20blue")
    assert done.status == 200 and done.json["action"] == "retracted"
    gone = served.get("/knowledge/wrong-fact")
    assert gone.status == 404 and "it is blue" in gone.json["error"]
    assert cli("get", "wrong-fact").stderr.strip() == f"kyb: {gone.json['error']}"


def test_task_routes_open_move_and_close_a_task(served, cli):
    opened = served.post("/tasks", {"key": "task-http", "title": "Via HTTP", "body": "b", "due": "2026-03-01",
                                    "priority": "low", "tags": ["web"]})
    assert opened.status == 200 and opened.json["action"] == "created"
    moved = served.post("/tasks", {"key": "task-http", "title": "Via HTTP", "body": "b", "due": "2026-04-01"})
    assert moved.status == 200
    got = cli.json("get", "task-http")
    assert (got["due"], got["tags"]) == ("2026-04-01", ["web"])  # omitted tags are kept, as with `kyb task`
    step = served.post("/tasks/task-http/transition", {"status": "in_progress", "assignee": "me"})
    assert step.status == 200 and cli.json("get", "task-http")["status"] == "in_progress"
    refused = served.post("/tasks/task-http/resolve", {"status": "done"})
    assert refused.status == 422  # a resolution is required, as `kyb done` requires it
    closed = served.post("/tasks/task-http/resolve", {"status": "done", "resolution": "shipped"})
    assert closed.status == 200 and closed.json.get("archive_sha")
    assert cli.json("get", "task-http")["state"] == "archived"


def test_incident_routes_write_and_resolve(served, cli):
    wrote = served.post("/incidents", {"key": "inc-2026-08-01-db-slow", "title": "DB slow", "service": "db",
                                       "severity": "medium", "body": "Symptom: slow.", "hosts": ["db-1"]})
    assert wrote.status == 200 and "hints" in wrote.json
    listed = served.get("/incidents?status=open").json["incidents"]
    assert "inc-2026-08-01-db-slow" in [r["key"] for r in listed]
    fixed = served.post("/incidents/inc-2026-08-01-db-slow/resolve", {"resolution": "index added"})
    assert fixed.status == 200
    assert cli.json("get", "inc-2026-08-01-db-slow")["state"] == "archived"


@pytest.mark.parametrize("method, path, body, status", [
    ("GET", "/knowledge/no-such-key", None, 404),
    ("GET", "/knowledge/checkout-path?at=no-such-rev", None, 404),
    ("GET", "/knowledge/no-such-key/history", None, 404),
    ("GET", "/knowledge/checkout-path?version=9", None, 404),
    ("GET", "/knowledge/no-such-key/diff", None, 404),
    ("GET", "/search?histroy=true", None, 400),
    ("GET", "/search?limit=101", None, 400),
    ("GET", "/search?limit=ten", None, 400),
    ("GET", "/search?history=true&as_of=2026-01-01", None, 400),
    ("GET", "/search?kind=thing", None, 400),
    ("GET", "/tasks?status=finished", None, 400),
    ("GET", "/tasks?limit=201", None, 400),
    ("GET", "/incidents?limit=201", None, 400),
    ("GET", "/deadlines?today=tomorrow", None, 400),
    ("POST", "/knowledge", {"title": "no key"}, 400),
    ("POST", "/knowledge", {"key": "k", "title": "t", "colour": "red"}, 400),
    ("POST", "/knowledge", {"key": "k", "title": "t", "tags": 5}, 400),
    ("POST", "/knowledge", {"key": "Bad Key", "title": "t"}, 422),
    ("POST", "/knowledge", {"key": "ok-key", "title": ""}, 422),
    ("POST", "/knowledge", {"key": "leak", "title": "t", "body": "password: hunter2hunter2"}, 422),
    ("POST", "/tasks/task-renew-cert/resolve", {"status": "in_progress"}, 422),
    ("POST", "/tasks/task-nope/transition", {"status": "open"}, 404),
    ("DELETE", "/knowledge/never-was?reason=x", None, 404),
    ("GET", "/nope", None, 404),
    ("PUT", "/knowledge", {"key": "k"}, 405),
])
def test_errors_carry_the_cli_message_and_the_status_of_its_exit_code(served, method, path, body, status):
    reply = served.request(method, path, body)
    assert reply.status == status, reply.raw
    data = reply.json
    assert isinstance(data["error"], str) and data["error"]
    from kyb_cli.serve.refusal import REFUSALS

    if status == 405:  # the router's refusal: a usage error with its own status
        assert (data["exit_code"], data["kind"]) == REFUSALS[405]
    else:
        assert {1: 404, 2: 400, 3: 422, 4: 503, 5: 502}[data["exit_code"]] == status


def test_an_error_reads_exactly_as_the_cli_says_it(served, cli):
    reply = served.post("/knowledge", {"key": "Bad Key", "title": "t"})
    line = cli("add", "--key", "Bad Key", "--title", "t", "--body", "").stderr.strip()
    assert f"kyb: {reply.json['error']}" == line and reply.json["exit_code"] == 3


def test_a_body_that_is_not_json_is_a_usage_error(served):
    reply = served.request("POST", "/knowledge", raw=b"key=k&title=t",
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert reply.status == 400 and "application/json" in reply.json["error"]
    broken = served.request("POST", "/knowledge", raw=b"{not json", headers={"Content-Type": "application/json"})
    assert broken.status == 400


def test_store_error_is_503_when_the_writer_lock_is_held(tmp_path):
    """Exit 4 (locked past the wait) -> 503, with the CLI's message."""
    from kyb_cli.api import init_store

    store = tmp_path / "store"
    init_store(store)
    env = world(tmp_path)
    env["KYB_LOCK_TIMEOUT"] = "0.3"
    server = Served.start(store, env=env)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys,time;from kyb_cli.core.canon import lock;from pathlib import Path\n"
        f"with lock.exclusive(Path({str(store / '.git' / 'kyb' / 'write.lock')!r}), timeout=5):\n"
        "    print('held', flush=True); time.sleep(20)")], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "held"
        reply = server.post("/knowledge", {"key": "k", "title": "t", "body": "b"})
        assert reply.status == 503 and reply.json["exit_code"] == 4, reply.raw
    finally:
        holder.kill()
        server.stop()


def test_every_exit_code_has_its_status():
    from kyb_cli import api as errors
    from kyb_cli.serve.app import error_response

    for cls, status in ((errors.NotFound, 404), (errors.UsageError, 400), (errors.Rejected, 422),
                        (errors.StoreError, 503), (errors.RemoteError, 502)):
        reply = error_response(cls("why"))
        assert reply.status_code == status
        assert json.loads(reply.body) == {"error": "why", "exit_code": cls.exit_code, "kind": cls.kind}


def test_openapi_documents_every_route_the_server_answers(served):
    from kyb_cli.serve.routes import ROUTES

    schema = served.get("/openapi.json").json
    assert schema["openapi"].startswith("3.")
    documented = {(m.upper(), p) for p, ops in schema["paths"].items() for m in ops}
    assert {(r.method, r.path) for r in ROUTES} <= documented
    search = {p["name"] for p in schema["paths"]["/search"]["get"]["parameters"]}
    assert {"q", "limit", "tags", "kind", "history", "as_of", "changed_between", "semantic"} <= search
    assert schema["paths"]["/knowledge"]["post"]["requestBody"]["content"]["application/json"]["schema"][
        "required"] == ["key", "title"]


def test_audit_line_per_request_without_the_body(served):
    secret_body = "audit-must-not-see-this-body"
    served.post("/knowledge", {"key": "audited", "title": "Audited", "body": secret_body},
                headers={"X-Kyb-Agent": "auditor"})
    served.get("/search?q=audit-must-not-see-this-query")
    audit = served.store_path / ".git" / "kyb" / "audit.jsonl"
    deadline = time.monotonic() + 10  # the line is written once the answer is sent: the client can read first
    while '"/search"' not in audit.read_text() and time.monotonic() < deadline:
        time.sleep(0.02)
    lines = audit.read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    post = [r for r in rows if r["method"] == "POST" and r["path"] == "/knowledge" and r["agent"] == "auditor"][-1]
    assert set(post) == {"ts", "method", "path", "status", "ms", "agent"} and post["status"] == 200
    assert any(r["path"] == "/search" for r in rows)
    text = "\n".join(lines)
    assert secret_body not in text and "must-not-see-this-query" not in text

