"""A snapshot worker's per-record CPU, step by step, on real records (issue 39).

    PYTHONPATH=. .venv/bin/python bench/bench_snapshot_record.py STORE [--records 5000] [--repeat 5]

STORE: a store's Git repository (read only: `git ls-tree` and one `git cat-file --batch` of HEAD's
first `--records` record blobs, in key order as snapshot.py sorts them). Each step is run over every
record, `--repeat` times, and the best round is printed in µs a record: what one worker of
index/spread.py spends on each step of rows.version_rows, then on the shard's `fts_now` INSERT and
the pickle of the chunk's answer (its other work). `version_rows` is the whole of it, timed as one.
"""

from __future__ import annotations

import argparse
import json
import pickle
import time
from pathlib import Path


def best(fn, items, repeat: int) -> float:
    """The best of `repeat` rounds of fn over items, in µs an item."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        for item in items:
            fn(item)
        times.append(time.process_time() - t)
    return min(times) / len(items) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--records", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from kyb_cli.core.embed.recipe import passage_hashes
    from kyb_cli.core.index import gitlog, rows, schema, snapshot
    from kyb_cli.core.index.build import FTS_HASH_BYTES
    from kyb_cli.core.records.fields import stored_fields
    from kyb_cli.core.records.keys import path_of_key, served_path_problem
    from kyb_cli.core.records.limits import record_problem
    from kyb_cli.core.records.model import parse
    from kyb_cli.core.records.secrets import scan_fields
    from kyb_cli.core.records.served import _protective_rules, load
    from kyb_cli.core.records.validate import tag_problem, typed_field_problem

    store = Path(args.store)
    head = gitlog._git(store, "rev-parse", "HEAD").stdout.decode().strip()
    entries = sorted(snapshot.entries_of(snapshot.head_tree(store, head)))[:args.records]
    pending = [(n, key, None, None, blob) for n, (key, blob) in enumerate(entries, 1)]
    contents = gitlog.blobs(store, sorted({p[4] for p in pending}))
    paths = [(path_of_key(key), contents[blob]) for _n, key, _s, _w, blob in pending]
    records = [load(path, data) for path, data in paths]
    fields = [stored_fields(r) for r in records]
    docs = [r.to_json() for r in records]
    # this checkout's ways, or the old ones (an older checkout: no `_plain`)
    check = getattr(rows, "_plain", lambda data: (False, False))
    plain = [check(data) for _path, data in paths]
    doc_json = getattr(rows, "doc_json", lambda doc, bare: rows._dumps(doc))
    hashes = passage_hashes if hasattr(rows, "_plain") else (lambda doc, narrow: passage_hashes(doc))
    r = args.repeat
    steps = {
        "bytes check (rows._plain)": best(check, [data for _path, data in paths], r),
        "served_path_problem": best(lambda pd: served_path_problem(pd[0]), paths, r),
        "parse (decode, TOML, Record)": best(lambda pd: parse(pd[1], path=pd[0]), paths, r),
        "stored_fields": best(stored_fields, records, r),
        "size limits (limits.record_problem)": best(lambda i: record_problem(records[i], fields[i]), range(len(records)), r),
        "secret scan (scan_fields)": best(scan_fields, fields, r),
        "tag_problem": best(lambda rec: tag_problem(rec.tags), records, r),
        "typed_field_problem": best(typed_field_problem, records, r),
        "protective rules (all of served)": best(lambda rec: _protective_rules(rec, True), records, r),
        "load (served.load: all above)": best(lambda pd: load(*pd), paths, r),
        "to_json": best(lambda rec: rec.to_json(), records, r),
        "JSON of the row (tags, doc)": best(lambda i: (rows._dumps([t.lower() for t in records[i].tags]),
                                                       doc_json(docs[i], plain[i][0])), range(len(records)), r),
        "fts_columns": best(lambda i: rows.fts_columns(records[i].key, docs[i]), range(len(records)), r),
        "passage_hashes": best(lambda i: hashes(docs[i], plain[i][1]), range(len(records)), r),
    }
    total = []
    for _ in range(r):
        t = time.process_time()
        part = rows.version_rows(pending, contents)
        total.append(time.process_time() - t)
    steps["version_rows (whole)"] = min(total) / len(pending) * 1e6
    import apsw

    conn = apsw.Connection(":memory:")
    conn.execute("BEGIN")
    conn.execute(f"CREATE VIRTUAL TABLE fts_now USING fts5({', '.join(schema.FTS_COLUMNS)}, content='', "
                 f"contentless_delete=1, tokenize='{schema.TOKENIZER}')")
    schema.pool_terms(conn, "fts_now", FTS_HASH_BYTES)
    t = time.process_time()
    conn.executemany(f"INSERT INTO fts_now(rowid, {', '.join(schema.FTS_COLUMNS)}) VALUES(?,?,?,?,?,?)", part[1])
    conn.execute("COMMIT")
    steps["shard fts_now INSERT (once)"] = (time.process_time() - t) / len(pending) * 1e6
    steps["pickle of the answer"] = best(lambda p: pickle.dumps((p[0], [], *p[2:]), protocol=pickle.HIGHEST_PROTOCOL),
                                        [part], r) / len(pending)
    for name, us in steps.items():
        print(f"{name:40s} {us:7.1f} µs")
    print(json.dumps({"records": len(pending), "us": {k: round(v, 1) for k, v in steps.items()}}))


if __name__ == "__main__":
    main()
