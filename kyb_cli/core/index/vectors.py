"""The index's vectors table: storing, filling and counting passage vectors, outside any query.

Passages get their vectors from the embed room (the user-wide embedding cache first, then the
model) one committed batch at a time: by the background filler (index/filler.py, `fill_background`:
current versions first, then the rest newest first, from a list one scan made: `next_batch`) or by
`kyb index --embed` (`embed_all`). A query
never fills; it ranks by meaning over what is here (search/semantic.py) and reports the rest as
`pending_vectors`.

Vectors are keyed by (text hash, fingerprint): versions with the same text share one, and only rows
of the current model+recipe fingerprint are ever read, so a changed model never serves an old vector.
The index is a cache: after a rebuild, vectors come back from the user-wide embedding cache without
loading the model. No numpy here: the lexical path and the CLI client stay light. The SQL a query
scores vectors with is named here once (cosine_sql, PASSAGE_VECTOR), next to loading sqlite-vec.
"""

from __future__ import annotations

import os
import time

from kyb_cli.core.index import kept, schema
from kyb_cli.core.index.kept_state import conn_memo, db_state, per_state, pinned, unpinned  # noqa: F401 (their home)
from kyb_cli.core.index.slice import Slice
from kyb_cli.core.plain import plain

CHUNK = 256  # texts per passage_vectors call when filling everything
BACKGROUND_BATCH = 64  # texts per committed step of the background filler (~2 s of embedding)


def load_vec(conn) -> None:
    """Load sqlite-vec into an apsw connection (idempotent per connection)."""
    try:
        conn.execute("SELECT vec_version()").fetchone()
        return
    except Exception:
        pass
    conn.enable_load_extension(True)
    try:
        conn.load_extension(_vec_path())
    finally:
        conn.enable_load_extension(False)


def _vec_path() -> str:
    """The sqlite-vec extension file, found without importing `sqlite_vec` (it imports numpy)."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("sqlite-vec is not installed (pip install sqlite-vec)")
    return os.path.join(list(spec.submodule_search_locations)[0], "vec0")


def cosine_sql(vec: str, query: str) -> str:
    """The cosine of vectors `vec` and `query` (columns or parameters) in SQL: sqlite-vec gives the
    distance, 1 - cosine (NULL for a zero vector). Every semantic score reads it so."""
    return f"1.0 - vec_distance_cosine({vec}, {query})"


def centred_cosine_sql(vec: str, centre: str, query: str) -> str:
    """cosine_sql of `vec` less the calibration's `centre` and the centred `query` (search/relevance.py)."""
    return cosine_sql(f"vec_sub({vec}, {centre})", query)


PASSAGE_VECTOR = "JOIN vectors x ON x.text_sha = t.text_sha AND x.fingerprint = :fp"  # passage t's vector x
_MISSING = "NOT EXISTS (SELECT 1 FROM vectors x WHERE x.text_sha = t.text_sha AND x.fingerprint = :fp)"  # t has none


def _missing_sql(s: Slice, select: str, tail: str = "") -> tuple[str, dict]:
    with_, where, params = s.sql()
    versions = "JOIN versions v ON v.id = c.vid " if where else ""  # only filters read it (hot path)
    return (f"{with_}SELECT {select} FROM cand c {versions}"
            f"JOIN vtext t ON t.version_id = c.vid WHERE {_MISSING}{where} {tail}", params)


def missing(conn, fp: str, s: Slice) -> list[str]:
    """Text hashes in the slice without a vector under `fp`, newest version first."""
    sql, params = _missing_sql(s, "t.text_sha, max(c.vid) AS m, min(t.part) AS p",
                               "GROUP BY t.text_sha ORDER BY m DESC, p")
    return [row[0] for row in conn.execute(sql, params | {"fp": fp})]


SCAN_VERSIONS = 1024  # versions one statement of the filler's long reads covers (a write's commit waits for one)
_IN_PIECE = "t.version_id > :lo AND t.version_id <= :hi"  # a piece's versions (`pieces` binds :lo, :hi)
_NEWEST_PIECE = (f"SELECT t.text_sha FROM vtext t WHERE {_IN_PIECE} "
                 f"AND {_MISSING} ORDER BY t.version_id DESC, t.text_sha")
_CURRENT_PAGE = ("SELECT k.key, t.text_sha FROM (SELECT key, version_id FROM keys WHERE key > :after AND "
                 "state != 'retracted' ORDER BY key LIMIT :n) k LEFT JOIN vtext t ON t.version_id = k.version_id "
                 f"AND {_MISSING}")


def pieces(conn, sql: str, params: dict, newest_first: bool = False):
    """Each piece's rows of `sql` over versions (:lo, :hi], SCAN_VERSIONS at a time, each piece read
    whole by its own statement: no read transaction spans two pieces. The index's journal is not WAL,
    so a write's commit waits for every read lock to go; a scan of the whole index in one statement
    held it for seconds at 100k keys (issue 39), a piece holds it for milliseconds."""
    top = conn.execute("SELECT coalesce(max(version_id), 0) FROM vtext").fetchone()[0]
    starts = range(0, top, SCAN_VERSIONS)
    for lo in reversed(starts) if newest_first else starts:
        yield conn.execute(sql, params | {"lo": lo, "hi": lo + SCAN_VERSIONS}).fetchall()


def _current_missing(conn, fp: str) -> set[str]:
    """Hashes of current versions' passages without a vector, SCAN_VERSIONS keys a statement."""
    out: set[str] = set()
    after = ""
    while True:
        rows = conn.execute(_CURRENT_PAGE, {"after": after, "n": SCAN_VERSIONS, "fp": fp}).fetchall()
        out.update(sha for _k, sha in rows if sha is not None)
        if len({k for k, _s in rows}) < SCAN_VERSIONS:
            return out
        after = max(k for k, _s in rows)


def missing_in_order(conn, fp: str, limit: int, current_only: bool = False) -> list[str]:
    """The next text hashes the filler should embed: current versions first, then newest first
    (a hash's newest version), then by hash (`current_only`: current versions only). Read in pieces
    (`pieces`), newest first: a hash's first sight is its newest version, so the scan stops once
    `limit` current ones are seen (or all of them, and enough of the rest)."""
    current = _current_missing(conn, fp)
    limit = int(limit)
    seen: set[str] = set()
    cur: list[str] = []
    rest: list[str] = []
    for rows in pieces(conn, _NEWEST_PIECE, {"fp": fp}, newest_first=True):
        for (sha,) in rows:
            if sha not in seen:
                seen.add(sha)
                (cur if sha in current else rest).append(sha)
        if len(cur) >= limit or (len(cur) == len(current) and (current_only or len(cur) + len(rest) >= limit)):
            break
    return (cur if current_only else cur + rest)[:limit]


def pending(conn, fp: str, s: Slice, apart: bool = False) -> int:
    """Versions of the slice that still lack a vector under `fp`. Counted again only when the index
    may have changed since this connection last counted (db_state: a long-lived door asks on every
    answer, and the count is a scan of the slice), and, for a new connection, since any process last
    counted it (kept.py: a meta row stamped with the head, the history and a counter of vector writes).
    `apart` (the filler, whole history only): counted again in pieces (`pieces`), not in one read."""
    sql, params = _missing_sql(s, "count(DISTINCT c.vid)")
    params |= {"fp": fp}
    since = _completed_sql(s)
    by_pieces = None
    if apart and s == Slice("history"):
        def by_pieces() -> int:
            return sum(rows[0][0] for rows in pieces(conn, _PENDING_PIECE, {"fp": fp}))
    return per_state(conn, ("pending", sql, repr(sorted(params.items()))),
                     lambda: kept.count(conn, sql, params, since, by_pieces))


# A piece of pending()'s count over the whole history (versions with a key, readable, a passage missing).
_PENDING_PIECE = (
    "SELECT count(DISTINCT t.version_id) FROM vtext t JOIN versions v ON v.id = t.version_id "
    f"JOIN keys k ON k.key = v.key WHERE {_IN_PIECE} "
    f"AND t.version_id NOT IN (SELECT version_id FROM unreadable) AND {_MISSING}")


def _completed_sql(s: Slice) -> str:
    """Versions of the slice given their last missing vector after log row `:since` (kept.count
    brings a kept count forward by it: the filler's batches are not a scan of the slice each)."""
    touched = (f"SELECT t.version_id FROM {kept.ADDED} a JOIN vtext t ON t.text_sha = a.text_sha "
               "WHERE a.id > :since AND a.fingerprint = :fp")
    with_, where, _params = s.sql_among(touched)
    return (f"{with_}SELECT count(DISTINCT c.vid) FROM cand c JOIN versions v ON v.id = c.vid "
            f"WHERE c.vid IN ({touched}){where} AND NOT EXISTS (SELECT 1 FROM vtext u WHERE "
            "u.version_id = c.vid AND NOT EXISTS (SELECT 1 FROM vectors x WHERE x.text_sha = u.text_sha "
            "AND x.fingerprint = :fp))")


QUEUE_BATCHES = 64  # batches of hashes one scan of missing_in_order queues for the filler (~100 s of work)
_QUEUES: dict = {}  # (file, inode, fp, current_only) -> _Queue: this filler process's work list


class _Queue:
    """What missing_in_order said at one scan, served a batch at a time. At 100k keys the scan
    is ~1.3 s of a niced filler's work (in pieces, each its own read: `pieces`): once a batch, it
    was most of a write's wait when it was one read."""

    __slots__ = ("hashes", "top", "done")

    def __init__(self, hashes, top: int, done: bool) -> None:  # hashes: a deque
        self.hashes, self.top, self.done = hashes, top, done


def next_batch(conn, fp: str, limit: int, current_only: bool = False) -> list[str]:
    """missing_in_order's next `limit` hashes from a kept scan: scanned again only when its list
    ran out (`done`: it held all there was, so nothing is scanned again); versions written since
    the scan go first (a short range of the primary key); hashes filled meanwhile are skipped."""
    import collections

    key = (*_file_id(conn), fp, current_only)  # a rebuilt or swapped index is another file: its own list
    q = _QUEUES.get(key)
    top = conn.execute("SELECT coalesce(max(id), 0) FROM versions").fetchone()[0]
    if q is None:
        for other in [k for k in _QUEUES if k[:2] != key[:2]]:
            del _QUEUES[other]
        q = _QUEUES[key] = _Queue(collections.deque(), top, False)
        _rescan(conn, fp, limit, current_only, q)
    elif top > q.top:
        new = [r[0] for r in conn.execute(
            "SELECT t.text_sha FROM vtext t WHERE t.version_id > :top AND NOT EXISTS (SELECT 1 FROM "
            "vectors x WHERE x.text_sha = t.text_sha AND x.fingerprint = :fp) ORDER BY t.version_id, "
            "t.part DESC", {"top": q.top, "fp": fp})]
        q.hashes.extendleft(new)  # the newest version's first passage ends up first
        q.top = top
    while True:
        out: list[str] = []
        while q.hashes and len(out) < limit:
            h = q.hashes.popleft()
            if h not in out:
                out.append(h)
        if out:
            marks = ",".join("?" * len(out))
            have = {r[0] for r in conn.execute(
                f"SELECT text_sha FROM vectors WHERE fingerprint = ? AND text_sha IN ({marks})", [fp, *out])}
            out = [h for h in out if h not in have]
            if out:
                return out
            continue
        if q.done:
            return []
        _rescan(conn, fp, limit, current_only, q)


def _file_id(conn) -> tuple:
    """The index file a connection is on: its name and inode (a rebuild or the history swap renames
    a new file over the old name)."""
    try:
        return conn.filename, os.stat(conn.filename).st_ino
    except OSError:
        return conn.filename, None


def _rescan(conn, fp: str, limit: int, current_only: bool, q: _Queue) -> None:
    """The list made again; `top` read first, so a version written meanwhile is taken as new."""
    want = limit * QUEUE_BATCHES
    top = conn.execute("SELECT coalesce(max(id), 0) FROM versions").fetchone()[0]
    q.hashes.extend(missing_in_order(conn, fp, want, current_only))
    q.done = len(q.hashes) < want
    q.top = max(q.top, top)


def _texts(conn, hashes: list[str]) -> dict[str, str]:
    """Recipe text for each hash, from one version and passage that has it."""
    import json

    from kyb_cli.core.embed.recipe import passages

    out: dict[str, str] = {}
    for h in hashes:
        row = conn.execute("SELECT v.doc, t.part FROM vtext t JOIN versions v ON v.id = t.version_id "
                           "WHERE t.text_sha = ? LIMIT 1", (h,)).fetchone()
        if row is not None:
            parts = passages(schema.decode(row[0]))
            if row[1] < len(parts):
                out[h] = parts[row[1]]
    return out


def meta_key(spec) -> str:
    """The meta row naming the fingerprint a model's vectors are under (e5's kept its old name)."""
    from kyb_cli.core.embed.models import E5

    return "vec_fingerprint" if spec is None or spec.name == E5.name else f"vec_fingerprint:{spec.name}"


def store(conn, fp: str, vectors: dict[str, bytes], spec=None) -> None:
    """Install vectors under `fp` (model `spec`, default e5); the first fill under a new fingerprint
    of a model drops every vector under a fingerprint no model of the registry is under now."""
    key = meta_key(spec)
    with conn:
        row = conn.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        if row is None or row[0] != fp:
            conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES(?, ?)", (key, fp))
            kept = [r[0] for r in conn.execute("SELECT v FROM meta WHERE k LIKE 'vec_fingerprint%'")]
            marks = ",".join("?" * len(kept))
            conn.execute(f"DELETE FROM vectors WHERE fingerprint NOT IN ({marks})", kept)
        if vectors:
            conn.executemany("INSERT OR REPLACE INTO vectors(text_sha, fingerprint, vec) VALUES(?,?,?)",
                             [(h, fp, v) for h, v in vectors.items()])


@plain  # not dataclasses (inspect, ast: ~8 ms of a hybrid `kyb query`, which imports this module)
class Filled:
    from_cache: int = 0
    embedded: int = 0
    reason: str | None = None


def fill(conn, fp: str, hashes: list[str], progress=None, spec=None) -> Filled:
    """Give `hashes` vectors: from the user cache (no model), then embedded, CHUNK texts a step.

    Queries never call it (they never wait for the model): `kyb index --embed` and the background
    filler do, one committed batch at a time. `spec`: the model (default e5)."""
    from kyb_cli.core import embed

    spec = spec or embed.E5
    done = Filled()
    if not hashes:
        store(conn, fp, {}, spec)
        return done
    cached = embed.open_cache().get_many(fp, hashes)
    store(conn, fp, cached, spec)
    done.from_cache = len(cached)
    rest = [h for h in hashes if h not in cached]
    total = len(rest)
    for i in range(0, len(rest), CHUNK):
        texts = _texts(conn, rest[i:i + CHUNK])
        base = done.embedded

        def step(n: int, _of: int, base: int = base) -> None:
            if progress is not None:
                progress(base + n, total)

        got = embed.passage_vectors(list(texts.values()), progress=step, spec=spec)
        if got.fingerprint == fp and got.vectors:
            store(conn, fp, got.vectors, spec)
            done.embedded += len(got.vectors)
        if got.reason:
            done.reason = got.reason
            break
        if got.pending:
            break
    return done


def fill_background(conn, gdir) -> bool:
    """One step of the background filler: the next batch of missing vectors, committed.

    Order: current versions under e5, current versions under each other model of the registry,
    then the rest newest first in the same model order — so a store is searchable by e5 as soon
    as it was with e5 alone, and the English side follows. False when there is nothing (more) to
    do here: no model, nothing missing, a broken model, or `kyb index --embed` asked the filler to
    stop (it fills everything itself)."""
    from kyb_cli.core import embed
    from kyb_cli.core.index import staged

    found, _missing = embed.available()
    if not found or staged.stop_requested(gdir):
        return False
    for current_only in (True, False):
        for spec, fp, _loc in found:
            hashes = next_batch(conn, fp, BACKGROUND_BATCH, current_only)
            if not hashes:
                continue
            done = fill(conn, fp, hashes, spec=spec)
            per = _status_pending(conn, found, spec.name, done.from_cache + done.embedded)
            staged.write_status(gdir, stage="vectors", model=spec.name, pending=per[found[0][0].name],
                                pending_by_model=per, embedded=done.embedded, from_cache=done.from_cache)
            return done.reason is None and done.from_cache + done.embedded > 0
    return False


RECOUNT_S = 300.0  # after a write, the filler's status counts pending again at most this often
_COUNTED: dict = {}  # "last" -> (when, (file, inode, indexed head), {model: pending}): the filler's last count


def _status_pending(conn, found, model: str, filled: int) -> dict:
    """Pending vectors per model for filler.json (`kyb index` shows them). Counted while the head is
    the one last counted (kept.py brings the count forward: ms); after a write moved it, a count is a
    scan of the slice per model (~3 s at 100k; in pieces, each its own read: `pieces`),
    so then the last figures, less what this batch filled, until RECOUNT_S have passed."""
    row = conn.execute("SELECT v FROM meta WHERE k = 'head'").fetchone()
    state = (*_file_id(conn), row[0] if row else None)  # another file (a swap): counted again
    last = _COUNTED.get("last")
    now = time.monotonic()
    if (last is None or last[1] == state or last[1][:2] != state[:2] or now - last[0] > RECOUNT_S
            or set(last[2]) != {sp.name for sp, _f, _l in found}):
        per = {sp.name: pending(conn, f, Slice("history"), True) for sp, f, _l in found}
        _COUNTED["last"] = (now, state, per)
        return per
    per = dict(last[2])
    per[model] = max(0, per[model] - filled)
    _COUNTED["last"] = (last[0], last[1], per)
    return per


def counts(conn) -> dict:
    """For `kyb doctor`/`kyb index`: versions, distinct texts, vectors per fingerprint."""
    versions = conn.execute("SELECT count(*) FROM versions").fetchone()[0]
    texts = conn.execute("SELECT count(DISTINCT text_sha) FROM vtext").fetchone()[0]
    per_fp = dict(conn.execute("SELECT fingerprint, count(*) FROM vectors GROUP BY fingerprint"))
    return {"versions": versions, "texts": texts, "vectors": per_fp}


def embed_all(store_path, progress=None) -> dict:
    """`kyb index --embed`: bring the index to HEAD and give every version a vector (no budget)."""
    from kyb_cli.core import embed
    from kyb_cli.core.errors import StoreError
    from kyb_cli.core.index import staged
    from kyb_cli.core.index.fresh import with_index

    started = time.monotonic()
    found, absent = embed.available()
    if not found or found[0][0] is not embed.E5:
        raise StoreError(embed.off_message(absent.get(embed.E5.name) or "no model"))
    fp = found[0][1]

    def run(f) -> dict:
        s = Slice("history")
        per: dict = {}
        for spec, mfp, _loc in found:  # e5 first: searchable by meaning before the English side
            todo = missing(f.conn, mfp, s)
            done = fill(f.conn, mfp, todo, progress, spec=spec)
            if done.reason:
                raise StoreError(embed.off_message(f"{spec.name}: {done.reason}"))
            per[spec.name] = {"fingerprint": mfp, "texts": len(todo), "from_cache": done.from_cache,
                              "embedded": done.embedded, "pending_vectors": pending(f.conn, mfp, s)}
        first = per[embed.E5.name]
        return {"head": f.head, "fingerprint": fp, "texts": first["texts"], "from_cache": first["from_cache"],
                "embedded": first["embedded"], "pending_vectors": first["pending_vectors"],
                "models": per | {name: {"missing": why} for name, why in absent.items()},
                **{k: v for k, v in counts(f.conn).items() if k != "vectors"}}

    with staged.filler_paused(store_path):  # one of us embeds at a time: here, with the progress bar
        out = with_index(store_path, run, history=True)
    out["seconds"] = round(time.monotonic() - started, 3)
    return out


def status(store_path) -> dict:
    """Index head, versions, vectors per fingerprint, and what is pending under the current model."""
    from kyb_cli.core import embed
    from kyb_cli.core.index.fresh import with_index

    fp, reason, _loc = embed.current_fingerprint()
    found, absent = embed.available()

    def run(f) -> dict:
        from kyb_cli.core.index import staged

        out = {"head": f.head, **counts(f.conn), "fingerprint": fp, "history_complete": f.history_complete}
        if fp is not None:
            out["pending_vectors"] = pending(f.conn, fp, Slice("history"))
        else:
            out["model"] = reason
        # Each model of the registry: its fingerprint and what is pending, or why it is missing.
        out["models"] = {spec.name: {"fingerprint": mfp, "pending_vectors": pending(f.conn, mfp, Slice("history"))}
                         for spec, mfp, _loc in found} | {name: {"missing": why} for name, why in absent.items()}
        # The background filler's progress, as any later call sees it (.git/kyb/filler.json).
        out["background"] = {"running": staged.filler_running(f.git_dir), **staged.status(f.git_dir)}
        return out

    return with_index(store_path, run)
