"""Each time mode's slice (the versions a question may answer with) on a store, in one process: how
long SQLite takes to build it (core/index/slice.py `candidates`), median of --runs.

    python bench/bench_slices.py /tmp/kyb-10k [--runs 5]      # a store made by bench/gen_store.py 10000

The as_of_event slice took 52 s at 10k keys while SQLite ran the grouped as_of slice again for every
version joined; with both inner sets materialized it takes ~0.2 s (2026-12-06, 2 cores, load ~2).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    import apsw

    from kyb_cli.core.index import schema
    from kyb_cli.core.index.slice import candidates, time_params

    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    conn = apsw.Connection(str(schema.index_path(Path(a.store) / ".git")), flags=apsw.SQLITE_OPEN_READONLY)
    low, high = next(conn.execute("SELECT min(committed_at), max(committed_at) FROM versions"))
    mid = (low + high) // 2
    modes = {"current": {}, "history": {}, "as_of": {"as_of": mid}, "changed_between": {"window": (low, mid)},
             "as_of_event": {"as_of_event": mid}, "as_of_event + as_of": {"as_of_event": mid, "as_of": high}}
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name, kw in modes.items():
        mode = name.split(" ")[0]
        params: dict = {}
        time_params(mode, params, as_of=kw.get("as_of"), window=kw.get("window"), as_of_event=kw.get("as_of_event"))
        sql = candidates(mode, params)
        times, rows = [], 0
        for _ in range(a.runs):
            t = time.perf_counter()
            rows = sum(1 for _row in conn.execute(sql, params))
            times.append((time.perf_counter() - t) * 1000)
        print(f"{name:22s} {rows:7d} versions  {statistics.median(times):8.1f} ms")


if __name__ == "__main__":
    main()
