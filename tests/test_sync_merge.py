"""`kyb sync` integration rules, end to end with real Git and local bare remotes (library calls)."""

from __future__ import annotations

import pytest

from kyb_cli.core.errors import Rejected, StoreError
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.index import reads
from support.sync_world import ATTR, Clock, World, git
from kyb_cli.core.records.keys import path_of_key


@pytest.fixture
def world(tmp_path, monkeypatch):
    clock = Clock()
    monkeypatch.setattr(Store, "signature", lambda _store: clock.signature())
    w = World(tmp_path)
    w.clock = clock
    return w


def test_different_keys_never_conflict(world):
    a, b = world.clone("a"), world.clone("b")
    world.add(a, "alpha", "from a")
    world.add(b, "beta", "from b")
    world.sync(a)
    reply = world.sync(b)
    assert reply["merged"] and reply["pushed"] and reply["conflicts"] == []
    merge = b.repo[reply["head"]]
    assert [str(p) for p in merge.parent_ids][1] == str(a.head_sha())  # parents: local head, remote head
    world.settle([a, b])
    world.check([a, b])
    assert {str(p.relative_to(a.path)) for p in (a.path / "knowledge").glob("*/*.md")} == {
        path_of_key("alpha"), path_of_key("beta")}


def test_fast_forward_makes_no_merge_commit(world):
    a, b = world.clone("a"), world.clone("b")
    world.add(a, "alpha", "one")
    world.add(a, "alpha", "two")
    world.sync(a)
    reply = world.sync(b)
    assert reply["fast_forward"] and not reply["merged"] and not reply["pushed"]
    assert b.head_sha() == a.head_sha()
    assert (b.path / path_of_key("alpha")).read_text().strip().endswith("two")
    world.check([a, b])


def test_same_key_later_write_wins_and_both_versions_stay(world):
    a, b = world.clone("a"), world.clone("b")
    early = world.add(b, "shared", "b wrote first")
    late = world.add(a, "shared", "a wrote later")
    world.sync(a)
    reply = world.sync(b)
    assert reply["conflicts"] == [{
        "key": "shared", "type": "both_changed", "kept": late, "other": early,
        "kept_at": reply["conflicts"][0]["kept_at"], "other_at": reply["conflicts"][0]["other_at"],
        "kept_side": "remote", "path": path_of_key("shared"), "merge": reply["head"]}]
    world.settle([a, b])
    world.check([a, b])
    assert "a wrote later" in (b.path / path_of_key("shared")).read_text()
    assert {early, late} <= {row.sha for row in reads.history(b.path, "shared")}


def test_the_clone_whose_write_lost_is_told_when_it_syncs(world):
    """The merge was made on another clone; fast-forwarding to it must not replace our version silently."""
    a, b = world.clone("a"), world.clone("b")
    lost = world.add(a, "shared", "a wrote first")
    kept = world.add(b, "shared", "b wrote later")
    world.sync(a)
    decided = world.sync(b)  # b merges: its later write wins, a's version loses
    reply = world.sync(a)  # a fast-forwards to b's merge
    assert reply["fast_forward"]
    assert [(c["key"], c["type"], c["kept"], c["other"], c["kept_side"], c["merge"]) for c in reply["conflicts"]] == [
        ("shared", "both_changed", kept, lost, "remote", decided["head"])]
    assert world.sync(a)["conflicts"] == []  # told once, not on every sync
    c = world.clone("c")  # a clone that never had the losing version hears nothing
    assert world.sync(c)["conflicts"] == []
    world.check([a, b, c])


def test_conflict_tie_on_commit_time_is_broken_by_sha(world):
    a, b = world.clone("a"), world.clone("b")
    world.clock.pinned = 1_900_000_000
    sha_a = world.add(a, "shared", "version a")
    sha_b = world.add(b, "shared", "version b")
    world.sync(a)
    reply = world.sync(b)
    (conflict,) = reply["conflicts"]
    assert conflict["kept"] == max(sha_a, sha_b) and conflict["other"] == min(sha_a, sha_b)
    world.clock.pinned = None
    world.settle([a, b])
    world.check([a, b])


def test_conflict_resolution_is_the_same_on_every_clone(world):
    """Two clones that merge the same two heads independently build the same tree."""
    from kyb_cli.core.sync import integrate as core

    a, b = world.clone("a"), world.clone("b")
    world.add(a, "shared", "a")
    world.add(a, "only-a", "a")
    world.add(b, "shared", "b")
    world.add(b, "only-b", "b")
    head_a, head_b = a.head_commit(), b.head_commit()
    git("fetch", "--quiet", str(b.path), "main:refs/heads/from-b", cwd=a.path)
    git("fetch", "--quiet", str(a.path), "main:refs/heads/from-a", cwd=b.path)
    step_a = core.integrate(a, a.repo.lookup_reference("refs/heads/from-b").peel(), ATTR)
    step_b = core.integrate(b, b.repo.lookup_reference("refs/heads/from-a").peel(), ATTR)
    assert a.repo[step_a.head].tree.id == b.repo[step_b.head].tree.id
    assert [c.kept for c in step_a.conflicts] == [c.kept for c in step_b.conflicts]
    assert str(head_a.id) != str(head_b.id)


def test_three_clones_converge(world):
    a, b, c = world.clone("a"), world.clone("b"), world.clone("c")
    for round_ in range(3):
        for name, store in (("a", a), ("b", b), ("c", c)):
            world.add(store, f"{name}-{round_}", f"{name} round {round_}")
            world.add(store, "shared", f"{name} round {round_}")
        world.sync(b)
        world.sync(c)
        world.sync(a)
    world.settle([a, b, c])
    world.check([a, b, c])
    # the last write anywhere is the one every clone keeps
    assert reads.read(a.path, "shared").record.body.strip() == "c round 2"


def test_retract_vs_edit_keeps_the_edit_and_reports_it(world):
    a, b = world.clone("a"), world.clone("b")
    world.add(a, "fact", "v1")
    world.sync(a)
    world.sync(b)
    edit = world.add(a, "fact", "v2, corrected")
    retraction = world.retract(b, "fact", "turned out wrong")
    world.sync(a)
    reply = world.sync(b)
    (conflict,) = reply["conflicts"]
    assert conflict["type"] == "retract_vs_edit"
    assert conflict["kept"] == edit and conflict["other"] == retraction
    world.settle([a, b])
    world.check([a, b])
    assert "v2, corrected" in reads.read(b.path, "fact").record.body


def test_edit_vs_retract_is_the_same_rule_from_the_other_side(world):
    a, b = world.clone("a"), world.clone("b")
    world.add(a, "fact", "v1")
    world.sync(a)
    world.sync(b)
    retraction = world.retract(a, "fact")
    edit = world.add(b, "fact", "v2")
    world.sync(b)
    reply = world.sync(a)
    assert [(c["type"], c["kept"], c["other"], c["kept_side"]) for c in reply["conflicts"]] == [
        ("retract_vs_edit", edit, retraction, "remote")]
    world.settle([a, b])
    world.check([a, b])


def test_retract_on_one_side_only_is_no_conflict(world):
    a, b = world.clone("a"), world.clone("b")
    world.add(a, "fact", "v1")
    world.sync(a)
    world.sync(b)
    world.retract(a, "fact")
    world.add(b, "other", "x")
    world.sync(a)
    reply = world.sync(b)
    assert reply["conflicts"] == []
    assert not (b.path / path_of_key("fact")).exists()
    world.settle([a, b])
    world.check([a, b])


def test_unparseable_record_is_held_out_and_reported_not_a_stop(world):
    """held-out (tests/test_sync_hostile.py): one peer's broken file never stops a team from sharing."""
    a, b = world.clone("a"), world.clone("b")
    (b.path / path_of_key("broken")).parent.mkdir(parents=True)
    (b.path / path_of_key("broken")).write_text("no front matter here\n")
    git("add", path_of_key("broken"), cwd=b.path)
    git("commit", "--quiet", "-m", "hand commit", cwd=b.path)
    written = git("rev-parse", "HEAD", cwd=b.path).stdout.strip()
    git("push", "--quiet", "origin", "main", cwd=b.path)
    world.add(a, "alpha", "one")
    reply = world.sync(a)
    assert reply["merged"] and reply["pushed"]
    assert [(h["commit"], h["path"]) for h in reply["held_out"]] == [(written, path_of_key("broken"))]
    assert [(h["commit"], h["path"]) for h in world.sync(a)["held_out"]] == [(written, path_of_key("broken"))]
    with pytest.raises(StoreError, match="held out"):
        from kyb_cli.core.index.reads import read

        read(a.path, "broken")


def test_sync_refuses_to_overwrite_hand_edits(world):
    a, b = world.clone("a"), world.clone("b")
    world.add(a, "fact", "v1")
    world.sync(a)
    world.sync(b)
    world.add(a, "fact", "v2")
    world.sync(a)
    (b.path / path_of_key("fact")).parent.mkdir(parents=True, exist_ok=True)
    (b.path / path_of_key("fact")).write_text("hand edit\n")
    before = b.head_sha()
    with pytest.raises(Rejected, match="uncommitted changes"):
        world.sync(b)
    assert Store(b.path).head_sha() == before
    assert (b.path / path_of_key("fact")).read_text() == "hand edit\n"


@pytest.mark.parametrize("how", ["untracked file", "staged only"])
def test_sync_refuses_to_overwrite_a_hand_made_file_where_a_peer_adds_a_record(world, how):
    """A key new to this store: a file made by hand at its path (untracked, or staged and removed
    from disk) is still a hand edit that the peer's record would replace; beside it, new records the
    store has nothing at are merged (sync lists directories instead of opening each new path)."""
    a, b = world.clone("a"), world.clone("b")
    world.add(a, "seed", "s")
    world.sync(a)
    world.sync(b)
    for key in ("fresh", "other-1", "other-2"):
        world.add(a, key, f"{key} from a")
    world.sync(a)
    mine = b.path / path_of_key("fresh")
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("my own notes\n")
    if how == "staged only":
        git("add", path_of_key("fresh"), cwd=b.path)
        mine.unlink()
    before = b.head_sha()
    with pytest.raises(Rejected, match="uncommitted changes"):
        world.sync(b)
    assert Store(b.path).head_sha() == before
    if how == "untracked file":
        assert mine.read_text() == "my own notes\n"
        mine.unlink()
    else:
        git("rm", "-q", "--cached", path_of_key("fresh"), cwd=b.path)
    reply = world.sync(b)
    assert reply["fast_forward"] and not reply["conflicts"]
    assert (b.path / path_of_key("other-2")).exists() and (b.path / path_of_key("fresh")).exists()


def test_unrelated_stores_merge_into_one(world, tmp_path):
    """`kyb init` on two machines, then one remote: the second sync joins both histories."""
    from kyb_cli.core.canon.repo import init_store
    from kyb_cli.core.sync.remote import set_remote

    a = world.clone("a")
    world.add(a, "alpha", "a")
    world.sync(a)
    b = init_store(tmp_path / "b")
    world.add(b, "beta", "b")
    set_remote(b, str(world.remote))
    reply = world.sync(b)
    assert reply["merged"] and reply["pushed"]
    world.settle([a, b])
    world.check([a, b])


def test_sync_journal_finishes_a_sync_that_died_midway(world):
    """A sync killed after moving the branch: the next write brings the files along first."""
    import json

    from kyb_cli.core.canon import journal

    a, b = world.clone("a"), world.clone("b")
    world.add(a, "alpha", "one")
    world.sync(a)
    git("fetch", "--quiet", "origin", cwd=b.path)
    remote = b.repo.lookup_reference("refs/remotes/origin/main").peel()
    (b.kyb_dir).mkdir(parents=True, exist_ok=True)
    (b.kyb_dir / journal.NAME).write_text(json.dumps({"commit": str(remote.id), "paths": [path_of_key("alpha")]}))
    b.repo.references["refs/heads/main"].set_target(remote.id)  # the branch moved, the files did not
    world.add(b, "beta", "two")
    assert (b.path / path_of_key("alpha")).exists()
    world.settle([a, b])
    world.check([a, b])


def test_archive_vs_edit_keeps_the_edit_and_reports_it(world):
    from kyb_cli.core.records.model import Record

    a, b = world.clone("a"), world.clone("b")
    with a.writing(ATTR) as tx:
        first = tx.put(Record(key="task-ship", title="Ship it", body="todo", status="open")).sha
    world.written["task-ship"] = {first}
    world.sync(a)
    world.sync(b)
    with a.writing(ATTR) as tx:
        archived = tx.archive("task-ship").sha
    with b.writing(ATTR) as tx:
        edit = tx.put(Record(key="task-ship", title="Ship it", body="still going", status="open")).sha
    world.written["task-ship"] |= {archived, edit}
    world.sync(a)
    reply = world.sync(b)
    assert [(c["type"], c["kept"], c["other"]) for c in reply["conflicts"]] == [("archive_vs_edit", edit, archived)]
    world.settle([a, b])
    world.check([a, b])
    assert (a.path / path_of_key("task-ship")).exists()
