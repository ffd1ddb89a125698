"""A lexical question in one process (`api.query`, --no-semantic), this checkout or another, and
whether two checkouts answer the same (issue 39: lexical p50 at 100k keys, docs/BENCHMARKS.md
"Growth", h39i).

    python bench/bench_lexical.py CLONE                       # p50 of 8 questions x --runs, this checkout
    python bench/bench_lexical.py CLONE --checkout /work/main # the same in another checkout's code
    python bench/bench_lexical.py CLONE --dump out.json       # every answer, 4 time modes, to compare

KYB_BACKGROUND=off is set: no filler works meanwhile. The clone must have its index complete.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

QUESTIONS = ["checkout latency timeout", "orders kafka 3", "deploy cache 2", "deploy rollback 1", "cache port 9090",
             "checkout v3 timeout", "redis backup 17", "auth token session"]
MODES = [{}, {"history": True}, {"as_of": "2025-06-01T00:00:00Z"},
         {"changed_between": ("2024-01-01T00:00:00Z", "2025-06-01T00:00:00Z")}]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("store", type=Path)
    ap.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dump", type=Path, help="write every answer (QUESTIONS x MODES) as JSON instead")
    args = ap.parse_args()
    os.environ["KYB_BACKGROUND"] = "off"
    sys.path.insert(0, str(args.checkout))
    from kyb_cli import api

    api.query(str(args.store), "warm up", semantic=False)
    if args.dump:
        out = [(q, list(m), api.query(str(args.store), q, semantic=False, **m)[1]) for q in QUESTIONS for m in MODES]
        args.dump.write_text(json.dumps(out, sort_keys=True, default=str))
        print(f"{len(out)} answers -> {args.dump}")
        return
    took = []
    for _ in range(args.runs):
        for q in QUESTIONS:
            start = time.perf_counter()
            api.query(str(args.store), q, semantic=False)
            took.append((time.perf_counter() - start) * 1000)
    print(json.dumps({"checkout": str(args.checkout), "p50_ms": round(statistics.median(took), 1),
                      "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
