"""What the read log (issue 40, receipts) costs an answer: `api.handle("query")` and `api.handle("get")`
in one warm process (a long-lived door), with the log on and off (KYB_READS), alternating call by call.

    python bench/bench_receipts.py                   # 200 records, 10-hit queries, 400 calls per mode
    python bench/bench_receipts.py --keys 1000 --calls 1000
    python bench/bench_receipts.py --cli 25           # also `kyb query` as a user runs it, log on vs off

Also times the logging step alone (api/_receipts.receipted on a ready answer: the warning look-up
and the insert; and in a door, receipts.resident, whose rows are written after the answer), which is what the budget of issue 40 is about (<= 0.2 ms an answer). One JSON line
per measure: p50 / mean ms; the last line is the verdict. `--cli N`: the CPU (user+sys) of N `kyb query`
processes per mode, on and off alternating, the console script of a non-editable install of this checkout
(bench_warm.installed()), a confident question and a miss (a miss scans its text for secrets first).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class Door:
    def __init__(self, path: Path) -> None:
        self.store_arg = path
        self._path = path

    def path(self) -> Path:
        return self._path

    @staticmethod
    def attribution():
        from kyb_cli import api

        return api.attribution("bench")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=200)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--cli", type=int, default=0, help="also N `kyb query` processes per mode (CPU)")
    args = ap.parse_args()
    os.environ.setdefault("KYB_AGENT", "bench-agent")
    os.environ["KYB_BACKGROUND"] = "off"
    from kyb_cli import api
    from kyb_cli.api._receipts import receipted
    from kyb_cli.api.operations import OPERATIONS

    home = Path(tempfile.mkdtemp(prefix="kyb-bench-receipts-"))
    os.environ["HOME"] = str(home)
    path = home / "store"
    store = api.init_store(path)
    rows = [{"key": f"fact-{i}", "title": f"Checkout fact {i}", "body": f"checkout port {9000 + i} on node-{i % 7}"}
            for i in range(args.keys)]
    from kyb_cli.core.tools.importer import add_many

    add_many(store, [{**r, "tags": [], "refs": []} for r in rows], attribution=api.attribution("bench"),
             one_commit=True, dry_run=False)
    door = Door(path)
    query = {f.name: f.default for f in OPERATIONS["query"].fields} | {"text": "checkout port", "semantic": False}
    get = {f.name: f.default for f in OPERATIONS["get"].fields} | {"key": "fact-3"}
    api.handle("query", door, query)  # builds the index
    times: dict[str, list[float]] = {}
    for i in range(args.calls):
        for mode in (("on", "off") if i % 2 else ("off", "on")):  # either first, half the time each
            if mode == "off":
                os.environ["KYB_READS"] = "off"
            else:
                os.environ.pop("KYB_READS", None)
            for op, fields in (("query", query), ("get", get)):
                t = time.perf_counter()
                api.handle(op, door, dict(fields))
                times.setdefault(f"{op} log {mode}", []).append(time.perf_counter() - t)
    os.environ.pop("KYB_READS", None)
    answer = api.handle("query", door, dict(query))
    hits = len(answer["hits"])
    assert answer["confident"], "a confident question: no miss is logged in the loops"
    record = api.handle("get", door, dict(get))
    for _ in range(args.calls):
        fresh = {**answer, "hits": [dict(h) for h in answer["hits"]]}
        t = time.perf_counter()
        receipted("query", door, query, fresh)
        times.setdefault(f"logging alone ({hits} hits)", []).append(time.perf_counter() - t)
        t = time.perf_counter()
        receipted("get", door, get, dict(record))
        times.setdefault("logging alone (get, 1 record)", []).append(time.perf_counter() - t)
    from kyb_cli.core.index import receipts

    receipts.resident(True)  # a door (index/warm.keep): the rows are written after the answer, by its writer thread
    for _ in range(args.calls):
        fresh = {**answer, "hits": [dict(h) for h in answer["hits"]]}
        t = time.perf_counter()
        receipted("query", door, query, fresh)
        times.setdefault(f"logging alone in a door ({hits} hits, written after)", []).append(time.perf_counter() - t)
    receipts.resident(False)  # writes what is left
    logged = receipts.reads(path, "fact-3", limit=1)[1]
    assert sum(logged.values()) >= args.calls, logged  # the loop logged (a swallowed error would not)
    out = {}
    for name, values in times.items():
        ms = [v * 1000 for v in values]
        out[name] = statistics.median(ms)
        print(json.dumps({"measure": name, "p50_ms": round(statistics.median(ms), 4),
                          "mean_ms": round(statistics.mean(ms), 4), "calls": len(ms)}))
    if args.cli:
        out.update(cli_cost(path, args.cli))
    alone = out[f"logging alone ({hits} hits)"]
    print(json.dumps({"verdict": "ok" if alone <= 0.2 else "over budget", "logging_ms_per_answer": round(alone, 4),
                      "logging_ms_per_get": round(out["logging alone (get, 1 record)"], 4),
                      "query_on_minus_off_ms": round(out["query log on"] - out["query log off"], 4),
                      "get_on_minus_off_ms": round(out["get log on"] - out["get log off"], 4), "budget_ms": 0.2}))
    return 0


def cli_cost(path: Path, runs: int) -> dict[str, float]:
    """CPU ms (median) of `kyb query` processes with the log on and off, alternating run by run."""
    import resource
    import subprocess

    from bench.bench_warm import installed

    kyb = str(installed() / "bin" / "kyb")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "KYB_READS")}
    out = {}
    for label, text in (("confident", "checkout port"), ("miss", "zzqx unheard of words")):
        cpu: dict[str, list[float]] = {"on": [], "off": []}
        for i in range(runs + 1):
            for mode in (("on", "off") if i % 2 else ("off", "on")):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run([kyb, "--store", str(path), "query", text, "--no-semantic"], env={**env, "KYB_READS": mode},
                               stdout=subprocess.DEVNULL, check=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if i:  # the first pair writes bytecode and the log file
                    cpu[mode].append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
        for mode, values in cpu.items():
            name = f"kyb query CPU ({label}) log {mode}"
            out[name] = statistics.median(values)
            print(json.dumps({"measure": name, "p50_ms": round(out[name], 2), "runs": len(values)}))
        print(json.dumps({"measure": f"kyb query CPU ({label}) on minus off",
                          "ms": round(out[f"kyb query CPU ({label}) log on"] - out[f"kyb query CPU ({label}) log off"], 2)}))
    return out


if __name__ == "__main__":
    sys.exit(main())
