"""as-of-first-parent: `--as-of T` and `get --at DATE` are what this clone's branch showed at T.

The branch's first-parent line is its own story: each commit on it contributes its net change
(against its first parent) at its own commit time, a merge included; a side's commits are not on
the line, so a version the branch never showed is never an as-of answer. `--history` still lists
every content version from every side. The example from the issue: the local v2 (t=2000) kept over
the remote v3 (t=1000) by a sync merge; `--as-of 2500` is v2 and `--as-of 1500` is v1.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from kyb_cli.core.records.keys import path_of_key

from support.hostile import BLOB, Peer, git, kyb_env, record_text, run_kyb


def _iso(t: int) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _hand_commit(store: Path, key: str, body: str, when: int) -> str:
    """A local write at a chosen time, made with plumbing as a hand `git commit` would."""
    blob = git("hash-object", "-w", "--stdin", cwd=store, input=record_text(key, body=body))
    git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path_of_key(key)}", cwd=store)
    tree = git("write-tree", cwd=store)
    head = git("rev-parse", "HEAD", cwd=store)
    raw = (f"tree {tree}\nparent {head}\nauthor h <h@x> {when} +0000\ncommitter h <h@x> {when} +0000\n\n"
           f"kyb: update {key}\n")
    commit = git("hash-object", "-t", "commit", "-w", "--stdin", "--literally", cwd=store, input=raw)
    git("update-ref", "HEAD", commit, cwd=store)
    (store / path_of_key(key)).parent.mkdir(parents=True, exist_ok=True)
    (store / path_of_key(key)).write_text(record_text(key, body=body))
    return commit


@pytest.fixture
def merged(tmp_path, isolated_dirs):
    env = kyb_env(isolated_dirs)
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "-b", "main", str(remote))
    peer = Peer(remote)
    v1 = peer.write({path_of_key("doc"): (BLOB, record_text("doc", body="v1 base"))}, when=500)
    store = tmp_path / "store"
    res = run_kyb(env, "init", "--clone", str(remote), str(store))
    assert res.returncode == 0, res.stderr
    v2 = _hand_commit(store, "doc", "v2 local", 2000)
    v3 = peer.write({path_of_key("doc"): (BLOB, record_text("doc", body="v3 remote"))}, when=1000)
    res = run_kyb(env, "sync", store=store)
    assert res.returncode == 0, res.stderr
    reply = json.loads(res.stdout)
    assert reply["merged"] and [(c["kept_side"], c["kept"]) for c in reply["conflicts"]] == [("local", v2)]
    return env, store, {"v1": v1, "v2": v2, "v3": v3, "merge": reply["head"]}


def _as_of(env, store, t: int) -> list[str]:
    res = run_kyb(env, "query", "--full", "--as-of", _iso(t), store=store)
    assert res.returncode == 0, res.stderr
    return [h["body"] for h in json.loads(res.stdout)["hits"] if h["key"] == "doc"]


def test_as_of_after_merge_is_what_the_branch_showed(merged):
    env, store, shas = merged
    assert _as_of(env, store, 400) == []
    assert _as_of(env, store, 700) == ["v1 base"]
    assert _as_of(env, store, 1500) == ["v1 base"], "v3 was never on this branch at 1500"
    assert _as_of(env, store, 2500) == ["v2 local"], "the issue's example: v2 kept, v3 never shown"
    assert _as_of(env, store, 4_000_000_000) == ["v2 local"]


def test_get_at_a_date_follows_the_same_rule(merged):
    env, store, shas = merged
    for t, body in ((700, "v1 base"), (1500, "v1 base"), (2500, "v2 local")):
        res = run_kyb(env, "get", "doc", "--at", _iso(t), store=store)
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["body"] == body, t
    assert run_kyb(env, "get", "doc", "--at", _iso(100), store=store).returncode == 1


def test_history_still_lists_every_version_from_every_side(merged):
    env, store, shas = merged
    res = run_kyb(env, "query", "--full", "--history", "--limit", "100", store=store)
    bodies = sorted(h["body"] for h in json.loads(res.stdout)["hits"] if h["key"] == "doc")
    assert bodies == ["v1 base", "v2 local", "v3 remote"]
    rows = json.loads(run_kyb(env, "history", "doc", store=store).stdout)
    rows = rows["versions"]
    assert {shas["v1"], shas["v2"], shas["v3"]} <= {r["sha"] for r in rows}


def test_a_merge_that_takes_the_remote_version_contributes_it_at_the_merge_time(tmp_path, isolated_dirs):
    env = kyb_env(isolated_dirs)
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "-b", "main", str(remote))
    peer = Peer(remote)
    peer.write({path_of_key("doc"): (BLOB, record_text("doc", body="v1 base"))}, when=500)
    store = tmp_path / "store"
    assert run_kyb(env, "init", "--clone", str(remote), str(store)).returncode == 0
    _hand_commit(store, "other", "local other key", 1000)
    peer.write({path_of_key("doc"): (BLOB, record_text("doc", body="v3 remote"))}, when=2000)
    res = run_kyb(env, "sync", store=store)
    assert res.returncode == 0 and json.loads(res.stdout)["merged"]
    merge_time = int(git("log", "-1", "--format=%ct", cwd=store))
    assert _as_of(env, store, 2500) == ["v1 base"], "the branch showed v3 only from the merge on"
    assert _as_of(env, store, merge_time) == ["v3 remote"]
