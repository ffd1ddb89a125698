"""A lexical question in one process (`api.query`, --no-semantic), this checkout or another, and
whether two checkouts answer the same (issue 39: lexical p50 at 100k keys, docs/BENCHMARKS.md
"Growth", h39i).

    python bench/bench_lexical.py CLONE                       # p50 of 8 questions x --runs, this checkout
    python bench/bench_lexical.py CLONE --checkout /work/main # the same in another checkout's code
    python bench/bench_lexical.py CLONE --dump out.json       # every answer, 4 time modes, to compare
    python bench/bench_lexical.py --oneshot /work/main=CLONE_A .=CLONE_B [--runs 15] [--questions warm]
        # one-shot `kyb query Q --no-semantic` processes, checkouts alternating, each on its own
        # clone (a different build empties the other's passages file); Q = bench_large's
        # "<WORD> port 9090" (or bench_warm's questions); p50 per checkout, load, answers compared
    python bench/bench_lexical.py --oneshot ... --time="--as-of 2025-06-01"   # or --time=--history

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


def oneshot(pairs: list[str], runs: int, warm_questions: bool, time_flags: list[str] = ()) -> None:
    """Wall time of one-shot processes, A and B alternating (who goes first too); the answers' JSON
    byte for byte minus `read_at` (issue 39's lexical row, h39u)."""
    import re
    import subprocess

    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    from bench_coldstart import WORDS
    from bench_warm import QUESTIONS as WARM

    checkouts = [tuple(a.split("=", 1)) for a in pairs]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(KYB_MODEL="/nonexistent", KYB_OUTPUT="json", KYB_DEADLINES="off", KYB_BACKGROUND="off")

    def ask(checkout: str, store: str, q: str) -> tuple[float, str]:
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "kyb_cli", "query", q, "--no-semantic", *time_flags],
                             capture_output=True,
                             text=True, cwd=checkout,  # `-m` puts the working directory first on sys.path
                             env=dict(env, PYTHONPATH=checkout, KYB_STORE=store)).stdout
        return time.perf_counter() - start, re.sub(r'"read_at": *"[^"]*"', "", out)

    for c, s in checkouts:
        ask(c, s, "warm up")
    took: dict[str, list[float]] = {c: [] for c, _ in checkouts}
    said: dict[str, list[str]] = {c: [] for c, _ in checkouts}
    for i in range(runs):
        q = WARM[i % len(WARM)] if warm_questions else f"{WORDS[i % len(WORDS)]} port 9090"
        for c, s in checkouts if i % 2 == 0 else checkouts[::-1]:
            t, out = ask(c, s, q)
            took[c].append(t * 1000)
            said[c].append(out)
    first = checkouts[0][0]
    print(json.dumps({"load": os.getloadavg()[0], "runs": runs, "time": " ".join(time_flags), "p50_ms": {
        c: round(statistics.median(took[c]), 1) for c, _ in checkouts}, "answers_differ": {
        c: sum(a != b for a, b in zip(said[first], said[c])) for c, _ in checkouts[1:]},
        "all_ms": {c: [round(t) for t in took[c]] for c, _ in checkouts}}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--oneshot", nargs="+", metavar="CHECKOUT=STORE")
    ap.add_argument("--questions", choices=["port", "warm"], default="port")
    ap.add_argument("--time", default="", help='a time mode\'s flags, "--history" or "--as-of T" (in-process too)')
    ap.add_argument("store", type=Path, nargs="?")
    ap.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dump", type=Path, help="write every answer (QUESTIONS x MODES) as JSON instead")
    args = ap.parse_args()
    if args.oneshot:
        return oneshot(args.oneshot, args.runs, args.questions == "warm", args.time.split())
    os.environ["KYB_BACKGROUND"] = "off"
    sys.path.insert(0, str(args.checkout))
    from kyb_cli import api

    api.query(str(args.store), "warm up", semantic=False)
    if args.dump:
        out = [(q, list(m), api.query(str(args.store), q, semantic=False, **m)[1]) for q in QUESTIONS for m in MODES]
        args.dump.write_text(json.dumps(out, sort_keys=True, default=str))
        print(f"{len(out)} answers -> {args.dump}")
        return
    flags = args.time.split()
    mode = {"history": True} if flags == ["--history"] else {"as_of": flags[1]} if flags[:1] == ["--as-of"] else {}
    took = []
    for _ in range(args.runs):
        for q in QUESTIONS:
            start = time.perf_counter()
            api.query(str(args.store), q, semantic=False, **mode)
            took.append((time.perf_counter() - start) * 1000)
    print(json.dumps({"checkout": str(args.checkout), "time": args.time, "p50_ms": round(statistics.median(took), 1),
                      "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
