"""THE crash-recovery journal (`.git/kyb/pending.json`), shared by every write and by sync.

A writer (one record) or a sync integration (many paths) writes the journal after its commit object
exists and before it moves the branch, and removes it once the working tree has been brought along.
So a journal found by the next writer (under the lock) means a kyb process died in that window:
if the branch points at the journal's commit, the listed paths are brought along; if not, the canon
is exactly as before and only leftovers go (temp files, and the `index.lock`/ref `.lock` files
libgit2 may have left when killed mid-write — ours, since we hold the writer lock).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pygit2

from kyb_cli.core.canon import durability
from kyb_cli.core.canon.tree import Entry
from kyb_cli.core.canon.worktree import remove_temp_files, update_worktree

NAME = "pending.json"
SET_ASIDE = NAME + ".failed"  # a journal that could not be applied (canon/mend.py drops it once mended)


def path_of(kyb_dir: Path) -> Path:
    return Path(kyb_dir) / NAME


def write(kyb_dir: Path, commit: pygit2.Oid | str, paths: list[str], branch: str | None) -> None:
    """Record that `commit` is about to become HEAD and `paths` must then follow (atomic replace)."""
    kyb_dir = Path(kyb_dir)
    kyb_dir.mkdir(parents=True, exist_ok=True)
    journal = path_of(kyb_dir)
    tmp = journal.with_suffix(".tmp")
    data = json.dumps({"commit": str(commit), "paths": sorted(paths), "branch": branch}).encode()
    try:
        durability.write_durably(tmp, data)
        os.replace(tmp, journal)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    durability.fsync_dir(kyb_dir)


def clear(kyb_dir: Path) -> None:
    path_of(kyb_dir).unlink(missing_ok=True)


def _safe(path: Any) -> bool:
    """A journal path kyb may touch: the key authority's rule for any path written from a tree."""
    from kyb_cli.core.records.keys import unsafe_path

    return isinstance(path, str) and bool(path) and unsafe_path(path) is None


class Unusable(Exception):
    """A journal that cannot be applied as it is (why in the message)."""


def recover(repo: pygit2.Repository, kyb_dir: Path) -> None:
    """Finish or undo what a writer or a sync that died mid-way left behind (call under the writer lock).

    Recovery never wedges: a journal that cannot be applied (not JSON, a path kyb may not write, a
    commit that does not exist, an entry that is not a plain file, any failure while applying it) is
    moved aside to `pending.json.failed`, reported once on stderr with the fix, and the write goes on;
    the canon itself is always intact (the journal only ever brings the working tree along).
    """
    journal = path_of(kyb_dir)
    try:
        raw = journal.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return
    except UnicodeDecodeError:  # any bytes at all: set aside, never an internal error
        raw = None
        why = "not UTF-8"
    except OSError as exc:  # a directory, unreadable
        raw = None
        why = f"unreadable: {exc.strerror or type(exc).__name__}"
    git_dir = Path(repo.path)
    try:
        if raw is None:
            raise Unusable(why)
        try:
            data = json.loads(raw)
        except ValueError:
            raise Unusable("not JSON") from None
        if not isinstance(data, dict):
            raise Unusable("not a JSON object")
        for stale in _stale_lock_files(git_dir, data.get("branch")):
            stale.unlink(missing_ok=True)
        paths = data.get("paths", [])
        if not isinstance(paths, list):
            raise Unusable("'paths' is not a list")
        bad = [p for p in paths if not _safe(p)]
        if bad:
            raise Unusable(f"it names a path kyb never writes ({bad[0]!r})")
        for path in paths:
            remove_temp_files(repo, path)
        commit_id = data.get("commit")
        try:
            target = repo[commit_id].peel(pygit2.Commit) if isinstance(commit_id, str) else None
        except (KeyError, ValueError, pygit2.GitError):
            target = None
        if target is None:
            raise Unusable(f"its commit {commit_id!r} is not in the store")
        head = None if repo.head_is_unborn else str(repo.head.target)
        if paths and head == str(target.id):
            entries = {p: _entry(target, p) for p in paths}
            update_worktree(repo, entries)
        journal.unlink(missing_ok=True)
    except Exception as exc:  # noqa: BLE001 - whatever it is, the next write must not die on it
        from kyb_cli.core.canon.diskfull import disk_full_error, is_disk_full

        # transient: keep the journal, the next call finishes the working tree. The store's own
        # filesystem is asked too: libgit2 may report a full disk with a stale error text, and a
        # journal set aside for it would leave the files it lists out of line with HEAD
        if is_disk_full(exc, git_dir):
            raise disk_full_error(git_dir.parent) from None
        if isinstance(exc, PermissionError) and raw is not None:  # transient too: the cause can be fixed
            from kyb_cli.core.errors import StoreError

            raise StoreError(
                f"cannot bring the working tree up to date: {exc.strerror} ({exc.filename}); fix that "
                "(e.g. the directory's permissions) and run any kyb command: it finishes the update "
                "from the recovery journal") from None
        _set_aside(journal, git_dir, str(exc) or type(exc).__name__)


def remove_entry(path: Path) -> None:
    """Remove `path` whatever it is (a file, a link, a directory), never raising: a leftover journal
    must not stop the write that clears it."""
    import shutil

    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


def _set_aside(journal: Path, git_dir: Path, why: str) -> None:
    import sys

    import shutil

    aside = journal.with_name(SET_ASIDE)
    try:
        if aside.is_dir() and not aside.is_symlink():
            shutil.rmtree(aside, ignore_errors=True)
        os.replace(journal, aside)
    except OSError:
        remove_entry(journal)
    store = git_dir.parent
    sys.stderr.write(
        f"kyb: a write or sync that died left a recovery journal that cannot be applied ({why}); "
        f"set aside as {aside} — the commits are intact; `kyb doctor` lists any record file left missing "
        f"or staged wrong and `kyb doctor --fix` restores them (so does the next write of that record)\n")
    sys.stderr.flush()


def _entry(commit: pygit2.Commit, path: str) -> Entry | None:
    try:
        obj = commit.tree[path]
    except KeyError:
        return None
    if obj.type_str != "blob" or int(obj.filemode) not in (0o100644, 0o100755):
        raise Unusable(f"{path} at that commit is not a plain file (mode {int(obj.filemode):o})")
    return (obj.id, obj.filemode)


def _stale_lock_files(git_dir: Path, branch: Any) -> list[Path]:
    out = [git_dir / "index.lock"]
    if isinstance(branch, str) and branch.startswith("refs/heads/") and ".." not in branch:
        out.append(git_dir / f"{branch}.lock")
    out.append(git_dir / "HEAD.lock")
    return [f for f in out if f.exists()]
