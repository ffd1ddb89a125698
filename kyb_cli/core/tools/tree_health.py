"""`kyb doctor`'s working-tree check: is every record file of HEAD on disk and staged as committed?

A working-tree update that stopped midway (a local EACCES, a full disk, a kill) leaves files
missing or the Git index at an older version of them (`git status` shows staged deletions or
changes nobody made); every later write to those keys would then be refused as a hand edit. Doctor
compares, for every record path, HEAD's blob with the Git index entry and the file on disk:

- problems (fixable, nothing of anyone's is lost: the bytes on disk and in the index are a version
  the canon already holds, or absent): `missing`, `staged_wrong`, `not_in_head`, and a recovery
  journal still pending — fix: `kyb doctor --fix` (it runs the journal, then brings these paths to
  HEAD through the same no-follow writer as every write);
- warnings (never touched: bytes the canon does not hold): `hand_edit`, with the two git commands
  that keep or discard it.
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from kyb_cli.core.canon import journal
from kyb_cli.core.canon.nofollow import read_file
from kyb_cli.core.canon.tree import entries_at
from kyb_cli.core.canon.worktree import known_version, update_worktree
from kyb_cli.core.records.keys import RECORD_DIRS, unsafe_path

FIX = "kyb doctor --fix"


def _head_paths(head: pygit2.Commit | None) -> set[str]:
    out: set[str] = set()
    if head is None:
        return out
    for directory in RECORD_DIRS:
        try:
            tree = head.tree[directory]
        except KeyError:
            continue
        if tree.type_str == "tree":
            out.update(f"{directory}/{e.name}" for e in tree if e.type_str == "blob")
    return out


def inspect(store) -> list[dict]:
    """One row `{path, state, fixable}` per record path whose file or index entry is not HEAD's."""
    repo = store.repo
    if repo.workdir is None:
        return []
    head = store.head_commit()
    index = repo.index
    index.read()
    staged = {e.path: e.id for e in index if e.path.split("/", 1)[0] in RECORD_DIRS}
    paths = sorted(_head_paths(head) | set(staged))
    committed = entries_at(head, paths) if head is not None else {}
    root = Path(repo.workdir)
    rows: list[dict] = []
    for path in paths:
        if unsafe_path(path) is not None:
            continue
        h = committed.get(path)
        h_id = h[0] if h else None
        i_id = staged.get(path)
        try:
            data = read_file(root, path)
        except OSError:
            data = b""  # unreadable or in the way: it is reported, never overwritten blindly
        w_id = None if data is None else pygit2.hash(data)
        if h_id == i_id == w_id:
            continue
        if h_id is not None and w_id is None:
            state = "missing" if i_id == h_id else "missing_staged"
        elif i_id != h_id:
            state = "staged_wrong" if h_id is not None else "not_in_head"
        else:
            state = "old_version"
        fixable = known_version(repo, path, w_id) and known_version(repo, path, i_id)
        if not fixable:
            state = "hand_edit"
        rows.append({"path": path, "state": state, "fixable": fixable})
    return rows


_SAYS = {"missing": "the file is missing from the working tree",
         "missing_staged": "the file is missing and the Git index stages its deletion (an interrupted update)",
         "staged_wrong": "the Git index holds another version than HEAD (an interrupted update)",
         "not_in_head": "the Git index holds a file HEAD does not have (an interrupted update)",
         "old_version": "the file holds an older committed version (an interrupted update)"}


def lines(store, rows: list[dict]) -> tuple[list[str], list[str]]:
    """(problems, warnings) for doctor, each saying how to fix it."""
    problems: list[str] = []
    warnings: list[str] = []
    if journal.path_of(store.kyb_dir).exists():
        problems.append(f"worktree: an interrupted write or sync has not finished bringing the working tree "
                        f"along (.git/kyb/{journal.NAME}) — fix: {FIX}")
    for row in rows:
        if row["fixable"]:
            problems.append(f"worktree: {row['path']}: {_SAYS[row['state']]} — fix: {FIX}")
        else:
            warnings.append(f"worktree: {row['path']} has uncommitted changes kyb will not overwrite — keep them "
                            f"(git -C {store.path} add {row['path']} && git -C {store.path} commit) or discard "
                            f"them (git -C {store.path} checkout HEAD -- {row['path']})")
    return problems, warnings


def repair(store) -> list[str]:
    """Finish a pending journal, then bring every fixable path to HEAD (file and index entry) under
    the writer lock. Returns the paths repaired; a cause still there (EACCES, a full disk) is the
    StoreError the journal gives, saying what to fix first."""
    with store.locked():  # runs journal.recover first
        rows = [r for r in inspect(store) if r["fixable"]]
        if rows:
            head = store.head_commit()
            update_worktree(store.repo, entries_at(head, [r["path"] for r in rows]) if head is not None
                            else {r["path"]: None for r in rows})
    return [r["path"] for r in rows]
