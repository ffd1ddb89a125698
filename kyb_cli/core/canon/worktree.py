"""The store's working tree and Git index: bring changed files along, never overwrite hand edits.

kyb writes the canon (objects and the branch) first; these functions then make the working-tree
files and their Git index entries match, touching only the paths a write or a sync changed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from kyb_cli.core.canon.tree import Entry
from kyb_cli.core.errors import Rejected, StoreError


def update_worktree(repo: pygit2.Repository, changes: dict[str, Entry | None]) -> None:
    """Make the working-tree files and Git index entries of `changes` match their new entries
    (None: absent; a directory left empty goes too), in one index write."""
    if repo.workdir is None or not changes:
        return
    root = Path(repo.workdir)
    for path, entry in changes.items():
        target = root / path
        if entry is None:
            target.unlink(missing_ok=True)
            for parent in target.parents:
                if parent == root:
                    break
                try:
                    parent.rmdir()
                except OSError:
                    break
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.kyb-{os.getpid()}.tmp")
        tmp.write_bytes(repo[entry[0]].data)
        if entry[1] == pygit2.enums.FileMode.BLOB_EXECUTABLE:
            tmp.chmod(0o755)
        os.replace(tmp, target)
    index = repo.index
    index.read()
    for path, entry in changes.items():
        if entry is None:
            try:
                index.remove(path)
            except (OSError, KeyError, pygit2.GitError):
                pass
        else:
            index.add(path)
    index.write()


def remove_temp_files(repo: pygit2.Repository, path: str) -> None:
    """Remove the temp files a killed `update_worktree` may have left next to `path`."""
    if repo.workdir is None:
        return
    target = Path(repo.workdir) / path
    for tmp in target.parent.glob(f".{target.name}.kyb-*.tmp"):
        tmp.unlink(missing_ok=True)


def has_hand_edits(repo: pygit2.Repository, path: str, committed: pygit2.Oid | None) -> bool:
    """True when the working-tree file (or its staged entry) at `path` differs from `committed`."""
    if repo.workdir is None:
        return False
    target = Path(repo.workdir) / path
    try:
        on_disk = target.read_bytes()
    except FileNotFoundError:
        on_disk = None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None
    committed_bytes = None if committed is None else repo[committed].data
    differs = on_disk != committed_bytes
    if not differs:
        try:
            repo.index.read()
            entry = repo.index[path]
            differs = committed is None or entry.id != committed
        except KeyError:
            differs = committed is not None and on_disk is not None
        except pygit2.GitError:
            differs = False
    return differs


def refuse_hand_edits(repo: pygit2.Repository, store_path: Path, path: str, committed: pygit2.Oid | None,
                      *, doing: str = "write") -> None:
    """Rejected when `path` has uncommitted hand edits that a write (or a sync) would overwrite."""
    if not has_hand_edits(repo, path, committed):
        return
    if doing == "sync":
        raise Rejected(
            f"{path} has uncommitted changes in the store's working tree and sync would change it; "
            f"nothing was merged — commit them (git -C {store_path} commit {path}) or discard them "
            f"(git -C {store_path} checkout -- {path}) and sync again"
        )
    raise Rejected(
        f"{path} has uncommitted changes in the store's working tree; kyb will not overwrite "
        f"them — commit them (git -C {store_path} commit {path}) or discard them "
        f"(git -C {store_path} checkout -- {path}) and write again"
    )
