"""The index is a cache of Git: caught up before every read, rebuilt when it cannot be trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pygit2

from kyb_cli.core.index import schema
from kyb_cli.core.index.fresh import fresh
from tests.support.index_helpers import T0, keys, put, query
from kyb_cli.core.records.keys import path_of_key


def _git(store_path, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="h", GIT_AUTHOR_EMAIL="h@example.org",
               GIT_COMMITTER_NAME="h", GIT_COMMITTER_EMAIL="h@example.org")
    subprocess.run(["git", "-C", str(store_path), *args], check=True, capture_output=True, env=env)


def _db(store_path):
    return schema.index_path(store_path / ".git")


def test_missing_index_is_built_on_first_read(store_path):
    put(store_path, "svc", "Svc", "port 8080", T0)
    assert not _db(store_path).exists()
    assert keys(query(store_path, "8080")) == ["svc"]
    assert _db(store_path).exists()


def test_catch_up_reads_only_unseen_commits(store_path):
    put(store_path, "a", "A", "alpha", T0)
    fresh(store_path).conn.close()
    put(store_path, "b", "B", "beta", T0 + 1)
    put(store_path, "a", "A", "alpha two", T0 + 2)
    f = fresh(store_path)
    f.conn.close()
    assert f.work["rebuilt"] is False and f.work["commits"] == 2
    again = fresh(store_path)
    again.conn.close()
    assert again.work == {}  # HEAD equals the indexed head: no work, no git, no pygit2


def test_hand_edit_committed_with_plain_git_is_seen(store_path):
    put(store_path, "svc", "Svc", "port 8080", T0)
    assert keys(query(store_path, "8080")) == ["svc"]  # indexed at this commit
    _git(store_path, "reset", "-q", "--hard")  # the helper wrote Git only; bring the file along
    path = store_path / path_of_key("svc")
    path.write_text(path.read_text().replace("8080", "7070"))
    _git(store_path, "commit", "-q", "-am", "hand edit")
    head = pygit2.Repository(str(store_path)).head.target
    res = query(store_path, "7070")
    assert keys(res) == ["svc"] and res["head"] == str(head) and res["hits"][0]["is_head"]
    assert query(store_path, "8080")["count"] == 0


def test_rebuild_after_reset(store_path):
    put(store_path, "svc", "Svc", "port 8080", T0)
    put(store_path, "svc", "Svc", "port 9090", T0 + 1)
    assert keys(query(store_path, "9090")) == ["svc"]
    _git(store_path, "reset", "-q", "--hard", "HEAD~1")
    f = fresh(store_path)
    f.conn.close()
    assert f.work["rebuilt"] is True
    assert query(store_path, "9090")["count"] == 0
    assert query(store_path, "9090", mode="history")["count"] == 0
    assert keys(query(store_path, "8080")) == ["svc"]


def test_corrupt_index_file_is_rebuilt(store_path):
    put(store_path, "svc", "Svc", "port 8080", T0)
    query(store_path, "8080")
    _db(store_path).write_bytes(b"this is not a database" * 100)
    assert keys(query(store_path, "8080")) == ["svc"]


def test_truncated_index_file_is_rebuilt(store_path):
    put(store_path, "svc", "Svc", "port 8080", T0)
    query(store_path, "8080")
    data = _db(store_path).read_bytes()
    _db(store_path).write_bytes(data[: len(data) // 3])
    assert keys(query(store_path, "8080")) == ["svc"]


def test_old_schema_index_is_rebuilt(store_path):
    put(store_path, "svc", "Svc", "port 8080", T0)
    query(store_path, "8080")
    conn = schema.connect(_db(store_path))
    conn.execute("UPDATE meta SET v = '0' WHERE k = 'schema'")
    conn.close()
    f = fresh(store_path)
    f.conn.close()
    assert f.work["rebuilt"] is True
    assert keys(query(store_path, "8080")) == ["svc"]


def _merge_store(store_path):
    """base: k1=v1, k2=v1; side branch changes k1; main changes k2 and retracts k3; merge."""
    repo = pygit2.Repository(str(store_path))
    put(store_path, "k1", "K1", "one base", T0)
    put(store_path, "k2", "K2", "two base", T0 + 1)
    base = put(store_path, "k3", "K3", "three base", T0 + 2)
    put(store_path, "k2", "K2", "two main", T0 + 10)
    from tests.support.index_helpers import remove

    main_tip = remove(store_path, "k3", T0 + 11)
    # Side branch from base, written without moving HEAD.
    from kyb_cli.core.records.model import Record
    from tests.support.index_helpers import set_file

    base_commit = repo[pygit2.Oid(hex=base)]
    blob = repo.create_blob(Record(key="k1", title="K1", body="one side").to_markdown().encode())
    tree = set_file(repo, base_commit.tree, path_of_key("k1"), blob)
    sig = pygit2.Signature("s", "s@example.org", T0 + 5, 0)
    side = repo.create_commit(None, sig, sig, "side edit\n", tree, [base_commit.id])
    # Merge: main's tree plus side's k1; a resolution also rewrites k2.
    main_commit = repo[pygit2.Oid(hex=main_tip)]
    merged = set_file(repo, main_commit.tree, path_of_key("k1"), blob)
    blob2 = repo.create_blob(Record(key="k2", title="K2", body="two resolved").to_markdown().encode())
    merged = set_file(repo, repo[merged], path_of_key("k2"), blob2)
    msig = pygit2.Signature("m", "m@example.org", T0 + 20, 0)
    merge = repo.create_commit("HEAD", msig, msig, "merge side\n", merged, [main_commit.id, side])
    return main_tip, str(side), str(merge)


def _state(store_path):
    return {h["key"]: (h["body"], h["state"], h["is_head"]) for h in query(store_path, "", limit=100)["hits"]}


def test_merge_commit_catch_up_matches_head_tree_and_rebuild(store_path):
    put(store_path, "k0", "K0", "zero", T0 - 10)
    query(store_path, "")  # index at the first commit; the merge history arrives as a catch-up
    _main_tip, side, merge = _merge_store(store_path)
    caught_up = _state(store_path)
    assert caught_up == {"k0": ("zero", "active", True), "k1": ("one side", "active", True),
                         "k2": ("two resolved", "active", True)}
    history = {(h["key"], h["body"]) for h in query(store_path, "", mode="history", limit=100)["hits"]}
    assert {("k1", "one side"), ("k2", "two main"), ("k2", "two resolved"), ("k3", "three base")} <= history
    side_hit = [h for h in query(store_path, "side", mode="history")["hits"] if h["key"] == "k1"]
    assert side_hit[0]["sha"] == side  # the change is listed where it was made, not at the merge
    _db(store_path).unlink()
    assert _state(store_path) == caught_up


def test_concurrent_readers_catch_up_without_failing(store_path, kyb):
    """Processes: readers racing each other's catch-up through the file system is the contract."""
    for i in range(30):
        put(store_path, f"key-{i}", f"Key {i}", f"body {i} common", T0 + i)
    procs = [subprocess.Popen([sys.executable, "-m", "kyb_cli", "query", "common", "--limit", "100"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=kyb.env | {"KYB_STORE": str(store_path)})
             for _ in range(3)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [o[1] for o in outs]
    assert {json.loads(o[0])["count"] for o in outs} == {30}


def test_query_path_imports_no_heavy_modules(store_path, kyb):
    put(store_path, "svc", "Svc", "port 8080", T0)
    assert kyb("query", "8080").code == 0  # builds the index
    res = kyb("query", "8080", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert res.code == 0 and json.loads(res.stdout)["count"] == 1
    imported = {line.split("|")[-1].strip().split(".")[0] for line in res.stderr.splitlines() if "|" in line}
    assert not imported & {"pygit2", "onnxruntime", "numpy", "platformdirs", "rich"}
