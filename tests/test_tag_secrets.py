"""Issue 37, item 3: the secret scan sees a tag as the caller sent it, before tags are folded to lower
case (a lowercased `-----begin rsa private key-----` no longer looks like a key), and a tag is one
line. Through the core (every door's write) and the CLI in-process: refused, nothing written, stdout
empty, no part of the secret echoed."""

from __future__ import annotations

import json
import subprocess

import pytest

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.errors import Rejected, UsageError
from kyb_cli.core.kinds.knowledge import add_knowledge
from kyb_cli.core.records.keys import path_of_key

WHO = Attribution("test", "", "", "cli")

# Synthetic, random-looking values shaped like real ones (never real credentials); split so scanners
# of this file stay quiet.
_B64 = "MIIEowIBAAKCAQEAx7Vb3kR8tQz1Lm6Wx2Nc9Pq4Zt8YhJ2kLp0XvB3nM8rT4yW6sH1jC5gA0eU3iO7qDf9a2c8"
RSA = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + _B64 + "\n-----END RSA " + "PRIVATE KEY-----"
EC = "-----BEGIN EC " + "PRIVATE KEY-----\n" + _B64[:64] + "\n-----END EC " + "PRIVATE KEY-----"
OPENSSH = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\n" + _B64 + "\n-----END OPENSSH " + "PRIVATE KEY-----"
GCP = json.dumps({
    "type": "service_account", "project_id": "demo-orders-41", "private_key_id": "3f9a2c8d1e7b4a6f5c0d9e8b7a6f5c4d",
    "private_key": "-----BEGIN " + "PRIVATE KEY-----\n" + _B64 + "\n-----END " + "PRIVATE KEY-----\n",
    "client_email": "orders@demo-orders-41.iam.gserviceaccount.com",
})
KEYS = {"pem-rsa": RSA, "pem-ec": EC, "pem-openssh": OPENSSH, "gcp-service-account": GCP}


def head(store_path) -> str:
    return subprocess.run(["git", "-C", str(store_path), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def _no_echo(secret: str, text: str) -> None:
    windows = {secret[i:i + 8] for i in range(len(secret) - 7)}
    assert not [w for w in windows if any(c.isdigit() for c in w) and w in text]


@pytest.mark.parametrize("secret", list(KEYS.values()), ids=list(KEYS))
def test_private_key_in_a_tag_is_refused_by_the_core_before_tags_are_lowercased(store, store_path, secret):
    before = head(store_path)
    with pytest.raises(Rejected) as err:
        add_knowledge(store, key="k", title="T", body="b", tags=["infra", secret], refs=[], attribution=WHO)
    assert err.value.message.startswith("tags look like a secret (rule ")
    _no_echo(secret, err.value.message)
    assert head(store_path) == before


@pytest.mark.parametrize("secret", list(KEYS.values()), ids=list(KEYS))
def test_private_key_in_a_tag_is_refused_on_the_cli_nothing_written_nothing_echoed(cli, store_path, secret):
    before = head(store_path)
    res = cli("add", "--key", "k", "--title", "T", "--tags", f"infra,{secret}", input="b")
    assert (res.code, res.stdout) == (3, "")
    assert res.stderr.startswith("kyb: tags look like a secret (rule ")
    _no_echo(secret, res.stderr)
    assert head(store_path) == before


def test_a_secret_split_across_a_comma_of_the_tag_list_is_refused_on_the_cli(cli, store_path):
    url = "postgres://app:" + "Xk29,dLqp7Zm4" + "@db-3.internal:5432/orders"  # a password holding a comma
    before = head(store_path)
    res = cli("add", "--key", "k", "--title", "T", "--tags", f"infra,{url}", input="b")
    assert (res.code, res.stdout) == (3, "")
    assert res.stderr.startswith("kyb: tags look like a secret (rule url-credentials)")
    assert "dLqp7Zm4" not in res.stderr and "Xk29" not in res.stderr
    assert head(store_path) == before


@pytest.mark.parametrize("args", [
    ["task", "--key", "task-x", "--title", "T"],
    ["incident", "--key", "inc-x", "--title", "T", "--service", "s", "--severity", "low"],
], ids=["task", "incident"])
def test_private_key_in_a_task_or_incident_tag_is_refused_on_the_cli(cli, store_path, args):
    before = head(store_path)
    res = cli(*args, "--tags", f"infra,{RSA}", input="b")
    assert (res.code, res.stdout) == (3, "")
    assert res.stderr.startswith("kyb: tags look like a secret (rule ")
    _no_echo(RSA, res.stderr)
    assert head(store_path) == before


@pytest.mark.parametrize("bad", ["two\nlines", "cr\rhere", "tab\there", "bell\x07", "ls\u2028sep"],
                         ids=["newline", "cr", "tab", "control", "line-separator"])
def test_a_tag_is_one_line_a_control_character_is_a_usage_error(store, store_path, bad):
    before = head(store_path)
    with pytest.raises(UsageError) as err:
        add_knowledge(store, key="k", title="T", body="b", tags=["infra", bad], refs=[], attribution=WHO)
    assert "tag 2 holds" in err.value.message and "one line" in err.value.message
    assert bad not in err.value.message
    assert head(store_path) == before


def test_a_tag_with_a_line_break_is_refused_on_the_cli_exit_2_nothing_written(cli, store_path):
    before = head(store_path)
    res = cli("add", "--key", "k", "--title", "T", "--tags", "infra,first\nsecond", input="b")
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr.startswith("kyb: --tags: tag 2 holds a line break")
    assert "second" not in res.stderr
    assert head(store_path) == before


def test_a_tag_with_a_line_break_is_skipped_in_add_many_and_the_others_are_written(store, store_path):
    from kyb_cli.core.tools.importer import add_many

    rows = [{"key": "bad", "title": "T", "body": "b", "tags": ["x\ny"]},
            {"key": "good", "title": "T", "body": "b", "tags": ["x"]}]
    reply = add_many(store, rows, attribution=WHO)
    assert [s["path"] for s in reply["skipped"]] == ["records[0]"]
    assert "one line" in reply["skipped"][0]["reason"]
    assert "good" in json.dumps(reply["created"]) and "bad" not in json.dumps(reply["created"])


def test_a_peers_record_with_a_line_break_in_a_tag_is_not_served():
    from kyb_cli.core.records.served import record_problem

    text = '+++\nkey = "k"\ntitle = "T"\ntags = ["a\\nb"]\n+++\nbody\n'
    assert "one line" in (record_problem(path_of_key("k"), text) or "")
    assert record_problem(path_of_key("k"), text.replace("a\\nb", "a-b")) is None


def test_mixed_case_tags_are_still_folded_once_lowercased(store, store_path):
    from kyb_cli.core.records.model import parse

    add_knowledge(store, key="k", title="T", body="b", tags=["Infra", "INFRA", " infra ", "Redis"], refs=[],
                  attribution=WHO)
    text = subprocess.run(["git", "-C", str(store_path), "show", f"HEAD:{path_of_key('k')}"], capture_output=True,
                          text=True, check=True).stdout
    assert parse(text, path=path_of_key("k")).tags == ["infra", "redis"]


@pytest.mark.parametrize("tags,code", [([RSA], 3), (["infra", "two\nlines"], 2)], ids=["rsa", "newline"])
def test_mcp_and_http_refuse_a_key_or_a_line_break_in_a_tag_through_the_same_core_rule(store_path, tags, code):
    pytest.importorskip("mcp")
    import anyio
    from starlette.testclient import TestClient

    from kyb_cli.mcp.server import build_server
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    before = head(store_path)
    fields = {"key": "k", "title": "T", "body": "b", "tags": tags}
    reply = anyio.run(build_server(str(store_path)).call_tool, "add", fields)
    assert reply.is_error and reply.structured_content["error"]["exit_code"] == code
    assert "tags" in reply.content[0].text and "two\nlines" not in reply.content[0].text
    _no_echo(RSA, reply.content[0].text)
    app = build_app(Door(store_path), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    with TestClient(app, raise_server_exceptions=False) as client:
        got = client.post("/knowledge", json=fields, headers={"host": "127.0.0.1:8765"})
    assert got.status_code == {3: 422, 2: 400}[code] and got.json()["exit_code"] == code, got.text
    _no_echo(RSA, got.text)
    assert head(store_path) == before
