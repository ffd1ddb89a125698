"""The floor of any first answer on a fresh clone (issue 39's ≤ 3 s at 100k keys): the cheapest first
stage thinkable, end to end, with no index to start from.

    python bench/bench_first_floor.py CLONE [--runs 3] [--chunk 2000] [--workers 2]
    python bench/bench_first_floor.py CLONE --shards 2      # each process its own share's fts_now

It is NOT kyb's snapshot (index/snapshot.py): it drops everything a first answer could in principle
leave for later — the served checks (write rules, secret scan), the `versions` JSON, the passage
hashes, `events`, `keys`, the all-versions table, every index — and keeps only what ranking a
current question needs: HEAD's listing, each record parsed in worker processes (one kept `git
cat-file --batch` each, fed from a thread), its five full-text columns into one `fts_now` (the
index's own DDL: tokenizer, hash size) and a minimal row, in this process, then one bm25 query.
What it measures is how far the real first stage could ever go on this machine: the writing
process (the FTS5 inserts) is serial, whatever the workers do. Printed a run: the wall to the built
table and to the answer, the writing process's CPU, all CPU of it and its workers (git's `cat-file`
is not counted: ~1 CPU s for 88k blobs at 100k, timed alone), and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_git = None


def _parsed(args: tuple[str, int, list[tuple[str, str]]]) -> tuple[list, list]:
    """A worker: the minimal rows and the full-text columns of one chunk of (key, blob)."""
    global _git
    from kyb_cli.core.index.rows import fts_columns
    from kyb_cli.core.records.model import parse

    store, start, chunk = args
    if _git is None:
        _git = subprocess.Popen(["git", "-C", store, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, bufsize=1 << 20)
    asked = b"".join(blob.encode() + b"\n" for _key, blob in chunk)

    def feed() -> None:  # git's answers fill its pipe before a large chunk is asked: ask from a thread
        _git.stdin.write(asked)
        _git.stdin.flush()

    feeder = threading.Thread(target=feed)
    feeder.start()
    rows, fts = [], []
    for n, (key, blob) in enumerate(chunk, start):
        head = _git.stdout.readline().split()
        data = _git.stdout.read(int(head[2]))
        _git.stdout.read(1)
        try:
            record = parse(data)
        except Exception:  # noqa: BLE001 - a floor: an unreadable record is a row without text
            rows.append((n, key, None, blob, key))
            continue
        rows.append((n, key, record.kind, blob, record.title))
        fts.append((n, *fts_columns(key, record.to_json())))
    feeder.join()
    return rows, fts


def once(store: str, chunk: int, workers: int, db: Path) -> dict:
    import apsw

    from kyb_cli.core.index.schema import FTS_COLUMNS, FTS_WEIGHTS_SQL, TOKENIZER
    from kyb_cli.core.index.snapshot import entries_of, head_tree

    t0 = time.perf_counter()
    entries = sorted(entries_of(head_tree(Path(store), "HEAD")))  # as the snapshot lists them
    listed = time.perf_counter() - t0
    for f in (db, Path(f"{db}-journal")):
        f.unlink(missing_ok=True)
    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF")
    conn.execute(f"CREATE VIRTUAL TABLE fts_now USING fts5({', '.join(FTS_COLUMNS)}, content='', "
                 f"contentless_delete=1, tokenize='{TOKENIZER}')")
    conn.execute("INSERT INTO fts_now(fts_now, rank) VALUES('hashsize', 16777216)")
    conn.execute("CREATE TABLE versions(id INTEGER PRIMARY KEY, key TEXT, kind TEXT, blob TEXT, title TEXT)")
    inserting = 0.0
    with get_context("fork").Pool(workers) as pool:
        conn.execute("BEGIN")
        work = [(store, i + 1, entries[i:i + chunk]) for i in range(0, len(entries), chunk)]
        for rows, fts in pool.imap(_parsed, work):
            t = time.perf_counter()
            conn.executemany("INSERT INTO versions VALUES (?,?,?,?,?)", rows)
            conn.executemany(f"INSERT INTO fts_now(rowid, {', '.join(FTS_COLUMNS)}) VALUES (?,?,?,?,?,?)", fts)
            inserting += time.perf_counter() - t
        conn.execute("COMMIT")
    built = time.perf_counter() - t0
    conn.execute(f"SELECT rowid, -bm25(fts_now, {FTS_WEIGHTS_SQL}) s FROM fts_now WHERE fts_now MATCH "
                 "'\"checkout\" AND \"port\" AND \"9090\"' ORDER BY s DESC LIMIT 10").fetchall()
    answered = time.perf_counter() - t0
    conn.close()
    return {"records": len(entries), "listed_s": round(listed, 2), "inserting_s": round(inserting, 2),
            "built_s": round(built, 2), "answered_s": round(answered, 2)}


def _shard(args: tuple[str, int, int, str]) -> dict:
    """One shard's process: every `shards`-th record of HEAD (by listing order) parsed here and written
    to its own database's fts_now (no workers: the shards are the parallelism)."""
    import apsw

    from kyb_cli.core.index.schema import FTS_COLUMNS, TOKENIZER
    from kyb_cli.core.index.snapshot import entries_of, head_tree

    store, shard, shards, db = args
    entries = sorted(entries_of(head_tree(Path(store), "HEAD")))[shard::shards]
    for f in (Path(db), Path(f"{db}-journal")):
        f.unlink(missing_ok=True)
    conn = apsw.Connection(db)
    conn.execute("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF")
    conn.execute(f"CREATE VIRTUAL TABLE fts_now USING fts5({', '.join(FTS_COLUMNS)}, content='', "
                 f"contentless_delete=1, tokenize='{TOKENIZER}')")
    conn.execute("INSERT INTO fts_now(fts_now, rank) VALUES('hashsize', 16777216)")
    conn.execute("CREATE TABLE versions(id INTEGER PRIMARY KEY, key TEXT, kind TEXT, blob TEXT, title TEXT)")
    conn.execute("BEGIN")
    for start in range(0, len(entries), 2000):
        rows, fts = _parsed((store, start * shards + shard + 1, entries[start:start + 2000]))
        conn.executemany("INSERT INTO versions VALUES (?,?,?,?,?)", rows)
        conn.executemany(f"INSERT INTO fts_now(rowid, {', '.join(FTS_COLUMNS)}) VALUES (?,?,?,?,?,?)", fts)
    conn.execute("COMMIT")
    conn.close()
    u = resource.getrusage(resource.RUSAGE_SELF)
    return {"shard": shard, "records": len(entries), "cpu_s": round(u.ru_utime + u.ru_stime, 2)}


def sharded(store: str, shards: int, db: Path) -> dict:
    """`shards` processes, each its own half of HEAD into its own fts_now: the build's wall."""
    t0 = time.perf_counter()
    with get_context("fork").Pool(shards) as pool:
        parts = pool.map(_shard, [(store, i, shards, f"{db}.{i}") for i in range(shards)])
    built = time.perf_counter() - t0
    for i in range(shards):
        for f in (Path(f"{db}.{i}"), Path(f"{db}.{i}-journal")):
            f.unlink(missing_ok=True)
    return {"shards": parts, "built_s": round(built, 2), "load": round(os.getloadavg()[0], 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--chunk", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shards", type=int, default=0,
                    help="instead: N processes each building its own share's fts_now (the build's wall only)")
    a = ap.parse_args()
    if a.shards:
        db = Path(os.environ.get("TMPDIR", "/tmp")) / f"kyb-first-floor-{os.getpid()}.sqlite"
        for _ in range(a.runs):
            print(json.dumps(sharded(a.store, a.shards, db)), flush=True)
        return
    db = Path(os.environ.get("TMPDIR", "/tmp")) / f"kyb-first-floor-{os.getpid()}.sqlite"
    try:
        for _ in range(a.runs):
            # a fresh process a run: the writing process's CPU is its own (rusage), workers' and git's apart
            code = (f"import sys, json, resource; sys.path.insert(0, {str(ROOT)!r}); "
                    f"from bench.bench_first_floor import once; from pathlib import Path; "
                    f"r = once({a.store!r}, {a.chunk}, {a.workers}, Path({str(db)!r})); "
                    f"u = resource.getrusage(resource.RUSAGE_SELF); "
                    f"r['writer_cpu_s'] = round(u.ru_utime + u.ru_stime, 2); print(json.dumps(r))")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            total = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            print(out.strip()[:-1] + f', "all_cpu_s": {total:.2f}, "load": {os.getloadavg()[0]:.2f}}}', flush=True)
    finally:
        for f in (db, Path(f"{db}-journal")):
            f.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
