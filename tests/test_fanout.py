"""Issue 39: records fanned out by a hash bucket, old flat stores read as they are and moved by one
commit, and a move is never a version (history, --as-of, get --at, --version, diff follow the key).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pygit2
import pytest

from kyb_cli.core.records.keys import (by_key, is_record_candidate, key_of_path, old_path_of_key, path_of_key,
                                       path_problem)
from support.hostile import record_text
from support.sync_world import ATTR, Clock, World

T0 = 1_700_000_000  # 2023-11-14T22:13:20Z: before the test's own writes (now)


def git(store: Path, *args: str, when: int | None = None, check: bool = True) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "old", "GIT_AUTHOR_EMAIL": "old@example.invalid",
           "GIT_COMMITTER_NAME": "old", "GIT_COMMITTER_EMAIL": "old@example.invalid"}
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    proc = subprocess.run(["git", "-C", str(store), *args], env=env, capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def old_write(store: Path, key: str, body: str, when: int, path: str | None = None) -> str:
    """One record version written the way kyb wrote it before the fan-out: `knowledge/<key>.md`."""
    rel = path or old_path_of_key(key)
    (store / rel).parent.mkdir(parents=True, exist_ok=True)
    (store / rel).write_text(record_text(key, key.title(), body))
    git(store, "add", rel)
    git(store, "commit", "-q", "-m", f"kyb: add {key}", when=when)
    return git(store, "rev-parse", "HEAD")


def tree_files(store: Path, rev: str = "HEAD") -> list[str]:
    return sorted(git(store, "ls-tree", "-r", "--name-only", rev).split())


def old_store(store: Path) -> dict[str, str]:
    """alpha v1, alpha v2, beta v1, task-t1, one a second; the shas of each version."""
    return {"alpha1": old_write(store, "alpha", "one", T0 + 10), "alpha2": old_write(store, "alpha", "two", T0 + 20),
            "beta": old_write(store, "beta", "b", T0 + 30), "task": old_write(store, "task-t1", "do", T0 + 40)}


# -- the key authority -------------------------------------------------------------------------------

def test_a_key_path_is_its_kind_then_a_two_hex_bucket_of_sha1():
    h = hashlib.sha1(b"deploy-a").hexdigest()[:2]
    assert path_of_key("deploy-a") == f"knowledge/{h}/deploy-a.md"
    assert path_of_key("task-x").startswith("tasks/") and path_of_key("inc-x").startswith("incidents/")
    assert key_of_path(path_of_key("deploy-a")) == "deploy-a"
    assert key_of_path("knowledge/deploy-a.md") == "deploy-a"  # the old flat shape is still a record
    wrong = "00" if h != "00" else "01"
    for path in (f"knowledge/{wrong}/deploy-a.md", f"knowledge/{h}/x/deploy-a.md", f"tasks/{h}/deploy-a.md"):
        assert key_of_path(path) is None, path
    assert is_record_candidate(f"knowledge/{wrong}/deploy-a.md")
    assert "belongs at " + path_of_key("deploy-a") in path_problem(f"knowledge/{wrong}/deploy-a.md")
    assert not is_record_candidate(f"knowledge/{h}/x/deploy-a.md")  # deeper: not a record at all


def test_a_move_is_no_change_of_its_key():
    assert by_key({"knowledge/k.md": None, path_of_key("k"): "b1"}) == {"k": "b1"}
    assert by_key({path_of_key("k"): "b1", "knowledge/k.md": None}) == {"k": "b1"}
    assert by_key({"knowledge/k.md": None, "README.md": "x"}) == {"k": None}


# -- a new store, an old store ----------------------------------------------------------------------

def test_a_new_store_writes_fanned_paths_from_the_first_record(kyb, store_path):
    assert kyb("add", "--key", "deploy-a", "--title", "A", "--body", "a").code == 0
    assert kyb("task", "--key", "task-ship", "--title", "Ship", "--body", "go").code == 0
    assert tree_files(store_path) == sorted([path_of_key("deploy-a"), path_of_key("task-ship")])
    assert kyb("migrate").json == {"changed": False, "moved": 0}


def test_an_old_store_reads_right_and_reads_never_write(kyb, store_path):
    shas = old_store(store_path)
    head = git(store_path, "rev-parse", "HEAD")
    got = kyb("get", "alpha").json
    assert (got["body"], got["sha"]) == ("two", shas["alpha2"])
    assert [v["sha"] for v in kyb("history", "alpha").json["versions"]] == [shas["alpha2"], shas["alpha1"]]
    assert kyb("get", "task-t1").json["body"] == "do"
    assert kyb("query", "two").code == 0
    assert git(store_path, "rev-parse", "HEAD") == head
    assert tree_files(store_path) == sorted(old_path_of_key(k) for k in ("alpha", "beta", "task-t1"))
    doctor = kyb("doctor")
    assert "old flat layout" in doctor.stdout + doctor.stderr


def test_the_first_write_moves_the_store_in_one_commit_and_no_record_gets_a_version(kyb, store_path):
    shas = old_store(store_path)
    old_head = git(store_path, "rev-parse", "HEAD")
    before = {k: kyb("history", k).json["versions"] for k in ("alpha", "beta", "task-t1")}
    written = kyb("add", "--key", "gamma", "--title", "G", "--body", "g").json["sha"]
    # exactly two new commits: the move, then the write (one branch move)
    assert git(store_path, "rev-list", f"{old_head}..HEAD").split() == [written, git(store_path, "rev-parse", "HEAD^")]
    move = git(store_path, "rev-parse", "HEAD^")
    assert git(store_path, "rev-parse", "HEAD^^") == old_head
    assert "Kyb-Action: migrate" in git(store_path, "log", "-1", "--format=%B", move)
    moved = git(store_path, "diff-tree", "-r", "--name-status", "--no-renames", old_head, move).splitlines()
    assert len(moved) == 6  # three deletions, three additions
    assert all(git(store_path, "rev-parse", f"{old_head}:{old_path_of_key(k)}")
               == git(store_path, "rev-parse", f"{move}:{path_of_key(k)}") for k in ("alpha", "beta", "task-t1"))
    assert tree_files(store_path) == sorted(path_of_key(k) for k in ("alpha", "beta", "gamma", "task-t1"))
    assert git(store_path, "status", "--porcelain", "--untracked-files=all") == ""
    # history, get, get --at, --version, diff: the move is not a version of anything
    for key, rows in before.items():
        assert kyb("history", key).json["versions"] == rows, key
    assert kyb("get", "alpha").json["sha"] == shas["alpha2"]
    for rev in (old_head, move, "HEAD"):
        got = kyb("get", "alpha", "--at", rev).json
        assert (got["body"], got["sha"]) == ("two", shas["alpha2"]), rev
    assert kyb("get", "alpha", "--at", shas["alpha1"]).json["sha"] == shas["alpha1"]
    assert kyb("get", "alpha", "--version", "1").json["sha"] == shas["alpha1"]
    assert kyb("get", "alpha", "--version", "-1").json["sha"] == shas["alpha1"]
    diff = kyb("diff", "alpha").json
    assert (diff["from"]["sha"], diff["to"]["sha"]) == (shas["alpha1"], shas["alpha2"])
    assert kyb("diff", "alpha", old_head, "HEAD").json["diff"] == ""
    # --as-of before the move and after it: the versions old writes made
    for t, want in ((T0 + 15, {"alpha": shas["alpha1"]}),
                    (T0 + 45, {"alpha": shas["alpha2"], "beta": shas["beta"]})):
        stamp = datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        hits = kyb("query", "--as-of", stamp, "--kind", "knowledge", "--limit", "50").json["hits"]
        assert {h["key"]: h["sha"] for h in hits} == want, t
    after = kyb("query", "--as-of", "HEAD", "--kind", "knowledge", "--limit", "50").json["hits"]
    assert {h["key"]: h["sha"] for h in after} == {"alpha": shas["alpha2"], "beta": shas["beta"], "gamma": written}


def test_the_index_and_the_git_walk_agree_across_the_move(kyb, store_path):
    from kyb_cli.core.index import reads
    from tests.support import oracle

    old_store(store_path)
    kyb("add", "--key", "alpha", "--title", "Alpha", "--body", "three")
    kyb("rm", "beta", "--reason", "wrong")
    for key in ("alpha", "beta", "task-t1"):
        assert [r.sha for r in reads.history(store_path, key)] == [r.sha for r in oracle.history(store_path, key)]
    assert kyb("reindex").code == 0
    assert [v["body"] for v in [kyb("get", "alpha").json]] == ["three"]
    assert len(kyb("history", "alpha").json["versions"]) == 3


def test_kyb_migrate_moves_once_and_then_is_a_no_op(kyb, store_path):
    old_store(store_path)
    old_head = git(store_path, "rev-parse", "HEAD")
    first = kyb("migrate").json
    assert first["changed"] is True and first["moved"] == 3
    assert git(store_path, "rev-parse", "HEAD^") == old_head and git(store_path, "rev-parse", "HEAD") == first["sha"]
    assert kyb("migrate").json == {"changed": False, "moved": 0}
    assert git(store_path, "rev-parse", "HEAD") == first["sha"]
    assert git(store_path, "status", "--porcelain", "--untracked-files=all") == ""
    assert len(kyb("history", "alpha").json["versions"]) == 2
    row = kyb("log").json["log"][0]  # the move is one row of the store's log, about no single key
    assert (row["action"], row["key"], sorted(row["keys"])) == ("migrate", "", ["alpha", "beta", "task-t1"])


def test_a_write_that_changes_nothing_does_not_move_an_old_store(kyb, store_path):
    old_store(store_path)
    head = git(store_path, "rev-parse", "HEAD")
    assert kyb("add", "--key", "beta", "--title", "Beta", "--body", "b").json["changed"] is False
    assert git(store_path, "rev-parse", "HEAD") == head


def test_the_move_never_overwrites_a_hand_edit(kyb, store_path):
    old_store(store_path)
    (store_path / old_path_of_key("beta")).write_text("hand edit\n")
    res = kyb("add", "--key", "gamma", "--title", "G", "--body", "g")
    assert res.code != 0 and "uncommitted changes" in res.stderr
    assert (store_path / old_path_of_key("beta")).read_text() == "hand edit\n"


def test_kyb_check_reports_one_key_at_both_paths(kyb, store_path):
    kyb("add", "--key", "alpha", "--title", "Alpha", "--body", "one")
    (store_path / old_path_of_key("alpha")).write_text((store_path / path_of_key("alpha")).read_text())
    res = kyb("check")
    assert res.code != 0 and "duplicate key 'alpha'" in res.stdout + res.stderr


# -- sync between shapes -----------------------------------------------------------------------------

@pytest.fixture
def world(tmp_path, monkeypatch):
    from kyb_cli.core.canon.repo import Store

    clock = Clock()
    monkeypatch.setattr(Store, "signature", lambda _store: clock.signature())
    return World(tmp_path)


def _old_peer(world, name: str) -> Path:
    """A plain-git clone of the team's remote: a kyb from before the fan-out, writing flat paths."""
    path = world.root / name
    subprocess.run(["git", "clone", "-q", str(world.remote), str(path)], check=True, capture_output=True)
    return path


def _read(store, key: str):
    from kyb_cli.core.index import reads

    return reads.read(store, key)


def test_old_and_new_shape_clones_sync_both_ways_with_nothing_lost(world):
    old = _old_peer(world, "old")
    old_write(old, "alpha", "one", T0 + 10)
    old_write(old, "beta", "b", T0 + 11)
    git(old, "push", "-q", "origin", "HEAD:main")
    new = world.clone("new")
    assert _read(new, "alpha").record.body == "one"  # an old-shape clone reads right
    world.add(new, "gamma", "g")  # the first write moves the store
    assert world.sync(new)["pushed"]
    # meanwhile the old peer, not pulled, edits alpha and adds delta at flat paths
    edit = old_write(old, "alpha", "one, edited by the old peer", T0 + 12)
    added = old_write(old, "delta", "d", T0 + 13)
    git(old, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")  # git merges: a tree git made
    git(old, "push", "-q", "origin", "HEAD:main")
    reply = world.sync(new)
    assert reply["conflicts"] == []
    files = tree_files(new.path)
    assert all(key_of_path(p) is not None for p in files)
    keys = sorted(key_of_path(p) for p in files)
    assert keys == sorted(set(keys)) == ["alpha", "beta", "delta", "gamma"]  # no key held twice
    assert _read(new, "alpha").record.body == "one, edited by the old peer"
    assert _read(new, "alpha").sha == edit and _read(new, "delta").sha == added
    from kyb_cli.core.index import reads

    assert [r.sha for r in reads.history(new, "alpha")][:1] == [edit]
    assert len(reads.history(new, "alpha")) == 2


def test_an_old_shape_kyb_store_merges_a_new_shape_peer_by_key(world):
    a = world.clone("a")
    old = _old_peer(world, "old")
    old_write(old, "alpha", "one", T0 + 10)
    git(old, "push", "-q", "origin", "HEAD:main")
    world.sync(a)  # a fast-forwards to the old shape and does not write: it stays old
    assert old_path_of_key("alpha") in tree_files(a.path)
    b = world.clone("b")
    world.add(b, "alpha", "two, from the new shape")  # moves, then writes
    world.sync(b)
    hand = old_write(a.path, "beta", "written by hand in the old shape", T0 + 5)
    reply = world.sync(a)
    assert reply["merged"]
    assert _read(a, "alpha").record.body == "two, from the new shape"
    assert _read(a, "beta").sha == hand
    keys = [key_of_path(p) for p in tree_files(a.path)]
    assert sorted(keys) == ["alpha", "beta"]
    assert git(a.path, "status", "--porcelain", "--untracked-files=all") == ""


# -- a hostile peer ----------------------------------------------------------------------------------

def test_a_peer_tree_holding_one_key_at_both_paths_is_refused(world):
    from kyb_cli.core.errors import KybError

    a = world.clone("a")
    world.add(a, "alpha", "one")
    world.sync(a)
    peer = _old_peer(world, "peer")
    (peer / old_path_of_key("alpha")).write_text(record_text("alpha", "Alpha", "smuggled twin"))
    git(peer, "add", "-A")
    git(peer, "commit", "-q", "-m", "twin", when=T0 + 100)
    git(peer, "push", "-q", "origin", "HEAD:main")
    head = a.head_sha()
    with pytest.raises(KybError, match="held at two paths"):
        world.sync(a)
    assert a.head_sha() == head
    assert _read(a, "alpha").record.body == "one"


def test_a_wrong_bucket_is_not_a_record(world):
    a = world.clone("a")
    peer = _old_peer(world, "peer")
    right = path_of_key("alpha")
    wrong = f"knowledge/{'00' if right.split('/')[1] != '00' else '01'}/alpha.md"
    (peer / wrong).parent.mkdir(parents=True)
    (peer / wrong).write_text(record_text("alpha", "Alpha", "misplaced"))
    git(peer, "add", "-A")
    git(peer, "commit", "-q", "-m", "misplaced", when=T0 + 100)
    git(peer, "push", "-q", "origin", "HEAD:main")
    reply = world.sync(a)
    assert [h["path"] for h in reply["held_out"]] == [wrong]
    from kyb_cli.core.errors import NotFound

    with pytest.raises(NotFound):
        _read(a, "alpha")


def test_attribution_is_kept_on_the_move_commit(store_path):
    from kyb_cli.core.canon.transaction import migrate
    from kyb_cli.core.canon.repo import Store

    old_store(store_path)
    reply = migrate(Store(store_path), ATTR)
    message = pygit2.Repository(str(store_path))[reply["sha"]].message
    assert "Kyb-Action: migrate" in message and "Kyb-Agent: test-agent" in message


def test_the_move_keeps_a_file_already_at_its_new_path_and_reads_each_tree_once(tmp_path):
    """move_changes on a flat tree where one key is at both paths: the old file goes, the new one
    stays; the other keys move with their blob and mode (one pass per bucket, no lookup per key)."""
    import pygit2

    from kyb_cli.core.canon.migrate import move_changes, old_files
    from kyb_cli.core.canon.tree import BLOB_MODE, apply_changes
    from kyb_cli.core.records.keys import path_of_key

    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    blobs = {k: repo.create_blob(f"+++\nkey = \"{k}\"\n+++\n\n{k}\n".encode()) for k in ("alpha", "beta", "inc-gamma")}
    files = {"knowledge/alpha.md": blobs["alpha"], "knowledge/beta.md": blobs["beta"],
             path_of_key("beta"): blobs["beta"], "incidents/inc-gamma.md": blobs["inc-gamma"],
             "knowledge/notes.txt": blobs["alpha"]}
    tree = apply_changes(repo, None, {p: (b, BLOB_MODE) for p, b in files.items()})
    sig = pygit2.Signature("t", "t@x", 1_700_000_000, 0)
    commit = repo[repo.create_commit(None, sig, sig, "flat", tree, [])]
    changes = move_changes(commit)
    assert changes == {"knowledge/alpha.md": None, path_of_key("alpha"): (blobs["alpha"], BLOB_MODE),
                       "knowledge/beta.md": None,
                       "incidents/inc-gamma.md": None, path_of_key("inc-gamma"): (blobs["inc-gamma"], BLOB_MODE)}
    assert move_changes(commit, old_files(commit)) == changes
