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

from kyb_cli.core.canon import journal
from kyb_cli.core.canon.mend import inspect, mend

__all__ = ["FIX", "inspect", "lines", "repair"]

FIX = "kyb doctor --fix"


_SAYS = {"missing": "the file is missing from the working tree",
         "missing_staged": "the file is missing and the Git index stages its deletion (an interrupted update)",
         "staged_wrong": "the Git index holds another version than HEAD (an interrupted update)",
         "not_in_head": "the Git index holds a file HEAD does not have (an interrupted update)",
         "old_version": "the file holds an older committed version (an interrupted update)"}


def lines(store, rows: list[dict]) -> tuple[list[str], list[str]]:
    """(problems, warnings) for doctor, each saying how to fix it."""
    from kyb_cli.core.canon.migrate import layout_lines

    problems, warnings = layout_lines(store) if store.head_commit() is not None else ([], [])
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
        return mend(store)
