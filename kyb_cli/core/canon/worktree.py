"""The store's working tree and Git index: bring changed files along, never overwrite hand edits.

kyb writes the canon (objects and the branch) first; these functions then make the working-tree
files and their Git index entries match, touching only the paths a write or a sync changed.

Never outside, never through a link (tests/test_sync_hostile.py): every path is checked by the key
authority's `unsafe_path` (no `..`, no `.git` component in any spelling, so no file under `.git` is
ever written from a tree) and opened component by component from the store's root with
O_NOFOLLOW, so a symlink anywhere below the root — whoever put it there — stops the write or read
with a clear error instead of being followed. The root itself may be a link (where a user keeps
the store is their choice). Only regular files are written; a tree's symlinks and gitlinks are
refused before they get here (sync/incoming.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pygit2

from kyb_cli.core.canon.lock import pid_alive
from kyb_cli.core.canon.nofollow import Dirs, LinkInTheWay, _open_dir, _parts, read_file, remove_file
from kyb_cli.core.canon import durability  # noqa: F401 - fsync of what kyb writes (nofollow.py)
from kyb_cli.core.canon.tree import Entry, blob_at
from kyb_cli.core.errors import Rejected, StoreError
from kyb_cli.core.records.keys import unsafe_path

__all__ = ["LinkInTheWay", "read_file", "git_index", "update_worktree", "has_hand_edits", "refuse_hand_edits", "interrupted",
           "known_version"]

_FILE_MODES = (int(pygit2.enums.FileMode.BLOB), int(pygit2.enums.FileMode.BLOB_EXECUTABLE))


def git_index(repo: pygit2.Repository) -> pygit2.Index:
    """Git's index as it is on disk, parsed again only when the file changed since this process
    last read or wrote it (libgit2 compares its stamp and checksum; git replaces the file, so a new
    inode). The file holds one entry a key (~9 MB at 100k keys, ~0.1 s of CPU a parse): a write
    that checks for hand edits and then updates its entries parses it once, not three times."""
    index = repo.index
    index.read(False)
    return index


def update_worktree(repo: pygit2.Repository, changes: dict[str, Entry | None]) -> None:
    """Make the working-tree files and Git index entries of `changes` match their new entries
    (None: absent; a directory left empty goes too), in one index read (none when this process
    already holds the file as it is) and one index write."""
    if repo.workdir is None or not changes:
        return
    root = Path(repo.workdir)
    for path, entry in changes.items():
        if entry is not None and int(entry[1]) not in _FILE_MODES:
            raise StoreError(f"refusing to write {path}: not a regular file (mode {int(entry[1]):o})")
        _parts(path)
    for path, entry in changes.items():  # removals first: a file may give way to a directory
        if entry is None:
            remove_file(root, path)
    with Dirs(root) as dirs:
        for path, entry in changes.items():
            if entry is not None:
                dirs.write(path, repo[entry[0]].data,
                           executable=int(entry[1]) == int(pygit2.enums.FileMode.BLOB_EXECUTABLE))
    index = git_index(repo)
    try:
        for path, entry in changes.items():
            if entry is None:
                try:
                    index.remove(path)
                except (OSError, KeyError, pygit2.GitError):
                    pass
            else:
                index.add(path)
        index.write()
    except BaseException:
        try:
            index.read(True)  # drop the unwritten entries: a later read must not take them for the file's
        except (OSError, pygit2.GitError):
            pass
        raise


_TEMP = re.compile(r"^\..+\.kyb-(\d+)\.tmp$")


def remove_dead_temp_files(repo: pygit2.Repository, paths: list[str]) -> None:
    """Remove temp files that dead processes left in the directories of `paths` (self-cleaning:
    a writer killed inside `update_worktree` leaves `.<name>.kyb-<pid>.tmp`). Directories are
    opened as every working-tree access is (no link followed, nothing outside the store)."""
    if repo.workdir is None:
        return
    root = Path(repo.workdir)
    for directory in sorted({tuple(p.split("/")[:-1]) for p in paths if unsafe_path(p) is None}):
        try:
            dfd = _open_dir(root, list(directory), create=False)
        except (FileNotFoundError, LinkInTheWay, NotADirectoryError, OSError):
            continue
        try:
            for name in os.listdir(dfd):
                m = _TEMP.match(name)
                if m and not pid_alive(int(m.group(1))):
                    try:
                        os.unlink(name, dir_fd=dfd)
                    except OSError:
                        pass
        finally:
            os.close(dfd)


def remove_temp_files(repo: pygit2.Repository, path: str) -> None:
    """Remove the temp files a killed `update_worktree` may have left next to `path`."""
    if repo.workdir is None or unsafe_path(path) is not None:
        return
    parts = path.split("/")
    try:
        dfd = _open_dir(Path(repo.workdir), parts[:-1], create=False)
    except (FileNotFoundError, LinkInTheWay, NotADirectoryError):
        return
    try:
        prefix = f".{parts[-1]}.kyb-"
        for name in os.listdir(dfd):
            if name.startswith(prefix) and name.endswith(".tmp"):
                try:
                    os.unlink(name, dir_fd=dfd)
                except OSError:
                    pass
    finally:
        os.close(dfd)


def has_hand_edits(repo: pygit2.Repository, path: str, committed: pygit2.Oid | None,
                   index: pygit2.Index | None = None) -> bool:
    """True when the working-tree file (or its staged entry) at `path` differs from `committed`.

    `index`: a Git index already read (a sync checks thousands of paths against one read)."""
    if repo.workdir is None:
        return False
    try:
        on_disk = read_file(Path(repo.workdir), path)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None
    committed_bytes = None if committed is None else repo[committed].data
    differs = on_disk != committed_bytes
    if not differs:
        try:
            if index is None:
                index = git_index(repo)
            entry = index[path]
            differs = committed is None or entry.id != committed
        except KeyError:
            differs = committed is not None and on_disk is not None
        except pygit2.GitError:
            differs = False
    return differs


HISTORY_WALK = 2000  # commits searched for an earlier version of a path (only when a write would refuse)


def known_version(repo: pygit2.Repository, path: str, oid: pygit2.Oid | None) -> bool:
    """`oid` is absent or a version of `path` that the canon holds (replacing it loses nothing)."""
    if oid is None:
        return True
    if repo.head_is_unborn:
        return False
    for n, commit in enumerate(repo.walk(repo.head.target, pygit2.enums.SortMode.TIME)):
        if n >= HISTORY_WALK:
            return False
        if blob_at(commit, path) == oid:
            return True
    return False


def interrupted(repo: pygit2.Repository, path: str, index: pygit2.Index | None = None) -> bool:
    """The file and its index entry at `path` hold nothing the canon lacks (absent, or an earlier
    committed version): what a working-tree update that stopped midway leaves (an EACCES, a full
    disk, a kill, a journal set aside). Overwriting them loses nothing, so a write does."""
    try:
        data = read_file(Path(repo.workdir), path)
    except OSError:
        return False
    if index is None:
        index = git_index(repo)
    try:
        staged = index[path].id
    except KeyError:
        staged = None
    except pygit2.GitError:
        return False
    on_disk = None if data is None else pygit2.hash(data)
    return known_version(repo, path, on_disk) and known_version(repo, path, staged)


def refuse_hand_edits(repo: pygit2.Repository, store_path: Path, path: str, committed: pygit2.Oid | None,
                      *, doing: str = "write", index: pygit2.Index | None = None) -> None:
    """Rejected when `path` has uncommitted hand edits that a write (or a sync) would overwrite; a
    file left behind by an interrupted update (`interrupted`) is no hand edit: it is overwritten."""
    if not has_hand_edits(repo, path, committed, index) or interrupted(repo, path, index):
        return
    keep = f"git -C {store_path} add {path} && git -C {store_path} commit -m 'hand edit'"
    drop = f"git -C {store_path} checkout HEAD -- {path}"
    if doing == "sync":
        raise Rejected(
            f"{path} has uncommitted changes in the store's working tree and sync would change it; "
            f"nothing was merged — commit them ({keep}) or discard them ({drop}) and sync again"
        )
    raise Rejected(
        f"{path} has uncommitted changes in the store's working tree; kyb will not overwrite "
        f"them — commit them ({keep}) or discard them ({drop}) and write again"
    )
