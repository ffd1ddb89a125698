"""The Git-walk read model, kept as the test oracle only (production reads go through the index).

Each function answers a read by walking Git history with pygit2, the slow and obviously-correct way:
tests compare the index's answers (kyb_cli.core.index.reads) against these. A divergence is a bug
with a test, never something a fallback hides. Cost: one pass over history per read.
"""

from __future__ import annotations

from typing import Any, Iterator

import pygit2

from kyb_cli.core.records.trailers import parse_trailers
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.canon.tree import blob_at
from kyb_cli.core.errors import NotFound
from kyb_cli.core.records.keys import KIND_DIRS, RECORD_DIRS, key_of_path, path_of_key
from kyb_cli.core.records.model import Record, RecordFormatError, parse
from kyb_cli.core.records.validate import check_key
from kyb_cli.core.records.versions import (
    CatalogEntry as Entry, HistoryRow, Version, change_of, history_row, ranked_tags, retracted_error, retraction_of,
)
from kyb_cli.core.times.format import rfc3339


def _store(store: Any) -> Store:
    return store if isinstance(store, Store) else Store(store)


def _changes(store: Store, path: str, start: pygit2.Commit) -> Iterator[tuple[pygit2.Commit, str, pygit2.Oid | None]]:
    """(commit, change, blob) for each commit reachable from `start` that changed `path`, newest first.

    A merge counts only when its result differs from every parent (a resolution that wrote new
    content); otherwise the change is already listed at the commit that made it.
    """
    walker = store.repo.walk(start.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
    for commit in walker:
        blob = blob_at(commit, path)
        change = change_of(blob, [blob_at(p, path) for p in commit.parents])
        if change is not None:
            yield commit, change, blob


def history(store: Any, key: str) -> list[HistoryRow]:
    """Every change of a key, newest first; NotFound when it never existed."""
    store = _store(store)
    check_key(key)
    head = store.head_commit()
    rows: list[HistoryRow] = []
    if head is not None:
        for commit, change, _blob in _changes(store, path_of_key(key), head):
            rows.append(history_row(str(commit.id), commit.commit_time, change, commit.message,
                                    f"{commit.author.name} <{commit.author.email}>"))
    if not rows:
        raise NotFound(f"no history for '{key}'")
    return rows


def _origin(path: str, commit: pygit2.Commit) -> pygit2.Commit:
    """The commit that made `path` what it is at `commit` (its blob, or its absence).

    Walks back through parents that hold the same blob (Git's TREESAME simplification), so a merge
    that took one side's version points at the commit on that side that wrote it. For a path absent
    at `commit` the answer is the commit that deleted it, or a root commit when it never existed.
    """
    blob = blob_at(commit, path)
    while True:
        for parent in commit.parents:
            if blob_at(parent, path) == blob:
                commit = parent
                break
        else:
            return commit


def read(store: Any, key: str, at: str | None = None) -> Version:
    """The record as of HEAD (or `at`), with its version's sha and time and its state."""
    store = _store(store)
    check_key(key)
    if at is None:
        commit = store.head_commit()
        if commit is None:
            raise NotFound(f"no record '{key}'")
    else:
        commit = store.resolve(at)
    version = _version_at(store, key, commit, at)
    if at is not None:
        try:
            current = _version_at(store, key, store.head_commit(), None) if store.head_commit() else None
        except NotFound:
            current = None
        version.is_head = current is not None and current.sha == version.sha
    return version


def _version_at(store: Store, key: str, commit: pygit2.Commit, at: str | None) -> Version:
    path = path_of_key(key)
    blob = blob_at(commit, path)
    if blob is not None:
        origin = _origin(path, commit)
        return Version(store.parse_blob(blob, path), str(origin.id), rfc3339(origin.commit_time), "active")
    end = _origin(path, commit)
    if not end.parents:
        raise NotFound(f"no record '{key}'" + (f" at {at}" if at else ""))
    last = end.parents[0]
    origin = _origin(path, last)
    last_blob = blob_at(last, path)
    assert last_blob is not None
    reason = parse_trailers(end.message).get("Kyb-Reason")
    version = Version(
        store.parse_blob(last_blob, path), str(origin.id), rfc3339(origin.commit_time),
        retraction_of(key), ended_sha=str(end.id), ended_at=rfc3339(end.commit_time), reason=reason,
    )
    if version.state == "retracted":
        raise retracted_error(key, version, end.short_id, origin.short_id, at)
    return version


def live_records(store: Any, rev: str | None = None) -> tuple[list[Record], list[RecordFormatError]]:
    """Every record file in the tree at HEAD (or `rev`), and the files that did not parse."""
    store = _store(store)
    commit = store.head_commit() if rev is None else store.resolve(rev)
    records: list[Record] = []
    broken: list[RecordFormatError] = []
    if commit is None:
        return records, broken
    for directory in RECORD_DIRS:
        try:
            tree = commit.tree[directory]
        except KeyError:
            continue
        if not isinstance(tree, pygit2.Tree):
            continue
        for entry in tree:
            rel = f"{directory}/{entry.name}"
            if key_of_path(rel) is None or entry.type_str != "blob":
                continue
            try:
                records.append(store.parse_blob(entry.id, rel))
            except RecordFormatError as exc:
                broken.append(exc)
    return records, broken


def tags(store: Any) -> list[dict[str, Any]]:
    """Tags of live records with counts, lowercased, most used first."""
    counts: dict[str, int] = {}
    records, _broken = live_records(store)
    for record in records:
        for tag in {t.lower() for t in record.tags}:
            counts[tag] = counts.get(tag, 0) + 1
    return ranked_tags(counts)


# -- listings (the walk behind kinds/catalog.py) ----------------------------------------------------

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
    return [delta.new_file.path or delta.old_file.path for delta in old.diff_to_tree(new).deltas]


def catalog(store: Any, kind: str) -> list[Entry]:
    """All keys of `kind` ever committed, each with its latest version; unparseable versions skipped.

    One walk over history, newest first: per key the first (= newest) version met and, for a key
    missing from HEAD, the commit that removed it. A merge counts only where its blob differs from
    every parent's (the rule `_changes` uses)."""
    store = _store(store)
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


class Walk:
    """The oracle bound to one store, shaped like the reads it checks: walk.read(key, at=…) …"""

    def __init__(self, store: Any) -> None:
        self.store = _store(store)

    def read(self, key: str, at: str | None = None) -> Version:
        return read(self.store, key, at)

    def history(self, key: str) -> list[HistoryRow]:
        return history(self.store, key)

    def tags(self) -> list[dict[str, Any]]:
        return tags(self.store)

    def catalog(self, kind: str) -> list[Entry]:
        return catalog(self.store, kind)
