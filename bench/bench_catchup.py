"""One `kyb add` with the index's catch-up in-process (pygit2, the default) and through the `git`
program (`KYB_CATCHUP=git`, the old path): issue 35, lever C.

    python bench/bench_catchup.py                  # 100 in-process writes + 21 CLI writes per mode
    python bench/bench_catchup.py --writes 40 --cli 11 --keys 500 --spans 1,50,200,400

Each write is `api.add_knowledge` (in-process) or a `python -m kyb_cli add` process, on a store seeded
with --keys records; every write catches the index up (the similar-key check reads it). The modes
alternate write by write, so drift in the machine's load hits both alike. Also counted: `git`
processes spawned per in-process write. One JSON line per mode and kind: p50 / p95 / mean ms, the
ratio, and the machine load. First, the catch-up alone over --spans commits per mode (where the
in-process path stops paying: walk.SMALL and walk.WORK, raised for this part so that every pygit2 row is pygit2).
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

MODES = {"pygit2": "", "git": "git"}  # KYB_CATCHUP


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def summary(kind: str, mode: str, seconds: list[float], extra: dict | None = None) -> dict:
    ms = [s * 1000 for s in seconds]
    return {"bench": kind, "catchup": mode, "n": len(ms), "p50_ms": round(pct(ms, 0.5), 2),
            "p95_ms": round(pct(ms, 0.95), 2), "mean_ms": round(statistics.fmean(ms), 2), **(extra or {}),
            "load": " ".join(f"{x:.2f}" for x in os.getloadavg())}


def set_mode(mode: str) -> None:
    os.environ["KYB_CATCHUP"] = MODES[mode]


def in_process(store: Path, writes: int) -> dict[str, tuple[list[float], list[int], list[float]]]:
    from kyb_cli import api

    s = api.open_store(str(store))
    who = api.attribution("bench")
    real = subprocess.Popen
    spawned = [0]

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, args, *a, **kw):
            spawned[0] += "git" in str(args[0])
            super().__init__(args, *a, **kw)

    from kyb_cli.core.index import build

    caught = [0.0]
    real_catch_up = build.catch_up

    def timed_catch_up(*a, **kw):  # the catch-up alone, inside the write's similar-key check
        started = time.perf_counter()
        try:
            return real_catch_up(*a, **kw)
        finally:
            caught[0] += time.perf_counter() - started

    subprocess.Popen = Counting  # type: ignore[misc]
    build.catch_up = timed_catch_up
    out: dict[str, tuple[list[float], list[int], list[float]]] = {m: ([], [], []) for m in MODES}
    try:
        for i in range(writes * len(MODES)):
            mode = list(MODES)[i % len(MODES)]
            set_mode(mode)
            spawned[0], caught[0] = 0, 0.0
            started = time.perf_counter()
            api.add_knowledge(s, key=f"w-{i % 50}", title="T", body=f"body {i} " * 20, tags=["bench"], refs=[],
                              attribution=who)
            out[mode][0].append(time.perf_counter() - started)
            out[mode][1].append(spawned[0])
            out[mode][2].append(caught[0])
    finally:
        subprocess.Popen = real  # type: ignore[misc]
        build.catch_up = real_catch_up
    return out


def cli(store: Path, runs: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {m: [] for m in MODES}
    for i in range(runs * len(MODES)):
        mode = list(MODES)[i % len(MODES)]
        env = {**os.environ, "KYB_STORE": str(store), "KYB_CATCHUP": MODES[mode], "PYTHONPATH": str(ROOT)}
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "kyb_cli", "add", "--key", f"c-{i % 50}", "--title", "T"],
                              input=f"cli body {i}", capture_output=True, text=True, env=env)
        out[mode].append(time.perf_counter() - started)
        assert proc.returncode == 0, proc.stderr
    return out


def spans(store: Path, work: Path, sizes: list[int], repeat: int = 5) -> None:
    """The catch-up alone over n new commits, each mode, on copies of an index built n commits back:
    where the in-process path stops paying (walk.SMALL)."""
    import pygit2

    from kyb_cli.core.index import build, schema, walk

    small, budget = walk.SMALL, walk.WORK
    walk.SMALL, walk.WORK = max(walk.SMALL, *sizes), 10**12  # here the pygit2 rows are pygit2 even above the default's cut
    repo = pygit2.Repository(str(store))
    head = repo.head.peel(pygit2.Commit)
    for n in sizes:
        old = head
        for _ in range(n):
            old = old.parents[0]
        base = work / f"index-{n}.sqlite"
        build.build_file(store, base, str(old.id), note=False)
        for mode in MODES:
            set_mode(mode)
            times = []
            for r in range(repeat):
                copy = work / f"copy-{n}-{mode}-{r}.sqlite"
                shutil.copyfile(base, copy)
                conn = schema.connect(copy)
                started = time.perf_counter()
                work_done = build.catch_up(conn, store, str(old.id), str(head.id))
                times.append(time.perf_counter() - started)
                conn.close()
                assert work_done and work_done["commits"] == n, work_done
            print(json.dumps(summary(f"catch-up of {n} commits", mode, times)), flush=True)
    walk.SMALL, walk.WORK = small, budget


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--cli", type=int, default=21)
    parser.add_argument("--keys", type=int, default=200, help="records in the store before timing")
    parser.add_argument("--spans", default="1,20,200", help="catch-ups of this many commits, timed alone")
    args = parser.parse_args()
    base = Path(os.environ.get("KYB_BENCH_DIR", tempfile.gettempdir()))
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="kyb-bench-catchup-", dir=base))
    try:
        from kyb_cli import api

        store = work / "store"
        s = api.init_store(store)
        who = api.attribution("bench")
        for i in range(args.keys):
            api.add_knowledge(s, key=f"seed-{i}", title=f"Seed {i}", body=f"seed record {i} " * 10, tags=["seed"],
                              refs=[], attribution=who)
        if args.spans:
            spans(store, work, [int(n) for n in args.spans.split(",") if int(n) < args.keys])
        timed = in_process(store, args.writes)
        p50 = {m: pct(t, 0.5) for m, (t, _n, _c) in timed.items()}
        c50 = {m: pct(c, 0.5) for m, (_t, _n, c) in timed.items()}
        for mode, (times, spawns, caught) in timed.items():
            print(json.dumps(summary("in-process add", mode, times, {
                "git_per_write": round(statistics.fmean(spawns), 2),
                "catch_up_p50_ms": round(c50[mode] * 1000, 2), "catch_up_vs_git": round(c50[mode] / c50["git"], 2),
                "p50_vs_git": round(p50[mode] / p50["git"], 2)})), flush=True)
        if args.cli:
            runs = cli(store, args.cli)
            p50 = {m: pct(t, 0.5) for m, t in runs.items()}
            for mode, times in runs.items():
                print(json.dumps(summary("cli add", mode, times, {"p50_vs_git": round(p50[mode] / p50["git"], 2)})),
                      flush=True)
    finally:
        os.environ.pop("KYB_CATCHUP", None)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
