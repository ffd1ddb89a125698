"""A key's file at a revision, and the commit that wrote it, whichever shape the revision has.

A key's file is at its fanned path (`knowledge/<h>/<key>.md`) or, in a commit from before the move
(canon/migrate.py), at its old flat path (records/keys.py `paths_of_key`). The identity of a record
is its key: a commit that only moved the file, same blob, is not a version, so `origin` looks
through it to the commit that wrote the text (history, `get --at`, `--as-of`, `diff`; issue 39).
"""

from __future__ import annotations

from pathlib import Path

from kyb_cli.core.canon import git
from kyb_cli.core.errors import NotFound, StoreError
from kyb_cli.core.records.keys import paths_of_key

Obj = tuple[str, str, bytes]


def _cat(store_path: Path, specs: list[str]) -> list[Obj | None]:
    try:
        return git.cat_file(store_path, specs)
    except ValueError:
        raise NotFound("no such revision (an object name with a newline)") from None


def _blob(obj: Obj | None) -> Obj | None:
    return obj if obj is not None and obj[1] == "blob" else None


def objects_at(store_path: Path, revs: list[str], key: str) -> list[Obj | None]:
    """The blob (oid, type, content) of `key`'s file at each of `revs`, at whichever of its two paths
    the revision holds it (the fanned one first), or None when neither holds a file: one cat-file."""
    new, old = paths_of_key(key)
    objs = _cat(store_path, [s for rev in revs for s in (f"{rev}:{new}", f"{rev}:{old}")])
    return [_blob(objs[2 * n]) or _blob(objs[2 * n + 1]) for n in range(len(revs))]


def blob_at(store_path: Path, rev: str, key: str) -> str | None:
    """The blob id of `key`'s file at `rev`, or None."""
    obj = objects_at(store_path, [rev], key)[0]
    return obj[0] if obj is not None else None


def origin(store_path: Path, rev: str, key: str) -> tuple[str, int] | None:
    """(sha, commit time) of the commit that made `key`'s file what it is at `rev` (wrote it, or
    removed it), or None when it never existed there.

    `git log -1 REV -- NEW OLD`: git's default history simplification follows, at a merge, a parent
    that holds the same content (TREESAME), so the answer is the commit on that side that wrote it.
    A commit that only moved the file (the same blob before and after, at the other path) is looked
    through: the search goes on from its first parent."""
    new, old = paths_of_key(key)
    for _ in range(8):  # a key moves once; a peer moving it back and forth is bounded too
        res = git.run(["-C", str(store_path), "log", "-1", "--format=%H %ct", rev, "--", new, old],
                      cwd=Path(store_path))
        if res.returncode != 0:
            raise StoreError(f"git log failed for {new} at {rev}")
        out = res.stdout.decode(errors="replace").strip()
        if not out:
            return None
        sha, when = out.split()
        after, before = objects_at(store_path, [sha, f"{sha}^1"], key)
        if after is None or before is None or after[0] != before[0]:
            return sha, int(when)
        rev = f"{sha}^1"
    raise StoreError(f"the file of '{key}' moves too often to follow its history")
