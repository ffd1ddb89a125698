"""Several commits, one branch move: a batch of writes (`kyb import`, MCP `add_many`) published once.

A batch is a list of `Commit`s (a message and the paths it changes: new bytes, or None = removed),
built on the HEAD found under the writer lock. `write_objects` makes their Git objects and returns
the last commit; nothing is visible yet. `transaction.publish` then moves the branch once (one
atomic ref update, journalled) and brings the working tree along, as every other write does. A
process killed before that move leaves the store exactly as it was; after it, the whole batch is
there and the next writer finishes the working tree (journal.py).

Objects are made in-process with pygit2 for a few commits, and streamed into `git fast-import` for
many: every commit carries a full `knowledge/` tree, and loose objects would store (and compress) a
fresh copy of it per commit, which is quadratic (3,000 records: 19 s); fast-import writes one pack
with trees delta-compressed against their previous version (git-fast-import(1)). Both ways give
identical commits (tests/test_import_batch.py checks the shas are equal).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from kyb_cli.core.canon.tree import Entry, apply_changes, blob_entry, entries_at
from kyb_cli.core.errors import StoreError

FAST_IMPORT_FROM = 24  # commits; below this pygit2 in-process is faster than starting git
TEMP_REF_PREFIX = "refs/kyb/batch/"


@dataclass
class Commit:
    """One commit of a batch: its full message and the paths it changes (None: the file goes)."""

    message: str
    changes: dict[str, bytes | None] = field(default_factory=dict)


def write_objects(store, base: pygit2.Commit | None, commits: list[Commit], *,
                  fast_import: bool | str | None = None) -> tuple[pygit2.Oid, dict[str, Entry | None]]:
    """Make the objects of `commits` on top of `base`: (the last commit's id, every path touched
    with its final entry). Objects only: no ref moves, nothing is visible until it is published.

    `fast_import`: None picks by size; True writes one pack (canon/packwrite.py, record paths only,
    else `git fast-import`); "git" forces `git fast-import`; False makes loose objects with pygit2."""
    if not commits:
        raise ValueError("an empty batch")
    if fast_import is None:
        fast_import = len(commits) >= FAST_IMPORT_FROM
    from kyb_cli.core.canon import packwrite

    sig = store.signature()
    paths = [p for c in commits for p in c.changes]
    if fast_import == "git" and _fast_import_safe(sig):
        tip = _with_fast_import(store, base, commits, sig)
    elif fast_import and packwrite.supported(paths):
        try:
            tip = pygit2.Oid(raw=packwrite.write_pack(store.repo, base, commits, sig))
        except OSError as exc:
            raise StoreError(f"write failed, nothing was written: {exc}") from None
    elif fast_import and _fast_import_safe(sig):
        tip = _with_fast_import(store, base, commits, sig)
    else:
        tip = _with_pygit2(store.repo, base, commits, sig)
    paths = list(dict.fromkeys(p for c in commits for p in c.changes))
    return tip, entries_at(store.repo[tip].peel(pygit2.Commit), paths)


def _with_pygit2(repo: pygit2.Repository, base: pygit2.Commit | None, commits: list[Commit],
                 sig: pygit2.Signature) -> pygit2.Oid:
    parent = base.id if base is not None else None
    tree = base.tree if base is not None else None
    try:
        for c in commits:
            changes = {p: (None if data is None else blob_entry(repo.create_blob(data)))
                       for p, data in c.changes.items()}
            tree_id = apply_changes(repo, tree, changes)
            parent = repo.create_commit(None, sig, sig, c.message, tree_id, [parent] if parent else [])
            tree = repo[tree_id]
    except (OSError, pygit2.GitError) as exc:
        raise StoreError(f"write failed, nothing was written: {exc}") from None
    return parent


def _fast_import_safe(sig: pygit2.Signature) -> bool:
    """fast-import's ident lines cannot carry `<`, `>` or newlines in a name or an email."""
    return not any(ch in f"{sig.name}{sig.email}" for ch in "<>\n")


def remove_temp_refs(repo: pygit2.Repository) -> None:
    """Drop batch refs a killed import left behind (call under the writer lock)."""
    for name in list(repo.references):
        if name.startswith(TEMP_REF_PREFIX):
            try:
                repo.references.delete(name)
            except (KeyError, pygit2.GitError):
                pass


def _with_fast_import(store, base: pygit2.Commit | None, commits: list[Commit],
                      sig: pygit2.Signature) -> pygit2.Oid:
    from kyb_cli.core.canon import durability, git

    ref = f"{TEMP_REF_PREFIX}{os.getpid()}"
    offset = sig.offset
    tz = f"{'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    ident = f"{sig.name} <{sig.email}> {sig.time} {tz}".encode("utf-8")
    out: list[bytes] = []
    for n, c in enumerate(commits, 1):
        msg = c.message.encode("utf-8")
        out.append(b"commit %s\nmark :%d\nauthor %s\ncommitter %s\ndata %d\n%s\n"
                   % (ref.encode(), n, ident, ident, len(msg), msg))
        if n == 1 and base is not None:
            out.append(b"from %s\n" % str(base.id).encode())
        elif n > 1:
            out.append(b"from :%d\n" % (n - 1))
        for path, data in c.changes.items():
            if "\n" in path or path.startswith('"'):
                raise ValueError(f"path cannot be streamed: {path!r}")
            if data is None:
                out.append(b"D %s\n" % path.encode())
            else:
                out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
        out.append(b"\n")
    out.append(b"done\n")
    args = ["-c", f"core.fsync={'committed' if durability.enabled() else 'none'}",
            "fast-import", "--quiet", "--done", "--force"]
    store_path = Path(store.path)
    res = git.run(args, cwd=store_path, input=b"".join(out))
    repo = store.repo
    try:
        if res.returncode != 0:
            detail = res.stderr.decode("utf-8", "replace").strip().splitlines()
            raise StoreError(f"write failed, nothing was written: git fast-import: "
                             f"{detail[-1] if detail else res.returncode}")
        try:
            tip = repo.references[ref].target
        except KeyError:
            raise StoreError("write failed, nothing was written: git fast-import made no commit") from None
    finally:
        try:
            repo.references.delete(ref)
        except (KeyError, pygit2.GitError):
            pass
    return tip


def hand_edited(repo: pygit2.Repository, committed: dict[str, pygit2.Oid | None]) -> set[str]:
    """The paths whose working-tree file (or Git index entry) differs from the committed blob:
    uncommitted hand edits a write must not overwrite. One index read for the whole batch
    (worktree.has_hand_edits, the one-record check, reads it per call)."""
    if repo.workdir is None or not committed:
        return set()
    root = Path(repo.workdir)
    from kyb_cli.core.canon.worktree import git_index

    try:
        index = git_index(repo)
    except pygit2.GitError:
        index = None
    edited: set[str] = set()
    for path, blob in committed.items():
        try:
            on_disk = (root / path).read_bytes()
        except FileNotFoundError:
            on_disk = None
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {exc.strerror}") from None
        if (on_disk is None) != (blob is None) or (on_disk is not None and pygit2.hash(on_disk) != blob):
            edited.add(path)
            continue
        if index is None:
            continue
        try:
            entry = index[path]
        except KeyError:
            if blob is not None and on_disk is not None:
                edited.add(path)
            continue
        if blob is None or entry.id != blob:
            edited.add(path)
    return edited
