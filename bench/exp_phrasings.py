"""How several phrasings should grade one answer: replay policies over each phrasing's own answer.

    python bench/exp_phrasings.py [--split all|fit|check]   # models as bench/eval_devset.py finds them

Issue 26: with `--also` (bench/evalset/also.jsonl) off-topic `confident: false` fell 0.91 -> 0.81,
because a fused hit kept the strongest grading any phrasing gave it: two phrasings are two chances
for an off-topic question to look strong somewhere. This asks every dev-set question that has other
phrasings once through the real pipeline (bench/eval_devset.py's cached store), captures each
phrasing's graded candidates before they are fused (search/phrasings.py fuse_answers), and replays
grading policies over them: top-3 of the fused order and the confident rates per policy; then the
fused order per RRF k (issue 41: k 60 -> 1).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import eval_devset as ev  # noqa: E402
from evalset import checks  # noqa: E402

LIMIT = ev.LIMIT
CAPTURE = Path(os.environ.get("KYB_BENCH_DIR", "/tmp")) / "kyb-phrasings.json"


def capture(store: Path, questions: list[dict]) -> list[dict]:
    """Per question: each phrasing's candidates [(key, strength)] in its own order."""
    from kyb_cli.core.search import phrasings

    seen: list = []
    real = phrasings.fuse_answers

    def spy(answers, mode, *rest, **kw):
        seen.append([[(h["key"], h["strength"]) for h in hits] for hits, _out in answers])
        return real(answers, mode, *rest, **kw)

    phrasings.fuse_answers = spy
    search, _embed = ev.engine()
    also = ev.also_phrasings()
    rows = []
    for q in questions:
        others = also.get(q["id"], {}).get("also", [])
        if not others:
            continue
        seen.clear()
        search(store, q["query"], semantic=True, also=others)
        rows.append({"id": q["id"], "kind": q["kind"], "relevant": q["relevant"], "split": checks.split_of(q),
                     "seen": also[q["id"]].get("seen", False), "answers": seen[0]})
    return rows


def fused(answers: list[list[tuple[str, str]]], policy: str) -> list[tuple[str, bool]]:
    """The fused top LIMIT [(key, strong)] under a grading policy (order: RRF, as phrasings.py)."""
    from kyb_cli.core.search.phrasings import RRF_K as k  # the shipped fusion (60 before issue 41's sixth session)

    score: dict = {}
    best: dict = {}
    strong_in: dict = {}
    ranks: dict = {}
    for q, hits in enumerate(answers):
        for rank, (key, strength) in enumerate(hits, 1):
            ranks.setdefault((q, key), rank)
            score[key] = score.get(key, 0.0) + 1.0 / (k + rank)
            if key not in best or rank < best[key][0]:
                best[key] = (rank, q, strength)
            strong_in.setdefault(key, set())
            if strength == "strong":
                strong_in[key].add(q)
    order = sorted(score, key=lambda i: (-score[i], best[i][0], i))[:LIMIT]
    n = len(answers)

    def strong(key: str) -> bool:
        s = strong_in[key]
        if policy == "best-phrasing":  # shipped before: the grading of the phrasing that ranked it best
            return best[key][2] == "strong"
        if policy == "any":
            return bool(s)
        if policy == "original":  # only the question as asked grades
            return 0 in s
        if policy == "original-or-all":  # the original, or every phrasing agrees
            return 0 in s or len(s) == n
        if policy == "two":  # at least two phrasings (or the only one)
            return len(s) >= min(2, n)
        if policy == "original-or-two-others":
            return 0 in s or len(s - {0}) >= 2
        if policy.startswith("two-or-top"):  # symmetric: every phrasing vouches, or one does and all rank it near
            k_near = int(policy[len("two-or-top"):])
            return len(s) == n or (bool(s) and all(ranks.get((q, key), 10**9) <= k_near for q in range(n)))
        if policy.startswith("two-or-lead"):  # symmetric: every phrasing vouches, or one that ranks it 1st
            k_near = int(policy[len("two-or-lead"):])  # does and every one ranks it within k_near
            return len(s) == n or (any(ranks.get((q, key)) == 1 for q in s)
                                   and all(ranks.get((q, key), 10**9) <= k_near for q in range(n)))
        if policy.startswith("any-top"):  # symmetric: one phrasing says strong, every one ranks it near
            k_near = int(policy[len("any-top"):])
            return bool(s) and all(ranks.get((q, key), 10**9) <= k_near for q in range(n))
        raise ValueError(policy)
        raise ValueError(policy)

    return [(key, strong(key)) for key in order]


POLICIES = ("best-phrasing", "any", "original", "original-or-all", "two", "any-top1", "any-top3", "any-top5",
            "any-top10", "any-top24", "two-or-top1", "two-or-top2", "two-or-top3",
            "two-or-lead2", "two-or-lead3")


def report(rows: list[dict]) -> None:
    print(f"{len(rows)} questions with other phrasings "
          f"({sum(not r['relevant'] for r in rows)} off-topic)")
    print("| policy | on-topic confident:true | off-topic confident:false | strong hits that are right | top-3 |")
    print("|---|---|---|---|---|")
    for policy in POLICIES:
        on = off = n_on = n_off = strong = right = top3 = 0
        for r in rows:
            hits = fused(r["answers"], policy)
            conf = any(s for _k, s in hits)
            if r["relevant"]:
                n_on += 1
                on += conf
                top3 += any(k in r["relevant"] for k, _s in hits[:3])
                strong += sum(s for _k, s in hits)
                right += sum(s and k in r["relevant"] for k, s in hits)
            else:
                n_off += 1
                off += not conf
        print(f"| {policy} | {on / n_on:.3f} ({n_on}) | {off / n_off:.3f} ({n_off}) | "
              f"{right / max(strong, 1):.2f} | {top3 / n_on:.3f} |")


def rrf_table(rows: list[dict], ks=(1, 2, 3, 5, 10, 30, 60)) -> None:
    """Top-1 / top-3 / MRR@10 of the fused order per RRF k (search/phrasings.py RRF_K), per kind,
    and of each phrasing alone: how much of the better phrasing's answer the fusion keeps."""
    def measure(orders: list[tuple[list[str], list[str]]]) -> str:
        ranks = [next((i for i, k in enumerate(o[:LIMIT], 1) if k in rel), None) for o, rel in orders]
        n = len(ranks) or 1
        return "%.3f / %.3f / %.3f" % (sum(r == 1 for r in ranks) / n, sum(bool(r and r <= 3) for r in ranks) / n,
                                       sum(1 / r for r in ranks if r) / n)

    def order(answers, k):
        score: dict = {}
        best: dict = {}
        for hits in answers:
            for rank, (key, _s) in enumerate(hits, 1):
                score[key] = score.get(key, 0.0) + 1.0 / (k + rank)
                best[key] = min(best.get(key, rank), rank)
        return sorted(score, key=lambda i: (-score[i], best[i], i))

    for kind in sorted({r["kind"] for r in rows if r["relevant"]}):
        sel = [r for r in rows if r["relevant"] and r["kind"] == kind]
        print(f"{kind} ({len(sel)}): top-1 / top-3 / MRR@10")
        for i, name in enumerate(("the question alone", "the rephrasing alone")):
            print(f"  {name}: {measure([([k for k, _s in r['answers'][i]], r['relevant']) for r in sel])}")
        for k in ks:
            print(f"  RRF k {k}: {measure([(order(r['answers'], k), r['relevant']) for r in sel])}")


def captured(args, ask, path: Path) -> list[dict]:
    """The dev set's questions asked through `ask(store, questions)` and kept in `path` (unless
    --replay: the last capture), cut to --split. Shared with bench/exp_use_agree.py."""
    if not args.replay:
        for env, name in (("KYB_MODEL", "multilingual-e5-small"), ("KYB_MODEL_EN", "bge-small-en-v1.5")):
            if not os.environ.get(env):
                os.environ[env] = str(ROOT.parent / "shared" / "models" / name)
        docs = checks.load(checks.DOCS)
        store, _s = ev.prepare(docs, rebuild=False)
        path.write_text(json.dumps(ask(store, checks.load(checks.QUESTIONS))))
    rows = json.loads(path.read_text())
    return rows if args.split == "all" else [r for r in rows if r["split"] == args.split]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("all", "fit", "check"), default="all")
    ap.add_argument("--replay", action="store_true", help=f"replay the last capture ({CAPTURE}) only")
    args = ap.parse_args()
    rows = captured(args, capture, CAPTURE)
    report(rows)
    rrf_table(rows)


if __name__ == "__main__":
    main()
