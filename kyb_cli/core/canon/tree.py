"""Tree plumbing: entries of a commit's tree, a new tree with some paths changed, moving the branch.

Pure pygit2 object work, no working tree and no lock: the writer (transaction.py) and the sync
integration (sync/integrate.py) both build trees and move the branch through these functions.
"""

from __future__ import annotations

import pygit2

from kyb_cli.core.errors import StoreError

BLOB_MODE = pygit2.enums.FileMode.BLOB
TREE_MODE = pygit2.enums.FileMode.TREE

Entry = tuple[pygit2.Oid, int]  # (blob id, file mode); None means "absent"


def blob_at(commit: pygit2.Commit, path: str) -> pygit2.Oid | None:
    """The id of the file at `path` in `commit`'s tree, or None when it is absent."""
    try:
        return commit.tree[path].id
    except KeyError:
        return None


def blob_entry(blob: pygit2.Oid | None) -> Entry | None:
    """A record file's tree entry: kyb writes plain (non-executable) files."""
    return None if blob is None else (blob, BLOB_MODE)


def apply_changes(repo: pygit2.Repository, tree: pygit2.Tree | None, changes: dict[str, Entry | None]) -> pygit2.Oid:
    """A new tree equal to `tree` with each path set to its entry (None: removed); one pass per directory.

    A directory left empty is removed, as Git cannot hold one."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    nested: dict[str, dict[str, Entry | None]] = {}
    for path, entry in changes.items():
        head, _, rest = path.partition("/")
        if rest:
            nested.setdefault(head, {})[rest] = entry
        elif entry is None:
            if builder.get(head) is not None:
                builder.remove(head)
        else:
            builder.insert(head, entry[0], entry[1])
    for name, sub in nested.items():
        existing = builder.get(name)
        subtree = repo[existing.id] if existing is not None and existing.type_str == "tree" else None
        new_sub = apply_changes(repo, subtree, sub)
        if len(repo[new_sub]) == 0:
            if existing is not None:
                builder.remove(name)
        else:
            builder.insert(name, new_sub, TREE_MODE)
    return builder.write()


def advance_head(repo: pygit2.Repository, old: pygit2.Commit | None, new: pygit2.Oid, log: str) -> None:
    """Move the current branch (or a detached HEAD) from `old` to `new` in one ref update.

    Refuses (StoreError, nothing moved) when the branch no longer points at `old`: someone moved it
    since the caller read it, and the caller's tree was built on a stale base. Used by every write
    and by the sync integration, always under the writer lock.
    """
    if repo.head_is_detached:
        current = repo.head.target
        if old is None or current != old.id:
            raise StoreError("HEAD moved during the write; nothing was written")
        repo.set_head(new)
        return
    branch = repo.lookup_reference("HEAD").target  # e.g. refs/heads/main
    if not isinstance(branch, str):
        raise StoreError("HEAD is not a branch")
    ref = repo.references.get(branch)
    if ref is None:
        if old is not None:
            raise StoreError("HEAD moved during the write; nothing was written")
        repo.create_reference(branch, new, message=log)
        return
    if old is None or ref.target != old.id:
        raise StoreError("HEAD moved during the write; nothing was written")
    ref.set_target(new, log)


def entries_at(commit: pygit2.Commit | None, paths) -> dict[str, Entry | None]:
    """The blob entry of each of `paths` in `commit`'s tree (None: absent), each directory read once.

    `blob_at` per path reads the whole directory tree again for every lookup; for a batch of
    thousands of records in a directory of thousands that is quadratic (issue "kyb import": 10,000
    documents)."""
    out: dict[str, Entry | None] = {}
    by_dir: dict[str, list[str]] = {}
    for path in paths:
        directory, _, name = path.rpartition("/")
        by_dir.setdefault(directory, []).append(path)
    root = commit.tree if commit is not None else None
    for directory, members in by_dir.items():
        listing: dict[str, Entry] = {}
        if root is not None:
            try:
                tree = root[directory] if directory else root
            except KeyError:
                tree = None
            if tree is not None and tree.type_str == "tree":
                listing = {e.name: (e.id, e.filemode) for e in tree if e.type_str == "blob"}
        for path in members:
            out[path] = listing.get(path.rpartition("/")[2])
    return out


class TreeListing:
    """A tree's entries looked up by path, each directory read once: `tree[path]` re-reads its
    directory every time (libgit2 caches no tree over 4 kB), so looking keys up one by one in a flat
    directory is O(keys²) — minutes for 50,000 records a peer sent in one commit (sync's merge), seconds
    for a 10k-key move (canon/migrate.py). A folder is found through its parent's listing, never by
    `tree[folder]`: asking a flat `knowledge/` of 50,000 entries for each absent bucket `knowledge/xx`
    re-read it every time (11 s of a 50k-record sync)."""

    def __init__(self, tree: pygit2.Tree | None) -> None:
        self.tree = tree
        self.dirs: dict[str, dict[str, Entry]] = {}
        self.trees: dict[str, pygit2.Tree] = {"": tree} if tree is not None else {}

    def get(self, path: str) -> Entry | None:
        if self.tree is None:
            return None
        folder, _, name = path.rpartition("/")
        entries = self.dirs.get(folder)
        if entries is None:
            entries = self._listing(folder)
        return entries.get(name)

    def _listing(self, folder: str) -> dict[str, Entry]:
        entries = self.dirs.get(folder)
        if entries is not None:
            return entries
        if folder:
            parent = folder.rpartition("/")[0]
            self._listing(parent)  # records the folder's tree, when it is one
        entries = {}
        sub = self.trees.get(folder)
        if sub is not None:
            for e in sub:
                entries[e.name] = (e.id, int(e.filemode))
                if isinstance(e, pygit2.Tree):
                    self.trees[f"{folder}/{e.name}" if folder else e.name] = e
        self.dirs[folder] = entries
        return entries
