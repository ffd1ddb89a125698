"""The snapshot of a fresh clone (the first answer's cost, issue 39), in-process, per record.

    git clone -q /tmp/kyb-bench-stores/fan-10000-1 /tmp/snap-10k     # a clone: the store is not written
    python bench/bench_snapshot.py /tmp/snap-10k                        # rows a record (best of 3)
    python bench/bench_snapshot.py /tmp/snap-100k --build               # also the whole snapshot

Prints one JSON line: CPU µs a record of `rows.version_rows` (parse, write rules, secret scan, the
rows; what the spread workers run) and of `secret_in` alone, best of 3 in this process; with
--build, `snapshot.build` into a temp file: wall, this process's CPU (the writes) and its children's
(workers and git). The 1-minute load average is printed with it: the figures are CPU time, but a
loaded machine still slows them (shared caches).
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("--build", action="store_true", help="also time snapshot.build (workers included)")
    args = ap.parse_args()
    head = gitlog._git(args.store, "rev-parse", "HEAD").stdout.decode().strip()
    entries = sorted(snapshot.head_entries(args.store, head))
    pending = [(n, key, None, None, blob) for n, (key, blob) in enumerate(entries, 1)]
    contents = gitlog.blobs(args.store, sorted({blob for _key, blob in entries}))
    records = [load(path_of_key(key), contents[blob]) for key, blob in entries]
    n = len(entries)
    out = {"records": n, "load": os.getloadavg()[0],
           "version_rows_us": round(_best(lambda: rows.version_rows(pending, contents)) / n * 1e6, 1),
           "secret_in_us": round(_best(lambda: [secret_in(r) for r in records]) / n * 1e6, 1)}
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
