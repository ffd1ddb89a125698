"""`kyb mcp` through the SDK's own client over stdio: one real server process for the module."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import asynccontextmanager

import pytest

pytest.importorskip("mcp.client.stdio")

from anyio.from_thread import start_blocking_portal  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

TOOLS = {"query", "get", "history", "add", "add_many", "retract", "incident", "resolve", "task", "task_status", "done",
         "tasks", "incidents", "export", "context", "deadlines", "log", "verify", "stale", "rules",
         "diff", "recall", "reads"}
READ_ONLY = {"query", "get", "history", "diff", "tasks", "incidents", "export", "context", "deadlines", "log", "stale",
             "rules", "recall", "reads"}


class Client:
    """A synchronous face on one MCP client session running in a background event loop."""

    def __init__(self, portal, session, store_path):
        self.portal, self.session, self.store_path = portal, session, store_path

    def tools(self):
        return {t.name: t for t in self.portal.call(self.session.list_tools).tools}

    def call(self, name: str, **arguments):
        return self.portal.call(lambda: self.session.call_tool(name, arguments))

    def ok(self, name: str, **arguments) -> dict:
        result = self.call(name, **arguments)
        assert not result.is_error, result.content[0].text
        return result.structured_content


@asynccontextmanager
async def _session(params):
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


@pytest.fixture(scope="module")
def mcp(tmp_path_factory):
    from kyb_cli.core.canon.repo import init_store

    root = tmp_path_factory.mktemp("mcp")
    store_path = root / "store"
    init_store(store_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KYB_")}
    env.update({"XDG_CONFIG_HOME": str(root / "config"), "XDG_DATA_HOME": str(root / "data"),
                "XDG_CACHE_HOME": str(root / "cache"),
                "KYB_STORE": str(root / "not-this-one"), "KYB_AGENT": "mcp-test-agent"})
    # --store on `kyb mcp` wins over KYB_STORE, as on the CLI
    params = StdioServerParameters(command=sys.executable, args=["-m", "kyb_cli", "mcp", "--store", str(store_path)],
                                   env=env, cwd=str(root))
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(_session(params)) as session:
            yield Client(portal, session, store_path)


def test_every_tool_is_listed_with_a_described_schema(mcp):
    tools = mcp.tools()
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    query = tools["query"].input_schema
    assert {"text", "history", "as_of", "changed_between", "tags", "kind", "limit", "semantic",
            "explain"} <= set(query["properties"])  # the one query pipeline: the CLI's options, MCP's too
    assert query["properties"]["limit"]["maximum"] == 100
    window = next(s for s in query["properties"]["changed_between"]["anyOf"] if s.get("type") == "array")
    assert (window["minItems"], window["maxItems"]) == (2, 2)
    assert set(tools["add"].input_schema["required"]) == {"key", "title"}
    assert set(tools["retract"].input_schema["required"]) == {"key", "reason"}


def test_annotations_mark_reads_read_only_and_retract_destructive(mcp):
    tools = mcp.tools()
    for name, tool in tools.items():
        assert tool.annotations.read_only_hint is (name in READ_ONLY), name
        assert tool.annotations.destructive_hint is (name == "retract"), name
    assert tools["add"].annotations.idempotent_hint is True  # an identical write makes no commit
    assert tools["retract"].annotations.idempotent_hint is False


def test_add_then_get_history_and_query(mcp):
    first = mcp.ok("add", key="pool-size", title="Pool size is 20", body="Set in app.toml.", tags=["db", " "])
    assert first["action"] == "created"
    again = mcp.ok("add", key="pool-size", title="Pool size is 20", body="Set in app.toml.", tags=["db"])
    assert again["changed"] is False
    second = mcp.ok("add", key="pool-size", title="Pool size is 40", body="Raised for the sale.", tags=["db"])
    got = mcp.ok("get", key="pool-size")
    assert (got["title"], got["sha"], got["tags"]) == ("Pool size is 40", second["sha"], ["db"])
    assert mcp.ok("get", key="pool-size", at=first["sha"])["title"] == "Pool size is 20"
    versions = mcp.ok("history", key="pool-size")["versions"]
    assert [v["sha"] for v in versions] == [second["sha"], first["sha"]]
    hits = mcp.ok("query", text="pool size")["hits"]
    assert [(h["key"], h["is_head"]) for h in hits] == [("pool-size", True)]
    old = mcp.ok("query", text="pool", history=True)["hits"]
    assert sorted(h["title"] for h in old) == ["Pool size is 20", "Pool size is 40"]
    assert mcp.ok("query", text="pool", as_of="2000-01-01")["hits"] == []
    window = mcp.ok("query", text="pool", changed_between=["2000-01-01", "2999-12-31"])
    assert [h["sha"] for h in window["hits"]] == [second["sha"]]
    assert mcp.ok("query", text="pool", as_of=first["sha"], kind="knowledge")["mode"] == "as_of"


def test_add_many_writes_several_records_in_one_branch_move_and_skips_what_breaks_a_rule(mcp):
    import subprocess

    def head_moves() -> int:
        log = subprocess.run(["git", "-C", str(mcp.store_path), "reflog", "--format=%H"], capture_output=True,
                             text=True).stdout.split()
        return len(log)

    before = head_moves()
    d = mcp.ok("add_many", records=[
        {"key": "many-a", "title": "A", "body": "first", "tags": ["bulk"]},
        {"key": "many-b", "title": "B", "body": "password: hunter2hunter2"},
        {"key": "many-c", "title": "C", "body": "third"},
    ])
    assert [e["key"] for e in d["created"]] == ["many-a", "many-c"]
    assert [s["path"] for s in d["skipped"]] == ["records[1]"] and "secret" in d["skipped"][0]["reason"]
    assert d["commits"] == 2 and head_moves() == before + 1  # two commits, one move of the branch
    assert mcp.ok("get", key="many-c")["sha"] == d["head"]
    again = mcp.ok("add_many", records=[{"key": "many-a", "title": "A", "body": "first", "tags": ["bulk"]}])
    assert again["commits"] == 0 and [e["key"] for e in again["unchanged"]] == ["many-a"]


def test_a_validation_error_is_a_tool_error_with_the_cli_text(mcp, cli):
    result = mcp.call("add", key="Bad Key", title="x")
    line = cli("add", "--key", "Bad Key", "--title", "x", "--body", "").stderr.strip()
    assert result.is_error
    assert result.content[0].text == f"{line} (exit 3: rejected)"
    assert result.structured_content["error"]["exit_code"] == 3
    both = mcp.call("query", history=True, as_of="2026-01-01")
    cli_both = cli("query", "--history", "--as-of", "2026-01-01").stderr.strip()
    # the same rule, each door naming the parameters as its caller spells them (issue 23)
    assert cli_both == "kyb: choose one of --history, --as-of"
    assert both.is_error and both.content[0].text == "kyb: choose one of history, as_of (exit 2: usage)"
    missing = mcp.call("get", key="no-such-key")
    assert missing.is_error and missing.content[0].text.endswith("(exit 1: not_found)")


@pytest.mark.parametrize("name, arguments, says", [
    ("query", {"text": "x", "limit": 101}, "kyb: limit: must be at most 100 (1 to 100)"),  # the core's wording (issue 36)
    ("retract", {"key": "anything"}, "kyb: retract: reason: required"),
    ("query", {"text": 5}, "kyb: query: text: input should be a valid string"),
    ("no_such_tool", {}, "kyb: unknown tool 'no_such_tool'"),
])
def test_bad_arguments_are_usage_errors_in_kyb_form(mcp, name, arguments, says):
    """Arguments the schema rejects read like every kyb error (exit 2: usage), not a pydantic dump."""
    result = mcp.call(name, **arguments)
    assert result.is_error
    text = result.content[0].text
    assert text.startswith(says) and text.endswith("(exit 2: usage)"), text
    assert result.structured_content["error"]["exit_code"] == 2


def test_a_write_through_mcp_is_attributed_with_transport_mcp(mcp):
    from kyb_cli.core.records.trailers import parse_trailers

    sha = mcp.ok("add", key="via-mcp", title="Written through MCP", body="b")["sha"]
    message = subprocess.run(["git", "-C", str(mcp.store_path), "log", "-1", "--format=%B", sha],
                             capture_output=True, text=True, check=True).stdout
    trailers = parse_trailers(message)
    assert trailers["Kyb-Transport"] == "mcp"
    assert trailers["Kyb-Agent"] == "mcp-test-agent"


def test_retract_leaves_current_answers_and_keeps_history(mcp):
    mcp.ok("add", key="wrong-fact", title="The moon is cheese", body="It is.")
    no_reason = mcp.call("retract", key="wrong-fact", reason=" ")
    assert no_reason.is_error and "(exit 3: rejected)" in no_reason.content[0].text
    mcp.ok("retract", key="wrong-fact", reason="it is rock")
    assert mcp.ok("query", text="moon cheese")["hits"] == []
    gone = mcp.call("get", key="wrong-fact")
    assert gone.is_error and "was retracted" in gone.content[0].text and "it is rock" in gone.content[0].text
    assert [v["change"] for v in mcp.ok("history", key="wrong-fact")["versions"]][0] == "deleted"


def test_incidents_and_tasks_go_through_their_whole_lifecycle(mcp):
    reply = mcp.ok("incident", key="inc-2026-06-14-api-down", title="API down", service="api", severity="high",
                   affected=[{"scope": "eu", "from": "2026-06-14T10:00:00Z", "to": "2026-06-14T11:00:00Z"}])
    assert reply["action"] == "created"
    bad = mcp.call("incident", key="inc-2026-06-14-x", title="x", service="api", severity="high",
                   affected=[{"scope": "eu"}, "nope"])
    assert bad.is_error
    assert [r["key"] for r in mcp.ok("incidents")["incidents"]] == ["inc-2026-06-14-api-down"]
    mcp.ok("resolve", key="inc-2026-06-14-api-down", resolution="rolled back")
    assert mcp.ok("incidents")["count"] == 0
    assert mcp.ok("incidents", all=True)["incidents"][0]["status"] == "resolved"

    mcp.ok("task", key="task-renew-cert", title="Renew TLS cert", due="2020-01-01", hard=True, remind_days="")
    mcp.ok("task_status", key="task-renew-cert", status="in_progress", assignee="me")
    assert mcp.ok("deadlines", today="2020-01-03")["deadlines"][0]["days_left"] == -2
    block = mcp.ok("get", key="task-renew-cert", today="2020-01-03")["deadlines"]  # the CLI's stderr block
    assert (block["today"], block["tasks"][0]["key"]) == ("2020-01-03", "task-renew-cert")
    bad_day = mcp.call("deadlines", today="tomorrow")
    assert bad_day.is_error and "(exit 2: usage)" in bad_day.content[0].text
    assert mcp.ok("tasks", due_before="2020-12-31")["tasks"][0]["assignee"] == "me"
    not_closing = mcp.call("done", key="task-renew-cert", status="blocked")
    assert not_closing.is_error and "kyb done closes a task" in not_closing.content[0].text
    bad_days = mcp.call("task", key="task-x", title="x", remind_days="soon")
    assert bad_days.is_error and "remind_days must be a whole number" in bad_days.content[0].text
    assert "--remind-days" not in bad_days.content[0].text  # the caller sent `remind_days`
    mcp.ok("done", key="task-renew-cert", resolution="renewed")
    assert mcp.ok("tasks")["count"] == 0
    assert mcp.ok("tasks", all=True, status="done")["tasks"][0]["resolution"] == "renewed"


def test_export_and_context_answer_from_the_same_store(mcp):
    mcp.ok("add", key="export-me", title="Exported", body="b", tags=["ctx"])
    exported = mcp.ok("export")
    row = next(r for r in exported["rows"] if r["key"] == "export-me")
    assert (row["state"], row["tags"], exported["count"]) == ("active", ["ctx"], len(exported["rows"]))
    result = mcp.call("context", brief=True)
    assert not result.is_error
    assert result.content[0].text.startswith("kyb store: ")
    assert result.structured_content["brief"] is True and "digest" not in result.structured_content
    full = mcp.call("context")
    assert "<kyb-records>" in full.content[0].text and "export-me" in full.content[0].text
    assert "open_incident_total" in full.structured_content["digest"]  # the CLI's shape: {text, brief, digest}


def test_kyb_mcp_without_the_sdk_exits_4(cli, monkeypatch):
    for name in [n for n in sys.modules if n == "mcp" or n.startswith("mcp.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "mcp", None)
    res = cli("mcp")
    assert res.code == 4
    assert "pipx install --force '.[mcp]'" in res.stderr and "kyb-cli[mcp]" not in res.stderr
    assert res.stdout == ""


def test_diff_tool_answers_what_kyb_diff_answers(mcp, cli, monkeypatch):
    """One core function behind `kyb diff` and the `diff` tool: same reply, revisions by name."""
    first = mcp.ok("add", key="diff-me", title="Port", body="port 8080")
    second = mcp.ok("add", key="diff-me", title="Port", body="port 9090")
    default = mcp.ok("diff", key="diff-me")
    assert (default["from"]["sha"], default["to"]["sha"]) == (first["sha"], second["sha"])
    assert "-port 8080\n+port 9090\n" in default["diff"]
    monkeypatch.setenv("KYB_STORE", str(mcp.store_path))
    assert cli("diff", "diff-me").json == default
    named = mcp.ok("diff", key="diff-me", from_rev=second["sha"], to_rev=first["sha"])
    assert "-port 9090\n+port 8080\n" in named["diff"]


def test_readonly_server_lists_only_read_only_tools():
    import asyncio

    from kyb_cli.mcp.server import build_server
    from kyb_cli.mcp.tools import READ, TOOLS

    names = {t.name for t in asyncio.run(build_server(None, readonly=True).list_tools())}
    assert names == {name for name, ann in TOOLS.items() if ann is READ}
    assert "add" not in names and "retract" not in names and "query" in names
    everything = {t.name for t in asyncio.run(build_server(None).list_tools())}
    assert everything == set(TOOLS)


def test_mcp_log_get_version_blocked_by_and_as_of_event(mcp):
    mcp.ok("add", key="svc-port-mcp", title="Service port", body="port 8080")
    mcp.ok("add", key="svc-port-mcp", title="Service port", body="port 9090", effective_at="2000-01-01")
    assert mcp.ok("get", key="svc-port-mcp", version=1)["body"] == "port 8080"
    rows = mcp.ok("log", key="svc-port-mcp")["log"]
    assert [r["action"] for r in rows] == ["update", "add"] and rows[0]["transport"] == "mcp"
    hits = mcp.ok("query", text="svc port", semantic=False, as_of_event="2010-01-01", full=True)["hits"]
    assert [h["body"] for h in hits if h["key"] == "svc-port-mcp"] == ["port 9090"]
    mcp.ok("task", key="task-mcp-a", title="a")
    mcp.ok("task", key="task-mcp-b", title="b", blocked_by=["task-mcp-a"])
    ready = [r["key"] for r in mcp.ok("tasks", ready=True)["tasks"]]
    assert "task-mcp-a" in ready and "task-mcp-b" not in ready


def test_query_says_how_sure_it_is_and_filters_by_strength(mcp):
    mcp.ok("add", key="redis-timeouts", title="Redis timeouts", body="Client timeout is 2 s; retry once.")
    mcp.ok("add", key="lunch-notes", title="Lunch notes", body="Pizza on Fridays.")
    both = mcp.ok("query", text="redis client timeout pizza", explain=True)
    strong = mcp.ok("query", text="redis client timeout pizza", min_strength="strong")
    assert {h["key"] for h in strong["hits"]} == {"redis-timeouts"} and strong["confident"] is True
    by_key = {h["key"]: h for h in both["hits"]}
    assert by_key["lunch-notes"]["strength"] == "weak" and by_key["redis-timeouts"]["found_by"] == "lexical"
    assert "Client timeout is 2 s" in by_key["redis-timeouts"]["snippet"]
    assert "coverage" in by_key["redis-timeouts"]["explain"]
    assert mcp.ok("query", text="kubernetes ingress")["confident"] is False


def test_trust_through_mcp_verify_stale_retired_similar_revived_rules(mcp):
    """Knowing whether to trust a record, through MCP: every rule the CLI tests check, once more here."""
    mcp.ok("add", key="mcp-checkout-write-path", title="MCP checkout write path",
           body="Checkout writes go to node-3, port 8080.", review_by="2027-01-01")
    mcp.ok("add", key="mcp-checkout-runbook", title="MCP runbook", body="svc-checkout on node-3, port 8080.")
    done = mcp.ok("verify", key="mcp-checkout-write-path", source="src/checkout.py", rev="abc123")
    assert (done["action"], done["changed"]) == ("verified", True)
    got = mcp.ok("get", key="mcp-checkout-write-path")
    assert got["verified"]["by"] == "mcp-test-agent" and got["verified"]["current"] is True
    assert got["review_by"] == "2027-01-01"
    updated = mcp.ok("add", key="mcp-checkout-write-path", title="MCP checkout write path",
                     body="Checkout writes go to node-3, port 9090.")
    assert updated["retired_elsewhere"] == [{"key": "mcp-checkout-runbook", "phrase": "8080"}]
    hit = next(h for h in mcp.ok("query", text="checkout", semantic=False)["hits"]
               if h["key"] == "mcp-checkout-write-path")
    assert hit["verified"]["current"] is False and hit["stale"] is True
    stale = mcp.ok("stale", today="2027-01-02")
    row = next(s for s in stale["stale"] if s["key"] == "mcp-checkout-write-path")
    assert row["review_by"] == "2027-01-01"
    similar = mcp.ok("add", key="mcp-checkout-writes-path", title="Other", body="Different words.")
    assert [s["key"] for s in similar["similar"]] == ["mcp-checkout-write-path"]
    mcp.ok("retract", key="mcp-checkout-writes-path", reason="duplicate")
    revived = mcp.ok("add", key="mcp-checkout-writes-path", title="Other", body="Different words.")
    assert revived["revived"] is True and revived["retracted_reason"] == "duplicate"
    mcp.ok("add", key="mcp-rule-one", title="Query first", body="Query before you add.", tags=["rule"])
    assert [r["key"] for r in mcp.ok("rules")["rules"]] == ["mcp-rule-one"]
    assert "Query before you add." in mcp.ok("context")["text"].split("<kyb-records>")[0]
