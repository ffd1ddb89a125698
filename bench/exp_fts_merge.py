"""Issue 39's spike: one FTS5 table built in N processes and merged at the shadow-table level
(kyb_cli/core/index/fts_merge.py), against the same rows INSERTed into one table.

    python bench/exp_fts_merge.py --rows 10000                 # the 100k store's texts when readable
    python bench/exp_fts_merge.py --rows 100000 --source c100k
    python bench/exp_fts_merge.py --rows 20000 --source synth  # windows of the evalset's real texts

(a) one process: the rows into `fts_now` and `fts` (the index's DDL, the bulk build's hashsize) by
INSERTs in one transaction; (b) `--shards` forked processes, each its contiguous share of the rows
into the same tables of its own file, then one `merge` a table into a new file. Printed: each way's
wall and CPU (the workers' own CPU, the merge's wall and CPU), then per table the verdicts: the
integrity-check, the averages record, the fts5vocab tables (row, col, instance), bm25() with the
index's weights for `--queries` queries (rowids, doubles, order), and the same again after the same
inserts, deletes (`fts_now`), 'merge' and 'optimize' on both. Exit status 1 when a verdict fails.
Sources: `c100k`: /tmp/me/c100k-texts.bin (HEAD's record files of the 100k store, a marshal list of
bytes: 88,026 records, repeated from the first past that), parsed as the index parses them (cached
under --dir); `synth`: rows cut from the evalset's
texts (/work/shared/evalset/docs.jsonl). Scratch files go to --dir.
"""

from __future__ import annotations

import argparse
import json
import marshal
import os
import random
import sys
import time
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

C100K = Path("/tmp/me/c100k-texts.bin")
EVALSET = Path("/work/shared/evalset/docs.jsonl")
TABLES = ("fts_now", "fts")
ROWS: list[tuple] = []  # (rowid, title, tags, keytext, fields, body): inherited by the forked shards


def _ddl(table: str) -> str:
    from kyb_cli.core.index.schema import FTS_COLUMNS, TOKENIZER

    extra = ", contentless_delete=1" if table == "fts_now" else ""
    return (f"CREATE VIRTUAL TABLE {table} USING fts5({', '.join(FTS_COLUMNS)}, content=''{extra}, "
            f"tokenize='{TOKENIZER}')")


def c100k_rows(n: int, cache_dir: Path) -> list[tuple] | None:
    from kyb_cli.core.index.rows import fts_columns
    from kyb_cli.core.records.model import parse

    cache = cache_dir / "c100k-cols.marshal"  # the parse takes ~30 s
    if cache.exists():
        cols = marshal.loads(cache.read_bytes())
    elif C100K.exists():
        cols = []
        for blob in marshal.loads(C100K.read_bytes()):
            try:
                record = parse(blob)
            except Exception:  # noqa: BLE001 - an unreadable record has no full text
                continue
            cols.append(fts_columns(record.key, record.to_json()))
        cache.write_bytes(marshal.dumps(cols))
    else:
        return None
    return [(i, *cols[(i - 1) % len(cols)]) for i in range(1, n + 1)]  # 88,026 records: then again


def synth_rows(n: int, seed: int = 39) -> list[tuple]:
    from kyb_cli.core.index.rows import fold

    docs = [json.loads(line) for line in EVALSET.read_text().splitlines() if line.strip()]
    words = " ".join(d.get("body", "") for d in docs).split()
    titles = [d["title"] for d in docs]
    tags = sorted({t for d in docs for t in d.get("tags", [])})
    rnd = random.Random(seed)
    rows = []
    for i in range(1, n + 1):
        at = rnd.randrange(len(words))
        body = " ".join(words[at:at + rnd.randint(20, 400)])
        title = " ".join(rnd.choice(titles).split()[:6] + words[at:at + rnd.randint(0, 4)])
        key = f"kn-{i:06d}-" + "-".join(w.lower() for w in words[at:at + 2] if w.isalnum())
        rows.append((i, fold(title), fold(" ".join(rnd.sample(tags, rnd.randint(0, 3)))), fold(key),
                     fold(" ".join(rnd.sample(words, rnd.randint(0, 6)))), fold(body)))
    return rows


def _fresh(path: Path):
    import apsw

    for f in (path, Path(f"{path}-journal")):
        f.unlink(missing_ok=True)
    conn = apsw.Connection(str(path))
    for pragma in ("journal_mode=OFF", "synchronous=OFF", "cache_size=-65536"):
        conn.execute(f"PRAGMA {pragma}").fetchall()
    return conn


def _build(path: Path, tables: tuple[str, ...], rows: list[tuple]) -> None:
    from kyb_cli.core.index.build import FTS_HASH_BYTES
    from kyb_cli.core.index.schema import FTS_COLUMNS

    conn = _fresh(path)
    for t in tables:
        conn.execute(_ddl(t))
        conn.execute(f"INSERT INTO {t}({t}, rank) VALUES('hashsize', {FTS_HASH_BYTES})")
    with conn:
        for t in tables:
            conn.executemany(f"INSERT INTO {t}(rowid, {', '.join(FTS_COLUMNS)}) VALUES(?,?,?,?,?,?)", rows)
    conn.close()


def _shard(args: tuple[str, tuple[str, ...], int, int, float]) -> dict:
    path, tables, lo, hi, t0 = args
    c0, started = time.process_time(), time.perf_counter()  # CLOCK_MONOTONIC: the parent's clock too
    _build(Path(path), tables, ROWS[lo:hi])
    done = time.perf_counter()
    return {"rows": hi - lo, "cpu_s": round(time.process_time() - c0, 3), "started_s": round(started - t0, 3),
            "wall_s": round(done - started, 3)}


def one_table(path: Path, tables: tuple[str, ...]) -> dict:
    c0, t0 = time.process_time(), time.perf_counter()
    _build(path, tables, ROWS)
    return {"way": "one table", "wall_s": round(time.perf_counter() - t0, 3),
            "cpu_s": round(time.process_time() - c0, 3)}


def sharded(path: Path, tables: tuple[str, ...], shards: int) -> dict:
    from kyb_cli.core.index.fts_merge import merge

    cut = [len(ROWS) * i // shards for i in range(shards + 1)]
    paths = [f"{path}.shard{i}" for i in range(shards)]
    t0 = time.perf_counter()
    with get_context("fork").Pool(shards) as pool:
        parts = pool.map(_shard, [(paths[i], tables, cut[i], cut[i + 1], t0) for i in range(shards)])
    built = time.perf_counter() - t0
    conn = _fresh(path)
    for t in tables:
        conn.execute(_ddl(t))
    c1, t1 = time.process_time(), time.perf_counter()
    merged = {}
    for t in tables:
        tm = time.perf_counter()
        merge(conn, t, paths)
        merged[t] = round((time.perf_counter() - tm) * 1000, 1)
    merge_wall, merge_cpu = time.perf_counter() - t1, time.process_time() - c1
    conn.close()
    total = time.perf_counter() - t0  # forks to a merged, closed file
    other = _fresh(Path(f"{path}.txn"))  # the same merge inside an open transaction: rows through Python
    for t in tables:
        other.execute(_ddl(t))
    t2 = time.perf_counter()
    with other:
        for t in tables:
            merge(other, t, paths)
    in_txn = time.perf_counter() - t2
    other.close()
    Path(f"{path}.txn").unlink()
    for p in paths:
        Path(p).unlink(missing_ok=True)
    return {"way": f"{shards} shards + merge", "wall_s": round(total, 3),
            "shards_wall_s": round(built, 3), "shards": parts, "merge_ms": merged,
            "merge_wall_ms": round(merge_wall * 1000, 1), "merge_cpu_ms": round(merge_cpu * 1000, 1),
            "merge_in_transaction_ms": round(in_txn * 1000, 1)}


def _integrity(conn, t: str) -> str:
    try:
        conn.execute(f"INSERT INTO {t}({t}) VALUES('integrity-check')")
        return "ok"
    except Exception as exc:  # noqa: BLE001 - the verdict is the message
        return f"FAILED: {exc}"


def _vocab(conn, t: str, kind: str):
    name = f"v_{t}_{kind}"
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name} USING fts5vocab(main, {t}, {kind})")
    return conn.execute(f"SELECT * FROM temp.{name}")


def same_vocab(a, b, t: str, kind: str) -> str:
    n = 0
    for n, (x, y) in enumerate(zip(_vocab(a, t, kind), _vocab(b, t, kind), strict=False), 1):
        if x != y:
            return f"DIFFER at row {n}: {x} != {y}"
    na = a.execute(f"SELECT count(*) FROM temp.v_{t}_{kind}").fetchone()[0]
    nb = b.execute(f"SELECT count(*) FROM temp.v_{t}_{kind}").fetchone()[0]
    return f"equal ({na} rows)" if na == nb == n else f"DIFFER in length: {na} != {nb}"


def queries(conn, t: str, n: int, seed: int = 7) -> list[str]:
    """MATCH strings of every shape kyb sends and some more: rare and common terms, AND/OR/NOT,
    phrases, prefixes, a column filter."""
    rnd = random.Random(seed)
    terms = [r[0] for r in conn.execute(f"SELECT term FROM temp.v_{t}_row WHERE term GLOB '[a-z]*' "
                                        "AND length(term) > 2")]
    if not terms:
        return []
    out = []
    for i in range(n):
        a, b, c = (f'"{rnd.choice(terms)}"' for _ in range(3))
        out.append([a, f"{a} AND {b}", f"{a} OR {b} OR {c}", f"{a} NOT {b}", f'"{a[1:-1]} {b[1:-1]}"',
                    f'"{a[1:3]}" *', f"title : {a}", f"{{title body}} : {a} {b}"][i % 8])
    return out


def ranked(conn, t: str, match: str) -> list:
    from kyb_cli.core.index.schema import FTS_WEIGHTS_SQL

    return conn.execute(f"SELECT rowid, bm25({t}, {FTS_WEIGHTS_SQL}) s FROM {t} WHERE {t} MATCH ? "
                        "ORDER BY s LIMIT 200", (match,)).fetchall()


def compare(a, b, t: str, n_queries: int, instance: bool) -> dict:
    from kyb_cli.core.index.fts_merge import decode_averages

    from kyb_cli.core.index.fts_merge import decode_structure

    levels = [[len(segs) for _m, segs in decode_structure(
        c.execute(f"SELECT block FROM {t}_data WHERE id = 10").fetchone()[0])["levels"]] for c in (a, b)]
    v = {"segments_by_level": f"{levels[0]} / {levels[1]}", "integrity": f"{_integrity(a, t)} / {_integrity(b, t)}"}
    avg = [decode_averages(c.execute(f"SELECT block FROM {t}_data WHERE id = 1").fetchone()[0], 5) for c in (a, b)]
    v["averages"] = "equal" if avg[0] == avg[1] else f"DIFFER {avg}"
    for kind in ("row", "col") + (("instance",) if instance else ()):
        v[f"vocab_{kind}"] = same_vocab(a, b, t, kind)
    bad = hits = 0
    spent = [0.0, 0.0]
    qs = queries(a, t, n_queries)
    for q in qs:
        t0 = time.perf_counter()
        x = ranked(a, t, q)
        t1 = time.perf_counter()
        y = ranked(b, t, q)
        spent[0] += t1 - t0
        spent[1] += time.perf_counter() - t1
        hits += len(x)
        bad += x != y  # rowids, the doubles exactly (==), the order
    v["bm25"] = f"{len(qs) - bad}/{len(qs)} queries identical ({hits} ranked rows)"
    v["queries_ms"] = f"{spent[0] * 1000:.0f} / {spent[1] * 1000:.0f}"
    return v


def mutate(conn, t: str, n_rows: int, seed: int = 11) -> None:
    """The same writes on either table: new rows, deletes (fts_now) of old and new ones."""
    from kyb_cli.core.index.schema import FTS_COLUMNS

    rnd = random.Random(seed)
    new = [(n_rows + i, *ROWS[rnd.randrange(len(ROWS))][1:]) for i in range(1, 201)]
    with conn:
        conn.executemany(f"INSERT INTO {t}(rowid, {', '.join(FTS_COLUMNS)}) VALUES(?,?,?,?,?,?)", new)
        if t == "fts_now":
            gone = rnd.sample(range(1, n_rows + 1), min(300, n_rows // 3)) + [n_rows + 5, n_rows + 150]
            conn.executemany(f"DELETE FROM {t} WHERE rowid = ?", [(r,) for r in gone])


def main() -> int:
    global ROWS
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--source", choices=("auto", "c100k", "synth"), default="auto")
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--no-instance", action="store_true", help="skip the fts5vocab instance tables")
    ap.add_argument("--dir", default="/tmp/h39m")
    ap.add_argument("--runs", type=int, default=1, help="the timings this many times")
    ap.add_argument("--no-checks", action="store_true", help="the timings only")
    a = ap.parse_args()
    work = Path(a.dir)
    work.mkdir(parents=True, exist_ok=True)
    import apsw

    source = a.source
    rows = c100k_rows(a.rows, work) if source in ("auto", "c100k") else None
    if rows is None:
        if source == "c100k":
            print(f"c100k: {C100K} is not there", file=sys.stderr)
            return 2
        source, rows = "synth", synth_rows(a.rows)
    else:
        source = "c100k"
    ROWS = rows
    chars = sum(len(x) for r in rows for x in r[1:])
    print(json.dumps({"rows": len(rows), "source": source, "text_mb": round(chars / 1e6, 1),
                      "sqlite": apsw.sqlite_lib_version(), "load": os.getloadavg()[0]}), flush=True)
    one, merged = work / "one.db", work / "merged.db"
    for _ in range(a.runs):
        for t in TABLES:  # each table alone: the figure the first answer needs is fts_now's
            print(json.dumps({"table": t, **one_table(one, (t,)), "load": os.getloadavg()[0]}), flush=True)
            print(json.dumps({"table": t, **sharded(merged, (t,), a.shards), "load": os.getloadavg()[0]}), flush=True)
        print(json.dumps({"tables": "both", **one_table(one, TABLES)}), flush=True)
        print(json.dumps({"tables": "both", **sharded(merged, TABLES, a.shards)}), flush=True)
    if a.no_checks:
        return 0
    ca, cb = apsw.Connection(str(one)), apsw.Connection(str(merged))
    failed = False
    for t in TABLES:
        stages = [("as built", None), ("after inserts and deletes", lambda c, t=t: mutate(c, t, len(ROWS))),
                  ("after 'merge' 500", lambda c, t=t: c.execute(f"INSERT INTO {t}({t}, rank) VALUES('merge', 500)")),
                  ("after 'optimize'", lambda c, t=t: c.execute(f"INSERT INTO {t}({t}) VALUES('optimize')"))]
        for i, (stage, op) in enumerate(stages):
            if op:
                op(ca)
                op(cb)
            v = compare(ca, cb, t, a.queries, instance=not a.no_instance and i in (0, len(stages) - 1))
            failed |= any(("FAILED" in x or "DIFFER" in x) for x in v.values()) or \
                not v["bm25"].startswith(f"{a.queries}/")
            print(json.dumps({"table": t, "stage": stage, **v}), flush=True)
    ca.close()
    cb.close()
    print(json.dumps({"verdict": "FAIL" if failed else "merged == one table", "load": os.getloadavg()[0]}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
