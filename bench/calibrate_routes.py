"""A semantic floor per route: English questions (both vector sides) and every other one (e5 alone).

    python bench/calibrate_routes.py [--replay]   # models as bench/eval_devset.py finds them
    KYB_ROUTES_ENGLISH=fitted python bench/calibrate_routes.py --replay   # the English floor refitted too

e5 scores a question against a passage in another language lower than one in the same language
(cross-lingual similarity is compressed further), so one floor fitted over all questions leaves
non-English on-topic questions unconfident (dev set, hybrid: cross-language confident 0.67 fit /
0.64 check at the shared floor 0.279, non-English off-topic not confident 1.00 / 0.92). This asks every dev-set question once
through the real pipeline (bench/eval_devset.py's cached store, --explain), keeps each hit's
evidence (semantic score, word coverage, lexical, identifier whole), and fits the floor of
non-English questions on the FIT half only (the worse of on-topic confident / off-topic not
confident, then their sum, then the floor nearest the shared one), reporting the CHECK half beside
it; the English floor likewise. With batched vectors the check half did not confirm a second
floor; with every text in its own run it did for non-English questions, which ship `floor_other`
in kyb_cli/core/search/calibration.json (search/relevance.py for_question; docs/SEARCH.md "A floor
per route"). The English floor stays the shared one (its fit lost off-topic on the check half).
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

CAPTURE = Path(os.environ.get("KYB_BENCH_DIR", "/tmp")) / "kyb-routes.json"


def capture() -> list[dict]:
    from kyb_cli.core.search.pipeline import search
    from kyb_cli.core.search.route import is_english

    for env, name in (("KYB_MODEL", "multilingual-e5-small"), ("KYB_MODEL_EN", "bge-small-en-v1.5")):
        os.environ.setdefault(env, str(ROOT.parent / "shared" / "models" / name))
    store, _s = ev.prepare(checks.load(checks.DOCS), rebuild=False)
    rows = []
    for q in checks.load(checks.QUESTIONS):
        r = search(store, q["query"], semantic=True, explain=True, limit=ev.LIMIT)
        hits = [{"score": h["explain"]["semantic_score"], "cover": h["explain"]["coverage"],
                 "lexical": h["explain"]["coverage"] > 0,
                 "whole": h["strength"] == "strong" and h["found_by"] == "lexical"} for h in r["hits"]]
        rows.append({"id": q["id"], "kind": q["kind"], "on": bool(q["relevant"]), "split": checks.split_of(q),
                     "english": is_english(q["query"]), "hits": hits})
    return rows


def confident(hits: list[dict], floor: float, cal) -> bool:
    """As relevance.grade would say for some hit, with `floor` as the semantic floor."""
    for h in hits:
        s = h["score"]
        sem = s is not None and s + cal.lexical_boost * h["cover"] >= floor
        lex = h["lexical"] and (h["whole"] or h["cover"] >= cal.lexical_cover - 1e-9)
        agree = (h["lexical"] and cal.agree_cover is not None and s is not None
                 and h["cover"] >= cal.agree_cover - 1e-9 and s >= cal.agree_floor)
        if sem or lex or agree:
            return True
    return False


def rates(rows: list[dict], floor: float, cal) -> tuple[float, float, int, int]:
    on = [confident(r["hits"], floor, cal) for r in rows if r["on"]]
    off = [not confident(r["hits"], floor, cal) for r in rows if not r["on"]]
    return sum(on) / max(len(on), 1), sum(off) / max(len(off), 1), len(on), len(off)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replay", action="store_true", help=f"fit on the last capture ({CAPTURE})")
    args = ap.parse_args()
    if not args.replay:
        CAPTURE.write_text(json.dumps(capture()))
    rows = json.loads(CAPTURE.read_text())
    from kyb_cli.core import embed
    from kyb_cli.core.search import relevance

    fp = embed.current_fingerprint()[0]
    cal = relevance.calibration(fp)
    if cal.floor is None:
        sys.exit(f"no calibration for {fp}")
    groups = {(e, sp): [r for r in rows if r["english"] == e and r["split"] == sp]
              for e in (True, False) for sp in ("fit", "check")}
    for (e, sp), sel in groups.items():
        a, b, n_on, n_off = rates(sel, cal.floor, cal)
        print(f"shared floor {cal.floor}: {'English' if e else 'other  '} {sp:5}: on-topic confident {a:.2f} ({n_on}), "
              f"off-topic not confident {b:.2f} ({n_off})")
    floors = {}
    for english in (True, False):
        fit = groups[(english, "fit")]
        best = None
        for step in range(-150, 151):
            floor = round(cal.floor + step / 1000, 4)
            a, b, _n, _m = rates(fit, floor, cal)
            key = (round(min(a, b), 4), round(a + b, 4), -abs(floor - cal.floor))
            if best is None or key > best[0]:
                best = (key, floor, a, b)
        _key, floor, a, b = best
        ca, cb, n_on, n_off = rates(groups[(english, "check")], floor, cal)
        ta, tb, t_on, t_off = rates([r for r in rows if r["english"] == english], floor, cal)
        name = "English" if english else "non-English"
        print(f"{name} floor {floor} (fit half): fit on-topic confident {a:.2f}, off-topic not confident {b:.2f}; "
              f"check half {ca:.2f} ({n_on}) / {cb:.2f} ({n_off}); all {ta:.2f} ({t_on}) / {tb:.2f} ({t_off})")
        floors[english] = (floor,)
    mode = os.environ.get("KYB_ROUTES_ENGLISH", "shared")  # shared: keep the English floor as it is
    english_floor = floors[True][0] if mode == "fitted" else cal.floor
    floor = floors[False][0]
    every = [confident(r["hits"], english_floor if r["english"] else floor, cal) for r in rows]
    on = [c for c, r in zip(every, rows) if r["on"]]
    off = [not c for c, r in zip(every, rows) if not r["on"]]
    print(f"whole dev set, English floor {english_floor}, other {floor}: on-topic confident {sum(on) / len(on):.3f} ({len(on)}), "
          f"off-topic not confident {sum(off) / len(off):.3f} ({len(off)})")


if __name__ == "__main__":
    main()
