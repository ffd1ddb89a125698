"""Durability cost: write latency with fsync on (the default) and off (`KYB_FSYNC=off`).

    python bench/bench_fsync.py                    # 200 in-process writes + 21 CLI writes per mode
    python bench/bench_fsync.py --writes 50 --cli 5

In-process: `api.add_knowledge` on one store, each write timed (lock, validate, objects, ref,
working tree, journal). CLI: `python -m kyb_cli add …` processes timed from start to exit, which is
what an agent waits for. The store lives under $KYB_BENCH_DIR (default: the system temp dir); the
filesystem type is printed, because fsync on tmpfs costs nothing and proves nothing.
One JSON line per mode: p50 / p95 / mean in ms, and the machine load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def summary(name: str, mode: str, seconds: list[float], fs: str) -> dict:
    ms = [s * 1000 for s in seconds]
    return {"bench": name, "fsync": mode, "n": len(ms), "p50_ms": round(pct(ms, 0.5), 2),
            "p95_ms": round(pct(ms, 0.95), 2), "mean_ms": round(statistics.fmean(ms), 2),
            "filesystem": fs, "load": " ".join(f"{x:.2f}" for x in os.getloadavg())}


def fs_type(path: Path) -> str:
    out = subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def in_process(store: Path, writes: int) -> list[float]:
    from kyb_cli import api

    s = api.open_store(str(store))
    who = api.attribution("bench")
    times = []
    for i in range(writes):
        started = time.perf_counter()
        api.add_knowledge(s, key=f"k-{i % 50}", title="T", body=f"body {i} " * 20, tags=["bench"], refs=[],
                          attribution=who)
        times.append(time.perf_counter() - started)
    return times


def cli(store: Path, runs: int, env: dict[str, str]) -> list[float]:
    times = []
    for i in range(runs):
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "kyb_cli", "add", "--key", f"c-{i}", "--title", "T"],
                              input=f"cli body {i}", capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - started)
        assert proc.returncode == 0, proc.stderr
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--cli", type=int, default=21)
    args = parser.parse_args()
    base = Path(os.environ.get("KYB_BENCH_DIR", tempfile.gettempdir()))
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="kyb-bench-fsync-", dir=base))
    fs = fs_type(work)
    try:
        for mode in ("on", "off"):
            store = work / f"store-{mode}"
            env = {**os.environ, "KYB_STORE": str(store), "KYB_FSYNC": mode, "PYTHONPATH": str(ROOT)}
            os.environ["KYB_FSYNC"] = mode
            from kyb_cli import api

            api.init_store(store)
            print(json.dumps(summary("in-process add", mode, in_process(store, args.writes), fs)), flush=True)
            if args.cli:
                print(json.dumps(summary("cli add", mode, cli(store, args.cli, env), fs)), flush=True)
    finally:
        os.environ.pop("KYB_FSYNC", None)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
