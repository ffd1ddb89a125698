"""Issue 40, receipts: the read log beside the index, `kyb reads`, and "changed since you read it",
through the CLI (in-process) and the MCP door (its client, in memory)."""

from __future__ import annotations

import json

import anyio
import pytest

from kyb_cli import api

KEY = "checkout-path"


@pytest.fixture
def env(monkeypatch):
    monkeypatch.setenv("KYB_BACKGROUND", "off")
    monkeypatch.delenv("KYB_READS", raising=False)
    monkeypatch.delenv("KYB_SESSION", raising=False)
    return {"KYB_AGENT": "agent-a"}


def _add(kyb, body: str, *more: str) -> str:
    res = kyb("add", "--key", KEY, "--title", "Checkout path", "--body", body, *more, env={"KYB_AGENT": "writer"})
    assert res.code == 0, res.stderr
    return res.json["sha"]


def _as(kyb, agent: str, *args: str, **extra: str):
    res = kyb(*args, "--json", env={"KYB_AGENT": agent, **extra})
    assert res.code == 0, res.stderr
    return res.json


def test_reads_are_logged_with_who_which_version_and_how(kyb, store_path, env):
    sha = _add(kyb, "port 9090")
    _as(kyb, "agent-a", "get", KEY)
    _as(kyb, "agent-a", "query", "checkout", "--no-semantic")
    _as(kyb, "agent-b", "history", KEY)
    _as(kyb, "agent-b", "query", "checkout", "--as-of", "2999-01-01", "--no-semantic")
    answer = _as(kyb, "agent-a", "reads", KEY)
    assert answer["key"] == KEY
    rows = answer["reads"]
    assert [(r["agent"], r["mode"], r["sha"]) for r in rows] == [
        ("agent-b", "as_of", sha), ("agent-b", "history", sha), ("agent-a", "current", sha), ("agent-a", "get", sha)]
    assert set(rows[0]) == {"at", "agent", "session", "workspace", "transport", "sha", "mode"}
    assert rows[0]["transport"] == "cli"
    assert answer["agents"] == {"agent-a": 2, "agent-b": 2}
    assert [r["mode"] for r in _as(kyb, "x", "reads", KEY, "--agent", "agent-a")["reads"]] == ["current", "get"]
    everyone = _as(kyb, "x", "reads", "--agent", "agent-b", "--since", "2000-01-01")
    assert [(r["key"], r["mode"]) for r in everyone["reads"]] == [(KEY, "as_of"), (KEY, "history")]
    assert everyone["agents"] == {"agent-b": 2} and "key" not in everyone
    # the log is beside the index, never a file of the canon
    assert (store_path / ".git" / "kyb" / "reads.sqlite").exists()
    assert "reads.sqlite" not in kyb("export", "--json").stdout


def test_the_warning_is_for_the_agent_that_read_the_old_version_and_clears_once_read(kyb, env):
    old = _add(kyb, "port 9090")
    _as(kyb, "agent-a", "get", KEY)
    new = _add(kyb, "port 9443 on node-4")
    seen = _as(kyb, "agent-a", "get", KEY)
    warning = seen["changed_since_your_read"]
    assert warning["read_sha"] == old and warning["current_sha"] == new and warning["read_at"]
    assert "changed_since_your_read" not in _as(kyb, "agent-a", "get", KEY)  # read now: gone
    assert "changed_since_your_read" not in _as(kyb, "agent-b", "get", KEY)  # never read it: no warning
    _add(kyb, "port 9444")
    hit = _as(kyb, "agent-b", "query", "checkout", "--no-semantic")["hits"][0]
    assert hit["changed_since_your_read"]["read_sha"] == new
    # a look at the past after reading the current version warns of nothing
    _as(kyb, "agent-c", "get", KEY)
    _as(kyb, "agent-c", "get", KEY, "--version", "1")
    assert "changed_since_your_read" not in _as(kyb, "agent-c", "query", "checkout", "--no-semantic")["hits"][0]
    # a session label narrows it: the same agent in another session read nothing yet
    assert "changed_since_your_read" not in _as(kyb, "agent-a", "get", KEY, KYB_SESSION="s2")


def test_context_lists_what_changed_since_the_agent_read_it(kyb, env):
    _add(kyb, "port 9090")
    _as(kyb, "agent-a", "get", KEY)
    _add(kyb, "port 9443 on node-4")
    digest = _as(kyb, "agent-a", "context")
    [item] = digest["digest"]["changed_since_read"]
    assert item["key"] == KEY and item["body"].startswith("-1 +1 lines: port 9443") and item["fields"] == ["body"]
    _add(kyb, "port 9443 on node-4", "--tags", "infra")  # the front matter alone: not a body change
    [item] = _as(kyb, "agent-a", "context")["digest"]["changed_since_read"]
    assert item["fields"] == ["tags"] and item["body"] == "unchanged"
    text = digest["text"]  # inside the records fence: what a record says is reference data, not instructions
    assert text.index("<kyb-records>") < text.index("Changed since you read them") < text.rindex("</kyb-records>")
    assert _as(kyb, "agent-b", "context")["digest"]["changed_since_read"] == []


def test_reads_off_logs_nothing(kyb, store_path, env):
    _add(kyb, "port 9090")
    _as(kyb, "agent-a", "get", KEY, KYB_READS="off")
    _as(kyb, "agent-a", "query", "nothing-like-this", KYB_READS="off")
    assert not (store_path / ".git" / "kyb" / "reads.sqlite").exists()
    assert _as(kyb, "agent-a", "reads", KEY)["reads"] == []


def test_a_reindex_keeps_the_reads(kyb, env):
    _add(kyb, "port 9090")
    _as(kyb, "agent-a", "get", KEY)
    assert kyb("reindex", "--json").code == 0
    assert [r["agent"] for r in _as(kyb, "x", "reads", KEY)["reads"]] == ["agent-a"]


def test_a_clone_starts_with_no_reads(kyb, store_path, tmp_path, env):
    _add(kyb, "port 9090")
    _as(kyb, "agent-a", "get", KEY)
    other = tmp_path / "clone"
    api.clone(str(store_path), other)
    res = kyb("reads", KEY, "--json", "--store", str(other))
    assert res.code == 0, res.stderr
    assert res.json["reads"] == []
    assert not (other / ".git" / "kyb" / "reads.sqlite").exists()


def test_misses_and_unread_since(kyb, env):
    _add(kyb, "port 9090")
    _as(kyb, "agent-a", "query", "zebra migration plan ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "--no-semantic")
    [miss] = _as(kyb, "agent-a", "reads", "--misses")["misses"]
    assert miss["agent"] == "agent-a" and miss["text"].startswith("zebra migration plan")
    assert "A1b2" not in miss["text"] and miss["text"].endswith("<not shown>")  # cut out before it is logged
    assert [r["key"] for r in _as(kyb, "x", "reads", "--unread-since", "2000-01-01")["unread"]] == [KEY]
    _as(kyb, "agent-a", "get", KEY)
    assert [r["key"] for r in _as(kyb, "x", "reads", "--unread-since", "2000-01-01")["unread"]] == []
    assert [r["key"] for r in _as(kyb, "x", "reads", "--unread-since", "2999-01-01")["unread"]] == [KEY]


def test_the_mcp_door_logs_warns_lists_and_switches_off_the_same_way(store_path, monkeypatch, kyb, env):
    pytest.importorskip("mcp")
    from mcp import Client

    from kyb_cli.mcp.server import build_server

    old = _add(kyb, "port 9090")
    monkeypatch.setenv("KYB_AGENT", "mcp-agent")
    found: dict[str, dict] = {}

    async def session():
        async with Client(build_server(str(store_path))) as client:
            async def call(name: str, **arguments):
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content[0].text
                return result.structured_content

            await call("get", key=KEY)
            found["new"] = {"sha": _add(kyb, "port 9443")}
            found["warned"] = await call("get", key=KEY)
            found["again"] = await call("get", key=KEY)
            _add(kyb, "port 9444 on node-5")
            found["context"] = await call("context")
            found["other"] = await call("query", text="checkout", semantic=False)  # read by context: no warning
            found["reads"] = await call("reads", key=KEY)
            monkeypatch.setenv("KYB_READS", "off")
            await call("get", key=KEY)
            monkeypatch.delenv("KYB_READS")
            found["after_off"] = await call("reads", key=KEY)

    anyio.run(session)
    warning = found["warned"]["changed_since_your_read"]
    assert (warning["read_sha"], warning["current_sha"]) == (old, found["new"]["sha"])
    assert "changed_since_your_read" not in found["again"]  # read now: gone
    [item] = found["context"]["digest"]["changed_since_read"]
    assert item["key"] == KEY and item["read_sha"] == found["new"]["sha"] and "port 9444" in item["body"]
    assert "changed_since_your_read" not in found["other"]["hits"][0]
    rows = found["reads"]["reads"]
    assert [(r["agent"], r["transport"], r["mode"]) for r in rows] == [
        ("mcp-agent", "mcp", "current"), ("mcp-agent", "mcp", "context"), ("mcp-agent", "mcp", "get"),
        ("mcp-agent", "mcp", "get"), ("mcp-agent", "mcp", "get")]
    assert found["after_off"]["count"] == found["reads"]["count"]  # KYB_READS=off logged nothing
    assert json.dumps(found["reads"])  # plain JSON


def test_the_http_door_logs_and_answers_reads_as_the_console_asks(store_path, monkeypatch, kyb, env):
    pytest.importorskip("starlette")
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door
    from tests.support.asgi_call import asgi_call

    sha = _add(kyb, "port 9090")
    monkeypatch.setenv("KYB_AGENT", "http-agent")
    app = build_app(Door(store_path), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    assert asgi_call(app, "GET", f"/knowledge/{KEY}")[0] == 200
    assert asgi_call(app, "GET", f"/knowledge/{KEY}/history")[0] == 200
    status, answer = asgi_call(app, "GET", "/reads", query=f"key={KEY}&limit=5")  # the console's last readers
    assert status == 200, answer
    assert [(r["agent"], r["transport"], r["mode"], r["sha"]) for r in answer["reads"]] == [
        ("http-agent", "http", "history", sha), ("http-agent", "http", "get", sha)]


def test_recall_and_the_prompt_hook_log_what_they_showed(kyb, env):
    from tests.test_recall import ON_TOPIC, RECORDS, hook_input

    for key, title, body in RECORDS:
        assert kyb("add", "--key", key, "--title", title, "--body", body).code == 0
    assert kyb("query", "warm").code == 0
    _as(kyb, "agent-a", "recall", ON_TOPIC)
    res = kyb("recall", "--hook-json", input=hook_input(ON_TOPIC, session="hook-s1"), env={"KYB_AGENT": "agent-h", "KYB_RECALL_BUDGET_MS": "30000"})
    assert res.code == 0 and "checkout-port" in res.stdout, res.stderr
    rows = _as(kyb, "x", "reads", "checkout-port")["reads"]
    assert [(r["agent"], r["session"], r["transport"], r["mode"]) for r in rows] == [
        ("agent-h", "hook-s1", "hook", "current"), ("agent-a", "", "cli", "current")]
    misses = [m["text"] for m in _as(kyb, "x", "reads", "--misses")["misses"]]
    assert misses == ["warm"]  # the query that found nothing; a prompt is never logged as a miss


def test_threads_of_one_server_log_every_read(kyb, store_path, env):
    """A server answers on worker threads: each has its own connection to the log, none loses a read."""
    import threading

    from kyb_cli.api import attribution, handle

    _add(kyb, "port 9090")

    class Door:
        def __init__(self, agent: str) -> None:
            self.agent = agent

        @staticmethod
        def path():
            return store_path

        def attribution(self):
            return attribution("http", environ={"KYB_AGENT": self.agent, "KYB_WORKSPACE": "w"})

    def reader(n: int) -> None:
        for _ in range(15):
            handle("get", Door(f"t{n}"), {"key": KEY, "at": None, "version": None})

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _as(kyb, "x", "reads", KEY, "--limit", "100")["agents"] == {f"t{n}": 15 for n in range(4)}


def test_the_log_is_bounded_by_age_and_rows(kyb, store_path, monkeypatch, env):
    import time

    from kyb_cli.core.index import receipts

    monkeypatch.setattr(receipts, "PRUNE_EVERY", 8)
    monkeypatch.setattr(receipts, "MAX_ROWS", 20)
    who = ("a", "", "w", "cli")
    receipts.record(store_path, who, [("old-key", "s0", "get")])
    conn = receipts._conn(store_path, create=False)
    with conn:  # a read from long ago
        conn.execute("UPDATE reads SET at = ?", (time.time() - (receipts.KEEP_DAYS + 1) * 86400,))
    for n in range(40):
        receipts.record(store_path, who, [(f"k{n}", "s", "get")])
    keys = [k for (k,) in conn.execute("SELECT key FROM reads ORDER BY id")]
    assert "old-key" not in keys and len(keys) <= 20 + 8 and keys[-1] == "k39"


def test_a_label_that_looks_like_a_secret_is_withheld_when_shown(kyb, env):
    _add(kyb, "port 9090")
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    assert "changed_since_your_read" not in _as(kyb, token, "get", KEY)  # the answer is never refused for it
    answer = _as(kyb, "x", "reads", KEY)
    assert token not in json.dumps(answer)
    assert answer["reads"][0]["agent"].startswith("(withheld")


def test_the_config_key_turns_the_log_off(kyb, store_path, tmp_path, env):
    _add(kyb, "port 9090")
    config = tmp_path / "off.toml"
    config.write_text("[reads]\nlog = false\n")
    _as(kyb, "agent-a", "get", KEY, KYB_CONFIG=str(config))
    assert not (store_path / ".git" / "kyb" / "reads.sqlite").exists()
    _as(kyb, "agent-a", "get", KEY)
    assert (store_path / ".git" / "kyb" / "reads.sqlite").exists()


def test_a_running_door_sees_the_config_key_change_at_its_next_answer(kyb, store_path, tmp_path, monkeypatch, env):
    """Nothing kept warm is stale: `[reads] log = false` written while an MCP door is up stops the
    log at its next answer, and removing it starts it again (the config is not read once per process)."""
    pytest.importorskip("mcp")
    from mcp import Client

    from kyb_cli.mcp.server import build_server

    _add(kyb, "port 9090")
    config = tmp_path / "live.toml"
    config.write_text("[reads]\nlog = true\n")
    monkeypatch.setenv("KYB_CONFIG", str(config))
    monkeypatch.setenv("KYB_AGENT", "door-agent")
    counts: list[int] = []

    async def session():
        async with Client(build_server(str(store_path))) as client:
            async def reads() -> int:
                result = await client.call_tool("reads", {"key": KEY})
                return result.structured_content["count"]

            await client.call_tool("get", {"key": KEY})
            counts.append(await reads())
            config.write_text("[reads]\nlog = false\n# a longer file: another size\n")
            await client.call_tool("get", {"key": KEY})
            counts.append(await reads())
            config.write_text("")
            await client.call_tool("get", {"key": KEY})
            counts.append(await reads())

    anyio.run(session)
    assert counts[1] == counts[0] and counts[2] == counts[1] + 1, counts


def test_the_cached_newest_reads_answer_as_the_log_does(store_path, env):
    """record() keeps each key's newest read per connection (a door asked the same records again skips
    the look-up): its warnings are the general path's (changed_since without the cache), reads by
    other sessions and by another connection (another process) included."""
    import random
    import threading

    import apsw

    from kyb_cli.core.index import receipts

    receipts.record(store_path, ("a", "", "w", "cli"), [("k0", "s0", "get")])
    other = apsw.Connection(receipts.log_path(store_path))  # another process's connection to the same log
    other.set_busy_timeout(2000)
    rng = random.Random(7)
    for step in range(300):
        who = (rng.choice("ab"), rng.choice(["", "s1", "s2"]), "w", "cli")
        shown = [(f"k{k}", f"s{rng.randrange(3)}") for k in rng.sample(range(6), 3)]
        conn = receipts._conn(store_path, create=False)
        expected = receipts.changed_since(conn, who[0], who[1], shown)  # the file, no cache
        writer = rng.randrange(10)
        if writer == 0:  # another connection logs first: the cache must not answer for it
            with other:
                other.execute("INSERT INTO reads(at, agent, session, workspace, transport, key, sha, mode) "
                              "VALUES (?,?,?,?,?,?,?,?)", (float(step), *who, shown[0][0], "s9", "get"))
            expected = receipts.changed_since(conn, who[0], who[1], shown)
        elif writer == 1:  # another thread of this server (its own connection)
            t = threading.Thread(target=receipts.record, args=(store_path, who, [(shown[1][0], "s8", "get")]))
            t.start()
            t.join()
            expected = receipts.changed_since(conn, who[0], who[1], shown)
        got = receipts.record(store_path, who, [(key, sha, "current") for key, sha in shown], shown=shown)
        assert got == expected, step
