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

from kyb_cli.core.canon.tree import Entry
from kyb_cli.core.canon.worktree import remove_temp_files, update_worktree

NAME = "pending.json"


def path_of(kyb_dir: Path) -> Path:
    return Path(kyb_dir) / NAME


def write(kyb_dir: Path, commit: pygit2.Oid | str, paths: list[str], branch: str | None) -> None:
    """Record that `commit` is about to become HEAD and `paths` must then follow (atomic replace)."""
    kyb_dir = Path(kyb_dir)
    kyb_dir.mkdir(parents=True, exist_ok=True)
    journal = path_of(kyb_dir)
    tmp = journal.with_suffix(".tmp")
    tmp.write_text(json.dumps({"commit": str(commit), "paths": sorted(paths), "branch": branch}))
    os.replace(tmp, journal)


def clear(kyb_dir: Path) -> None:
    path_of(kyb_dir).unlink(missing_ok=True)


def _safe(path: Any) -> bool:
    """A journal path kyb may touch: relative, no `..`, nothing under `.git`."""
    if not isinstance(path, str) or not path or path.startswith("/"):
        return False
    parts = path.split("/")
    return ".." not in parts and "" not in parts and parts[0].lower() != ".git"


def recover(repo: pygit2.Repository, kyb_dir: Path) -> None:
    """Finish or undo what a writer or a sync that died mid-way left behind (call under the writer lock)."""
    journal = path_of(kyb_dir)
    try:
        data = json.loads(journal.read_text())
    except FileNotFoundError:
        return
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        data = {}
    git_dir = Path(repo.path)
    for stale in _stale_lock_files(git_dir, data.get("branch")):
        stale.unlink(missing_ok=True)
    paths = [p for p in data.get("paths", []) if _safe(p)] if isinstance(data.get("paths"), list) else []
    for path in paths:
        remove_temp_files(repo, path)
    head = None if repo.head_is_unborn else str(repo.head.target)
    if paths and data.get("commit") is not None and head == data.get("commit"):
        commit = repo[head].peel(pygit2.Commit)
        update_worktree(repo, {p: _entry(commit, p) for p in paths})
    journal.unlink(missing_ok=True)


def _entry(commit: pygit2.Commit, path: str) -> Entry | None:
    try:
        obj = commit.tree[path]
    except KeyError:
        return None
    return None if obj.type_str != "blob" else (obj.id, obj.filemode)


def _stale_lock_files(git_dir: Path, branch: Any) -> list[Path]:
    out = [git_dir / "index.lock"]
    if isinstance(branch, str) and branch.startswith("refs/heads/") and ".." not in branch:
        out.append(git_dir / f"{branch}.lock")
    out.append(git_dir / "HEAD.lock")
    return [f for f in out if f.exists()]
