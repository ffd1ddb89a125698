"""Record files an interrupted kyb write left out of line with HEAD, found and brought back.

A working-tree update that stopped midway (a full disk, an EACCES, a kill) leaves record files
missing or the Git index at another version (`git status`: ` D`, `D `, `AD`). The recovery journal
finishes the paths it lists; when it could not be applied it is set aside (`pending.json.failed`),
and then the next writer, under the lock, brings every record path whose file and index entry hold
nothing the canon lacks back to HEAD (`mend_after_set_aside`) — never a hand edit (bytes the canon
does not hold are left alone, `kyb doctor` names them). `kyb doctor` reports the same rows
(tools/tree_health.py uses `inspect`).
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from kyb_cli.core.canon.journal import SET_ASIDE, remove_entry
from kyb_cli.core.canon.nofollow import read_file
from kyb_cli.core.canon.tree import entries_at
from kyb_cli.core.canon.worktree import known_version, update_worktree
from kyb_cli.core.records.keys import RECORD_DIRS, unsafe_path



def _head_paths(head: pygit2.Commit | None) -> set[str]:
    out: set[str] = set()
    if head is None:
        return out
    for directory in RECORD_DIRS:
        try:
            tree = head.tree[directory]
        except KeyError:
            continue
        if tree.type_str != "tree":
            continue
        out.update(f"{directory}/{e.name}" for e in tree if e.type_str == "blob")  # the old flat shape
        for bucket in (e for e in tree if e.type_str == "tree"):  # fanned out (records/keys.py)
            out.update(f"{directory}/{bucket.name}/{e.name}" for e in head.tree[f"{directory}/{bucket.name}"]
                       if e.type_str == "blob")
    return out


def inspect(store) -> list[dict]:
    """One row `{path, state, fixable}` per record path whose file or index entry is not HEAD's."""
    repo = store.repo
    if repo.workdir is None:
        return []
    head = store.head_commit()
    index = repo.index
    index.read()
    staged = {e.path: e.id for e in index if e.path.split("/", 1)[0] in RECORD_DIRS}
    paths = sorted(_head_paths(head) | set(staged))
    committed = entries_at(head, paths) if head is not None else {}
    root = Path(repo.workdir)
    rows: list[dict] = []
    for path in paths:
        if unsafe_path(path) is not None:
            continue
        h = committed.get(path)
        h_id = h[0] if h else None
        i_id = staged.get(path)
        try:
            data = read_file(root, path)
        except OSError:
            data = b""  # unreadable or in the way: it is reported, never overwritten blindly
        w_id = None if data is None else pygit2.hash(data)
        if h_id == i_id == w_id:
            continue
        if h_id is not None and w_id is None:
            state = "missing" if i_id == h_id else "missing_staged"
        elif i_id != h_id:
            state = "staged_wrong" if h_id is not None else "not_in_head"
        else:
            state = "old_version"
        fixable = known_version(repo, path, w_id) and known_version(repo, path, i_id)
        if not fixable:
            state = "hand_edit"
        rows.append({"path": path, "state": state, "fixable": fixable})
    return rows


def mend(store) -> list[str]:
    """Bring every fixable record path (file and index entry) to HEAD; the paths mended. Call under
    the writer lock, after the journal ran."""
    rows = [r for r in inspect(store) if r["fixable"]]
    if rows:
        head = store.head_commit()
        update_worktree(store.repo, entries_at(head, [r["path"] for r in rows]) if head is not None
                        else {r["path"]: None for r in rows})
    return [r["path"] for r in rows]


def mend_after_set_aside(store) -> None:
    """When a journal was set aside (an interrupted write it could not finish), mend every record
    path and then drop the set-aside journal: the next write repairs what the journal could not,
    so no `git status` line of an interrupted write outlives it. A failure (the disk still full)
    keeps the marker for the write after; it never stops this write."""
    aside = Path(store.kyb_dir) / SET_ASIDE
    if not aside.exists() and not aside.is_symlink():
        return
    try:
        mend(store)
    except Exception:  # noqa: BLE001 - a full disk, a link in the way: kept for the next write, `kyb doctor` says it
        return
    remove_entry(aside)
