"""Git's index file is parsed again only when it changed on disk (canon/worktree.git_index): a
long-lived process (kyb serve, the MCP server) that writes, then sees a `git add` or a hand edit
staged by someone else, never writes its stale copy over it; an index update that failed (the
write is in) is finished by the next write of the same process, the store's status clean."""

from __future__ import annotations

import subprocess

import pygit2
import pytest

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.errors import Rejected
from kyb_cli.core.records.keys import path_of_key
from kyb_cli.core.records.model import Record

ATTR = Attribution("test", "s", "", "cli")


def git(store, *args: str) -> str:
    return subprocess.run(["git", "-C", str(store), *args], check=True, capture_output=True, text=True).stdout


def put(store, key: str, body: str = "b") -> None:
    with store.writing(ATTR) as tx:
        tx.put(Record(key=key, title=key, body=body, tags=[], refs=[]))


def test_a_file_staged_by_hand_between_two_writes_of_one_process_stays_staged(store):
    put(store, "first")
    (store.path / "notes.txt").write_text("mine\n")
    git(store.path, "add", "notes.txt")
    put(store, "second")  # the same Store, the same libgit2 index object
    assert git(store.path, "diff", "--cached", "--name-only").split() == ["notes.txt"]
    assert git(store.path, "status", "--porcelain").split() == ["A", "notes.txt"]
    assert path_of_key("second") in git(store.path, "ls-files").split()


def test_a_hand_edit_staged_after_the_index_was_read_is_refused(store):
    put(store, "k")
    path = store.path / path_of_key("k")
    path.write_text(path.read_text() + "\nhand edit\n")
    git(store.path, "add", path_of_key("k"))
    path.write_text(git(store.path, "show", f"HEAD:{path_of_key('k')}"))  # the file is HEAD's again,
    with pytest.raises(Rejected):  # but the index holds the edit: only a re-read of the index sees it
        put(store, "k", "new body")


def test_an_index_update_that_failed_is_not_taken_for_the_file(store, monkeypatch):
    put(store, "first")
    written = pygit2.Index.write

    def fail(self):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pygit2.Index, "write", fail)
    put(store, "second")  # committed; the working tree is left for the next write (a warning)
    monkeypatch.setattr(pygit2.Index, "write", written)
    assert path_of_key("second") not in git(store.path, "ls-files").split()
    put(store, "third")
    assert git(store.path, "status", "--porcelain") == ""
    assert {path_of_key(k) for k in ("first", "second", "third")} <= set(git(store.path, "ls-files").split())
