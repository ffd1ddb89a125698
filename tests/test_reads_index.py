"""Per-key reads from the sidecar index give the Git walk's answers.

Production reads go only through the index (there is no fallback to hide a divergence); the Git
walk in tests/support/oracle.py is the reference these tests compare against.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.errors import NotFound
from kyb_cli.core.kinds.incidents import list_incidents, resolve_incident, write_incident
from kyb_cli.core.index import reads
from kyb_cli.core.kinds.knowledge import add_knowledge, retract_knowledge
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.kinds.tasks import close_task, list_tasks, transition_task, write_task
from support.oracle import Walk
from kyb_cli.core.records.keys import path_of_key

ATTR = Attribution("test-agent", "s1", "w1", "cli")
GIT_ENV = {"GIT_AUTHOR_NAME": "Hand Editor", "GIT_AUTHOR_EMAIL": "hand@example.invalid",
           "GIT_COMMITTER_NAME": "Hand Editor", "GIT_COMMITTER_EMAIL": "hand@example.invalid"}


def git(path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(path), *args], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def know(store, key: str, body: str, tags=("ops",)) -> str:
    return add_knowledge(store, key=key, title=key.title(), body=body, tags=list(tags), refs=[],
                         attribution=ATTR).sha


def lifecycle_store(store) -> list[str]:
    """Adds, updates, retractions (with and without reasons), re-adds, archives, a plain-git edit."""
    know(store, "port", "listens on 8080", tags=("Net", "ops"))
    know(store, "port", "listens on 9090", tags=("net",))
    know(store, "cache", "redis")
    retract_knowledge(store, "cache", "it was memcached all along", ATTR)
    know(store, "flaky", "retry twice")
    retract_knowledge(store, "flaky", "no", ATTR)
    know(store, "flaky", "retry three times", tags=("ci",))
    write_task(store, ATTR, key="task-migrate", title="Migrate", status="open", assignee="ann", tags=["db"])
    transition_task(store, ATTR, "task-migrate", status="in_progress", assignee="bob")
    close_task(store, ATTR, "task-migrate", status="done", resolution="migrated")
    write_task(store, ATTR, key="task-docs", title="Docs", status="blocked", blocked_reason="waiting")
    write_incident(store, ATTR, key="inc-outage", title="Outage", service="Checkout", severity="high",
                   body="- [ ] follow up")
    resolve_incident(store, ATTR, "inc-outage", resolution="rolled back")
    write_incident(store, ATTR, key="inc-slow", title="Slow", service="search", severity="low")
    (store.path / path_of_key("port")).parent.mkdir(parents=True, exist_ok=True)
    (store.path / path_of_key("port")).write_text(
        (store.path / path_of_key("port")).read_text().replace("9090", "9091"))
    git(store.path, "commit", "-q", "-am", "hand edit of port")
    return ["port", "cache", "flaky", "task-migrate", "task-docs", "inc-outage", "inc-slow", "never"]


def outcome(fn):
    """A read's JSON, or the NotFound it raised (message and details): what a client sees."""
    try:
        value = fn()
    except NotFound as exc:
        return ("NotFound", str(exc), exc.details)
    if isinstance(value, list):
        return [v.to_json() if hasattr(v, "to_json") else v for v in value]
    return value.to_json() if hasattr(value, "to_json") else value


def test_get_from_index_matches_git_walk(store):
    keys = lifecycle_store(store)
    walk = Walk(store.path)
    revs = git(store.path, "rev-list", "HEAD").split() + ["HEAD~3", "main"]
    for key in keys:
        assert outcome(lambda: reads.read(store.path, key)) == outcome(lambda: walk.read(key)), key
        for rev in revs:
            assert outcome(lambda: reads.read(store.path, key, at=rev)) == \
                outcome(lambda: walk.read(key, at=rev)), (key, rev)


def test_history_from_index_matches_git_walk(store):
    keys = lifecycle_store(store)
    walk = Walk(store.path)
    for key in keys:
        assert outcome(lambda: reads.history(store.path, key)) == outcome(lambda: walk.history(key)), key
    changes = [row.change for row in reads.history(store.path, "flaky")]
    assert changes == ["added", "deleted", "added"]


def test_tags_from_index_match_git_walk(store):
    lifecycle_store(store)
    tags = reads.tags(store.path)
    assert tags == Walk(store.path).tags()
    assert {"tag": "net", "count": 1} in tags  # "Net" and "net" on one record count once, lowercased


def test_listings_from_index_match_git_walk(store):
    lifecycle_store(store)
    for kind in ("task", "incident", "knowledge"):
        def by_key(entries):
            return sorted(entries, key=lambda e: e.record.key)

        assert by_key(reads.catalog(store.path, kind)) == by_key(Walk(store.path).catalog(kind))
    for include in (False, True):
        from_index = list_tasks(store, include_archived=include)
        rows = [r["key"] for r in from_index]
        assert rows == (["task-docs", "task-migrate"] if include else ["task-docs"])
        from_index = list_incidents(store.path, include_archived=include)
        assert [r["key"] for r in from_index] == (["inc-slow", "inc-outage"] if include else ["inc-slow"])
    indexed = (list_tasks(store, include_archived=True), list_incidents(store, include_archived=True))
    with pytest.MonkeyPatch.context() as mp:  # the same listings built from the oracle's catalog
        mp.setattr("kyb_cli.core.kinds.catalog.catalog", lambda s, kind: Walk(s).catalog(kind))
        walked = (list_tasks(store, include_archived=True), list_incidents(store, include_archived=True))
    assert indexed == walked


def test_retracted_get_message_unchanged(cli, store):
    know(store, "cache", "redis")
    retract_knowledge(store, "cache", "it was memcached all along", ATTR)
    with pytest.raises(NotFound) as walked:
        Walk(store.path).read("cache")
    indexed = cli("get", "cache")
    assert indexed.code == 1
    assert indexed.stdout == ""
    assert indexed.stderr == f"kyb: {walked.value.message}\n"
    assert "because: it was memcached all along" in indexed.stderr and "kyb get cache --at " in indexed.stderr


def test_get_sees_commit_made_with_plain_git(kyb, store):
    know(store, "port", "listens on 8080")
    assert kyb("get", "port").json["body"] == "listens on 8080"  # the index is built here
    path = store.path / path_of_key("port")
    path.write_text(path.read_text().replace("8080", "9090"))
    git(store.path, "commit", "-q", "-am", "moved the port by hand")
    got = kyb("get", "port")
    assert got.json["body"] == "listens on 9090"
    assert got.json["sha"] == git(store.path, "rev-parse", "HEAD")
    history = kyb("history", "port").json["versions"]
    assert [(v["change"], v["message"], v["author"]) for v in history][0] == \
        ("modified", "moved the port by hand", "Hand Editor <hand@example.invalid>")


def test_reads_without_the_git_program_are_a_clear_store_error(kyb, store, tmp_path):
    """No silent fallback: reads go through the index, which needs `git`; without it, exit 4 and why."""
    know(store, "port", "listens on 8080")
    know(store, "db", "postgres", tags=("data",))
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    (store.path / ".git" / "kyb" / "index.sqlite").unlink(missing_ok=True)
    for args in (("get", "db"), ("history", "port"), ("tags",)):
        got = kyb(*args, env={"PATH": str(empty)})  # no `git` program: the index cannot be built
        assert (got.code, got.stdout) == (4, ""), args
        assert got.stderr.startswith("kyb: ") and "`git`" in got.stderr and len(got.stderr.splitlines()) == 1
    assert not (store.path / ".git" / "kyb" / "index.sqlite").exists()


def test_get_at_revision_off_the_indexed_line_is_answered_from_its_tree(store):
    know(store, "port", "listens on 8080")
    base = git(store.path, "rev-parse", "HEAD")
    know(store, "port", "listens on 9090")
    git(store.path, "branch", "side", base)
    side = store.path.parent / "side"
    git(store.path, "worktree", "add", "-q", str(side), "side")
    (side / path_of_key("port")).parent.mkdir(parents=True, exist_ok=True)
    (side / path_of_key("port")).write_text((side / path_of_key("port")).read_text().replace("8080", "7070"))
    git(side, "commit", "-q", "-am", "side edit")
    walk = Walk(store.path)
    for rev in ("side", "side~1"):
        got = reads.read(store.path, "port", at=rev).to_json()
        assert got == walk.read("port", at=rev).to_json()
    assert reads.read(store.path, "port", at="side").to_json()["body"] == "listens on 7070"


def merged_store(tmp_path):
    """Two clones write concurrently and sync: merge commits, one with a conflict-free side change."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__)))
    from support.sync_world import World

    world = World(tmp_path / "world")
    a, b = world.clone("a"), world.clone("b")
    world.add(a, "shared", "v1")
    world.add(a, "only-a", "a1")
    world.sync(a)
    world.sync(b)
    world.add(a, "shared", "v2 from a")
    world.add(b, "only-b", "b1")
    world.add(b, "only-a-copy", "x")
    world.sync(a)
    world.sync(b)  # b merges a's change of `shared`
    world.add(b, "shared", "v3 from b")
    world.add(a, "only-a", "a2")
    world.sync(b)
    world.sync(a)  # a merges b's change
    world.retract(a, "only-b", "wrong")
    world.sync(a)
    world.sync(b)
    return b


def test_history_on_sync_merge_lists_the_walks_changes(tmp_path):
    b = merged_store(tmp_path)
    merges = git(b.path, "rev-list", "--merges", "HEAD").split()
    assert merges, "the world should have merged"
    walk = Walk(b.path)
    for key in ("shared", "only-a", "only-b", "only-a-copy"):
        ours = [r.to_json() for r in reads.history(b.path, key)]
        theirs = [r.to_json() for r in walk.history(key)]
        # Same rows; concurrent lines may interleave differently (revision order vs commit time).
        assert sorted(ours, key=json.dumps) == sorted(theirs, key=json.dumps), key
        assert not {r["sha"] for r in ours} & set(merges)  # a merge that took one side is not a change
        assert outcome(lambda: reads.read(b.path, key)) == outcome(lambda: walk.read(key)), key


def test_get_and_history_do_not_import_pygit2(kyb, store):
    know(store, "port", "listens on 8080")
    kyb("get", "port")  # build the index
    for args in (("get", "port"), ("history", "port"), ("tags",)):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "kyb_cli", *args], env=kyb.env | {
            "KYB_STORE": str(store.path)}, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
        assert "pygit2" not in imported, args


def test_history_lists_a_merge_that_wrote_new_content(store):
    """Two lines edit a key, the merge resolves to a third text: all three are changes, as in the walk.

    Known difference (documented in index/reads.py): the same edit made on both lines is listed once."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__)))
    import pygit2
    from support.index_helpers import _commit

    from kyb_cli.core.records.model import Record

    def text(body: str) -> bytes:
        return Record(key="port", title="Port", body=body).to_markdown().encode()

    base = _commit(store.path, path_of_key("port"), text("8080"), 1_800_000_000, "kyb: add port\n")
    x = _commit(store.path, path_of_key("port"), text("9090"), 1_800_000_010, "line x\n")
    y = _commit(store.path, path_of_key("port"), text("7070"), 1_800_000_020, "line y\n",
                parents=[pygit2.Oid(hex=base)], ref=None)
    merge = _commit(store.path, path_of_key("port"), text("6060"), 1_800_000_030, "merge, resolved\n",
                    parents=[pygit2.Oid(hex=x), pygit2.Oid(hex=y)])
    walk = Walk(store.path)
    ours = [(r.sha, r.change) for r in reads.history(store.path, "port")]
    assert sorted(ours) == sorted((r.sha, r.change) for r in walk.history("port"))
    assert {sha for sha, _ in ours} == {base, x, y, merge}
    assert reads.read(store.path, "port").to_json() == walk.read("port").to_json()
    assert reads.read(store.path, "port", at=y).to_json() == walk.read("port", at=y).to_json()
