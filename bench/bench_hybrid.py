"""Hybrid search benchmarks: cold vs cached full embed of ~1,000 versions, and `kyb query` end to end,
lexical vs hybrid, measured in one run (warm helper), plus the first cold hybrid call.

    KYB_MODEL=../shared/models/multilingual-e5-small python bench/bench_hybrid.py [--keys 270] [--runs 11]

The English model (KYB_MODEL_EN, else ../shared/models/bge-small-en-v1.5) is used when found:
English questions then embed with both models (one warm helper each).

Uses a throwaway cache dir (cold really is cold) and a generated store (bench/gen_store.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ["куда пишет оформление заказа", "checkout latency timeout", "where are backups kept",
             "деплой в пятницу", "orders_api replica", "rollback of the helm release"]


def kyb(*args: str, env: dict) -> tuple[float, dict]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "kyb_cli", *args], capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - t0, json.loads(out.stdout)


STOP = ("from kyb_cli.core.embed import client; from kyb_cli.core.embed.files import locate_model; "
        "from kyb_cli.core.embed.models import MODELS\n"
        "for spec in MODELS:\n"
        "    loc = locate_model(spec)\n"
        "    if not isinstance(loc, str):\n"
        "        client.stop(loc.path)")


def stop_helpers(env: dict) -> None:
    """Stop the warm helper of every model found (e5 and, for English questions, the English model)."""
    subprocess.run([sys.executable, "-c", STOP], env=env)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=270, help="keys in the generated store (~3.7 versions each)")
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    model = os.environ.get("KYB_MODEL") or str(ROOT.parent / "shared" / "models" / "multilingual-e5-small")
    store = subprocess.run([sys.executable, str(ROOT / "bench" / "gen_store.py"), str(args.keys)],
                           capture_output=True, text=True, check=True).stdout
    store = json.loads(store.splitlines()[0])["path"]
    with tempfile.TemporaryDirectory() as tmp:
        english = os.environ.get("KYB_MODEL_EN") or str(ROOT.parent / "shared" / "models" / "bge-small-en-v1.5")
        env = dict(os.environ, KYB_MODEL=model, KYB_MODEL_EN=english, KYB_STORE=store, XDG_CACHE_HOME=f"{tmp}/cache",
                   XDG_DATA_HOME=f"{tmp}/data", XDG_CONFIG_HOME=f"{tmp}/config", KYB_DEADLINES="off")
        kyb("reindex", env=env)
        cold_s, cold = kyb("index", "--embed", env=env)
        kyb("reindex", env=env)  # the index's vectors are gone; the user cache is warm
        warm_s, warm = kyb("index", "--embed", env=env)
        print(f"load {os.getloadavg()[0]:.2f}; store {store}: {cold['versions']} versions, {cold['texts']} texts")
        print(f"full embed, cold cache : {cold_s:6.2f} s ({cold['embedded']} embedded, "
              f"{cold['embedded'] / cold_s:.1f} passages/s incl. process + model load)")
        print(f"full embed, warm cache : {warm_s:6.2f} s ({warm['from_cache']} from cache, 0 model time) "
              f"-> {cold_s / warm_s:.0f}x")
        stop_helpers(env)
        time.sleep(0.5)
        first, r = kyb("query", "how do we roll back a bad deploy", env=env)
        print(f"first hybrid query, helper cold, question uncached: {first * 1000:.0f} ms (semantic {r['semantic']})")
        lex, hyb = [], []
        for i in range(args.runs):
            q = QUESTIONS[i % len(QUESTIONS)] + f" {i}"  # new text each run: the query vector is not cached
            lex.append(kyb("query", q, "--no-semantic", env=env)[0])
            t, r = kyb("query", q, env=env)
            assert r["semantic"], r
            hyb.append(t)
        lm, hm = statistics.median(lex), statistics.median(hyb)
        print(f"kyb query end to end, median of {args.runs}: lexical {lm * 1000:.0f} ms, hybrid {hm * 1000:.0f} ms "
              f"(warm helper, uncached question) -> ratio {hm / lm:.2f}x")
        stop_helpers(env)


if __name__ == "__main__":
    main()
