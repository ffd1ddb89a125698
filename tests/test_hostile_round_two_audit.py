"""Issue 24, the audit of round two: the sub-cases the earlier files did not reproduce end to end,
each named after its numbered failure (plain git as the peer where a peer is the attacker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kyb_cli.core.errors import UsageError
from kyb_cli.core.records.keys import path_of_key
from support.hostile import BLOB
from test_hostile_round_two import GHP, PEER_FIELDS
from test_sync_hostile import team, team_template  # noqa: F401  (the fixture: a victim store, a bare remote, a peer)

SECRET_PART = GHP[6:20]


def _keys() -> list[str]:
    return [path.rsplit("/", 1)[1][:-3] for path in PEER_FIELDS]


@pytest.mark.slow  # a sync, then every door in process: ~12 s on the shared machine
def test_failure_2_a_peers_held_out_secret_is_not_served_by_get_mcp_or_http(team, cli, monkeypatch):  # noqa: F811
    import anyio
    from starlette.testclient import TestClient

    from kyb_cli.mcp.server import build_server
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    team.peer.write({p: (BLOB, t) for p, t in PEER_FIELDS.items()})
    assert team.sync().returncode == 0
    monkeypatch.setenv("KYB_STORE", str(team.store))
    for key in _keys():
        got = cli("get", key)
        assert got.code != 0 and got.stdout == "" and SECRET_PART not in got.stderr, (key, got)
    server = build_server(str(team.store))
    for key in _keys():
        reply = anyio.run(server.call_tool, "get", {"key": key})
        assert SECRET_PART not in repr(reply), (key, reply)
    for args in ({"text": "f"}, {"text": "inc"}, {"text": "task"}):
        reply = anyio.run(server.call_tool, "query", args)
        assert SECRET_PART not in repr(reply)
    assert SECRET_PART not in repr(anyio.run(server.call_tool, "export", {}))
    app = build_app(Door(team.store), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    with TestClient(app, raise_server_exceptions=False) as client:
        for url in [f"/knowledge/{key}" for key in _keys()] + ["/export", "/search?q=f", "/tasks?all=1", "/incidents"]:
            reply = client.get(url, headers={"host": "127.0.0.1:8765"})
            assert reply.status_code != 500 and SECRET_PART not in reply.text, (url, reply.status_code, reply.text[:300])


def test_failure_2_an_http_agent_label_that_looks_like_a_secret_is_kept_out_of_the_audit_log(tmp_path):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from kyb_cli import api
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    store = tmp_path / "store"
    api.init_store(store)
    app = build_app(Door(store), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    with TestClient(app, raise_server_exceptions=False) as client:
        write = client.post("/knowledge", json={"key": "k", "title": "t", "body": "b"},
                            headers={"host": "127.0.0.1:8765", "x-kyb-agent": GHP})
        read = client.get("/tags", headers={"host": "127.0.0.1:8765", "x-kyb-agent": "bot " + GHP})
        plain = client.get("/tags", headers={"host": "127.0.0.1:8765", "x-kyb-agent": "claude-code"})
    assert write.status_code == 422 and SECRET_PART not in write.text, write.text
    assert read.status_code == 200 and plain.status_code == 200
    lines = [json.loads(line) for line in (store / ".git" / "kyb" / "audit.jsonl").read_text().splitlines()]
    assert len(lines) == 3 and SECRET_PART not in json.dumps(lines)
    assert lines[0]["agent"] == lines[1]["agent"] == api.audit_label(GHP) != GHP
    assert lines[2]["agent"] == "claude-code"


EVIL = "t\x1b]0;pwned\x07\x1b[2J\x9b31m"
RAW = ("\x1b", "\x9b", "\x07")


def test_failure_9_every_terminal_view_escapes_control_sequences_from_titles_bodies_and_trailers(
        team, cli, monkeypatch):  # noqa: F811
    from support.hostile import record_text

    from kyb_cli.cli import output

    message = f"peer: {EVIL} edit\n\nKyb-Action: add\nKyb-Agent: bot{EVIL}\nKyb-Reason: {EVIL}\n"
    text = record_text("evil", title="T", body=f"pwned body {EVIL}").replace('"T"', json.dumps(EVIL))  # TOML escapes
    team.peer.write({path_of_key("evil"): (BLOB, text)}, message=message)
    assert team.sync().returncode == 0
    monkeypatch.setenv("KYB_STORE", str(team.store))
    monkeypatch.setattr(output, "wants_json", lambda: False)  # as on a terminal
    monkeypatch.setenv("COLUMNS", "200")  # wide enough that no column cuts the escaped text off
    for args in (("get", "evil"), ("history", "evil"), ("log",), ("query", "pwned")):
        res = cli(*args)
        assert res.code == 0, (args, res.stderr)
        shown = res.stdout + res.stderr
        assert "pwned" in shown, (args, shown)  # the text is shown, escaped
        assert not [ch for ch in RAW if ch in shown], (args, repr(shown[:800]))


@pytest.mark.parametrize("text", [GHP, "HEAD~" + GHP, "x" * 500])
def test_failure_2_a_revision_that_is_no_revision_is_not_echoed_when_it_looks_like_a_secret(text, store_path):
    from kyb_cli import api
    from kyb_cli.core.errors import NotFound
    from kyb_cli.core.timeargs import parse_time

    with pytest.raises(UsageError) as err:
        parse_time(text, bound="at", store_path=store_path)  # as_of, changed_between: through a store
    assert "k3Jq9Z" not in err.value.message and "x" * 100 not in err.value.message
    with pytest.raises(NotFound) as missing:
        api.read(store_path, "k", at=text)  # get --at
    assert "k3Jq9Z" not in missing.value.message and "x" * 100 not in missing.value.message


def test_failure_4_every_limit_is_in_readmes_limits_table():
    from kyb_cli.core.records import limits

    table = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "sharing.md").read_text().split("### Limits", 1)[1]
    table = table.split("\n### ", 1)[0]
    rows = {
        limits.NAME_MAX_BYTES: "| one path component from a peer | 255 bytes",
        limits.PATH_MAX_BYTES: "| a whole path from a peer | 1,024 bytes",
        limits.TREE_DEPTH_MAX: "| directory depth from a peer | 16 |",
        limits.FRONT_MATTER_MAX_BYTES: "| 64 KiB |",
        limits.TAGS_MAX: "| 100 each |",
        limits.JSON_DEPTH_MAX: "| 64 levels |",
        limits.COMMIT_MAX_BYTES: "| 256 KiB |",
        limits.SYNC_INCOMING_MAX_DEFAULT: "| 256 MiB (`KYB_SYNC_MAX_INCOMING`)",
    }
    assert [limits.NAME_MAX_BYTES, limits.PATH_MAX_BYTES, limits.TREE_DEPTH_MAX, limits.FRONT_MATTER_MAX_BYTES,
            limits.TAGS_MAX, limits.JSON_DEPTH_MAX, limits.COMMIT_MAX_BYTES, limits.SYNC_INCOMING_MAX_DEFAULT] == [
        255, 1024, 16, 64 * 1024, 100, 64, 256 * 1024, 256 * 1024 * 1024], "a limit moved: update README's table"
    for value, row in rows.items():
        assert row in table, (value, row)
    assert "aliases" in table and "KYB_SYNC_MAX_BLOB" in table
