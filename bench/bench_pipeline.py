"""The query pipeline's own cost, in-process: CPU per warm lexical `pipeline.search` (index opened
and brought to HEAD each call, as a `kyb query` does), so a change to the pipeline's structure can
be compared with the code before it (PYTHONPATH decides which code answers).

    PYTHONPATH=$PWD python bench/bench_pipeline.py --store STORE [--rounds 7] [--calls 60]

STORE: a kyb store, e.g. bench_warm.py's 108 runbooks ($KYB_BENCH_DIR/kyb-bench-warm/store-108 once
`bench_warm.py --keys 0` has built it). Prints the median over
rounds of the per-call CPU (process_time) and wall time in ms, lexical only (no model loaded).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

QUESTIONS = ["postgres replica failover", "checkout latency timeout", "where are backups kept",
             "rollback of the helm release", "kafka queue worker retry", "ingress token auth session"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=60)
    args = ap.parse_args()
    os.environ["KYB_BACKGROUND"] = "off"
    store = args.store.resolve()
    from kyb_cli.core.search.pipeline import search

    for q in QUESTIONS:  # warm: imports, the index at HEAD, SQLite's page cache
        search(store, q, semantic=False)
    cpu, wall = [], []
    for _ in range(args.rounds):
        c0, w0 = time.process_time(), time.perf_counter()
        for i in range(args.calls):
            search(store, QUESTIONS[i % len(QUESTIONS)], semantic=False)
        cpu.append((time.process_time() - c0) / args.calls * 1000)
        wall.append((time.perf_counter() - w0) / args.calls * 1000)
    code = Path(sys.modules["kyb_cli"].__file__).resolve().parents[1]
    print(json.dumps({"code": str(code), "store": str(store), "calls": args.calls, "rounds": args.rounds,
                      "lexical_cpu_ms_p50": round(statistics.median(cpu), 3),
                      "lexical_wall_ms_p50": round(statistics.median(wall), 3),
                      "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
