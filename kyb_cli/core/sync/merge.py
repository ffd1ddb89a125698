"""Per-record integration of two histories of a store (the heart of `kyb sync`), pure pygit2, no network.

Each record is its own file, so two sides are combined file by file against their merge base:
- a path changed on one side only takes that side's version (different keys never conflict);
- the same path changed to the same content on both sides is no conflict;
- the same record edited differently on both sides: the later write wins by the commit time of the
  commit that wrote each version, ties broken by the larger sha. The rule is symmetric, so every
  clone merging the same two heads builds the same tree; the losing version stays in history
  (the merge commit has both heads as parents) and is reported as a `both_changed` conflict;
- a record removed on one side (knowledge retracted, incident/task archived) and edited on the other:
  the edit wins and the record stays, reported as `retract_vs_edit` / `archive_vs_edit` so an agent
  reviews it. A removal never silently beats work done without knowledge of it.
The result is checked: every record file the merge brings in must parse, else nothing is committed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pygit2

from kyb_cli.core.errors import StoreError
from kyb_cli.core.records.keys import key_of_path, kind_of_key, path_of_key
from kyb_cli.core.records.model import RecordFormatError, parse
from kyb_cli.core.canon.tree import Entry, apply_changes, blob_at
from kyb_cli.core.times.format import rfc3339


@dataclass
class Conflict:
    """One path both sides changed differently: which version the merged tree kept, which it did not."""

    path: str
    type: str  # both_changed | retract_vs_edit | archive_vs_edit
    kept: str  # sha of the commit that wrote the kept version
    other: str  # sha of the commit that wrote (or removed) the other version
    kept_at: str
    other_at: str
    kept_side: str  # local | remote
    merge: str = ""  # the merge commit that decided it (set once that commit exists)

    @property
    def key(self) -> str:
        return key_of_path(self.path) or self.path

    def to_json(self) -> dict[str, Any]:
        out = {
            "key": self.key,
            "type": self.type,
            "kept": self.kept,
            "other": self.other,
            "kept_at": self.kept_at,
            "other_at": self.other_at,
            "kept_side": self.kept_side,
            "path": self.path,
        }
        if self.merge:
            out["merge"] = self.merge
        return out

    def trailer(self) -> str:
        return f"{self.key} {self.type} kept={self.kept} other={self.other}"


TRAILER = "Kyb-Conflict: "


def decided_elsewhere(repo: pygit2.Repository, incoming: pygit2.Oid, local: pygit2.Oid | None) -> list[Conflict]:
    """Conflicts decided by merges another clone made, arriving now, whose losing version this clone had.

    Without this, the clone whose write lost would fast-forward to the merge and see its version
    replaced without a word; the merge commit's `Kyb-Conflict` trailers say what was decided.
    """
    if local is None:
        return []
    walker = repo.walk(incoming, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
    walker.hide(local)
    out: list[Conflict] = []
    for commit in walker:
        if len(commit.parents) < 2:
            continue
        for line in commit.message.splitlines():
            if not line.startswith(TRAILER):
                continue
            parts = line[len(TRAILER):].split()
            fields = dict(p.split("=", 1) for p in parts[2:] if "=" in p)
            if len(parts) < 4 or not fields.get("kept") or not fields.get("other"):
                continue
            try:
                kept, other = repo[fields["kept"]], repo[fields["other"]]
            except (KeyError, ValueError):
                continue
            if not (other.id == local or repo.descendant_of(local, other.id)):
                continue  # not a version this clone had: nothing of ours was overridden
            out.append(Conflict(
                path=path_of_key(parts[0]), type=parts[1], kept=str(kept.id), other=str(other.id),
                kept_at=rfc3339(kept.commit_time), other_at=rfc3339(other.commit_time),
                kept_side="remote", merge=str(commit.id),
            ))
    out.sort(key=lambda c: (c.path, c.merge))
    return out


@dataclass
class Integration:
    """The merged tree and what it changes relative to the local tree."""

    tree: pygit2.Oid
    changes: dict[str, Entry | None]  # path -> new entry (None: removed), relative to local
    conflicts: list[Conflict] = field(default_factory=list)


def tree_changes(repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree) -> dict[str, Entry | None]:
    """Every file path whose entry differs between two trees (no rename detection: a path is a key)."""
    if old is None:
        old = repo[repo.TreeBuilder().write()]
    out: dict[str, Entry | None] = {}
    for delta in repo.diff(old, new).deltas:
        status = delta.status
        if status == pygit2.enums.DeltaStatus.DELETED:
            out[delta.old_file.path] = None
        else:
            if status == pygit2.enums.DeltaStatus.TYPECHANGE:
                out.setdefault(delta.old_file.path, None)
            out[delta.new_file.path] = (delta.new_file.id, int(delta.new_file.mode))
    return out


def entry_at(commit: pygit2.Commit, path: str) -> Entry | None:
    try:
        obj = commit.tree[path]
    except KeyError:
        return None
    return (obj.id, int(obj.filemode))


def writer_of(repo: pygit2.Repository, tip: pygit2.Commit, path: str, entry: Entry | None) -> pygit2.Commit:
    """The newest commit reachable from `tip` that made `path` what it is at `tip` (wrote or removed it).

    Merge commits never invent content (they pick a side), so this is a real write: its commit time
    is the write time the conflict rule compares.
    """
    target = None if entry is None else entry[0]
    walker = repo.walk(tip.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
    for commit in walker:
        if blob_at(commit, path) != target:
            continue
        parents = commit.parents
        if not parents:
            if target is not None:
                return commit
            continue
        if all(blob_at(p, path) != target for p in parents):
            return commit
    return tip


def integrate(repo: pygit2.Repository, local: pygit2.Commit, remote: pygit2.Commit,
              base: pygit2.Commit | None) -> Integration:
    """The tree of merging `remote` into `local` record by record (see the module doc for the rules)."""
    base_tree = base.tree if base is not None else None
    ours = tree_changes(repo, base_tree, local.tree)
    theirs = tree_changes(repo, base_tree, remote.tree)
    changes: dict[str, Entry | None] = {}
    conflicts: list[Conflict] = []
    for path, their_entry in theirs.items():
        if path not in ours:
            changes[path] = their_entry
            continue
        our_entry = ours[path]
        if our_entry == their_entry:
            continue
        our_writer = writer_of(repo, local, path, our_entry)
        their_writer = writer_of(repo, remote, path, their_entry)
        if our_entry is None or their_entry is None:
            key = key_of_path(path)
            kind = kind_of_key(key) if key else "knowledge"
            ctype = "retract_vs_edit" if kind == "knowledge" else "archive_vs_edit"
            take_theirs = our_entry is None  # the edit wins
        else:
            ctype = "both_changed"
            take_theirs = (their_writer.commit_time, str(their_writer.id)) > (
                our_writer.commit_time, str(our_writer.id))
        kept, other = (their_writer, our_writer) if take_theirs else (our_writer, their_writer)
        conflicts.append(Conflict(
            path=path, type=ctype, kept=str(kept.id), other=str(other.id),
            kept_at=rfc3339(kept.commit_time), other_at=rfc3339(other.commit_time),
            kept_side="remote" if take_theirs else "local",
        ))
        if take_theirs:
            changes[path] = their_entry
    tree = apply_changes(repo, local.tree, changes)
    conflicts.sort(key=lambda c: c.path)
    return Integration(tree=tree, changes=changes, conflicts=conflicts)


def check_records(repo: pygit2.Repository, tree: pygit2.Oid, paths: list[str], tip_for: dict[str, pygit2.Commit]) -> None:
    """Fail loudly (StoreError, nothing committed) when a record file in `tree` among `paths` does not parse."""
    root = repo[tree]
    broken: list[str] = []
    for path in sorted(paths):
        if key_of_path(path) is None:
            continue
        try:
            obj = root[path]
        except KeyError:
            continue
        try:
            parse(obj.data, path=path)
        except RecordFormatError as exc:
            tip = tip_for.get(path)
            where = ""
            if tip is not None:
                writer = writer_of(repo, tip, path, (obj.id, int(obj.filemode)))
                where = f" (written in {str(writer.id)[:12]})"
            broken.append(f"{path}{where}: {exc.reason}")
    if broken:
        raise StoreError(
            "sync stopped: record files that do not parse would enter the store, nothing was merged or "
            "pushed — fix them where they were written (a new commit) and sync again: " + "; ".join(broken),
            broken=broken,
        )
