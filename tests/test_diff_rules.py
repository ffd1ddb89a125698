"""`kyb diff KEY [FROM] [TO]`: the unified diff of a record's fields and body between two versions.

Defaults: TO the latest version, FROM the one before it. The same core function answers the MCP
`diff` tool and `GET /knowledge/{key}/diff` (tests/test_mcp_server.py, tests/test_serve_http.py).
"""

from __future__ import annotations

from kyb_cli.core.records.keys import path_of_key


def add(cli, key: str, title: str, body: str, tags: str = "") -> str:
    res = cli("add", "--key", key, "--title", title, "--tags", tags, "--body", body)
    assert res.code == 0, res.stderr
    return res.json["sha"]


def test_default_compares_the_previous_version_with_the_latest(cli):
    first = add(cli, "port", "Port", "port 8080", "net")
    second = add(cli, "port", "Port moved", "port 9090", "net,prod")
    data = cli("diff", "port").json
    assert (data["from"]["sha"], data["to"]["sha"]) == (first, second)
    assert data["changed"] is True and data["body_changed"] is True
    assert data["fields"] == [{"field": "title", "from": "Port", "to": "Port moved"},
                              {"field": "tags", "from": ["net"], "to": ["net", "prod"]}]
    assert data["diff"].startswith(f"--- a/{path_of_key('port')} {first[:12]}\n+++ b/{path_of_key('port')} {second[:12]}\n")
    assert "-port 8080\n+port 9090\n" in data["diff"]
    assert '-title = "Port"\n' in data["diff"] and '+title = "Port moved"\n' in data["diff"]


def test_any_two_revisions_in_either_order(cli):
    first = add(cli, "port", "Port", "port 8080")
    add(cli, "port", "Port", "port 9090")
    third = add(cli, "port", "Port", "port 7070")
    back = cli("diff", "port", third, first).json
    assert "-port 7070\n+port 8080\n" in back["diff"]
    same = cli("diff", "port", "HEAD", "HEAD").json
    assert (same["changed"], same["diff"], same["fields"]) == (False, "", [])
    only_from = cli("diff", "port", first).json  # TO defaults to the latest
    assert only_from["to"]["sha"] == third and "+port 7070\n" in only_from["diff"]


def test_the_first_version_is_all_added(cli):
    sha = add(cli, "fresh", "Fresh", "hello")
    data = cli("diff", "fresh").json
    assert data["from"] is None and data["to"]["sha"] == sha
    assert data["diff"].startswith(f"--- a/{path_of_key('fresh')}\n+++ b/{path_of_key('fresh')}")
    assert "+hello\n" in data["diff"] and not any(
        line.startswith("-") and not line.startswith("---") for line in data["diff"].splitlines())


def test_retracted_knowledge_diffs_its_last_versions(cli):
    add(cli, "gone", "Gone", "v1")
    last = add(cli, "gone", "Gone", "v2")
    assert cli("rm", "gone", "--reason", "wrong").code == 0
    data = cli("diff", "gone").json
    assert data["to"]["sha"] == last and "-v1\n+v2\n" in data["diff"]


def test_unknown_key_or_revision_is_exit_1_with_empty_stdout(cli):
    add(cli, "port", "Port", "x")
    for args in (("diff", "no-such-key"), ("diff", "port", "no-such-rev")):
        res = cli(*args)
        assert res.code == 1 and res.stdout == "" and res.stderr.startswith("kyb: ")
    bad = cli("diff", "Bad Key")
    assert bad.code == 3 and bad.stdout == ""
