"""The agreement rule's `agree_typical` (issue 41): every hit the pipeline grades on the dev set,
captured once, then the off-topic / on-topic `confident` rates replayed per threshold and half.

    KYB_BENCH_VECTORS=/tmp/vec python bench/exp_agree_typical.py [--dump cap.json]

A hit is strong by agreement when it holds `agree_cover` of the question's weight, its meaning is
at least `agree_floor` and (the threshold replayed here) a quarter of the answer's candidates hold
at least `agree_typical` (fusion.typical): the question's words recur in the store.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import eval_devset as E  # noqa: E402
from evalset import checks  # noqa: E402

LIMIT = 10


def capture() -> list[dict]:
    from kyb_cli.core.search import relevance

    docs, questions = checks.load(checks.DOCS), checks.load(checks.QUESTIONS)
    store, _ = E.prepare(docs, False)
    log: list[dict] = []
    grade = relevance.grade

    def spy(hit, **kw):
        grade(hit, **kw)
        cal = kw["cal"]
        log.append({"lexical": kw["lexical"], "cover": kw["cover"], "whole": kw["whole"], "best": kw.get("best_cover"),
                    "sem": kw["sem_score"], "floor": cal.floor, "boost": cal.lexical_boost, "lc": cal.lexical_cover,
                    "ac": cal.agree_cover, "af": cal.agree_floor, "usual": kw.get("usual")})

    relevance.grade = spy
    search, _ = E.engine()
    rows = []
    for q in questions:
        log.clear()
        search(store, q["query"], semantic=True)
        rows.append({"id": q["id"], "split": checks.split_of(q), "on": bool(q["relevant"]), "hits": list(log[:LIMIT])})
    relevance.grade = grade
    return rows


def strong(h: dict, t: float | None) -> bool:
    best = h["cover"] if h["best"] is None else h["best"]
    lex = h["lexical"] and (h["whole"] or best >= h["lc"] - 1e-9)
    sem = h["floor"] is not None and h["sem"] is not None and h["sem"] + h["boost"] * h["cover"] >= h["floor"]
    agree = (h["lexical"] and h["ac"] is not None and h["af"] is not None and h["sem"] is not None
             and h["cover"] >= h["ac"] - 1e-9 and h["sem"] >= h["af"] - 1e-9
             and (t is None or (h["usual"] is not None and h["usual"] >= t - 1e-9)))
    return lex or sem or agree


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", type=Path, help="keep (or reuse) the captured hits here")
    args = ap.parse_args()
    if args.dump and args.dump.exists():
        rows = json.loads(args.dump.read_text())
    else:
        rows = capture()
        if args.dump:
            args.dump.write_text(json.dumps(rows))
    print("agree_typical | on-topic confident all / fit / check | off-topic not confident all / fit / check")
    for t in (None, 0.10, 0.12, 0.14, 0.16, 0.18, 0.20):
        on, off = [], []
        for half in ("all", "fit", "check"):
            sel = [r for r in rows if half == "all" or r["split"] == half]
            conf = {r["id"]: any(strong(h, t) for h in r["hits"]) for r in sel}
            on.append(sum(conf[r["id"]] for r in sel if r["on"]) / max(1, sum(r["on"] for r in sel)))
            off.append(sum(not conf[r["id"]] for r in sel if not r["on"]) / max(1, sum(not r["on"] for r in sel)))
        print(f"{t} | " + " / ".join(f"{x:.3f}" for x in on) + " | " + " / ".join(f"{x:.3f}" for x in off))


if __name__ == "__main__":
    main()
