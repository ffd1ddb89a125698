"""The move to the fanned-out shape (issue 39): one commit that moves every record file of an old,
flat store (`knowledge/<key>.md`) to its path under its bucket (`knowledge/<h>/<key>.md`,
records/keys.py), blobs unchanged, trailer `Kyb-Action: migrate`.

Made by the first write after an upgrade (the writer's transaction publishes this commit and the
write's in one branch move, so an old shape never lingers and nobody has to know a command) and by
`kyb migrate`. A move is not a version of any record: the index, `history`, `--as-of`, `get --at`
and `diff` follow a key, not a path (keys.by_key). Reads never write: they read both shapes.
"""

from __future__ import annotations

import pygit2

from kyb_cli.core.canon.tree import Entry, TreeListing, apply_changes
from kyb_cli.core.records.keys import RECORD_DIRS, is_old_path, key_of_path, path_of_key

ACTION = "migrate"


def old_files(commit: pygit2.Commit | None) -> dict[str, Entry]:
    """The old-shape record files of `commit`'s tree: flat path -> (blob, mode); only record
    directories' direct files are read (a new-shape store has none: 3 small tree reads)."""
    out: dict[str, Entry] = {}
    if commit is None:
        return out
    tree = commit.tree
    for folder in RECORD_DIRS:
        try:
            sub = tree[folder]
        except KeyError:
            continue
        if sub.type_str != "tree":
            continue
        for entry in sub:
            path = f"{folder}/{entry.name}"
            if entry.type_str == "blob" and is_old_path(path):
                out[path] = (entry.id, entry.filemode)
    return out


def move_changes(commit: pygit2.Commit | None, old: dict[str, Entry] | None = None) -> dict[str, Entry | None]:
    """The tree changes of the move: each old path removed, its blob (and mode) at the new path.
    A key already at its new path too (a doubled tree) keeps the new file; the old one goes.
    `old`: old_files(commit) when the caller has it."""
    changes: dict[str, Entry | None] = {}
    old = old_files(commit) if old is None else old
    if commit is None or not old:
        return changes
    news = {path: path_of_key(key_of_path(path) or "") for path in old}
    listing = TreeListing(commit.tree)  # each bucket read once, however many keys it holds
    for path, entry in old.items():
        changes[path] = None
        if listing.get(news[path]) is None:
            changes[news[path]] = entry
    return changes


def message(moved: int, trailers: list[tuple[str, str]]) -> str:
    body = f"kyb: migrate {moved} record file{'s' if moved != 1 else ''} to the fanned-out layout\n"
    lines = [("Kyb-Action", ACTION), *trailers]
    return body + "\n" + "".join(f"{k}: {v}\n" for k, v in lines if v)


def move_commit(store, head: pygit2.Commit | None,
                trailers: list[tuple[str, str]]) -> tuple[pygit2.Commit, dict[str, Entry | None], int,
                                                           dict[str, Entry]] | None:
    """The move commit on `head` (objects only, not on the branch), its changes, how many files it
    moves and what each changed path held in `head` (the old files; a new path was absent); None
    for a new-shape (or empty) store."""
    old = old_files(head)
    changes = move_changes(head, old)
    if head is None or not changes:
        return None
    repo = store.repo
    moved = sum(1 for e in changes.values() if e is None)
    tree = apply_changes(repo, head.tree, changes)
    sig = store.signature()
    oid = repo.create_commit(None, sig, sig, message(moved, trailers), tree, [head.id])
    return repo[oid].peel(pygit2.Commit), changes, moved, old


def layout_lines(store) -> tuple[list[str], list[str]]:
    """`kyb doctor`'s (problems, warnings) about the layout: a key at both its paths (a problem: one
    key is one file), record files still in the old flat layout (a warning: the next write moves them)."""
    head = store.head_commit()
    old = old_files(head)
    doubled = []
    for path in old:
        key = key_of_path(path)
        try:
            head.tree[path_of_key(key)]
            doubled.append(f"layout: '{key}' is held at both {path} and {path_of_key(key)}: one key is one "
                           f"file — remove one of them with git (git -C {store.path} rm {path})")
        except KeyError:
            continue
    warnings = [f"layout: {len(old)} record file{'s are' if len(old) != 1 else ' is'} in the old flat layout "
                f"(knowledge/<key>.md); the next write moves them in one commit, or now: kyb migrate"] if old else []
    return doubled, warnings
