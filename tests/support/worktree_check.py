"""What a write must leave behind, whatever interrupted it: the working tree equal to HEAD (record files
in their bucket directories, nothing else, no empty bucket), git's status clean, no journal or temp
file left, and an object store that `git fsck --strict` accepts. The crash and fault matrices share it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2


def _git(store: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(store), *args], check=True, capture_output=True, text=True).stdout


def worktree_matches_head(store: Path) -> None:
    """Every record file on disk is HEAD's blob, nothing else is there, git sees a clean tree, and no
    journal or temp file is left."""
    repo = pygit2.Repository(str(store))
    tree = repo.head.peel(pygit2.Commit).tree
    for directory in ("knowledge", "incidents", "tasks"):  # record files sit in bucket directories
        root = store / directory
        on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*")
                   if not p.is_dir()} if root.exists() else set()
        in_head = {f"{e.name}/{f.name}" for e in tree[directory] for f in tree[f"{directory}/{e.name}"]} \
            if directory in tree else set()
        assert on_disk == in_head, directory
        assert all(not d.is_dir() or any(d.iterdir()) for d in root.glob("*")) if root.exists() else True
        for name in in_head:
            assert (root / name).read_bytes() == tree[f"{directory}/{name}"].data
    assert _git(store, "status", "--porcelain", "--untracked-files=all") == ""
    kyb_dir = store / ".git" / "kyb"
    leftovers = [p.name for p in kyb_dir.iterdir() if "pending" in p.name] if kyb_dir.exists() else []
    assert leftovers == []


def fsck_clean(store: Path) -> None:
    subprocess.run(["git", "-C", str(store), "fsck", "--strict", "--no-dangling"], check=True, capture_output=True)
