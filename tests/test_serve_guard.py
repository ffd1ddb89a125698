"""The rules of `kyb serve` that keep a local store local: Host (DNS rebinding), Origin (browser
writes), the bearer token beyond loopback, read-only mode, the body limit, a clean stop."""

from __future__ import annotations

import signal

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("mcp.server.mcpserver")

from tests.support.serve_proc import Served  # noqa: E402
from tests.test_serve_http import world  # noqa: E402


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from kyb_cli.api import init_store

    root = tmp_path_factory.mktemp("guard")
    init_store(root / "store")
    server = Served.start(root / "store", env=world(root))
    yield server
    server.stop()


@pytest.mark.parametrize("host, ok", [
    ("localhost:{port}", True), ("127.0.0.1:{port}", True), ("localhost", True),
    ("evil.example:{port}", False), ("localhost.evil.example:{port}", False), ("localhost:1", False),
    ("10.0.0.8:{port}", False), ("", False),
])
def test_host_must_name_this_server(served, host, ok):
    """DNS rebinding: a page on another name that resolves to 127.0.0.1 is refused (421)."""
    reply = served.get("/healthz", host=host.format(port=served.port))
    assert (reply.status == 200) is ok, reply.raw
    if not ok:
        assert reply.status == 421 and "Host" in reply.json["error"]


def test_browser_writes_only_from_the_consoles_own_origin(served):
    own = f"http://localhost:{served.port}"
    fact = {"key": "origin-fact", "title": "Origin", "body": "b"}
    assert served.post("/knowledge", fact, headers={"Origin": own, "Sec-Fetch-Site": "same-origin"}).status == 200
    for headers in ({"Origin": "http://evil.example"}, {"Origin": f"http://127.0.0.1:{served.port}"},
                    {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}):
        reply = served.post("/knowledge", fact, headers=headers)
        assert reply.status == 403 and "origin" in reply.json["error"], headers
    assert served.post("/mcp", {}, headers={"Origin": "http://evil.example"}).status == 403
    # reads carry no side effect (and no CORS header lets another page read them)
    read = served.get("/knowledge/origin-fact", headers={"Origin": "http://evil.example"})
    assert read.status == 200 and "access-control-allow-origin" not in read.headers
    assert served.post("/knowledge", fact).status == 200  # no Origin at all: not a browser (curl, scripts)


def test_body_over_the_limit_is_413_with_or_without_content_length(served):
    big = {"key": "big", "title": "Big", "body": "x" * (5 * 1024 * 1024)}
    assert served.post("/knowledge", big).status == 413
    reply = served.post("/knowledge", big, chunked=True)
    assert reply.status == 413 and "MiB" in reply.json["error"]
    over_record = served.post("/knowledge", {"key": "big", "title": "Big", "body": "x" * (1024 * 1024 + 10)})
    assert over_record.status == 422  # under the body limit, over the record limit: the core's rule


def test_console_and_api_answers_carry_protective_headers(served):
    page = served.get("/")
    assert page.status == 200 and page.headers["content-type"].startswith("text/html")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    assert served.get("/static/../../README.md").status == 404


def test_token_is_required_when_set_and_the_console_shell_stays_open(tmp_path):
    from kyb_cli.api import init_store

    init_store(tmp_path / "store")
    env = world(tmp_path)
    env["KYB_SERVE_TOKEN"] = "s3cret-token"
    server = Served.start(tmp_path / "store", env=env)
    try:
        assert not any("s3cret-token" in line for line in server.lines)  # a given token is never printed
        refused = server.get("/healthz")
        assert refused.status == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert server.get("/healthz", headers={"Authorization": "Bearer wrong"}).status == 401
        assert server.get("/healthz", headers={"Authorization": "Bearer s3cret-token"}).status == 200
        assert server.post("/mcp", {}).status == 401
        assert server.get("/").status == 200 and server.get("/static/js/app.js").status == 200
    finally:
        server.stop()


def test_beyond_loopback_a_token_is_generated_and_printed_once(tmp_path):
    from kyb_cli.api import init_store

    init_store(tmp_path / "store")
    server = Served.start(tmp_path / "store", "--host", "0.0.0.0", env=world(tmp_path))
    try:
        said = [line for line in server.lines if "Bearer" in line]
        assert len(said) == 1
        token = said[0].rsplit(" ", 1)[-1]
        assert len(token) >= 24
        assert server.get("/healthz").status == 401
        ok = server.get("/healthz", headers={"Authorization": f"Bearer {token}"})
        assert ok.status == 200 and ok.json["capabilities"]["token_required"] is True
    finally:
        server.stop()


def test_readonly_refuses_every_write_route_and_still_reads(tmp_path):
    from kyb_cli.api import init_store
    from kyb_cli.serve.routes import ROUTES

    import subprocess

    init_store(tmp_path / "store")

    def commits():
        return subprocess.run(["git", "-C", str(tmp_path / "store"), "rev-list", "--all"], capture_output=True,
                              text=True).stdout

    before = commits()
    server = Served.start(tmp_path / "store", "--readonly", env=world(tmp_path))
    try:
        for route in (r for r in ROUTES if r.write):
            path = route.path.replace("{key}", "task-x")
            reply = server.request(route.method, path, {} if route.method == "POST" else None)
            assert reply.status == 403 and "read-only" in reply.json["error"], route.path
        health = server.get("/healthz").json
        assert health["capabilities"]["readonly"] is True and health["capabilities"]["write"] is False
        assert server.get("/search?q=x").status == 200
        assert commits() == before  # nothing was written
    finally:
        server.stop()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_server_cleanly(tmp_path, sig):
    from kyb_cli.api import init_store

    init_store(tmp_path / "store")
    server = Served.start(tmp_path / "store", env=world(tmp_path))
    assert server.get("/healthz").status == 200
    assert server.stop(sig) == 0
    assert server.lines[-1] == "kyb: stopped"
    assert not any("Traceback" in line for line in server.lines)


def test_a_port_in_use_is_a_one_line_usage_error(tmp_path):
    """Processes: a second server on a bound port, and its exit code on a real pipe."""
    import socket
    import subprocess
    import sys

    from kyb_cli.api import init_store

    init_store(tmp_path / "store")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "kyb_cli", "--store", str(tmp_path / "store"), "serve",
                               "--port", str(port)], capture_output=True, text=True, env=world(tmp_path), timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == f"kyb: port {port} on 127.0.0.1 is in use (another kyb serve?); pick one with --port"


def test_open_hands_the_console_url_to_the_browser(tmp_path):
    """`--open`: the system's browser gets the console URL once the server listens (BROWSER is how
    Python's webbrowser module is told which program that is)."""
    import time

    from kyb_cli.api import init_store

    init_store(tmp_path / "store")
    seen = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {seen}\n')
    browser.chmod(0o755)
    env = world(tmp_path)
    env["BROWSER"] = str(browser)
    server = Served.start(tmp_path / "store", "--open", env=env)
    try:
        deadline = time.time() + 10
        while time.time() < deadline and not seen.exists():
            time.sleep(0.05)
        assert seen.read_text().strip() == f"http://127.0.0.1:{server.port}/"
    finally:
        server.stop()
