"""Per-key reads answered from the sidecar index: `get`, `get --at`, `history`, `tags`, listings.

This is the one read model in production. A read is a few SQL lookups after `fresh()` brought the
index to HEAD, plus one `git cat-file --batch` (canon/git.py) for what the index does not keep: the
record bytes (parsed as a write would), commit messages (attribution, `Kyb-Reason`) and parents.
The Git walk that answers the same questions is the test oracle (tests/support/oracle.py); the
tests compare both, and a divergence is a bug with a test — nothing here falls back to a walk.

One question the revision-ordered event log cannot settle on its own is *which commit made a path
what it is at a revision*, when a merge commit is involved or the revision is off the indexed line
(a branch, a detached commit): those reads ask git's own history simplification for that one path
(`git log -1 REV -- PATH`, see `_origin`), which follows the parent that kept the content exactly
as the oracle does. The first-parent rule for time after merges (docs/ARCHITECTURE.md) refines this.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable, TypeVar

from kyb_cli.core.index import keypaths, schema
from kyb_cli.core.records.trailers import parse_trailers
from kyb_cli.core.errors import NotFound, StoreError
from kyb_cli.core.records.keys import KIND_DIRS, path_of_key
from kyb_cli.core.records.served import load
from kyb_cli.core.records.model import Record, RecordFormatError, record_field_names
from kyb_cli.core.timestamps import rfc3339
from kyb_cli.core.records.validate import check_key
from kyb_cli.core.records.versions import (
    CatalogEntry,
    HistoryRow,
    Version,
    change_of,
    history_row,
    ranked_tags,
    retracted_error,
    retraction_of,
)
from kyb_cli.core.records.secrets import shown

T = TypeVar("T")
_AUTHOR = re.compile(r"^(.*?) ?<([^>]*)> \d+ [+-]\d{4}$")


class Unanswerable(Exception):
    """The revision-ordered event log alone cannot name the commit; `_read` asks git (`_origin`)."""


def _path_of(store: Any) -> Path:
    return Path(getattr(store, "path", store))


def _from_index(store: Any, fn: Callable[[Any], T], history: bool = False) -> T:
    """`fn(Fresh)`; `history`: the read needs past versions (`get --at`, `history`), so on a staged
    index it waits for the history unless told not to (then it answers from what is indexed)."""
    from kyb_cli.core.index import warm
    from kyb_cli.core.index.fresh import fresh, joined

    held = joined(_path_of(store), history)
    if held is not None:  # inside an answer's session (fresh.with_index): its index, not a second one
        return fn(held)
    f = fresh(_path_of(store), history=history)
    try:
        return fn(f)
    finally:
        warm.release(f.conn)


# -- git objects -----------------------------------------------------------------------------------


class Commit:
    """A commit object's parents, author and message, parsed from `git cat-file` output."""

    def __init__(self, raw: bytes) -> None:
        head, _sep, message = raw.partition(b"\n\n")
        self.parents: list[str] = []
        self.author = ""
        for line in head.split(b"\n"):
            if line.startswith(b"parent "):
                self.parents.append(line[7:].decode())
            elif line.startswith(b"author "):
                m = _AUTHOR.match(line[7:].decode("utf-8", errors="replace"))
                self.author = f"{m.group(1)} <{m.group(2)}>" if m else ""
        # libgit2 (the walk's source) drops leading newlines of a message.
        self.message = message.decode("utf-8", errors="replace").lstrip("\n")


def cat_file(store_path: Path, specs: list[str]) -> list[tuple[str, str, bytes] | None]:
    """(oid, type, content) or None (missing) for each object spec, in one `git cat-file --batch`."""
    from kyb_cli.core.canon import git

    try:
        return git.cat_file(store_path, specs)
    except ValueError:
        raise NotFound("no such revision (an object name with a newline)") from None


def _commit(obj: tuple[str, str, bytes] | None) -> Commit:
    if obj is None or obj[1] != "commit":
        raise StoreError("the index names a commit that Git does not hold; run `kyb reindex`")
    return Commit(obj[2])


def _blob_id(obj: tuple[str, str, bytes] | None) -> str | None:
    """The id of a blob fetched as `<rev>:<path>`, or None when the path is absent there."""
    if obj is None or obj[1] != "blob":
        return None  # absent, or not a file (a directory, a gitlink): not a record version
    return obj[0]


def _git_ok(store_path: Path, *args: str) -> tuple[bool, str]:
    from kyb_cli.core.canon import git

    res = git.run(["-C", str(store_path), *args], cwd=store_path)
    return res.returncode == 0, res.stdout.decode(errors="replace").strip()


def _origin(store_path: Path, rev: str, key: str) -> tuple[str, int] | None:
    """(sha, commit time) of the commit that made `key`'s file what it is at `rev` (wrote it, or
    removed it), looking through a move to the fanned-out layout (index/keypaths.py)."""
    return keypaths.origin(store_path, rev, key)


# -- get -------------------------------------------------------------------------------------------


def read(store: Any, key: str, at: str | None = None) -> Version:
    """The record as of HEAD (or `at`), its version's sha and time, and its state.

    An archived incident or task comes back with state `archived`. A retracted knowledge key is
    NotFound, with details saying when and why, and which `--at` shows its last version."""
    check_key(key)
    return _from_index(store, lambda f: _read_or_origin(f, key, at), history=at is not None)


def _read_or_origin(f, key: str, at: str | None) -> Version:
    if at is not None:
        at = _line_commit_at(f, key, at) or at
    try:
        return _read(f, key, at)
    except Unanswerable:
        return _read_by_origin(f, key, at)


def _line_commit_at(f, key: str, at: str) -> str | None:
    """`get --at DATE`: the key as HEAD's first-parent line showed it at DATE — the commit of its last
    line event dated no later than DATE, the very rule of `kyb query --as-of` (as-of-first-parent);
    None when `at` is no date (then it is a revision)."""
    from kyb_cli.core.index.build import SIDE
    from kyb_cli.core.timeargs import END, is_time_text, parse_time

    if not is_time_text(at):
        return None
    t = parse_time(at, bound=END)
    row = f.conn.execute(
        "SELECT c.sha FROM events e JOIN commits c ON c.seq = e.seq WHERE e.key = ? AND e.committed_at <= ? "
        "AND e.committed_at < ? ORDER BY e.id DESC LIMIT 1", (key, t, SIDE)).fetchone()
    if row is None:
        raise NotFound(f"no record '{key}' at {shown(at)}")
    return row[0]


def _key_row(conn, key: str):
    return conn.execute(
        "SELECT k.state, k.ended_sha, k.ended_at, v.sha, v.committed_at, v.blob FROM keys k "
        "JOIN versions v ON v.id = k.version_id WHERE k.key = ?", (key,)).fetchone()


def _read(f, key: str, at: str | None) -> Version:
    current = _key_row(f.conn, key)
    if at is None:
        if current is None:
            raise NotFound(f"no record '{key}'")
        state, ended_sha, ended_at, vsha, vtime, vblob = current
        if vsha is None:
            return _snapshot_version(f, key, vblob)
        deleted = state != "active"
        return _version(f, key, at, vsha, vtime, vblob, ended_sha if deleted else None,
                        ended_at if deleted else None, None)
    rev = _resolve(f.store_path, at)
    row = f.conn.execute("SELECT seq FROM commits WHERE sha = ?", (rev,)).fetchone()
    if row is None:
        raise Unanswerable("revision not on the indexed history")
    event = f.conn.execute(
        "SELECT e.action, c.sha, c.committed_at, v.sha, v.committed_at, v.blob FROM events e "
        "JOIN commits c ON c.seq = e.seq JOIN versions v ON v.id = e.version_id "
        "WHERE e.key = ? AND e.seq <= ? ORDER BY e.seq DESC, e.id DESC LIMIT 1", (key, row[0])).fetchone()
    if event is None:  # every ancestor of REV precedes it in revision order: the key never was there
        raise NotFound(f"no record '{key}' at {shown(at)}")
    action, esha, etime, vsha, vtime, vblob = event
    if vsha is None:
        raise Unanswerable("a snapshot version: the commit that wrote it is not indexed yet")
    deleted = action == "deleted"
    for sha in {esha, vsha} - {rev}:
        if not _git_ok(f.store_path, "merge-base", "--is-ancestor", sha, rev)[0]:
            raise Unanswerable("the event before REV in revision order is on another line")
    return _version(f, key, at, vsha, vtime, vblob, esha if deleted else None, etime if deleted else None,
                    (rev, current))


def _snapshot_version(f, key: str, blob: str) -> Version:
    """A live key of a snapshot (history not in yet): HEAD's text, and the commit that wrote it found
    for this one path (`git log -1 -- PATH`, as `_origin` answers merges): the version id is never
    null for a record that has one, even before the history is indexed."""
    path = path_of_key(key)
    objs = cat_file(f.store_path, [blob])
    if not objs or objs[0] is None or objs[0][1] != "blob":
        raise Unanswerable("version blob missing")
    origin = _origin(f.store_path, f.head, key) if f.head else None
    sha, when = origin if origin is not None else (None, None)
    return Version(_served(path, objs[0][2], sha or "HEAD"), sha, None if when is None else rfc3339(when),  # type: ignore[arg-type]
                   "active")


def _resolve(store_path: Path, at: str) -> str:
    """The commit sha `at` names (sha, short sha, HEAD~2, tag, branch); NotFound when none."""
    from kyb_cli.core.canon.git import could_be_revision

    if not could_be_revision(at):
        raise NotFound(f"unknown revision '{shown(at)}'")
    ok, rev = _git_ok(store_path, "rev-parse", "--verify", "-q", "--end-of-options", f"{at}^{{commit}}")
    if not ok or not rev:
        raise NotFound(f"unknown revision '{shown(at)}'")
    return rev


def _read_by_origin(f, key: str, at: str | None) -> Version:
    """A read where a merge or an off-line revision is involved: the commits come from `_origin`."""
    path = path_of_key(key)
    rev = _resolve(f.store_path, at) if at is not None else (f.head or "")
    if not rev:
        raise NotFound(f"no record '{key}'")
    version = _version_by_origin(f, key, path, rev, at)
    if at is not None:
        try:
            current = _version_by_origin(f, key, path, f.head, None) if f.head else None
        except NotFound:
            current = None
        version.is_head = current is not None and current.sha == version.sha
    return version


def _version_by_origin(f, key: str, path: str, rev: str, at: str | None) -> Version:
    blob = _blob_id(keypaths.objects_at(f.store_path, [rev], key)[0])
    origin = _origin(f.store_path, rev, key)
    if blob is not None:
        assert origin is not None
        data = cat_file(f.store_path, [blob])[0]
        return Version(_served(path, data[2], origin[0]), origin[0], rfc3339(origin[1]), "active")
    if origin is None:
        raise NotFound(f"no record '{key}'" + (f" at {shown(at)}" if at else ""))
    end_sha, end_time = origin
    last = _origin(f.store_path, f"{end_sha}^1", key)
    objs = [keypaths.objects_at(f.store_path, [f"{end_sha}^1"], key)[0], *cat_file(f.store_path, [end_sha])]
    if last is None or objs[0] is None or objs[0][1] != "blob":
        raise StoreError(f"cannot read the version of {path} before {end_sha}")
    reason = parse_trailers(_commit(objs[1]).message).get("Kyb-Reason")
    version = Version(_served(path, objs[0][2], last[0]), last[0], rfc3339(last[1]), retraction_of(key),
                      ended_sha=end_sha, ended_at=rfc3339(end_time), reason=reason)
    if version.state == "retracted":
        end_short, origin_short = _short_ids(f.store_path, end_sha, last[0])
        raise retracted_error(key, version, end_short, origin_short, at)
    return version


def _version(f, key: str, at: str | None, vsha: str, vtime: int, vblob: str, ended_sha: str | None,
             ended_at: int | None, at_check) -> Version:
    """The Version the walk would build; `at_check` = (REV sha, keys row) for `--at` reads."""
    path = path_of_key(key)
    specs = [vsha, vblob] + ([ended_sha] if ended_sha else [])
    if at_check is not None:
        rev, current = at_check
        specs.append(vblob)  # a stand-in: REV's file comes from keypaths (either shape), just below
        if current is not None and current[0] != "retracted":
            specs.append(current[3])
    objs = cat_file(f.store_path, specs)
    if at_check is not None:
        objs[3 if ended_sha else 2] = keypaths.objects_at(f.store_path, [at_check[0]], key)[0]
    commits = [_commit(objs[0])] + ([_commit(objs[2])] if ended_sha else [])
    if any(len(c.parents) > 1 for c in commits):
        raise Unanswerable("a merge wrote this version or removal: the walk follows its parents")
    if objs[1] is None or objs[1][1] != "blob":
        raise StoreError(f"the index names a version of {path} that Git does not hold; run `kyb reindex`")
    record = _served(path, objs[1][2], vsha)
    is_head = True
    if at_check is not None:
        rev, current = at_check
        at_blob = _blob_id(objs[3 if ended_sha else 2])
        if at_blob != (None if ended_sha else vblob):
            raise Unanswerable("REV's tree disagrees with the index")
        is_head = False
        if current is not None and current[0] != "retracted":
            if len(_commit(objs[-1]).parents) > 1:
                raise Unanswerable("the current version came from a merge")
            is_head = current[3] == vsha
    if ended_sha is None:
        return Version(record, vsha, rfc3339(vtime), "active", is_head=is_head)
    reason = parse_trailers(commits[1].message).get("Kyb-Reason")
    version = Version(record, vsha, rfc3339(vtime), retraction_of(key), ended_sha=ended_sha,
                      ended_at=rfc3339(ended_at), reason=reason, is_head=is_head)
    if version.state == "retracted":
        end_short, origin_short = _short_ids(f.store_path, ended_sha, vsha)
        raise retracted_error(key, version, end_short, origin_short, at)
    return version


def _served(path: str, data: bytes, sha: str) -> Record:
    """The record at `path` if kyb may serve it (records/keys.py `load`); a held-out version is a
    StoreError (exit 4) naming the file, the commit that wrote it and the repair, never its content."""
    try:
        return load(path, data)
    except RecordFormatError as exc:
        key = path.rsplit("/", 1)[1][:-3]
        raise StoreError(
            f"{path} (written in {sha[:12]}) is held out: {exc.reason} — kyb does not serve it; repair "
            f"it with a valid write (kyb add/incident/task --key {key} …) or remove the file",
            path=path, commit=sha, reason=exc.reason) from None


def _short_ids(store_path: Path, *shas: str) -> list[str]:
    """Short ids exactly as the walk words them (libgit2's unique abbreviation): the error path only."""
    import pygit2

    repo = pygit2.Repository(str(store_path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    return [repo[sha].short_id for sha in shas]


# -- history ---------------------------------------------------------------------------------------


def history(store: Any, key: str) -> list[HistoryRow]:
    """`Store.history(key)` from the index's events: same rows on linear history (see _history)."""
    check_key(key)
    return _from_index(store, lambda f: _history(f, key), history=True)


def _history(f, key: str) -> list[HistoryRow]:
    """Rows for the commits where the index recorded an event of `key`, newest first.

    Each row is checked against its commit's parents as the walk does (a commit whose blob equals a
    parent's is not a change of this key; added/modified/deleted come from the first parent), so a
    merge that only took one side's version is dropped. Known difference on merged histories: a
    commit that gave the key exactly the text it already had one step earlier in revision order (the
    same edit made on two lines) has no event, so it is not listed; and concurrent lines are
    interleaved in revision order, which may differ from the walk's commit-time order.
    """
    path = path_of_key(key)
    events = f.conn.execute(
        "SELECT c.sha, c.committed_at, e.blob FROM events e JOIN commits c ON c.seq = e.seq "
        "WHERE e.key = ? AND e.seq > ? ORDER BY e.seq DESC, e.id DESC", (key, _snapshot_seq(f))).fetchall()
    if not events and not f.history_complete and _key_row(f.conn, key) is not None:
        return []  # a snapshot: the key is there, its history is not indexed yet
    if not events:
        raise NotFound(f"no history for '{key}'")
    commits = [_commit(obj) for obj in cat_file(f.store_path, [sha for sha, _when, _blob in events])]
    revs = [f"{sha}^{n + 1}" for (sha, _w, _b), c in zip(events, commits) for n in range(len(c.parents))]
    parent_objs = iter(keypaths.objects_at(f.store_path, revs, key))
    rows: list[HistoryRow] = []
    for (sha, when, blob), commit in zip(events, commits):
        change = change_of(blob, [_blob_id(next(parent_objs)) for _ in commit.parents])
        if change is None:
            continue
        rows.append(history_row(sha, when, change, commit.message, commit.author))
    if not rows and f.history_complete:
        raise NotFound(f"no history for '{key}'")
    return rows


def _snapshot_seq(f) -> int:
    """Events up to this seq are a snapshot's (HEAD's text, not a change made by HEAD)."""
    if f.history_complete:
        return 0
    row = f.conn.execute("SELECT v FROM meta WHERE k = 'snapshot_seq'").fetchone()
    return int(row[0]) if row else 0


# -- tags and listings -----------------------------------------------------------------------------


def tags(store: Any) -> list[dict[str, Any]]:
    """`Store.tags()`: tags of live records (state active at HEAD) with counts, most used first."""
    return _from_index(store, _tags)


def _tags(f) -> list[dict[str, Any]]:
    counts: Counter[str] = Counter()
    for (tags_lc,) in f.conn.execute(
            "SELECT v.tags_lc FROM keys k JOIN versions v ON v.id = k.version_id WHERE k.state = 'active'"):
        counts.update(set(schema.decode(tags_lc)))
    return ranked_tags(counts)


_FIELDS = frozenset(record_field_names())


def catalog(store: Any, kind: str) -> list[CatalogEntry]:
    """Every key of `kind` ever committed with its latest readable version, from `keys`."""
    if kind not in KIND_DIRS:
        raise ValueError(kind)
    return _from_index(store, lambda f: _catalog(f, kind))


def _catalog(f, kind: str) -> list[CatalogEntry]:
    top = f.conn.execute("SELECT coalesce(max(seq), 0) FROM commits").fetchone()[0]
    out = []
    for key, state, ended_sha, ended_at, vsha, vtime, doc, seq in f.conn.execute(
            "SELECT k.key, k.state, k.ended_sha, k.ended_at, v.sha, v.committed_at, v.doc, coalesce(c.seq, 0) "
            "FROM keys k JOIN versions v ON v.id = k.version_id LEFT JOIN commits c ON c.sha = v.sha "
            "WHERE k.kind = ?", (kind,)):
        data = schema.decode(doc)
        if _unreadable(key, data):  # list the newest version that parsed, as a listing always has
            row = _newest_readable(f.conn, key)
            if row is None:
                continue
            vsha, vtime, data, seq = row
        record = Record(**{k: v for k, v in data.items() if k in _FIELDS and v is not None})
        entry = CatalogEntry(record, vsha, None if vtime is None else rfc3339(vtime), top - seq)
        if state != "active":
            entry.archived = True
            entry.archived_sha, entry.archived_at = ended_sha, rfc3339(ended_at)
        out.append(entry)
    _name_snapshot_versions(f, out)
    return out


def _name_snapshot_versions(f, entries: list[CatalogEntry]) -> None:
    """A listing read from a snapshot names each version's commit (origins.snapshot_origins)."""
    from kyb_cli.core.index.origins import snapshot_origins

    named = snapshot_origins(f, [e.record.key for e in entries if e.sha is None])
    for entry in entries:
        if entry.record.key in named:
            entry.sha, entry.committed_at = named[entry.record.key]


def _unreadable(key: str, data: dict) -> bool:
    """The index keeps a placeholder for a version that did not parse (index/build.py)."""
    return str(data.get("title", "")).startswith(f"{key} (unreadable: ")


def _newest_readable(conn, key: str):
    for vsha, vtime, doc, seq in conn.execute(
            "SELECT v.sha, v.committed_at, v.doc, c.seq FROM versions v JOIN commits c ON c.sha = v.sha "
            "WHERE v.key = ? ORDER BY c.seq DESC, v.id DESC", (key,)):
        data = schema.decode(doc)
        if not _unreadable(key, data):
            return vsha, vtime, data, seq
    return None
