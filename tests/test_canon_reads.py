"""Reads: `get` now and `--at` any revision, retracted keys, `history` newest first, `tags` of live records."""

from __future__ import annotations

import subprocess

import pytest
from kyb_cli.core.records.keys import path_of_key


def git(store, *args: str) -> str:
    return subprocess.run(["git", "-C", str(store), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def three_versions(cli, store_path):
    shas = [cli("add", "--key", "k", "--title", "T", input=f"port {p}").json["sha"] for p in (8080, 9090, 7070)]
    return shas


def test_seed_002_transcript(cli):
    """add twice, history, get --at the first sha (the article's transcript)."""
    args = ["add", "--key", "checkout-write-path", "--title", "Checkout write path", "--tags", "infra,checkout"]
    first = cli(*args, input="Checkout writes go through svc-checkout on node-3, port 8080.\n").json
    second = cli(*args, input="Checkout writes go through svc-checkout on node-3, port 9090.\n").json
    assert (first["action"], second["action"]) == ("created", "updated")
    history = cli("history", "checkout-write-path").json
    assert history["key"] == "checkout-write-path"
    assert [(v["change"], v["sha"]) for v in history["versions"]] == [("modified", second["sha"]), ("added", first["sha"])]
    old = cli("get", "checkout-write-path", "--at", first["sha"][:7]).json
    assert old["body"] == "Checkout writes go through svc-checkout on node-3, port 8080."
    assert (old["sha"], old["state"], old["is_head"]) == (first["sha"], "active", False)


def test_get_reply_has_state_sha_committed_at(cli, three_versions):
    got = cli("get", "k").json
    assert (got["key"], got["kind"], got["title"], got["body"]) == ("k", "knowledge", "T", "port 7070")
    assert (got["state"], got["sha"], got["is_head"]) == ("active", three_versions[2], True)
    assert got["committed_at"].endswith("+00:00") and "T" in got["committed_at"]


@pytest.mark.parametrize("rev_of,body", [
    (lambda s, st: s[0], "port 8080"),              # full sha
    (lambda s, st: s[1][:8], "port 9090"),          # short sha
    (lambda s, st: "HEAD~2", "port 8080"),
    (lambda s, st: "HEAD^", "port 9090"),
    (lambda s, st: "v-old", "port 8080"),           # a tag
    (lambda s, st: "old-branch", "port 9090"),      # a branch
])
def test_get_at_any_revision_git_can_resolve(cli, store_path, three_versions, rev_of, body):
    git(store_path, "tag", "v-old", three_versions[0])
    git(store_path, "branch", "old-branch", three_versions[1])
    got = cli("get", "k", "--at", rev_of(three_versions, store_path)).json
    assert got["body"] == body


def test_get_at_reports_the_commit_that_wrote_that_version(cli, three_versions):
    cli("add", "--key", "other", "--title", "O", input="o")
    got = cli("get", "k", "--at", "HEAD").json
    assert got["sha"] == three_versions[2] and got["is_head"] is True


@pytest.mark.parametrize("rev", ["deadbeef", "no-such-branch", "HEAD~99", "--help"])
def test_unknown_revision_exits_1(cli, three_versions, rev):
    res = cli("get", "k", "--at", rev)
    assert (res.code, res.stdout) == (1, "")
    assert f"unknown revision '{rev}'" in res.stderr


def test_key_absent_at_revision_exits_1(cli, store_path):
    first = cli("add", "--key", "a", "--title", "A", input="a").json["sha"]
    cli("add", "--key", "b", "--title", "B", input="b")
    res = cli("get", "b", "--at", first)
    assert (res.code, res.stdout) == (1, "")
    assert f"no record 'b' at {first}" in res.stderr


def test_missing_key_exits_1(cli):
    res = cli("get", "nope")
    assert (res.code, res.stdout, res.stderr) == (1, "", "kyb: no record 'nope'\n")


def test_retracted_key_found_where_it_existed_not_after(cli, store_path, three_versions):
    gone = cli("rm", "k", "--reason", "the port moved to a new service").json["sha"]
    for sha, body in zip(three_versions, ("port 8080", "port 9090", "port 7070")):
        got = cli("get", "k", "--at", sha).json
        assert (got["body"], got["state"], got["is_head"]) == (body, "active", False)
    res = cli("get", "k")
    assert (res.code, res.stdout) == (1, "")
    short_gone = gone[:7]
    assert "'k' was retracted on " in res.stderr
    assert f"in commit {short_gone}" in res.stderr                     # when
    assert "because: the port moved to a new service" in res.stderr     # why
    assert f"kyb get k --at {three_versions[2][:7]}" in res.stderr       # how to see it
    after = cli("get", "k", "--at", gone)
    assert after.code == 1 and "was retracted before" in after.stderr


def test_retracted_message_names_a_working_at(cli, three_versions):
    cli("rm", "k", "--reason", "wrong")
    err = cli("get", "k").stderr
    rev = err.rsplit("--at ", 1)[1].strip()
    assert cli("get", "k", "--at", rev).json["body"] == "port 7070"


def test_history_newest_first_with_changes_and_labels(kyb):
    env = {"KYB_AGENT": "codex", "KYB_SESSION": "sess-9", "KYB_WORKSPACE": "/w"}
    kyb("add", "--key", "k", "--title", "T", input="v1", env=env)
    kyb("add", "--key", "k", "--title", "T", input="v2")
    kyb("rm", "k", "--reason", "wrong", env=env)
    kyb("add", "--key", "k", "--title", "T", input="v3")
    versions = kyb("history", "k").json["versions"]
    assert [v["change"] for v in versions] == ["added", "deleted", "modified", "added"]
    assert [v["message"] for v in versions] == ["kyb: add k", "kyb: retract k", "kyb: update k", "kyb: add k"]
    first = versions[-1]
    assert {k: first[k] for k in ("agent", "session", "workspace", "transport")} == \
        {"agent": "codex", "session": "sess-9", "workspace": "/w", "transport": "cli"}
    assert versions[1]["reason"] == "wrong"
    for v in versions:
        assert set(v) >= {"sha", "committed_at", "change", "message", "agent", "session", "workspace", "transport"}
    times = [v["committed_at"] for v in versions]
    assert times == sorted(times, reverse=True)


def test_history_of_unknown_key_exits_1(cli):
    res = cli("history", "never")
    assert (res.code, res.stdout) == (1, "")
    assert "no history for 'never'" in res.stderr


def test_hand_commit_is_in_history_and_get(cli, store_path):
    """A plain `git` commit is a version like any other (the canon is just Git)."""
    cli("add", "--key", "k", "--title", "T", input="v1")
    path = store_path / path_of_key("k")
    path.write_text(path.read_text().replace("v1", "v2 by hand"))
    git(store_path, "commit", "-qam", "fix by hand")
    assert cli("get", "k").json["body"] == "v2 by hand"
    assert cli("history", "k").json["versions"][0]["message"] == "fix by hand"


def test_tags_count_live_records_only(cli):
    cli("add", "--key", "a", "--title", "A", "--tags", "infra,Checkout", input="a")
    cli("add", "--key", "b", "--title", "B", "--tags", "infra,checkout", input="b")
    cli("add", "--key", "c", "--title", "C", "--tags", "infra,gone-tag", input="c")
    cli("rm", "c", "--reason", "wrong")
    assert cli("tags").json == {"count": 2, "tags": [{"tag": "checkout", "count": 2}, {"tag": "infra", "count": 2}]}


def test_tags_of_empty_store(cli):
    assert cli("tags").json == {"count": 0, "tags": []}


def test_get_follows_the_version_a_merge_took(cli, store_path):
    """After a merge that kept one side, `get` reports that side's version, not the other side's."""
    base = cli("add", "--key", "k", "--title", "T", input="base").json["sha"]
    git(store_path, "branch", "side", base)
    kept = cli("add", "--key", "k", "--title", "T", input="main side").json["sha"]
    git(store_path, "checkout", "-q", "side")
    path = store_path / path_of_key("k")
    path.write_text(path.read_text().replace("base", "other side"))
    env = {"GIT_COMMITTER_DATE": "2090-01-01 00:00:00 +0000", "GIT_AUTHOR_DATE": "2090-01-01 00:00:00 +0000"}
    subprocess.run(["git", "-C", str(store_path), "commit", "-qam", "side"], check=True,
                   env={**__import__("os").environ, **env})
    git(store_path, "checkout", "-q", "main")
    git(store_path, "merge", "-q", "-s", "ours", "side", "-m", "merge keeping main")
    got = cli("get", "k").json
    assert (got["body"], got["sha"]) == ("main side", kept)
