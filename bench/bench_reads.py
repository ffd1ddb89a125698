"""Per-key read benchmark: `kyb get`, `get --at`, `history`, `tags`, `tasks --all`, end to end.

    python bench/bench_reads.py                  # 1k and 10k keys (stores cached by gen_store.py)
    python bench/bench_reads.py --keys 1000 --runs 11
    python bench/bench_reads.py --walk           # also time the Git walk (the test oracle, 3 runs): before/after

Each read is a separate `python -m kyb_cli …` process timed from start to exit (p50 over --runs), with
the index already current (the usual case). The key read is the knowledge key with the most versions;
`get --at` asks for its first version's commit.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from gen_store import generate, stats  # noqa: E402

WORK = Path(os.environ.get("KYB_BENCH_DIR", "/tmp")) / "kyb-bench-reads"


# The Git walk (tests/support/oracle.py, no longer a production read path) answering the same reads.
WALK = """
import sys
sys.path.insert(0, sys.argv[1])
from support import oracle
store, args = sys.argv[2], sys.argv[3:]
if args[0] == "get":
    oracle.read(store, args[1], at=args[3] if len(args) > 3 else None)
elif args[0] == "history":
    oracle.history(store, args[1])
elif args[0] == "tags":
    oracle.tags(store)
else:
    oracle.catalog(store, "task")
"""


def timed(path: Path, args: list[str], runs: int, walk: bool) -> float:
    env = dict(os.environ, KYB_STORE=str(path), KYB_DEADLINES="off")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed kyb runs from .pyc files: measure that
    command = [sys.executable, "-c", WALK, str(ROOT / "tests"), str(path)] if walk else [sys.executable, "-m", "kyb_cli"]
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        res = subprocess.run([*command, *args], env=env, capture_output=True, text=True)
        samples.append((time.perf_counter() - t) * 1000)
        if res.returncode != 0:
            raise SystemExit(f"kyb {args} failed: {res.stderr}")
    return round(statistics.median(samples), 1)


def pick(path: Path) -> tuple[str, str]:
    """The knowledge key with the most versions, and the commit of its first version."""
    from kyb_cli.core.index.fresh import fresh

    f = fresh(path)
    try:
        key = f.conn.execute(
            "SELECT e.key FROM events e JOIN keys k ON k.key = e.key WHERE k.state = 'active' AND "
            "k.kind = 'knowledge' GROUP BY e.key ORDER BY count(*) DESC, e.key LIMIT 1").fetchone()[0]
        sha = f.conn.execute("SELECT sha FROM versions WHERE key = ? AND sha IS NOT NULL ORDER BY id LIMIT 1",
                          (key,)).fetchone()[0]
    finally:
        f.conn.close()
    return key, sha


def bench(keys: int, runs: int, walk: int) -> dict:
    cached = generate(keys)
    path = WORK / f"{keys}"
    if path.exists():
        shutil.rmtree(path)
    shutil.copytree(cached, path, symlinks=True)
    shutil.rmtree(path / ".git" / "kyb", ignore_errors=True)  # our own index, built here
    key, first = pick(path)
    cases = {
        "get": ["get", key],
        "get_at": ["get", key, "--at", first[:12]],
        "history": ["history", key],
        "tags": ["tags"],
        "tasks_all": ["tasks", "--all", "--limit", "200"],
    }
    out: dict = {"keys": keys, "commits": stats(cached)["commits"], "key": key, "runs": runs}
    timed(path, ["get", key], 1, False)  # warm the page cache
    out["index_ms"] = {name: timed(path, args, runs, False) for name, args in cases.items()}
    if walk:
        out["walk_ms"] = {name: timed(path, args, walk, True) for name, args in cases.items()}
        out["walk_runs"] = walk
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keys", type=int, action="append")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--walk", type=int, nargs="?", const=3, default=0, metavar="RUNS",
                    help="also time the Git walk (the test oracle), RUNS runs each (default 3)")
    args = ap.parse_args()
    print(json.dumps({"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}}))
    for keys in args.keys or [1000, 10000]:
        print(json.dumps(bench(keys, args.runs, args.walk)), flush=True)


if __name__ == "__main__":
    main()
