"""Issue 37, item 4: after a full disk during a write, the next write once space returned did not
repair the working tree (`D knowledge/full-18.md`, `AD knowledge/gone-03.md` left in `git status`).

Two causes, each with its test, in process through the fault hook (canon/faults.step, replaced as
tests/support/faults.py does):
- libgit2 may report a full disk with a stale error text; the journal's recovery asked only the
  exception, took it for a broken journal and set the journal aside, so the paths it listed were
  never brought along. Recovery now asks the store's filesystem too: the journal is kept, the write
  is refused as a full disk (exit 4), and the first write after space returns finishes it.
- Whenever a journal is set aside, the next writer (under the lock) brings every record file and
  index entry that holds nothing the canon lacks back to HEAD (canon/mend.py) — never a hand edit."""

from __future__ import annotations

import errno
import subprocess

import pygit2
import pytest

from kyb_cli import api
from kyb_cli.core.canon import diskfull, faults, journal
from kyb_cli.core.errors import StoreError
from kyb_cli.core.records.keys import path_of_key

STALE = "index does not contain knowledge/full-18.md at stage 0"  # what libgit2 said on a full disk


def status(path) -> str:
    return subprocess.run(["git", "-C", str(path), "status", "--porcelain", "--untracked-files=all"],
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture
def world(tmp_path, monkeypatch):
    monkeypatch.setenv("KYB_AGENT", "tester")
    store = api.init_store(tmp_path / "store")
    who = api.attribution("cli")

    def add(key: str, body: str = "a fact"):
        return api.add_knowledge(store, key=key, title=key, body=body, tags=[], refs=[], attribution=who)

    add("seed")
    return store, who, add


def _fail_at(monkeypatch, point: str, exc: BaseException) -> None:
    def step(name: str) -> None:
        if name == point:
            raise exc

    monkeypatch.setattr(faults, "step", step)


def test_a_full_disk_told_with_a_stale_text_keeps_the_journal_and_the_next_write_repairs_the_tree(
        world, monkeypatch, capsys):
    store, _who, add = world
    def stale_error(*_a, **_k):
        raise pygit2.GitError(STALE)

    with monkeypatch.context() as full:  # the disk is full
        full.setattr(diskfull, "low_space", lambda _path: True)
        full.setattr(journal, "update_worktree", stale_error)  # recovery (a read's, a write's) fails too
        _fail_at(full, "after-ref", pygit2.GitError(STALE))
        add("full-18")  # committed; its file could not be written: a warning, the journal kept
        assert "could not finish updating" in capsys.readouterr().err
        assert journal.path_of(store.kyb_dir).exists()
        full.setattr(faults, "step", lambda _name: None)
        with pytest.raises(StoreError) as err:  # still full: refused as a full disk, journal kept
            add("full-19")
        assert getattr(err.value, "disk_full", False)
        assert journal.path_of(store.kyb_dir).exists()
    add("after", "space again")  # space returned: this write finishes the earlier one first
    assert status(store.path) == ""
    assert (store.path / path_of_key("full-18")).exists()


def test_after_a_journal_is_set_aside_the_next_write_brings_every_record_file_back_to_head(
        world, monkeypatch, capsys):
    store, who, add = world
    add("gone-03")
    (store.path / "knowledge" / "mine.md").write_text("a hand-written note kyb never wrote\n")
    add("full-18")
    api.retract_knowledge(store, "gone-03", "wrong", who)
    # what a working-tree update that stopped midway leaves, and a journal that could not be applied
    git = ["git", "-C", str(store.path)]
    gone = subprocess.run([*git, "rev-parse", f"HEAD~1:{path_of_key('gone-03')}"], capture_output=True, text=True,
                          check=True).stdout.strip()
    subprocess.run([*git, "rm", "-q", "--cached", path_of_key("full-18")], check=True)
    (store.path / path_of_key("full-18")).unlink()
    subprocess.run([*git, "update-index", "--add", "--cacheinfo", f"100644,{gone},{path_of_key('gone-03')}"],
                   check=True)
    journal.path_of(store.kyb_dir).write_text("{not json")
    capsys.readouterr()
    before = status(store.path)
    assert f"D  {path_of_key('full-18')}" in before and f"AD {path_of_key('gone-03')}" in before, before
    add("after", "space again")
    assert "set aside" in capsys.readouterr().err
    assert status(store.path) == "?? knowledge/mine.md\n"  # repaired; the hand edit left alone
    assert (store.path / path_of_key("full-18")).exists()
    assert not (store.kyb_dir / "pending.json.failed").exists()
