"""The first stage of a new index: HEAD's records in one pass over HEAD's tree, before any history.

A full build diffs every commit (seconds at 10k keys, see build.py); a fresh clone or a deleted
index should answer sooner than that. The snapshot reads HEAD's tree (`git ls-tree`) and its blobs
(one `git cat-file --batch`), and writes one version per live record with `meta.history = pending`:
current queries, tags, listings and `get` of live keys answer from it at once. What it cannot know
until the history is in: the commit that wrote each version (`sha`/`committed_at` are NULL: an answer
names them with one walk a hit on a history under ORIGINS_WALK_MAX commits, and on a longer one
leaves them null until the history is in, as `history_complete: false` says), archived incidents
and tasks (no longer in the tree), and every past version. The filler (index/filler.py, with
history.py) builds the full index in the background and swaps it in; catch-ups work on a snapshot
as on a full index, so commits made meanwhile get their real sha.

Its rows are the ones build.Builder would write for these new keys, written straight from
rows.version_rows's answer (`_write`): `fts_now` row by row, `fts` copied from it at the end
(`copy_fts_now`), the indexes no snapshot statement reads made once the rows are in (issue 39).
When workers read the records (index/spread.py), each also writes its chunks' `fts_now` rows into a
file of its own, merged into the index once the other tables are written (`_fts_now`,
index/fts_merge.py): this process no longer tokenizes every record (its CPU at 100k keys ~3.3 ->
~2 s; docs/BENCHMARKS.md).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from kyb_cli.core.index import fts_merge, gitlog, schema, spread
from kyb_cli.core.index.build import FTS_HASH_BYTES, _set_head, _stats, bulk
from kyb_cli.core.records.keys import RECORD_DIRS, key_of_path, kind_of_key


def head_tree(store_path: Path, head: str) -> bytes:
    """`git ls-tree -z` of HEAD's record directories: one NUL-ended entry a file."""
    res = gitlog._git(store_path, "ls-tree", "-r", "-z", "--full-tree", head, "--", *RECORD_DIRS)
    if res.returncode != 0:
        from kyb_cli.core.errors import StoreError

        raise StoreError(f"git ls-tree failed: {res.stderr.decode(errors='replace').strip()}")
    return res.stdout


def entries_of(tree: bytes) -> list[tuple[str, str]]:
    """(key, blob) for every record file of HEAD's tree, from its `head_tree` listing."""
    out = []
    for item in tree.split(b"\0"):
        meta, _tab, path = item.partition(b"\t")
        parts = meta.split()
        if len(parts) != 3 or parts[1] != b"blob":
            continue
        key = key_of_path(path.decode("utf-8", errors="replace"))
        if key is not None:
            out.append((key, parts[2].decode()))
    return out


ORIGINS_WALK_MAX = 20_000  # commits: up to here a snapshot's answer names each hit's commit (one walk a hit)


def short_history(store_path: Path, head: str) -> bool:
    """Whether HEAD's history is short enough to walk once per hit (`git log -1 -- PATH` per hit,
    reads.py `_snapshot_origins`): 0.3-1 s a hit at 38k commits, 1.8 s at 382k (issue 39). Counted
    only up to ORIGINS_WALK_MAX (`rev-list --max-count`), so a long history costs no full walk here."""
    res = gitlog._git(store_path, "rev-list", "--count", f"--max-count={ORIGINS_WALK_MAX}", head)
    return res.returncode == 0 and int(res.stdout.decode().strip() or 0) < ORIGINS_WALK_MAX


def commit_time(store_path: Path, sha: str) -> int:
    res = gitlog._git(store_path, "show", "-s", "--format=%ct", sha)
    return int(res.stdout.decode().strip() or 0)


COPY_FTS = True  # False: `fts` written row by row as `fts_now` is (what copy_fts_now is tested against)
FTS_SHADOWS = ("data", "idx", "docsize", "config")  # an FTS5 contentless table's shadow tables


def copy_fts_now(conn) -> None:
    """`fts` as a copy of `fts_now`. In a snapshot both hold the same rows (every readable version
    is its key's current one, and no key is retracted: HEAD's tree holds live keys only), inserted
    in the same order with the same `hashsize`, so copying `fts_now`'s shadow tables gives the index
    that writing each row twice gave (~17 µs a row saved: 1.5 CPU s at 100k keys). `fts` is declared
    as `fts_now` is (`contentless_delete=1`: the shadow tables' format); nothing deletes from it, and
    the history build (the filler) writes a new file with the plain `fts` of schema.DDL."""
    conn.execute("DROP TABLE IF EXISTS fts")
    conn.execute(f"CREATE VIRTUAL TABLE fts USING fts5({', '.join(schema.FTS_COLUMNS)}, content='', "
                 f"contentless_delete=1, tokenize='{schema.TOKENIZER}')")
    for shadow in FTS_SHADOWS:
        conn.execute(f"DELETE FROM fts_{shadow}")
        conn.execute(f"INSERT INTO fts_{shadow} SELECT * FROM fts_now_{shadow}")


def _started(fn, *args):
    """fn(*args) run in a thread from now: a callable that waits for its answer (False when it
    failed: the cautious answer of short_history, the one caller)."""
    import threading

    box: list = []
    thread = threading.Thread(target=lambda: box.append(fn(*args)), daemon=True)
    thread.start()

    def answer():
        thread.join()
        return bool(box and box[0])
    return answer


_FTS_ROW = f"(rowid, {', '.join(schema.FTS_COLUMNS)}) VALUES(?,?,?,?,?,?)"


def _write(conn, chunk: list[tuple], part: tuple, when: int, skipped: list[str], fts_here: bool = True) -> None:
    """One chunk's rows: what build.Builder's flush writes for these versions, each a new key at
    HEAD (event id = version id), straight from version_rows's answer. Every key is active, so
    `fts_now` holds each readable version: version_rows's full-text rows, in the same order (unless
    not `fts_here`: the workers wrote them into their shards, `_fts_now`)."""
    rows, fts, vtext, unreadable, skip = part
    skipped.extend(skip)
    conn.executemany("INSERT INTO vtext VALUES(?,?,?)", vtext)
    conn.executemany("INSERT INTO unreadable VALUES(?,?)", unreadable)
    conn.executemany("INSERT INTO versions VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    if not COPY_FTS:
        conn.executemany(f"INSERT INTO fts{_FTS_ROW}", fts)
    if fts_here:
        conn.executemany(f"INSERT INTO fts_now{_FTS_ROW}", fts)
    # The event carries HEAD's time: `--as-of T` from T = HEAD on sees these versions.
    conn.executemany("INSERT INTO events VALUES(?,?,1,?,'content',?,?)",
                     [(vid, key, when, vid, blob) for vid, key, _sha, _when, blob in chunk])
    conn.executemany("INSERT OR REPLACE INTO keys VALUES(?,?,'active',?,?,?,NULL,NULL)",
                     [(key, kind_of_key(key), vid, vid, blob) for vid, key, _sha, _when, blob in chunk])


SHARDS = True  # False: this process writes every row of `fts_now` even when workers read the records


def _shard_spec(conn, tmp: Path) -> tuple[str, str, int] | None:
    """What spread.start needs for workers to write `fts_now` in files of their own (next to the
    index's temp file): a path prefix, the table's DDL as the index holds it, the bulk hashsize."""
    if not (SHARDS and COPY_FTS and fts_merge.known_format()):  # another SQLite: the INSERTs, as before
        return None
    ddl = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'fts_now'").fetchone()[0]
    return f"{tmp}.fts", ddl, FTS_HASH_BYTES


def _fts_now(conn, store_path: Path, pending: list[list], shard_paths: list[str] | None, ddl: str) -> None:
    """`fts_now` out of the workers' shards: fts_merge.merge, outside a transaction (~60-90 ms at
    100k rows; ~200 ms inside one), the table as the INSERTs would make it. When a shard is missing
    (a worker died) or merge refuses or fails (an SQLite whose format it does not know), the old path:
    the table made anew and its rows read again (by workers again, or here) and inserted here; a
    slower first answer, never none. The rollback journal is kept in memory for the merge: with none
    (bulk's journal_mode=OFF) its savepoint could not undo a failure half way."""
    if shard_paths is not None:
        conn.execute("PRAGMA journal_mode=MEMORY").fetchall()
        try:
            fts_merge.merge(conn, "fts_now", shard_paths)
            return
        except Exception:  # noqa: BLE001 - any failure of the merge: the rows are inserted here
            pass
        finally:
            conn.execute("PRAGMA journal_mode=OFF").fetchall()
    with conn:
        conn.execute("DROP TABLE fts_now")
        conn.execute(ddl)
        schema.pool_terms(conn, "fts_now", FTS_HASH_BYTES)
        parts = spread.parts(store_path, pending)
        try:
            for chunk in pending:
                part = next(parts) if parts is not None else spread._rows(store_path, chunk)
                conn.executemany(f"INSERT INTO fts_now{_FTS_ROW}", part[1])
        finally:
            if parts is not None:
                parts.close()


def build(store_path: Path, db_path: Path, head: str) -> dict:
    """Write HEAD's snapshot into a temp file and move it over `db_path` (under the index lock)."""
    started = time.perf_counter()
    db_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = db_path.with_name(f"{db_path.name}.snap-{os.getpid()}")
    for stale in (tmp, Path(f"{tmp}-journal")):
        stale.unlink(missing_ok=True)
    when = commit_time(store_path, head)
    conn = schema.connect(tmp, create=True)
    parts = procs = None
    skipped: list[str] = []
    shards: list[str] = []
    try:
        bulk(conn, later=True)  # the indexes no snapshot statement reads: made once the rows are in
        tree = head_tree(store_path, head)
        shard = _shard_spec(conn, tmp)
        procs = spread.start(store_path, tree.count(b"\0"), shard)  # importing while the keys are sorted
        shards = [proc.shard for proc in procs or () if proc.shard]
        short = _started(short_history, store_path, head)  # git counts the commits meanwhile
        entries = sorted(entries_of(tree))
        pending = [[(start + n, key, None, None, blob) for n, (key, blob) in
                    enumerate(entries[start:start + spread.CHUNK], 1)]
                   for start in range(0, len(entries), spread.CHUNK)]
        used = (procs or [])[:len(pending)]  # `parts` stops the others
        parts = spread.parts(store_path, pending, procs)
        procs = None  # stopped by `parts`
        sharded = parts is not None and bool(shards)  # the workers write `fts_now`'s rows
        with conn:
            conn.execute("INSERT INTO commits(seq, sha, committed_at) VALUES(1, ?, ?)", (head, when))
            for chunk in pending:
                # this chunk's rows, read by a worker meanwhile (index/spread.py), or here
                part = next(parts) if parts is not None else spread._rows(store_path, chunk)
                _write(conn, chunk, part, when, skipped, fts_here=not sharded)
        if sharded:
            assert parts is not None and shard is not None
            list(parts)  # the workers' last word: each shard committed and closed (proc.shard_done)
            done = all(proc.shard_done for proc in used)
            _fts_now(conn, store_path, pending, [proc.shard for proc in used] if done else None, shard[1])
        with conn:
            if COPY_FTS:
                copy_fts_now(conn)
            schema.create_later(conn)
            _set_head(conn, head)
            conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES('history', 'pending')")
            conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES('snapshot_seq', '1')")
            if not short():  # its hits' commits wait for the history
                conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES('origins', 'pending')")
        conn.execute("PRAGMA journal_mode=DELETE")
        stats = _stats(conn)
    finally:
        if parts is not None:
            parts.close()  # the workers stop (a failure half way)
        if procs is not None:  # a failure before `parts` took them
            spread._stop(procs)
        conn.close()
        for path in shards:  # no shard left behind, whatever happened
            for name in (path, f"{path}-journal"):
                Path(name).unlink(missing_ok=True)
    Path(f"{db_path}-journal").unlink(missing_ok=True)
    os.replace(tmp, db_path)
    stats.update(head=head, commits=0, skipped=skipped, staged=True, rebuilt=True,
                 seconds=round(time.perf_counter() - started, 3))
    return stats
