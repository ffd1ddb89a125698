"""Cost of each model of the registry: load time, resident memory once loaded (what a warm helper
holds), passages per second on dev-set passages, one query's embedding time.

    python bench/bench_models.py [--passages 96]    # models from KYB_MODEL / KYB_MODEL_EN, else ../shared/models/

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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passages", type=int, default=96)
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.passages)
        return
    env = dict(os.environ)
    env.setdefault("KYB_MODEL", str(SHARED / "multilingual-e5-small"))
    env.setdefault("KYB_MODEL_EN", str(SHARED / "bge-small-en-v1.5"))
    print(f"load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    for name in ("multilingual-e5-small", "bge-small-en-v1.5"):
        out = subprocess.run([sys.executable, __file__, "--child", name, "--passages", str(args.passages)],
                             env=env, capture_output=True, text=True)
        print(out.stdout.strip() or out.stderr.strip()[-500:])


if __name__ == "__main__":
    main()
