"""Every record of one kind with its latest version and state, archived ones included.

Listings (`kyb tasks --all`, `kyb incidents --all`) must show finished work next to live work, and
finished work is no longer in the tree. `catalog()` answers from the sidecar index (its `keys`
table already holds each key's latest version and state; see index/reads.py) and falls back to
`walk()`, the reference: instead of one `Store.read` per key (a history walk each), it walks Git
history once, newest first, and for each key keeps the first (= newest) version it
meets and, for a key missing from HEAD, the commit that removed it. Commits that did not touch the
kind's directory are skipped by comparing one subtree id. The rule for merges is the one
`Store._changes` uses: a merge counts only where its blob differs from every parent's.
"""

from __future__ import annotations

from dataclasses import dataclass

from kyb_cli.core.record import KIND_DIRS, Record, RecordFormatError, parse
from kyb_cli.core.timefmt import rfc3339


@dataclass
class Entry:
    """A key's latest version: the record, the commit that wrote it, and whether it left the tree."""

    record: Record
    sha: str
    committed_at: str
    order: int  # position of the version commit in the walk: smaller is newer
    archived: bool = False
    archived_sha: str | None = None
    archived_at: str | None = None

    @property
    def state(self) -> str:
        if not self.archived:
            return "active"
        return "retracted" if self.record.kind == "knowledge" else "archived"


def _subtree(commit, directory: str):
    try:
        obj = commit.tree[directory]
    except KeyError:
        return None
    return obj if obj.type_str == "tree" else None


def _blob_in(tree, name: str):
    if tree is None:
        return None
    try:
        entry = tree[name]
    except KeyError:
        return None
    return entry.id if entry.type_str == "blob" else None


def _changed_names(old, new) -> list[str]:
    """File names that differ between two versions of a directory tree (either may be None)."""
    if old is None or new is None:
        present = new if new is not None else old
        return [] if present is None else [e.name for e in present]
    names = []
    for delta in old.diff_to_tree(new).deltas:
        names.append(delta.new_file.path or delta.old_file.path)
    return names


def catalog(store, kind: str) -> list[Entry]:
    """All keys of `kind` ever committed, each with its latest version: from the index, else `walk`.

    `store` is a Store or a store path."""
    from kyb_cli.core.index.reads import catalog as from_index

    return from_index(store, kind, lambda s: walk(s, kind))


def walk(store, kind: str) -> list[Entry]:
    """All keys of `kind` ever committed, each with its latest version; unparseable versions skipped."""
    import pygit2

    directory = KIND_DIRS[kind]
    head = store.head_commit()
    if head is None:
        return []
    head_tree = _subtree(head, directory)
    live = {e.name[:-3] for e in head_tree if e.name.endswith(".md")} if head_tree is not None else set()
    found: dict[str, Entry] = {}
    removed: dict[str, tuple[str, str]] = {}  # key -> (sha, time) of the newest removal
    walker = store.repo.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
    for order, commit in enumerate(walker):
        tree = _subtree(commit, directory)
        parents = commit.parents
        parent_trees = [_subtree(p, directory) for p in parents]
        tree_id = tree.id if tree is not None else None
        if any((pt.id if pt is not None else None) == tree_id for pt in parent_trees):
            continue  # this commit did not touch the kind's directory (relative to some parent)
        for name in _changed_names(parent_trees[0] if parent_trees else None, tree):
            if "/" in name or not name.endswith(".md"):
                continue
            key = name[:-3]
            if key in found:
                continue
            blob = _blob_in(tree, name)
            parent_blobs = [_blob_in(pt, name) for pt in parent_trees]
            if parents and any(pb == blob for pb in parent_blobs):
                continue
            if blob is None:
                removed.setdefault(key, (str(commit.id), rfc3339(commit.commit_time)))
                continue
            try:
                record = parse(store.repo[blob].data, path=f"{directory}/{name}")
            except RecordFormatError:
                continue
            if record.key != key:
                record = record.copy(key=key)
            entry = Entry(record, str(commit.id), rfc3339(commit.commit_time), order)
            if key not in live:
                entry.archived = True
                entry.archived_sha, entry.archived_at = removed.get(key, (None, None))
            found[key] = entry
    return list(found.values())
