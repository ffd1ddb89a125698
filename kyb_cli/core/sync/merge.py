"""Per-record integration of two histories of a store (the heart of `kyb sync`), pure pygit2, no network.

Each record is its own file, so two sides are combined file by file against their merge base:
- a path changed on one side only takes that side's version (different keys never conflict);
- the same path changed to the same content on both sides is no conflict;
- the same record edited differently on both sides: the later write wins by the (effective) commit
  time of the commit that wrote each version, ties broken by the larger sha. The rule is symmetric, so every
  clone merging the same two heads builds the same tree; the losing version stays in history
  (the merge commit has both heads as parents) and is reported as a `both_changed` conflict;
- a record removed on one side (knowledge retracted, incident/task archived) and edited on the other:
  the edit wins and the record stays, reported as `retract_vs_edit` / `archive_vs_edit` so an agent
  reviews it. A removal never silently beats work done without knowledge of it.
- held-out: a version that breaks the write rules (records/keys.py `load`) never wins a conflict
  against one that does not; it stays in history and, where only one side changed the path, in
  the tree, where kyb never serves it (sync lists it under `held_out` until someone repairs it).
- bounded-clocks: "later" compares effective times (clocks.py): a commit counts as no later than
  any commit built on it, and no later than the merging clone's clock plus KYB_CLOCK_SKEW.
- by-key: a record is its key, not its path. A side that only moved a file from its old flat path
  to its fanned-out one (canon/migrate.py, same blob) did not change it; a peer still on the old
  shape that edits `knowledge/<key>.md` changes the key, and the merge writes that version at the
  key's fanned-out path (removing the old file): old and new shapes sync both ways, nothing lost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pygit2

from kyb_cli.core.records.keys import (is_record_candidate, is_valid_key, key_of_path, kind_of_key, path_of_key,
                                       paths_of_key)
from kyb_cli.core.records.served import record_problem
from kyb_cli.core.canon.tree import Entry, TreeListing, apply_changes, blob_at
from kyb_cli.core.timestamps import rfc3339


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


TYPES = ("both_changed", "retract_vs_edit", "archive_vs_edit")
_SHA = re.compile(r"[0-9a-f]{40}")


def is_kyb_merge(commit: pygit2.Commit) -> bool:
    """A merge `kyb sync` made: two parents, subject `kyb: sync merge …`, trailer `Kyb-Action: sync`."""
    from kyb_cli.core.canon.text import message_of

    message = message_of(commit)
    return (len(commit.parents) == 2 and message.startswith("kyb: sync merge ")
            and "\nKyb-Action: sync\n" in message + "\n")


def decided_elsewhere(repo: pygit2.Repository, incoming: pygit2.Oid, local: pygit2.Oid | None) -> list[Conflict]:
    """Conflicts decided by merges another clone made, arriving now, whose losing version this clone had.

    Without this, the clone whose write lost would fast-forward to the merge and see its version
    replaced without a word; the merge commit's `Kyb-Conflict` trailers say what was decided.
    Conflict reports come only from kyb's own merges, validated: a trailer counts only in a commit
    kyb's sync made (`is_kyb_merge`), for a valid key (its path from the key authority, never from
    the message), with both shas full commits inside the merge's history, the kept one holding
    exactly what the merge holds and the other one not — so a peer cannot inject reports (a path
    `../../etc/passwd`, a decision that never happened) into this clone's sync reply.
    """
    if local is None:
        return []
    walker = repo.walk(incoming, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
    walker.hide(local)
    out: list[Conflict] = []
    for commit in walker:
        if not is_kyb_merge(commit):
            continue
        from kyb_cli.core.canon.text import message_of

        for line in message_of(commit).splitlines():
            if not line.startswith(TRAILER):
                continue
            conflict = _validated(repo, commit, line[len(TRAILER):].split(), local)
            if conflict is not None:
                out.append(conflict)
    out.sort(key=lambda c: (c.path, c.merge))
    return out


def _validated(repo: pygit2.Repository, merge: pygit2.Commit, parts: list[str], local: pygit2.Oid) -> Conflict | None:
    if len(parts) != 4 or parts[1] not in TYPES or not is_valid_key(parts[0]):
        return None
    fields = dict(p.split("=", 1) for p in parts[2:] if "=" in p)
    kept_sha, other_sha = fields.get("kept", ""), fields.get("other", "")
    if not (_SHA.fullmatch(kept_sha) and _SHA.fullmatch(other_sha)):
        return None
    try:
        kept, other = repo[kept_sha], repo[other_sha]
    except (KeyError, ValueError):
        return None
    if not (isinstance(kept, pygit2.Commit) and isinstance(other, pygit2.Commit)):
        return None
    if not (repo.descendant_of(merge.id, kept.id) and repo.descendant_of(merge.id, other.id)):
        return None
    path = path_of_key(parts[0])
    held = _blob_of(merge, path)
    if _blob_of(kept, path) != held or _blob_of(other, path) == held:
        return None  # the trailer does not describe what this merge did
    if not (other.id == local or repo.descendant_of(local, other.id)):
        return None  # not a version this clone had: nothing of ours was overridden
    return Conflict(path=path, type=parts[1], kept=str(kept.id), other=str(other.id),
                    kept_at=rfc3339(kept.commit_time), other_at=rfc3339(other.commit_time),
                    kept_side="remote", merge=str(merge.id))


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


def _key_entry(listing: TreeListing, key: str) -> tuple[str, Entry] | None:
    """(path, entry) of `key`'s file in a tree, at its fanned-out path or its old flat one, or None."""
    for path in paths_of_key(key):
        entry = listing.get(path)
        if entry is not None:
            return path, entry
    return None


def _blob_of(commit: pygit2.Commit, name: str) -> pygit2.Oid | None:
    """The blob at `name` in `commit`: for a record, its key's file at either path (by-key)."""
    key = key_of_path(name)
    if key is None:
        return blob_at(commit, name)
    found = _key_entry(TreeListing(commit.tree), key)
    return found[1][0] if found is not None else None


def _keyed(changes: dict[str, Entry | None], base: pygit2.Tree | None, tip: pygit2.Tree) -> dict[str, Entry | None]:
    """Path changes as changes of names: a record's name is its key's fanned-out path, and it changed
    only when its key's entry (at either path) differs from the base's (by-key: a move is no change)."""
    out: dict[str, Entry | None] = {}
    tip_list, base_list = TreeListing(tip), TreeListing(base)
    for path, entry in changes.items():
        key = key_of_path(path)
        if key is None:
            out[path] = entry
            continue
        name = path_of_key(key)
        if name in out:
            continue
        now, was = _key_entry(tip_list, key), _key_entry(base_list, key)
        if (now[1] if now else None) != (was[1] if was else None):
            out[name] = now[1] if now else None
    return out


def _place(changes: dict[str, Entry | None], local: pygit2.Tree, name: str, entry: Entry | None) -> None:
    """Set `name` to `entry` in the merged tree; a record goes to its fanned-out path, and its old
    flat file in the local tree (if any) goes, so no key is held at two paths."""
    key = key_of_path(name)
    if key is None:
        changes[name] = entry
        return
    for path in paths_of_key(key)[1:]:
        try:
            local[path]
        except KeyError:
            continue
        changes[path] = None
    changes[name] = entry


def writer_of(repo: pygit2.Repository, tip: pygit2.Commit, path: str, entry: Entry | None) -> pygit2.Commit:
    """The newest commit reachable from `tip` that made `path` what it is at `tip` (wrote or removed it).

    Merge commits never invent content (they pick a side), so this is a real write: its commit time
    is the write time the conflict rule compares.
    """
    target = None if entry is None else entry[0]
    walker = repo.walk(tip.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
    for commit in walker:
        if _blob_of(commit, path) != target:
            continue
        parents = commit.parents
        if not parents:
            if target is not None:
                return commit
            continue
        if all(_blob_of(p, path) != target for p in parents):
            return commit
    return tip


def _bad(repo: pygit2.Repository, path: str, entry: Entry | None, held: set[tuple[str, str]]) -> bool:
    """True when `entry` at `path` is a record version kyb holds out (it breaks the write rules)."""
    if entry is None or not is_record_candidate(path):
        return False
    key = key_of_path(path)
    if any((p, str(entry[0])) in held for p in (paths_of_key(key) if key else (path,))):
        return True
    return record_problem(path, repo[entry[0]].data) is not None


def integrate(repo: pygit2.Repository, local: pygit2.Commit, remote: pygit2.Commit,
              base: pygit2.Commit | None, *, held: set[tuple[str, str]] | None = None,
              now: int | None = None) -> Integration:
    """The tree of merging `remote` into `local` record by record (see the module doc for the rules).

    Linear in the number of changed paths: each side is diffed against the base once, the tree is
    built in one pass per directory, and only a path both sides changed looks at history (its
    writers). held-out: a version breaking the write rules never wins against one that does not.
    bounded-clocks: writers compare by their effective times (clocks.py), not raw commit times.
    """
    from kyb_cli.core.sync import clocks

    held = held or set()
    base_tree = base.tree if base is not None else None
    ours = _keyed(tree_changes(repo, base_tree, local.tree), base_tree, local.tree)
    theirs = _keyed(tree_changes(repo, base_tree, remote.tree), base_tree, remote.tree)
    changes: dict[str, Entry | None] = {}
    conflicts: list[Conflict] = []
    bounds: dict[str, int] | None = None
    now = now if now is not None else max(local.commit_time, remote.commit_time)
    limit = now + clocks.skew()
    for path, their_entry in theirs.items():
        if path not in ours:
            _place(changes, local.tree, path, their_entry)
            continue
        our_entry = ours[path]
        if our_entry == their_entry:
            continue
        our_writer = writer_of(repo, local, path, our_entry)
        their_writer = writer_of(repo, remote, path, their_entry)
        our_bad, their_bad = _bad(repo, path, our_entry, held), _bad(repo, path, their_entry, held)
        if our_entry is None or their_entry is None:
            key = key_of_path(path)
            kind = kind_of_key(key) if key else "knowledge"
            ctype = "retract_vs_edit" if kind == "knowledge" else "archive_vs_edit"
            take_theirs = our_entry is None  # the edit wins
        else:
            ctype = "both_changed"
            if bounds is None:
                bounds = clocks.bounds(repo, [local.id, remote.id], base.id if base is not None else None, now)
            ours_at = bounds.get(str(our_writer.id), min(our_writer.commit_time, limit))
            theirs_at = bounds.get(str(their_writer.id), min(their_writer.commit_time, limit))
            take_theirs = (theirs_at, str(their_writer.id)) > (ours_at, str(our_writer.id))
        if our_bad != their_bad:
            take_theirs = our_bad
        kept, other = (their_writer, our_writer) if take_theirs else (our_writer, their_writer)
        conflicts.append(Conflict(
            path=path, type=ctype, kept=str(kept.id), other=str(other.id),
            kept_at=rfc3339(kept.commit_time), other_at=rfc3339(other.commit_time),
            kept_side="remote" if take_theirs else "local",
        ))
        if take_theirs:
            _place(changes, local.tree, path, their_entry)
    tree = apply_changes(repo, local.tree, changes)
    conflicts.sort(key=lambda c: c.path)
    return Integration(tree=tree, changes=changes, conflicts=conflicts)
