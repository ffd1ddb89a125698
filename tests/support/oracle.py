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
from kyb_cli.core.canon.tree import blob_at as _path_blob
from kyb_cli.core.errors import KybError, NotFound
from kyb_cli.core.records.keys import KIND_DIRS, RECORD_DIRS, key_of_path, path_of_key, paths_of_key
from kyb_cli.core.records.model import Record, RecordFormatError, parse
from kyb_cli.core.records.validate import check_key
from kyb_cli.core.records.versions import (
    CatalogEntry as Entry, HistoryRow, Version, change_of, history_row, ranked_tags, retracted_error, retraction_of,
)
from kyb_cli.core.timestamps import rfc3339


def blob_at(commit: pygit2.Commit, path: str) -> pygit2.Oid | None:
    """The blob at `path`; for a record path, its key's file at either layout (the fanned-out path
    or the old flat one: identity is the key, so a move is no change; records/keys.py)."""
    key = key_of_path(path)
    if key is None:
        return _path_blob(commit, path)
    for candidate in paths_of_key(key):
        found = _path_blob(commit, candidate)
        if found is not None:
            return found
    return None


def _entries(tree: pygit2.Tree, directory: str) -> Iterator[tuple[str, pygit2.Object]]:
    """(path, entry) of each file in a record directory and in its bucket directories."""
    try:
        sub = tree[directory]
    except KeyError:
        return
    if not isinstance(sub, pygit2.Tree):
        return
    for entry in sub:
        if isinstance(entry, pygit2.Tree):
            for inner in entry:
                yield f"{directory}/{entry.name}/{inner.name}", inner
        else:
            yield f"{directory}/{entry.name}", entry


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
        for rel, entry in _entries(commit.tree, directory):
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

def catalog(store: Any, kind: str) -> list[Entry]:
    """All keys of `kind` ever committed, each with the version HEAD shows (its last one when removed).

    Per key, straight from the definition: the blob at HEAD and the commit that wrote it (`_origin`,
    Git's TREESAME walk), else the commit that removed it and the version before; a version that
    is not servable (records/keys.py `load`) gives the newest servable one in history instead.
    `order` is the walk position of the version's commit (newest first)."""
    from kyb_cli.core.records.served import record_problem

    store = _store(store)
    directory = KIND_DIRS[kind]
    head = store.head_commit()
    if head is None:
        return []
    walk = list(store.repo.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME))
    order = {str(c.id): n for n, c in enumerate(walk)}
    keys = set()
    for commit in walk:
        for rel, _e in _entries(commit.tree, directory):
            if key_of_path(rel) is not None:
                keys.add(key_of_path(rel))
    out = []
    for key in sorted(keys):
        path = path_of_key(key)
        blob = blob_at(head, path)
        ended = None
        at = head
        if blob is None:
            ended = _origin(path, head)
            at = ended.parents[0]
            blob = blob_at(at, path)
        origin = _origin(path, at)
        if record_problem(path, store.repo[blob].data) is not None:
            found = None
            for commit, _change, b in _changes(store, path, head):
                if b is not None and record_problem(path, store.repo[b].data) is None:
                    found = (commit, b)
                    break
            if found is None:
                continue
            origin, blob = found
        record = store.parse_blob(blob, path)
        entry = Entry(record, str(origin.id), rfc3339(origin.commit_time), order.get(str(origin.id), 0))
        if ended is not None:
            entry.archived = True
            entry.archived_sha, entry.archived_at = str(ended.id), rfc3339(ended.commit_time)
        out.append(entry)
    return out


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


# -- the query modes (as-of-first-parent; held-out versions never served) -----------------------------

def _loadable(store: Store, blob, path: str) -> bool:
    from kyb_cli.core.records.served import record_problem

    return record_problem(path, store.repo[blob].data) is None


def _record_paths(tree: pygit2.Tree) -> dict[str, pygit2.Oid]:
    out = {}
    for directory in RECORD_DIRS:
        for path, entry in _entries(tree, directory):
            key = key_of_path(path)
            if entry.type_str == "blob" and key is not None:
                out[path_of_key(key)] = entry.id  # by key: either layout names the same record
    return out


def first_parent_line(store: Any) -> list[tuple[pygit2.Commit, int]]:
    """HEAD's first-parent line, oldest first, with each commit's time (clamped to datetime's range)."""
    from kyb_cli.core.timestamps import clamp_epoch

    store = _store(store)
    line = []
    commit = store.head_commit()
    while commit is not None:
        line.append((commit, clamp_epoch(commit.commit_time)))
        commit = commit.parents[0] if commit.parents else None
    return list(reversed(line))


def as_of_hits(store: Any, t: int) -> set[tuple[str, str, str]]:
    """(key, version sha, state) of `kyb query --as-of t` with no text: per key, the last change a
    first-parent commit dated no later than t made to it (its net change against its first parent)."""
    store = _store(store)
    shown: dict[str, tuple[str, str] | None] = {}  # key -> (sha, state), None: hidden
    for commit, when in first_parent_line(store):
        if when > t:
            continue
        parent = commit.parents[0] if commit.parents else None
        now, before = _record_paths(commit.tree), (_record_paths(parent.tree) if parent else {})
        for path in set(now) | set(before):
            if now.get(path) == before.get(path):
                continue
            key = key_of_path(path)
            if path in now:
                origin = _origin(path, commit)
                shown[key] = (str(origin.id), "active") if _loadable(store, now[path], path) else None
            elif not path.startswith("knowledge/") and _loadable(store, before[path], path):
                shown[key] = (str(_origin(path, parent).id), "archived")
            else:
                shown[key] = None
    return {(k, v[0], v[1]) for k, v in shown.items() if v is not None}


def current_hits(store: Any) -> set[tuple[str, str, str]]:
    """(key, version sha, state) of `kyb query` with no text: live records, archived work items."""
    store = _store(store)
    head = store.head_commit()
    keys = set()
    for commit in store.repo.walk(head.id):
        keys |= {key_of_path(p) for p in _record_paths(commit.tree)}
    out = set()
    for key in keys:
        try:
            v = read(store, key)
        except KybError:
            continue
        out.add((key, v.sha, v.state))
    return out


def history_hits(store: Any) -> set[tuple[str, str]]:
    """(key, sha) of every readable content version reachable from HEAD (`kyb query --history`)."""
    store = _store(store)
    out = set()
    for commit in store.repo.walk(store.head_commit().id):
        for path, blob in _record_paths(commit.tree).items():
            if any(blob_at(p, path) == blob for p in commit.parents):
                continue
            if _loadable(store, blob, path):
                out.add((key_of_path(path), str(commit.id)))
    return out
