"""The near-duplicate hint's FTS candidate query (kinds/wording.py `similar`), three ways, in-process
on an indexed store: CPU seconds (min of 5) of the old join on keys.version_id ranked by bm25, the
join through versions ranked by bm25, and the join through versions unranked (what `similar` runs).

    python bench/bench_similar_query.py --store /tmp/kyb-100k-clone
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from kyb_cli.core.index import schema
from kyb_cli.core.kinds import wording

OLD = ("SELECT k.key, v.doc FROM fts JOIN keys k ON k.version_id = fts.rowid JOIN versions v ON v.id = fts.rowid "
       "WHERE fts MATCH ? AND k.state = 'active' AND k.key != ? ORDER BY bm25(fts) LIMIT 20")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", required=True)
    ap.add_argument("--text", default="Bench write x\nport 9100 on node-3")  # as bench_write_cpu.py writes
    args = ap.parse_args()
    conn = schema.connect(Path(args.store) / ".git" / "kyb" / "index.sqlite")
    expr = wording._near_text_query(wording._words(args.text))
    for name, query in [("keys.version_id join + bm25 (before)", OLD),
                        ("versions join + bm25", f"SELECT k.key, v.doc FROM {wording._CURRENT_MATCHES} "
                                                 "ORDER BY bm25(fts) LIMIT 20"),
                        ("versions join, unranked (now)", f"SELECT k.key, v.doc FROM {wording._CURRENT_MATCHES} "
                                                          f"LIMIT {wording.NEAR_CANDIDATES + 1}")]:
        times, rows = [], 0
        for _ in range(5):
            t0 = time.process_time()
            rows = len(conn.execute(query, (expr, "\x00")).fetchall())
            times.append(time.process_time() - t0)
        print(f"{name}: {min(times) * 1000:.1f} ms CPU, {rows} rows")
    print("load " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
