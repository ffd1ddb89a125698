"""`pending_vectors` in a one-shot process (issue 39), this checkout against another, same run.

    python bench/gen_store.py 10000 && git clone -q /tmp/kyb-bench-stores/fan-10000-1 /tmp/kyb-10k
    KYB_STORE=/tmp/kyb-10k KYB_BACKGROUND=off kyb reindex          # its index, history complete
    python bench/bench_pending.py /tmp/kyb-10k --other /work/main --runs 15

1. in-process: vectors.pending on a new connection each call (what a `kyb query` process does),
   p50 of --runs; the first call of this checkout counts and keeps the row (index/kept.py).
2. end to end (KYB_MODEL, default the shared e5): `kyb query` lexical and hybrid, a new process
   each call, the two checkouts alternating on the same questions; wall p50 and CPU seconds a call.
Both checkouts' bytecode must be compiled first (PYTHONDONTWRITEBYTECODE hides a slow import).
KYB_BACKGROUND=off: no filler embeds meanwhile, so every call sees the same pending count
(`--filler`: it does, as in bench_large's hybrid stage; the pending count then falls as it goes).
3. `--batches N` (in-process only): N times a batch of 64 vectors committed from another connection,
   as the filler does (current versions first, a bench fingerprint, removed after), then the count
   on a new connection: the first process after each batch, p50; both checkouts' counts must agree
   with a fresh count after every batch. `--batches N --e2e`: instead, N rounds of a batch of 64
   random unit vectors under the model's fingerprint (a throwaway clone: they are no text's meaning)
   then one hybrid `kyb query` (KYB_BACKGROUND=off), each checkout in turn, then the other order.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
WORDS = ("deploy rollback cache queue latency database migration token rotate certificate backup "
         "restore alert disk memory").split()
IN_PROCESS = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from kyb_cli.core.index import schema, vectors
from kyb_cli.core.index.slice import Slice
db = Path(sys.argv[2]) / ".git/kyb/index.sqlite"
c = schema.connect(db)
with c:  # no kept count: the first call of this checkout counts and keeps it
    c.execute("DELETE FROM meta WHERE k GLOB 'count:*'")
c.close()
out = []
for _ in range(int(sys.argv[3])):
    c = schema.connect(db)
    t = time.perf_counter()
    n = vectors.pending(c, "bench-fingerprint", Slice("current"))
    out.append(time.perf_counter() - t)
    c.close()
print(n, " ".join(str(x) for x in out))
"""

AFTER_BATCHES = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from kyb_cli.core.index import schema, vectors
from kyb_cli.core.index.slice import Slice
db, fp = Path(sys.argv[2]) / ".git/kyb/index.sqlite", "bench-fingerprint"
w = schema.connect(db)
with w:
    w.execute("DELETE FROM meta WHERE k GLOB 'count:*'")
    w.execute("DELETE FROM vectors WHERE fingerprint = ?", (fp,))
c = schema.connect(db)
vectors.pending(c, fp, Slice("current"))  # the first count, kept
c.close()
times, counts = [], []
sql, params = vectors._missing_sql(Slice("current"), "count(DISTINCT c.vid)")
for _ in range(int(sys.argv[3])):
    with w:  # one filler batch, from its own connection
        w.executemany("INSERT OR REPLACE INTO vectors(text_sha, fingerprint, vec) VALUES(?, ?, zeroblob(16))",
                      [(h, fp) for h in vectors.missing_in_order(w, fp, 64, True)])
    c = schema.connect(db)
    t = time.perf_counter()
    n = vectors.pending(c, fp, Slice("current"))
    times.append(time.perf_counter() - t)
    c.close()
    truth = w.execute(sql, params | {"fp": fp}).fetchone()[0]
    assert n == truth, (n, truth)
    counts.append(n)
with w:
    w.execute("DELETE FROM vectors WHERE fingerprint = ?", (fp,))
print(" ".join(str(x) for x in counts), "|", " ".join(str(x) for x in times))
"""


def after_batches(root: Path, store: Path, batches: int) -> dict:
    got = subprocess.run([sys.executable, "-c", AFTER_BATCHES, str(root), str(store), str(batches)],
                         capture_output=True, text=True, check=True).stdout
    counts, times = (part.split() for part in got.split("|"))
    times = [float(x) * 1000 for x in times]
    return {"pending": [int(counts[0]), int(counts[-1])], "counts": counts, "p50_ms": round(statistics.median(times), 2),
            "max_ms": round(max(times), 2)}


def after_batches_e2e(roots: dict[str, Path], store: Path, batches: int, model: str) -> dict:
    import array
    import random

    sys.path.insert(0, str(HERE))
    os.environ["KYB_MODEL"] = model
    from kyb_cli.core import embed
    from kyb_cli.core.index import schema, vectors

    fp = embed.current_fingerprint()[0]
    w = schema.connect(store / ".git/kyb/index.sqlite")
    rng = random.Random(39)

    def batch() -> None:
        rows = []
        for h in vectors.missing_in_order(w, fp, 64, True):
            v = [rng.gauss(0, 1) for _ in range(384)]
            norm = sum(x * x for x in v) ** 0.5
            rows.append((h, fp, array.array("f", [x / norm for x in v]).tobytes()))
        with w:
            w.executemany("INSERT OR REPLACE INTO vectors(text_sha, fingerprint, vec) VALUES(?, ?, ?)", rows)

    out: dict = {}
    for name in [*roots, *list(roots)[::-1]]:
        env = dict(os.environ, KYB_BACKGROUND="off", KYB_STORE=str(store), KYB_MODEL=model,
                   PYTHONPATH=str(roots[name]))
        argv = [sys.executable, "-m", "kyb_cli", "query"]
        subprocess.run([*argv, "warm up", "--json"], env=env, capture_output=True, cwd="/", check=True)
        times, pending = [], []
        for i in range(batches):
            batch()
            t = time.perf_counter()
            p = subprocess.run([*argv, f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]}", "--json"],
                               env=env, capture_output=True, text=True, cwd="/", check=True)
            times.append(time.perf_counter() - t)
            pending.append(json.loads(p.stdout).get("pending_vectors"))
        out.setdefault(name, []).append({"p50_ms": round(statistics.median(times) * 1000),
                                         "pending": [pending[0], pending[-1]], "load": os.getloadavg()[0]})
    return out


def in_process(root: Path, store: Path, runs: int) -> dict:
    got = subprocess.run([sys.executable, "-c", IN_PROCESS, str(root), str(store), str(runs)],
                         capture_output=True, text=True, check=True).stdout.split()
    times = [float(x) * 1000 for x in got[1:]]
    return {"pending": int(got[0]), "first_ms": round(times[0], 2), "p50_ms": round(statistics.median(times), 2)}


def end_to_end(roots: dict[str, Path], store: Path, runs: int, model: str, filler: bool = False) -> dict:
    env = dict(os.environ, KYB_BACKGROUND="off", KYB_STORE=str(store))
    if filler:
        del env["KYB_BACKGROUND"]
    hybrid = dict(env, KYB_MODEL=model)
    wall: dict[str, list[float]] = {}
    cpu: dict[str, float] = {}

    def one(label: str, argv: list[str], e: dict) -> dict:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        p = subprocess.run(argv, env=e, capture_output=True, text=True, check=True, cwd="/")
        wall.setdefault(label, []).append(time.perf_counter() - t)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[label] = cpu.get(label, 0.0) + r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
        return json.loads(p.stdout)

    kyb = {name: [str(root / ".venv/bin/kyb")] for name, root in roots.items()}  # its own kyb_cli (not the cwd's)
    for argv in kyb.values():  # the helper started, the kept row written: what every later call sees
        subprocess.run([*argv, "query", "warm up", "--json"], env=hybrid, capture_output=True, cwd="/")
    pending = []
    for i in range(runs):
        q = f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]} {i}"
        for name in (list(kyb) if i % 2 else list(kyb)[::-1]):
            one(f"lexical {name}", [*kyb[name], "query", q, "--no-semantic", "--json"], env)
            pending.append(one(f"hybrid {name}", [*kyb[name], "query", q, "--json"], hybrid).get("pending_vectors"))
    return {"pending_vectors": [pending[0], pending[-1]], **{label: {"p50_ms": round(statistics.median(v) * 1000),
                                                    "cpu_ms": round(cpu[label] / len(v) * 1000)}
                                           for label, v in wall.items()}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("store", type=Path)
    ap.add_argument("--other", type=Path, required=True, help="another checkout (with .venv) to compare")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--filler", action="store_true", help="end to end only, the background filler embedding "
                    "meanwhile (as bench_large's hybrid stage; it writes vectors into the store)")
    ap.add_argument("--batches", type=int, default=0, help="in-process only: the count after each of "
                    "this many vector batches (each checkout in turn, then again in the other order)")
    ap.add_argument("--e2e", action="store_true", help="with --batches: a hybrid `kyb query` after each batch")
    ap.add_argument("--model", default=os.environ.get("KYB_MODEL") or "/work/shared/models/multilingual-e5-small")
    args = ap.parse_args()
    roots = {"this": HERE, "other": args.other.resolve()}
    out = {"load_before": os.getloadavg()[0]}
    if args.batches and args.e2e:
        out["hybrid_after_batch"] = after_batches_e2e(roots, args.store, args.batches, args.model)
        out["load_after"] = os.getloadavg()[0]
        print(json.dumps(out, indent=1))
        return
    if args.batches:
        for name in [*roots, *list(roots)[::-1]]:
            got = after_batches(roots[name], args.store, args.batches)
            out.setdefault(f"after_batches {name}", []).append(got)
        agree = {json.dumps(r["counts"]) for runs in (out["after_batches this"], out["after_batches other"]) for r in runs}
        for name in roots:
            out[f"after_batches {name}"] = [{k: v for k, v in r.items() if k != "counts"}
                                            for r in out[f"after_batches {name}"]]
        out["same_counts"] = len(agree) == 1
        out["load_after"] = os.getloadavg()[0]
        print(json.dumps(out, indent=1))
        return
    for name, root in roots.items():
        if not args.filler:
            out[f"in_process {name}"] = in_process(root, args.store, args.runs)
    out["end_to_end"] = end_to_end(roots, args.store, args.runs, args.model, args.filler)
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
