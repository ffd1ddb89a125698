"""The batch path (canon/batch.py): several commits, one branch move; a killed import leaves the
store as it was (or, once the branch moved, with every record), never half-written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.oracle import live_records as _oracle_live
from kyb_cli.core.records.keys import path_of_key

ROOT = Path(__file__).resolve().parents[1]


def _notes(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"note-{i:04d}.md").write_text(f"# Note {i}\n\nport {8000 + i} on node-{i % 7}\n")
    return folder


def live_records(store: Path) -> dict:
    records, errors = _oracle_live(store)
    assert errors == []
    return {r.key: r for r in records}


def _git(store: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(store), *args], capture_output=True, text=True).stdout.strip()


def test_pygit2_fast_import_and_the_pack_writer_make_identical_commits(store, monkeypatch):
    from kyb_cli.core.canon import batch

    monkeypatch.setenv("GIT_AUTHOR_NAME", "Batch Test")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "batch@kyb.invalid")
    monkeypatch.setattr(store, "signature", lambda: __import__("pygit2").Signature(
        "Batch Test", "batch@kyb.invalid", 1_700_000_000, 60))
    base = store.head_commit()
    commits = [batch.Commit(f"kyb: add k{i}\n\nKyb-Action: add\n", {f"knowledge/k{i}.md": f"+++\nbody {i}\n".encode()})
               for i in range(5)]
    commits.append(batch.Commit("kyb: retract k1\n", {path_of_key("k1"): None}))
    one, changes_one = batch.write_objects(store, base, commits, fast_import=False)
    two, changes_two = batch.write_objects(store, base, commits, fast_import="git")
    three, changes_three = batch.write_objects(store, base, commits, fast_import=True)
    assert one == two == three and changes_one == changes_two == changes_three
    assert changes_one[path_of_key("k1")] is None
    assert store.head_commit().id == base.id  # objects only: the branch did not move
    assert not [r for r in store.repo.references if r.startswith(batch.TEMP_REF_PREFIX)]


@pytest.mark.slow
def test_the_pack_writer_matches_pygit2_over_long_histories_and_git_fsck_accepts_it(store, tmp_path, monkeypatch):
    """More commits than the delta depth, updates, removals, three record directories fanned out by
    bucket (buckets emptied by a retract and filled again), a base with records in it: the same commit
    ids as pygit2, and `git fsck --full` finds the pack sound."""
    import random

    import pygit2

    from kyb_cli.core.canon import batch, packwrite

    sig = pygit2.Signature("Pack Test", "pack@kyb.invalid", 1_700_000_000, -90)
    store.signature = lambda: sig  # type: ignore[method-assign]
    seed = [batch.Commit(f"kyb: add s{i}\n", {path_of_key(f"s{i}"): b"seed %d\n" % i}) for i in range(3)]
    tip, _ = batch.write_objects(store, store.head_commit(), seed, fast_import=False)
    base = store.repo[tip].peel(pygit2.Commit)
    rng = random.Random(5)
    commits = [batch.Commit("kyb: add again\n", {path_of_key("again"): b"a\n"}),
               batch.Commit("kyb: retract again\n", {path_of_key("again"): None}),  # the pack's first empty tree
               batch.Commit("kyb: retract s1\n", {path_of_key("s1"): None})]  # a base bucket emptied
    for i in range(130):
        d = rng.choice(("knowledge", "knowledge", "incidents", "tasks"))
        prefix = {"knowledge": "k", "incidents": "inc-", "tasks": "task-"}[d]
        name = path_of_key(f"{prefix}{rng.randrange(60):03d}")
        data = None if rng.random() < 0.15 else b"version %d of %s\n" % (i, name.encode())
        commits.append(batch.Commit(f"kyb: write {i}\n", {name: data}))
    commits.append(batch.Commit("kyb: add again\n", {path_of_key("again"): b"a\n"}))
    commits.append(batch.Commit("kyb: retract again\n", {path_of_key("again"): None}))  # its bucket emptied
    commits.append(batch.Commit("kyb: again, again\n", {path_of_key("again"): b"c\n"}))  # and filled again
    commits.append(batch.Commit("kyb: after\n", {path_of_key("after"): b"b\n"}))
    commits.append(batch.Commit("kyb: several\n", {path_of_key("s0"): None, path_of_key("task-999"): b"x\n",
                                                    path_of_key("zz"): b"y\n"}))
    live: dict[str, bytes | None] = {}
    for c in commits:
        live.update(c.changes)
    tasks = sorted(p for p, data in live.items() if p.startswith("tasks/") and data is not None)
    for p in tasks:  # a whole record directory emptied one record a commit, then filled again
        commits.append(batch.Commit(f"kyb: retract {p}\n", {p: None}))
    commits.append(batch.Commit("kyb: task again\n", {path_of_key("task-1"): b"t\n"}))
    emptied = [c for c in commits if list(c.changes.values()) == [None]]
    assert len(emptied) > 10 and len(tasks) > 3
    paths = [p for c in commits for p in c.changes]
    assert packwrite.supported(paths) and all(p.count("/") == 2 for p in paths)
    loose, changes_loose = batch.write_objects(store, base, commits, fast_import=False)
    monkeypatch.setattr(batch, "_with_fast_import", None)  # the pack writer, not git fast-import
    packed, changes_packed = batch.write_objects(store, base, commits, fast_import=True)
    assert loose == packed and changes_loose == changes_packed
    assert "tasks" not in store.repo[loose].parents[0].tree  # the directory was gone before the last commit
    clone = tmp_path / "clone"
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    for pack in (store.path / ".git" / "objects" / "pack").glob("pack-*"):
        (clone / ".git" / "objects" / "pack" / pack.name).write_bytes(pack.read_bytes())
    fsck = subprocess.run(["git", "-C", str(clone), "fsck", "--full", "--no-dangling"], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    objects = subprocess.run(["git", "-C", str(clone), "count-objects", "-v"], capture_output=True,
                             text=True).stdout
    assert "in-pack: 0" not in objects


def test_hand_edited_sees_changed_added_and_deleted_files(store):
    from kyb_cli.core.canon import batch

    repo = store.repo
    blob = repo.create_blob(b"x\n")
    (store.path / "knowledge").mkdir(exist_ok=True)
    (store.path / path_of_key("new")).parent.mkdir(parents=True, exist_ok=True)
    (store.path / path_of_key("new")).write_text("by hand\n")
    assert batch.hand_edited(repo, {path_of_key("new"): None, path_of_key("absent"): None}) == {path_of_key("new")}
    assert batch.hand_edited(repo, {path_of_key("gone"): blob}) == {path_of_key("gone")}


@pytest.mark.parametrize("step", ["before-ref", "after-ref", "after-worktree"])
def test_import_killed_at_a_step_leaves_the_store_before_or_after(kyb, tmp_path, step):
    folder = _notes(tmp_path / "notes", 40)
    before = _git(kyb.store_path, "rev-parse", "HEAD")
    env = dict(os.environ, KYB_STORE=str(kyb.store_path), PYTHONPATH=os.environ.get("PYTHONPATH", str(ROOT)))
    proc = subprocess.run([sys.executable, "-m", "tests.support.faults", step, "kill", "import", str(folder)],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL
    after = _git(kyb.store_path, "rev-parse", "HEAD")
    records = live_records(kyb.store_path)
    if step == "before-ref":
        assert after == before and records == {}
    else:
        assert len(records) == 40  # the branch moved: every record, each in its own commit
        assert _git(kyb.store_path, "rev-list", "--count", "HEAD") == "41"
    again = kyb("import", str(folder))  # the next write finishes or redoes it
    assert again.code == 0, again.stderr
    assert len(live_records(kyb.store_path)) == 40
    assert _git(kyb.store_path, "status", "--porcelain") == ""


@pytest.mark.slow
def test_import_killed_at_any_moment_leaves_a_whole_prefix(kyb, tmp_path):
    """A real SIGKILL at spread-out moments: HEAD is the old HEAD or a commit of this import whose
    tree holds exactly the records of the commits before it (a prefix), each file whole."""
    folder = _notes(tmp_path / "notes", 300)
    env = dict(os.environ, KYB_STORE=str(kyb.store_path))
    base = _git(kyb.store_path, "rev-parse", "HEAD")
    for delay in (0.3, 0.8, 1.5, 2.5):
        proc = subprocess.Popen([sys.executable, "-m", "kyb_cli", "import", str(folder)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.kill()
        proc.wait()
        head = _git(kyb.store_path, "rev-parse", "HEAD")
        if head == base:
            continue
        records = live_records(kyb.store_path)
        n = int(_git(kyb.store_path, "rev-list", "--count", f"{base}..HEAD"))
        assert len(records) == n  # one record per commit: the tree is the prefix of the commits
        for key, record in records.items():
            i = int(key.split("-")[1])
            assert (record.title, record.body) == (f"Note {i}", f"port {8000 + i} on node-{i % 7}")
        break
    res = kyb("import", str(folder))
    assert res.code == 0, res.stderr
    assert len(live_records(kyb.store_path)) == 300
