"""Issue 39's hybrid row on a clone whose filler is embedding: where a one-shot hybrid query's time goes.

    KYB_MODEL=…/multilingual-e5-small python bench/bench_hybrid_pending.py CLONE --home HOME --scan
    KYB_MODEL=… python bench/bench_hybrid_pending.py CLONE --home HOME --checkout /work/main --checkout /tmp/other

CLONE and HOME: a clone bench_large.py kept (`--keep`: $KYB_BENCH_DIR/kyb-bench-large/<store>/clone and
…/home), its index built. First the filler is (re)started with the query's models and the script waits
until it commits vector batches (bench_large.wait_embedding). Then:

- `--scan`: the vector side's SQL of a one-shot query over the current slice as search/semantic.py's
  _score_rows built it before issue 39's lookups (the slice materialized, ~100k keys at 100k, then
  joined to the few vectors present; still its form from half the slice embedded), against the same
  rows found from the vectors present by lookups (vectors → vtext → versions → keys; _score_rows's
  form below that, search/few_vectors.py): milliseconds of each, 5 runs, and whether the rows are the same;
- every `--checkout` (default: this one) in turn, `--rounds` times: the same questions asked by meaning
  and with `--no-semantic`, interleaved (bench_large.hybrid_stage's pairs), each process run from
  inside its checkout (`python -m kyb_cli` puts the working directory first on sys.path): p50 of
  each, the ratio, the filler's pending count first and last, the load. Each checkout asks with a
  vector cache (and so a warm helper) of its own, warmed first by a question outside the list, and
  round r asks the next `--runs` words: every question is new to the checkout asking it, so each
  hybrid answer runs the model for its question once, as bench_large's row does (a cache shared
  between checkouts gave the second one cached questions); the round's questions are first asked once
  lexically, so no checkout pays the page cache for the others. `--no-filler`: without the filler
  (KYB_BACKGROUND=off), a steady "vectors pending" state.
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
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_coldstart import _stop_filler  # noqa: E402
from bench_large import WORDS, environment, filler_status, load, pcts, wait_embedding  # noqa: E402

LOOKUPS = ("SELECT t.version_id, k.state, t.part, 1.0 - vec_distance_cosine(x.vec, :qv) FROM vectors x "
           "CROSS JOIN vtext t ON t.text_sha = x.text_sha CROSS JOIN versions v ON v.id = t.version_id "
           "CROSS JOIN keys k ON k.key = v.key AND k.version_id = v.id WHERE x.fingerprint = :fp "
           "AND k.state != 'retracted' AND t.version_id NOT IN (SELECT version_id FROM unreadable)")


def scan(clone: Path, question: str) -> dict:
    """The two SQL forms of the vector side over the current slice, timed on one connection."""
    from kyb_cli.core import embed
    from kyb_cli.core.index.fresh import with_index
    from kyb_cli.core.index.slice import Slice
    from kyb_cli.core.index.vectors import load_vec

    fp = embed.available()[0][0][1]
    qv = embed.query_vectors(question, [embed.E5])[0][1]
    with_, where, params = Slice("current").sql()
    now = (f"{with_}SELECT c.vid, c.state, t.part, 1.0 - vec_distance_cosine(x.vec, :qv) FROM cand c "
           f"JOIN vtext t ON t.version_id = c.vid "
           f"JOIN vectors x ON x.text_sha = t.text_sha AND x.fingerprint = :fp WHERE 1{where}")

    def run(f) -> dict:
        load_vec(f.conn)
        out = {"vectors": f.conn.execute("SELECT count(*) FROM vectors WHERE fingerprint = ?", (fp,)).fetchone()[0]}
        rows = {}
        for name, sql in (("semantic_py_ms", now), ("lookups_ms", LOOKUPS)):
            took = []
            for _ in range(5):
                t = time.perf_counter()
                rows[name] = sorted(f.conn.execute(sql, params | {"fp": fp, "qv": qv}).fetchall())
                took.append((time.perf_counter() - t) * 1000)
            out[name] = round(sorted(took)[2], 1)
        out["same_rows"] = rows["semantic_py_ms"] == rows["lookups_ms"]
        out["rows"] = len(rows["lookups_ms"])
        return out

    return with_index(clone, run) | {"load": load()}


def crossover(clone: Path, counts: list[int]) -> None:
    """Random unit vectors under e5's fingerprint for the current slice's passages still without one, up to
    each count in turn, then both SQL forms timed (`scan`): where the materialized slice wins again.
    It writes into the clone's index: a throwaway clone only."""
    import numpy as np

    from kyb_cli.core import embed
    from kyb_cli.core.index.fresh import with_index

    fp, rng = embed.available()[0][0][1], np.random.default_rng(39)
    for n in counts:
        def add(f, n: int = n) -> int:
            have = f.conn.execute("SELECT count(*) FROM vectors WHERE fingerprint = ?", (fp,)).fetchone()[0]
            shas = [r[0] for r in f.conn.execute(
                "SELECT DISTINCT t.text_sha FROM keys k JOIN vtext t ON t.version_id = k.version_id "
                "WHERE NOT EXISTS (SELECT 1 FROM vectors x WHERE x.text_sha = t.text_sha AND x.fingerprint = :fp) "
                "LIMIT :n", {"fp": fp, "n": max(0, n - have)})]
            vecs = rng.standard_normal((len(shas), 384)).astype("<f4")
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            with f.conn:
                f.conn.executemany("INSERT INTO vectors(text_sha, fingerprint, vec) VALUES (?, ?, ?)",
                                   [(sha, fp, v.tobytes()) for sha, v in zip(shas, vecs)])
            return len(shas)
        added = with_index(clone, add)
        print(json.dumps({"added": added, "scan": scan(clone, "checkout port 9090")}), flush=True)


def ask(checkout: Path, env: dict[str, str], *args: str) -> tuple[float, dict]:
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "kyb_cli", "query", *args], cwd=checkout, env=env,
                         capture_output=True, text=True)
    took = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"kyb query {args} failed in {checkout}: {res.stderr[-600:]}")
    return took, json.loads(res.stdout)


def fresh_cache(cache: Path, env: dict[str, str], model: str) -> None:
    """An empty vector cache at `cache` (no question of a former run cached), its helper stopped."""
    import shutil

    stop = "import sys; from kyb_cli.core.embed import client; client.stop(sys.argv[1])"
    subprocess.run([sys.executable, "-c", stop, model], env=dict(env, XDG_CACHE_HOME=str(cache)), check=False)
    shutil.rmtree(cache, ignore_errors=True)


def interleaved(clone: Path, checkout: Path, env: dict[str, str], runs: int, offset: int = 0,
                cache: Path | None = None) -> dict:
    """`runs` pairs from WORDS[offset] on; `cache`: the checkout's own XDG cache (vectors, helper)."""
    env = dict(env, PYTHONPATH=str(checkout), **({"XDG_CACHE_HOME": str(cache)} if cache else {}))
    ask(checkout, env, "warm up the helper")  # a question outside the list: its helper is up
    hyb, lex, first = [], [], filler_status(clone).get("pending")
    for i in range(offset, offset + runs):
        question = f"{WORDS[i % len(WORDS)]} port 9090"
        for semantic in ((False, True) if i % 2 else (True, False)):
            took, _reply = ask(checkout, env, question, *(() if semantic else ("--no-semantic",)))
            (hyb if semantic else lex).append(took)
    h, lx = pcts(hyb), pcts(lex)
    return {"checkout": str(checkout), "hybrid_p50_ms": h["p50_ms"], "hybrid_p95_ms": h["p95_ms"],
            "lexical_p50_ms": lx["p50_ms"], "ratio": round(h["p50_ms"] / lx["p50_ms"], 2),
            "filler_pending_first": first, "filler_pending_last": filler_status(clone).get("pending"),
            "filler_stage": filler_status(clone).get("stage"), "load": load()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("clone", type=Path)
    ap.add_argument("--home", type=Path, required=True, help="the bench's HOME for this clone (its warm helper)")
    ap.add_argument("--checkout", type=Path, action="append", default=[])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--no-filler", action="store_true", help="KYB_BACKGROUND=off: no filler, vectors pending")
    ap.add_argument("--scan", action="store_true", help="time the vector side's two SQL forms first")
    ap.add_argument("--crossover", help="e.g. 5000,20000,50000: random e5 vectors up to each count, both SQL "
                                        "forms timed at each (writes into the clone: a throwaway one), then exit")
    args = ap.parse_args()
    model = os.environ.get("KYB_MODEL")
    if not model:
        raise SystemExit("set KYB_MODEL")
    env = environment(args.clone, args.home, model)
    os.environ.update({k: env[k] for k in ("KYB_STORE", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME")})
    if args.crossover:
        _stop_filler(args.clone)
        os.environ["KYB_BACKGROUND"] = "off"
        crossover(args.clone, [int(n) for n in args.crossover.split(",")])
        return
    if args.no_filler:
        _stop_filler(args.clone)
        env["KYB_BACKGROUND"] = "off"
    else:
        print(json.dumps({"ready": wait_embedding(args.clone, env), "load": load()}), flush=True)
    if args.scan:
        print(json.dumps({"scan": scan(args.clone, "checkout port 9090")}), flush=True)
    checkouts = args.checkout or [ROOT]
    caches = [args.home / f"cache-{n}" for n in range(len(checkouts))] if len(checkouts) > 1 else []
    for cache in caches:
        fresh_cache(cache, env, model)
    for r in range(args.rounds):
        for i in range(r * args.runs, (r + 1) * args.runs):  # the round's words read once (page cache), not by meaning
            ask(checkouts[0], dict(env, PYTHONPATH=str(checkouts[0])), f"{WORDS[i % len(WORDS)]} port 9090", "--no-semantic")
        for n, checkout in (list(enumerate(checkouts)) if r % 2 == 0 else list(enumerate(checkouts))[::-1]):
            cache = caches[n] if caches else None
            print(json.dumps(interleaved(args.clone, checkout.resolve(), env, args.runs, r * args.runs, cache)
                             | {"round": r}), flush=True)
    for cache in caches:
        fresh_cache(cache, env, model)
    _stop_filler(args.clone)


if __name__ == "__main__":
    main()
