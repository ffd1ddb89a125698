"""`kyb log`: the store's activity newest first, hand commits and merges labelled; `--fields` shaping."""

from __future__ import annotations

import subprocess
from kyb_cli.core.records.keys import path_of_key


def _git(store, *args):
    env = {"GIT_AUTHOR_NAME": "Hand", "GIT_AUTHOR_EMAIL": "hand@example.org", "GIT_COMMITTER_NAME": "Hand",
           "GIT_COMMITTER_EMAIL": "hand@example.org", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "-C", str(store), *args], check=True, capture_output=True, env=env)


def test_log_lists_every_commit_newest_first_with_hand_commits_labelled(kyb, store_path):
    assert kyb("add", "--key", "alpha", "--title", "Alpha", "--body", "one", env={"KYB_AGENT": "claude-code"}).code == 0
    assert kyb("add", "--key", "alpha", "--title", "Alpha", "--body", "two").code == 0
    assert kyb("rm", "alpha", "--reason", "it was wrong").code == 0
    (store_path / "README.md").write_text("notes\n")
    _git(store_path, "add", "README.md")
    _git(store_path, "commit", "-qm", "a readme, by hand")
    res = kyb("log")
    assert res.code == 0, res.stderr
    rows = res.json["log"]
    assert [r["action"] for r in rows] == ["hand", "retract", "update", "add", "init"]
    assert rows[0]["author"] == "Hand <hand@example.org>" and rows[0]["key"] == "" and rows[0]["agent"] == ""
    assert rows[1]["key"] == "alpha" and rows[1]["kind"] == "knowledge" and rows[1]["transport"] == "cli"
    assert rows[3]["agent"] == "claude-code"
    assert set(rows[0]) >= {"sha", "committed_at", "action", "key", "kind", "agent", "session", "transport",
                            "author", "message"}


def test_log_filters_by_key_kind_agent_author_and_limit(kyb, store_path):
    kyb("add", "--key", "alpha", "--title", "Alpha", "--body", "one", env={"KYB_AGENT": "codex"})
    kyb("task", "--key", "task-x", "--title", "Do x", "--body", "", env={"KYB_AGENT": "claude-code"})
    kyb("add", "--key", "beta", "--title", "Beta", "--body", "b", env={"KYB_AGENT": "claude-code"})
    assert [r["key"] for r in kyb("log", "--key", "alpha").json["log"]] == ["alpha"]
    assert [r["key"] for r in kyb("log", "--kind", "task").json["log"]] == ["task-x"]
    assert [r["key"] for r in kyb("log", "--agent", "Claude-Code").json["log"]] == ["beta", "task-x"]
    assert kyb("log", "--author", "nobody-at-all").json["log"] == []
    assert [r["key"] for r in kyb("log", "--limit", "1").json["log"]] == ["beta"]
    assert kyb("log", "--since", "2999-01-01").json["count"] == 0


def test_log_labels_a_merge(kyb, store_path):
    kyb("add", "--key", "alpha", "--title", "Alpha", "--body", "one")
    _git(store_path, "checkout", "-qb", "side")
    (store_path / path_of_key("beta")).parent.mkdir(parents=True, exist_ok=True)
    (store_path / path_of_key("beta")).write_text('+++\nkey = "beta"\ntitle = "Beta"\n+++\n\nb\n')
    _git(store_path, "add", path_of_key("beta"))
    _git(store_path, "commit", "-qm", "beta by hand")
    _git(store_path, "checkout", "-q", "main")
    kyb("add", "--key", "gamma", "--title", "Gamma", "--body", "g")
    _git(store_path, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    rows = kyb("log", "--limit", "3").json["log"]
    assert rows[0]["action"] == "merge" and rows[0]["message"] == "merge side"
    assert {r["action"] for r in rows[1:]} == {"hand", "add"}


def test_bad_log_arguments_are_usage_errors_with_empty_stdout(kyb):
    for args in (["--kind", "note"], ["--limit", "-1"], ["--since", "not a time at all"], ["--key", "Bad Key"]):
        res = kyb("log", *args)
        assert res.code in (2, 3), (args, res.code, res.stderr)
        assert res.stdout == "" and res.stderr.startswith(("kyb: ", "Usage", "Error"))


def test_fields_keeps_only_the_named_fields_of_each_row(kyb):
    kyb("add", "--key", "alpha", "--title", "Alpha", "--body", "port 8080")
    q = kyb("query", "8080", "--no-semantic", "--fields", "key,title").json
    assert q["hits"] == [{"key": "alpha", "title": "Alpha"}] and q["count"] == 1
    assert kyb("log", "--fields", "action").json["log"] == [{"action": "add"}, {"action": "init"}]
    assert kyb("history", "alpha", "--fields", "change").json["versions"] == [{"change": "added"}]


def test_fields_naming_an_unknown_field_is_a_usage_error(kyb):
    kyb("add", "--key", "alpha", "--title", "Alpha", "--body", "port 8080")
    res = kyb("query", "8080", "--no-semantic", "--fields", "key,nonsense")
    assert res.code == 2 and res.stdout == ""
    assert "nonsense" in res.stderr and "key" in res.stderr
