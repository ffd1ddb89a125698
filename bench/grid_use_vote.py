"""The multilingual vote's K and WEIGHT (kyb_cli/core/search/vote.py) over a grid, in the product:
each setting replays bench/eval_devset.py in this process on the cross-language questions (the cached
store and vectors: ~2 s a setting once built), and prints top-1 / top-3 / MRR@10 on all, fit and check.

    KYB_MODEL=… KYB_MODEL_EN=… KYB_BENCH_VECTORS=… python bench/grid_use_vote.py [--k 1,5,10,20,60]
        [--weights 0.1,0.25,0.35,0.5,0.75,1] [--out DIR]

Choose on the fit half (best top-1, ties by top-3 then MRR); report the check half (docs/SEARCH.md
"The multilingual vote in the product").
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from evalset import checks  # noqa: E402


def figures(path: Path) -> dict:
    """split -> (top-1, top-3, MRR@10, n) of the hybrid answers in one eval_devset result file."""
    questions = {q["id"]: q for q in checks.load(checks.QUESTIONS)}
    out: dict = {}
    for row in json.loads(path.read_text(encoding="utf-8"))["questions"]:
        q = questions[row["id"]]
        relevant = set(q["relevant"])
        rank = next((i for i, key in enumerate(row["hybrid"]["top"], 1) if key in relevant), None)
        for split in ("all", checks.split_of(q)):
            f = out.setdefault(split, [0, 0, 0.0, 0])
            f[0] += rank == 1
            f[1] += bool(rank and rank <= 3)
            f[2] += 1 / rank if rank else 0.0
            f[3] += 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k", default="1,5,10,20,60")
    ap.add_argument("--weights", default="0.1,0.25,0.35,0.5,0.75,1")
    ap.add_argument("--out", default=None, help="where the result files go (default: a temporary directory)")
    args = ap.parse_args()
    os.environ.setdefault("KYB_USE", "on")
    from kyb_cli.core.search import vote

    out = Path(args.out or tempfile.mkdtemp(prefix="kyb-use-grid-"))
    rows = []
    for k in (int(x) for x in args.k.split(",")):
        for w in (float(x) for x in args.weights.split(",")):
            vote.K, vote.WEIGHT = k, w
            path = out / f"grid_{k}_{w}.json"
            sys.argv = ["eval_devset.py", "--modes", "hybrid", "--kinds", "cross_language", "--json", str(path)]
            runpy.run_path(str(BENCH / "eval_devset.py"), run_name="__main__")
            rows.append((k, w, figures(path)))
    print("\n| k | w | all | fit | check |\n|---|---|---|---|---|")
    for k, w, f in rows:
        print(f"| {k} | {w} | " + " | ".join(f"{f[s][0]} / {f[s][1]} / {f[s][2] / f[s][3]:.3f}" for s in ("all", "fit", "check")) + " |")
    def key(f: dict) -> tuple:
        return f["fit"][0], f["fit"][1], round(f["fit"][2], 9)

    best = max(key(f) for _k, _w, f in rows)
    print("\nthe fit half's best: " + ", ".join(f"k {k} w {w}" for k, w, f in rows if key(f) == best))


if __name__ == "__main__":
    main()
