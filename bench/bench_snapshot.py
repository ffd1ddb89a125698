"""The snapshot of a fresh clone (the first answer's cost, issue 39), in-process, per record.

    git clone -q /tmp/kyb-bench-stores/fan-10000-1 /tmp/snap-10k     # a clone: the store is not written
    python bench/bench_snapshot.py /tmp/snap-10k                        # rows a record (best of 3)
    python bench/bench_snapshot.py /tmp/snap-100k --build               # also the whole snapshot
    python bench/bench_snapshot.py /tmp/snap-100k --floor               # what any first answer costs
    python bench/bench_snapshot.py /tmp/snap-100k --parts               # version_rows piece by piece
    python bench/bench_snapshot.py /tmp/snap-100k --only-build          # the snapshot alone
    python bench/bench_snapshot.py /tmp/snap-100k --versus OLD_CHECKOUT  # version_rows, two checkouts

Prints one JSON line: CPU µs a record of `rows.version_rows` (parse, write rules, secret scan, the
rows; what the spread workers run) and of `secret_in` alone, best of 3 in this process; with
--build, `snapshot.build` into a temp file: wall, this process's CPU (the writes) and its children's
(workers and git). With --floor, what any design that indexes HEAD's text before its first answer
pays, in this process with `git cat-file` streaming beside it (in memory, no file): HEAD's text into
one FTS5 table and nothing else (`fts_raw`), the same with each record parsed into its full-text
columns (`fts_parsed`), and the raw text with the minimal `versions`/`keys`/`events` rows the
index's queries join (`fts_rows`). With --parts, `rows.version_rows`'s pieces a record, each over
the first 20,000 records: the parse, the served checks (path, key, write rules, secret scan: `load`
less the parse), the doc's JSON, its full-text columns and its passage hashes. The 1-minute load average is printed with it: the figures are CPU time, but a
loaded machine still slows them (shared caches). With --versus OLD_CHECKOUT (e.g. `git archive
main | tar -x -C OLD`): `rows.version_rows` over the first 20,000 records, best of 3, in a process of
each checkout's code, the two alternating for --rounds rounds; per side its µs a record each round
and a digest of the rows (equal digests: the same rows), and the ratio of the medians and of
the minimums (the round least disturbed by other load).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.environ.get("KYB_BENCH_CHECKOUT") or str(Path(__file__).resolve().parents[1]))

from kyb_cli.core.index import gitlog, rows, snapshot  # noqa: E402
from kyb_cli.core.records.keys import path_of_key  # noqa: E402
from kyb_cli.core.records.served import load  # noqa: E402
from kyb_cli.core.records.validate import secret_in  # noqa: E402


def _best(fn, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        started = time.process_time()
        fn()
        times.append(time.process_time() - started)
    return min(times)


def _floor(store: Path, head: str, entries: list, what: str) -> dict:
    """Seconds (wall, this process's CPU) to stream HEAD's blobs into an in-memory index (see --floor)."""
    import subprocess
    import threading

    import apsw

    from kyb_cli.core.index import schema
    from kyb_cli.core.records.model import parse
    from kyb_cli.core.records.keys import kind_of_key

    wall, cpu = time.perf_counter(), time.process_time()
    proc = subprocess.Popen(["git", "-C", str(store), "cat-file", "--batch"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, bufsize=1 << 20)
    feed = b"".join(blob.encode() + b"\n" for _key, blob in entries)
    threading.Thread(target=lambda: (proc.stdin.write(feed), proc.stdin.close()), daemon=True).start()
    conn = apsw.Connection(":memory:")
    conn.execute(schema.DDL)
    fts, ver, keys, events = [], [], [], []

    def write() -> None:
        conn.executemany("INSERT INTO fts_now(rowid, title, tags, keytext, fields, body) VALUES(?,?,?,?,?,?)", fts)
        if what == "fts_rows":
            conn.executemany("INSERT INTO versions(id, key, kind, blob, title, tags_lc, service_lc, status, "
                             "priority, assignee, parent_task, doc) VALUES(?,?,?,?,'','[]','','','','','','{}')", ver)
            conn.executemany("INSERT INTO keys(key, kind, state, version_id, event_id, blob) "
                             "VALUES(?,?,'active',?,?,?)", keys)
            conn.executemany("INSERT INTO events(id, key, seq, committed_at, action, version_id, blob) "
                             "VALUES(?,?,1,0,'content',?,?)", events)
        for rows_ in (fts, ver, keys, events):
            rows_.clear()

    with conn:
        for n, (key, blob) in enumerate(entries, 1):
            size = int(proc.stdout.readline().split()[2])
            data = proc.stdout.read(size + 1)[:-1]
            if what == "fts_parsed":
                fts.append((n, *rows.fts_columns(key, parse(data, path=path_of_key(key)).to_json())))
            else:
                fts.append((n, "", "", key, "", data.decode("utf-8", "replace")))
            if what == "fts_rows":
                kind = kind_of_key(key)
                ver.append((n, key, kind, blob))
                keys.append((key, kind, n, n, blob))
                events.append((n, key, n, blob))
            if len(fts) == 2000:
                write()
        write()
    proc.wait()
    return {f"{what}_wall_s": round(time.perf_counter() - wall, 2), f"{what}_cpu_s": round(time.process_time() - cpu, 2)}


def _parts(entries: list, contents: dict) -> dict:
    """CPU µs a record of each piece of rows.version_rows (see --parts), best of 3."""
    from kyb_cli.core.embed.recipe import passage_hashes
    from kyb_cli.core.records.model import parse

    some = [(key, path_of_key(key), contents[blob]) for key, blob in entries[:20000]]
    records = [parse(data, path=path) for _key, path, data in some]
    docs = [r.to_json() for r in records]
    n = len(some)
    parse_us = _best(lambda: [parse(data, path=path) for _key, path, data in some]) / n * 1e6
    return {"parts_us": {
        "parse": round(parse_us, 1),
        "served_checks": round(_best(lambda: [load(path, data) for _key, path, data in some]) / n * 1e6 - parse_us, 1),
        "to_json": round(_best(lambda: [r.to_json() for r in records]) / n * 1e6, 1),
        "json_text": round(_best(lambda: [rows._dumps(d) for d in docs]) / n * 1e6, 1),
        "fts_columns": round(_best(lambda: [rows.fts_columns(k, d) for (k, _p, _d), d in zip(some, docs)]) / n * 1e6, 1),
        "passage_hashes": round(_best(lambda: [passage_hashes(d) for d in docs]) / n * 1e6, 1)}}


def _rows_once(store: Path) -> dict:
    """version_rows over the first 20,000 records of HEAD (this process's checkout): µs, rows' digest."""
    import hashlib

    head = gitlog._git(store, "rev-parse", "HEAD").stdout.decode().strip()
    entries = sorted(snapshot.entries_of(snapshot.head_tree(store, head)))[:20000]
    contents = gitlog.blobs(store, sorted({blob for _key, blob in entries}))
    pending = [(n, key, None, None, blob) for n, (key, blob) in enumerate(entries, 1)]
    made = rows.version_rows(pending, contents)
    return {"us": round(_best(lambda: rows.version_rows(pending, contents)) / len(pending) * 1e6, 1),
            "digest": hashlib.sha256(repr(made).encode()).hexdigest()[:16]}


def _versus(store: Path, other: Path, rounds: int) -> dict:
    """--versus: each side's version_rows in its own process, alternating (see the module doc)."""
    import statistics
    import subprocess

    here = Path(__file__).resolve().parents[1]
    sides = {"old": other.resolve(), "new": here}
    out: dict = {"load": os.getloadavg()[0], "old": [], "new": []}
    for _ in range(rounds):
        for name, checkout in sides.items():
            env = {**os.environ, "KYB_BENCH_CHECKOUT": str(checkout), "PYTHONPATH": str(checkout)}
            done = subprocess.run([sys.executable, __file__, str(store), "--rows-once"], env=env, cwd=checkout,
                                  capture_output=True, text=True, check=True)
            out[name].append(json.loads(done.stdout))
    out["ratio"] = round(statistics.median(r["us"] for r in out["new"])
                         / statistics.median(r["us"] for r in out["old"]), 3)
    out["ratio_min"] = round(min(r["us"] for r in out["new"]) / min(r["us"] for r in out["old"]), 3)  # least disturbed
    out["same_rows"] = len({r["digest"] for r in out["old"] + out["new"]}) == 1
    out["load_after"] = os.getloadavg()[0]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("--build", action="store_true", help="also time snapshot.build (workers included)")
    ap.add_argument("--floor", action="store_true", help="also time the floors of a first answer (see above)")
    ap.add_argument("--parts", action="store_true", help="also version_rows's pieces a record (see above)")
    ap.add_argument("--only-build", action="store_true",
                    help="snapshot.build alone: no per-record passes first (its children's CPU is then its own)")
    ap.add_argument("--versus", type=Path, help="another checkout: version_rows in both, alternating (see above)")
    ap.add_argument("--rounds", type=int, default=5, help="--versus: rounds of the two sides")
    ap.add_argument("--rows-once", action="store_true", help=argparse.SUPPRESS)  # one side of --versus
    args = ap.parse_args()
    if args.rows_once or args.versus:
        print(json.dumps(_rows_once(args.store) if args.rows_once else _versus(args.store, args.versus, args.rounds)))
        return
    head = gitlog._git(args.store, "rev-parse", "HEAD").stdout.decode().strip()
    entries = sorted(snapshot.entries_of(snapshot.head_tree(args.store, head)))
    if args.only_build:
        args.build, args.parts, args.floor = True, False, False
    pending = [(n, key, None, None, blob) for n, (key, blob) in enumerate(entries, 1)]
    n = len(entries)
    out = {"records": n, "load": os.getloadavg()[0]}
    if not args.only_build:
        contents = gitlog.blobs(args.store, sorted({blob for _key, blob in entries}))
        records = [load(path_of_key(key), contents[blob]) for key, blob in entries]
        out.update(version_rows_us=round(_best(lambda: rows.version_rows(pending, contents)) / n * 1e6, 1),
                   secret_in_us=round(_best(lambda: [secret_in(r) for r in records]) / n * 1e6, 1))
    if args.parts:
        out.update(_parts(entries, contents))
    if args.floor:
        for what in ("fts_raw", "fts_parsed", "fts_rows"):
            out.update(_floor(args.store, head, entries, what))
    if args.build:
        with tempfile.TemporaryDirectory() as tmp:
            wall, cpu = time.perf_counter(), time.process_time()
            snapshot.build(args.store, Path(tmp) / "index.sqlite", head)
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            out.update(build_wall_s=round(time.perf_counter() - wall, 2),
                       build_cpu_s=round(time.process_time() - cpu, 2),
                       children_cpu_s=round(children.ru_utime + children.ru_stime, 2),
                       load_after=os.getloadavg()[0])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
