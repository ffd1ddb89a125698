"""Cost of each model of the registry: load time, resident memory once loaded (what a warm helper
holds), passages per second on dev-set passages, one query's embedding time.

    python bench/bench_models.py [--passages 96]    # models from KYB_MODEL / KYB_MODEL_EN, else ../shared/models/
    python bench/bench_models.py --questions 200 [--against ../main] [--rounds 3]

`--questions N`: a new short question's embedding as a long-lived door makes it (embed.resident: both
models in-process), p50 of CPU (the thread's) and wall, e5 alone, bge alone, and both side by side (e5
on this thread, bge on a kept worker, as embed.query_vectors does); each checkout in its own child,
the checkouts taking turns `--rounds` times, with the load before each; the vectors' sha256 must match.

Each model is measured in its own child process (so one model's memory is not counted in the
other's): RSS is read from /proc/self/status (VmRSS, VmHWM) after loading and after embedding.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models"


def _rss() -> dict:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS", "VmHWM")):
            name, value = line.split(":")
            out[name] = round(int(value.split()[0]) / 1024, 1)
    return out


def child(name: str, n: int) -> None:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from evalset import checks

    from kyb_cli.core.embed import recipe
    from kyb_cli.core.embed.embedder import Embedder
    from kyb_cli.core.embed.files import locate_model
    from kyb_cli.core.embed.models import by_name

    spec = by_name(name)
    location = locate_model(spec)
    base = _rss()
    t0 = time.perf_counter()
    model = Embedder(location.path, pooling=spec.pooling)
    load_s = time.perf_counter() - t0
    loaded = _rss()
    texts = [p for doc in checks.load(checks.DOCS) for p in recipe.passages(doc)][:n]
    t0 = time.perf_counter()
    model.embed([spec.passage_input(t) for t in texts])
    embed_s = time.perf_counter() - t0
    queries = ["how do I restore the cluster from a snapshot", "where do crash reports from the apps go"]
    model.embed([spec.query_input(queries[0])])  # warm
    t0 = time.perf_counter()
    for _ in range(10):
        model.embed([spec.query_input(queries[1])])
    query_ms = (time.perf_counter() - t0) * 100
    print(json.dumps({"model": name, "load_s": round(load_s, 2), "passages": len(texts),
                      "passages_per_s": round(len(texts) / embed_s, 1), "query_ms": round(query_ms, 1),
                      "rss_mb_python": base.get("VmRSS"), "rss_mb_loaded": loaded.get("VmRSS"),
                      "rss_mb_after_embedding": _rss().get("VmRSS"), "peak_mb": _rss().get("VmHWM")}))


def question_child(tree: str, n: int) -> None:
    """Times n new questions under both models of the checkout at `tree` (see the module's doc)."""
    import hashlib
    import statistics
    from concurrent.futures import ThreadPoolExecutor

    sys.path.insert(0, tree)
    from kyb_cli.core.embed.embedder import Embedder
    from kyb_cli.core.embed.files import locate_model
    from kyb_cli.core.embed.models import BGE, E5

    models = [(spec, Embedder(locate_model(spec).path, pooling=spec.pooling)) for spec in (E5, BGE)]
    pool = ThreadPoolExecutor(max_workers=1)
    digest = hashlib.sha256()
    times: dict[str, list[tuple[float, float]]] = {"e5": [], "bge": [], "both": []}

    def one(spec, model, question):
        c, w = time.thread_time(), time.perf_counter()
        vec = model.embed_bytes([spec.query_input(question)])[0]
        return vec, (time.thread_time() - c, time.perf_counter() - w)

    words = "postgres replica failover disk full certificate rotation ingress pager dns cache".split()
    for i in range(n + 10):
        q = f"{words[i % len(words)]} {words[(i * 7) % len(words)]} question h38r-{i}"
        (e5v, e5t), (bgev, bget) = one(*models[0], q), one(*models[1], q)
        w = time.perf_counter()
        later = pool.submit(one, *models[1], q + " again")
        one(*models[0], q + " again")
        later.result()
        both = time.perf_counter() - w
        if i >= 10:  # the first ten warm the sessions
            times["e5"].append(e5t)
            times["bge"].append(bget)
            times["both"].append((0.0, both))
            digest.update(e5v + bgev)
    out = {"tree": tree, "vectors_sha256": digest.hexdigest()[:16]}
    for name, rows in times.items():
        out[name] = {"cpu_ms": round(statistics.median(r[0] for r in rows) * 1000, 3),
                     "wall_ms": round(statistics.median(r[1] for r in rows) * 1000, 3)}
    out["rss_mb"] = _rss().get("VmRSS")
    print(json.dumps(out))


def questions(trees: list[str], n: int, rounds: int, env: dict) -> None:
    for r in range(rounds):
        for tree in trees:
            load = os.getloadavg()[0]
            out = subprocess.run([sys.executable, __file__, "--question-child", tree, "--questions", str(n)],
                                 env=env, capture_output=True, text=True)
            line = out.stdout.strip() or out.stderr.strip()[-500:]
            print(f"round {r} load {load:.1f} {line}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passages", type=int, default=96)
    ap.add_argument("--child")
    ap.add_argument("--questions", type=int, default=0, help="time N new questions (see the module's doc)")
    ap.add_argument("--against", action="append", default=[], help="another checkout, taking turns with this one")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--question-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.passages)
        return
    if args.question_child:
        question_child(args.question_child, args.questions)
        return
    env = dict(os.environ)
    env.setdefault("KYB_MODEL", str(SHARED / "multilingual-e5-small"))
    env.setdefault("KYB_MODEL_EN", str(SHARED / "bge-small-en-v1.5"))
    print(f"load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    if args.questions:
        questions([str(ROOT), *(str(Path(t).resolve()) for t in args.against)], args.questions, args.rounds, env)
        return
    for name in ("multilingual-e5-small", "bge-small-en-v1.5"):
        out = subprocess.run([sys.executable, __file__, "--child", name, "--passages", str(args.passages)],
                             env=env, capture_output=True, text=True)
        print(out.stdout.strip() or out.stderr.strip()[-500:])


if __name__ == "__main__":
    main()
