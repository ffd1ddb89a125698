"""Per-key reads answered from the sidecar index: `get`, `get --at`, `history`, `tags`, listings.

The Git walk in store.py/catalog.py is the reference; it costs one pass over all of history per read
(seconds on a big store). The index already knows, per key, every event (content or deleted) with its
commit, so a read here is a few SQL lookups after `fresh()` brought the index to HEAD, plus one
`git cat-file --batch` for what the index does not keep: the record bytes (parsed exactly as the walk
parses them), commit messages (attribution, `Kyb-Reason`) and parents.

Where the index's revision order could name a different commit than the walk would — a version or
removal made by a merge commit, a `--at` revision off the indexed line, a placeholder for an
unreadable file — the read is handed to the walk instead. So is any failure of the index path
(no `git` program, a broken index): never a failure that the walk would not have had.
`KYB_READS=walk` forces the walk (benchmarks, debugging); `KYB_READS=index` forbids the fallback (tests).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable, TypeVar

from kyb_cli.core.attribution import parse_trailers
from kyb_cli.core.errors import KybError, NotFound, StoreError
from kyb_cli.core.record import KIND_DIRS, Record, parse, path_of_key, record_field_names
from kyb_cli.core.timefmt import rfc3339
from kyb_cli.core.validate import check_key
from kyb_cli.core.versions import (
    HistoryRow, Version, change_of, history_row, ranked_tags, retracted_error, retraction_of,
)

T = TypeVar("T")
_AUTHOR = re.compile(r"^(.*?) ?<([^>]*)> \d+ [+-]\d{4}$")


class Unanswerable(Exception):
    """The index cannot give the walk's answer for this read; the caller walks Git instead."""


def mode() -> str:
    """`walk`, `index` (no fallback) or `auto` from KYB_READS."""
    value = os.environ.get("KYB_READS", "").strip().lower()
    return value if value in ("walk", "index") else "auto"


def _path_of(store: Any) -> Path:
    return Path(getattr(store, "path", store))


def _store(store: Any):
    from kyb_cli.core.store import Store

    return store if hasattr(store, "repo") else Store(Path(store))


def answer(store: Any, from_index: Callable[[Any], T], walk: Callable[[Any], T], *,
           history: bool = False) -> T:
    """`from_index(conn-bearing Fresh)` when the index can answer, else `walk(Store)`.

    `history`: the read needs past versions (`get --at`, `history`): on a staged index it waits
    for the history unless told not to (then it answers from what is indexed)."""
    if mode() == "walk":
        return walk(_store(store))
    try:
        return _from_index(_path_of(store), from_index, history)
    except KybError as exc:
        if not isinstance(exc, StoreError) or mode() == "index":
            raise  # NotFound, UsageError …: the index's answer, same as the walk's
    except Unanswerable:
        pass
    except Exception:  # noqa: BLE001 — a broken index must never fail a read the walk can answer
        if mode() == "index":
            raise
    return walk(_store(store))


def _from_index(path: Path, fn: Callable[[Any], T], history: bool = False) -> T:
    from kyb_cli.core.index import fresh

    f = fresh(path, history=history)
    try:
        return fn(f)
    finally:
        f.conn.close()


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
    from kyb_cli.core.index import gitlog

    if not specs:
        return []
    if any("\n" in s or not s for s in specs):
        raise Unanswerable("object name with a newline")
    res = gitlog._git(store_path, "cat-file", "--batch", input=("\n".join(specs) + "\n").encode())
    if res.returncode != 0:
        raise StoreError(f"git cat-file failed: {res.stderr.decode(errors='replace').strip()}")
    out: list[tuple[str, str, bytes] | None] = []
    data, pos = res.stdout, 0
    for _spec in specs:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].split(b" ")
        pos = nl + 1
        if len(header) != 3 or not header[2].isdigit():
            out.append(None)  # "<spec> missing" / "ambiguous"
            continue
        size = int(header[2])
        out.append((header[0].decode(), header[1].decode(), data[pos:pos + size]))
        pos += size + 1
    return out


def _commit(obj: tuple[str, str, bytes] | None) -> Commit:
    if obj is None or obj[1] != "commit":
        raise Unanswerable("commit not found")
    return Commit(obj[2])


def _blob_id(obj: tuple[str, str, bytes] | None) -> str | None:
    """The id of a blob fetched as `<rev>:<path>`, or None when the path is absent there."""
    if obj is None:
        return None
    if obj[1] != "blob":
        raise Unanswerable("not a blob")
    return obj[0]


def _git_ok(store_path: Path, *args: str) -> tuple[bool, str]:
    from kyb_cli.core.index import gitlog

    res = gitlog._git(store_path, *args)
    return res.returncode == 0, res.stdout.decode(errors="replace").strip()


# -- get -------------------------------------------------------------------------------------------


def read(store: Any, key: str, at: str | None = None) -> Version:
    """`Store.read(key, at)`, answered from the index when it can be."""
    check_key(key)
    return answer(store, lambda f: _read(f, key, at), lambda s: s.read(key, at=at), history=at is not None)


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
    if at.startswith("-"):
        raise Unanswerable("the walk words this error")
    ok, rev = _git_ok(f.store_path, "rev-parse", "--verify", "-q", f"{at}^{{commit}}")
    if not ok:
        raise Unanswerable("the walk resolves or words the error")
    row = f.conn.execute("SELECT seq FROM commits WHERE sha = ?", (rev,)).fetchone()
    if row is None:
        raise Unanswerable("revision not on the indexed history")
    event = f.conn.execute(
        "SELECT e.action, c.sha, c.committed_at, v.sha, v.committed_at, v.blob FROM events e "
        "JOIN commits c ON c.seq = e.seq JOIN versions v ON v.id = e.version_id "
        "WHERE e.key = ? AND e.seq <= ? ORDER BY e.seq DESC, e.id DESC LIMIT 1", (key, row[0])).fetchone()
    if event is None:  # every ancestor of REV precedes it in revision order: the key never was there
        raise NotFound(f"no record '{key}' at {at}")
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
    """A live key of a snapshot (history not in yet): HEAD's text; its commit is not known yet."""
    objs = cat_file(f.store_path, [blob])
    if not objs or objs[0] is None or objs[0][1] != "blob":
        raise Unanswerable("version blob missing")
    return Version(parse(objs[0][2], path=path_of_key(key)), None, None, "active")  # type: ignore[arg-type]


def _version(f, key: str, at: str | None, vsha: str, vtime: int, vblob: str, ended_sha: str | None,
             ended_at: int | None, at_check) -> Version:
    """The Version the walk would build; `at_check` = (REV sha, keys row) for `--at` reads."""
    path = path_of_key(key)
    specs = [vsha, vblob] + ([ended_sha] if ended_sha else [])
    if at_check is not None:
        rev, current = at_check
        specs.append(f"{rev}:{path}")
        if current is not None and current[0] != "retracted":
            specs.append(current[3])
    objs = cat_file(f.store_path, specs)
    commits = [_commit(objs[0])] + ([_commit(objs[2])] if ended_sha else [])
    if any(len(c.parents) > 1 for c in commits):
        raise Unanswerable("a merge wrote this version or removal: the walk follows its parents")
    if objs[1] is None or objs[1][1] != "blob":
        raise Unanswerable("version blob missing")
    record = parse(objs[1][2], path=path)
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


def _short_ids(store_path: Path, *shas: str) -> list[str]:
    """Short ids exactly as the walk words them (libgit2's unique abbreviation): the error path only."""
    import pygit2

    repo = pygit2.Repository(str(store_path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    return [repo[sha].short_id for sha in shas]


# -- history ---------------------------------------------------------------------------------------


def history(store: Any, key: str) -> list[HistoryRow]:
    """`Store.history(key)` from the index's events: same rows on linear history (see _history)."""
    check_key(key)
    return answer(store, lambda f: _history(f, key), lambda s: s.history(key), history=True)


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
    specs = []
    for sha, _when, _blob in events:
        specs += [sha, f"{sha}^1:{path}", f"{sha}^2:{path}"]
    objs = cat_file(f.store_path, specs)
    rows: list[HistoryRow] = []
    for i, (sha, when, blob) in enumerate(events):
        commit = _commit(objs[3 * i])
        if len(commit.parents) > 2:
            raise Unanswerable("octopus merge")
        change = change_of(blob, [_blob_id(objs[3 * i + 1 + n]) for n in range(len(commit.parents))])
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
    return answer(store, _tags, lambda s: s.tags())


def _tags(f) -> list[dict[str, Any]]:
    counts: Counter[str] = Counter()
    for (tags_lc,) in f.conn.execute(
            "SELECT v.tags_lc FROM keys k JOIN versions v ON v.id = k.version_id WHERE k.state = 'active'"):
        counts.update(set(json.loads(tags_lc)))
    return ranked_tags(counts)


_FIELDS = frozenset(record_field_names())


def catalog(store: Any, kind: str, walk: Callable[[Any], T]) -> T:
    """`catalog.walk(store, kind)`: every key of `kind` with its latest version, from `keys`."""
    if kind not in KIND_DIRS:
        raise ValueError(kind)
    return answer(store, lambda f: _catalog(f, kind), walk)


def _catalog(f, kind: str):
    from kyb_cli.core.catalog import Entry

    top = f.conn.execute("SELECT coalesce(max(seq), 0) FROM commits").fetchone()[0]
    out = []
    for key, state, ended_sha, ended_at, vsha, vtime, doc, seq in f.conn.execute(
            "SELECT k.key, k.state, k.ended_sha, k.ended_at, v.sha, v.committed_at, v.doc, coalesce(c.seq, 0) "
            "FROM keys k JOIN versions v ON v.id = k.version_id LEFT JOIN commits c ON c.sha = v.sha "
            "WHERE k.kind = ?", (kind,)):
        data = json.loads(doc)
        if str(data.get("title", "")).startswith(f"{key} (unreadable: "):
            raise Unanswerable("an unreadable version: the walk lists the newest readable one")
        record = Record(**{k: v for k, v in data.items() if k in _FIELDS})
        entry = Entry(record, vsha, None if vtime is None else rfc3339(vtime), top - seq)
        if state != "active":
            entry.archived = True
            entry.archived_sha, entry.archived_at = ended_sha, rfc3339(ended_at)
        out.append(entry)
    return out
