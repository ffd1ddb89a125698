"""Could the English model vouch for a hit too? Replay `confident` with bge's calibrated score as evidence.

    python bench/exp_bge_confidence.py            # models and store as bench/eval_devset.py finds them
    python bench/exp_bge_confidence.py --replay   # the last capture only ($KYB_BENCH_DIR/kyb-bge-conf.json)

Issue 41: strength is e5's calibrated score alone (search/route.py), and most on-topic questions
answered `confident: false` are English paraphrases, where bge ranks better than e5. This asks every
dev-set question once through the real pipeline (hybrid, eval_devset's cached store), keeps each
returned hit's grading, and gives each hit of an English question bge's score calibrated as e5's is
(the cosine after removing the mean direction: centre of the English questions' bge vectors, centre
of the store's bge passages; the hit's best passage by raw cosine, the first counted 0.02 higher).
Then it replays two rules, on-topic `confident: true` / off-topic `confident: false` per half:
OR (strong as now, or bge score >= T) and AND (meaning or agreement evidence on an English question
also needs bge >= T; words alone still suffice). Chosen on the fit half, checked on the check half.
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

CAPTURE = Path(os.environ.get("KYB_BENCH_DIR", "/tmp")) / "kyb-bge-conf.json"


def capture() -> dict:
    """Per question: English or not, and each returned hit (key, strength, found_by, best-passage cover,
    bge calibrated score or None)."""
    import numpy as np

    from kyb_cli import api
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import BGE
    from kyb_cli.core.search.route import is_english

    store, _s = ev.prepare(checks.load(checks.DOCS), rebuild=False)
    questions = checks.load(checks.QUESTIONS)
    qv, fp = {}, None
    for q in questions:
        if is_english(q["query"]):
            fp, vec, _why = embed.query_vectors(q["query"], [BGE])[0]
            qv[q["id"]] = np.frombuffer(vec, dtype="<f4")
    import apsw

    con = apsw.Connection(str(store / ".git" / "kyb" / "index.sqlite"), flags=apsw.SQLITE_OPEN_READONLY)
    passages = np.array([np.frombuffer(v, dtype="<f4") for (v,) in
                         con.execute("SELECT vec FROM vectors WHERE fingerprint = ?", (fp,))])
    cp, cq = passages.mean(0), np.mean(list(qv.values()), 0)
    unit = lambda x: x / np.linalg.norm(x)  # noqa: E731
    vid = dict(con.execute("SELECT key, max(id) FROM versions GROUP BY key"))
    rows = []
    for q in questions:
        english = q["id"] in qv
        hits = api.query(str(store), q["query"], semantic=True, limit=ev.LIMIT, explain=True)[1]["hits"]
        out = []
        for h in hits:
            score = None
            if english:
                parts = [(p, np.frombuffer(v, dtype="<f4")) for p, v in con.execute(
                    "SELECT t.part, x.vec FROM vtext t JOIN vectors x ON x.text_sha = t.text_sha "
                    "AND x.fingerprint = ? WHERE t.version_id = ?", (fp, vid[h["key"]]))]
                _p, best = max(parts, key=lambda pv: float(pv[1] @ qv[q["id"]]) + 0.02 * (pv[0] == 0))
                score = float(unit(qv[q["id"]] - cq) @ unit(best - cp))
            out.append((h["key"], h["strength"], h["found_by"], h["explain"]["coverage"], score))
        rows.append({"id": q["id"], "split": checks.split_of(q), "on": bool(q["relevant"]), "en": english,
                     "hits": out})
    return {"rows": rows}


def rates(rows: list[dict], rule) -> tuple[float, float]:
    on = [any(rule(r, h) for h in r["hits"]) for r in rows if r["on"]]
    off = [not any(rule(r, h) for h in r["hits"]) for r in rows if not r["on"]]
    return sum(on) / len(on), sum(off) / len(off)


def by_words(h) -> bool:
    """Strong by its words alone (lexical_cover 0.5 on the best passage)."""
    return h[1] == "strong" and (h[2] == "lexical" or (h[2] == "both" and h[3] >= 0.5 - 1e-9))


def report(rows: list[dict]) -> None:
    halves = {"fit": [r for r in rows if r["split"] == "fit"], "check": [r for r in rows if r["split"] == "check"],
              "all": rows}
    line = lambda name, rule: print(f"| {name} | " + " | ".join(  # noqa: E731
        "%.3f / %.3f" % rates(sel, rule) for sel in halves.values()) + " |")
    print("| rule | fit | check | all |\n|---|---|---|---|")
    line("as shipped", lambda r, h: h[1] == "strong")
    for t in (0.26, 0.28, 0.30, 0.32, 0.34, 0.36, 0.40):
        line(f"OR bge >= {t:.2f}", lambda r, h, t=t: h[1] == "strong" or (r["en"] and h[4] >= t))
    for t in (0.12, 0.16, 0.20, 0.24):
        line(f"AND bge >= {t:.2f}", lambda r, h, t=t: h[1] == "strong" and (
            not r["en"] or by_words(h) or h[4] >= t))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replay", action="store_true", help=f"replay the last capture ({CAPTURE}) only")
    args = ap.parse_args()
    if not args.replay:
        for env, name in (("KYB_MODEL", "multilingual-e5-small"), ("KYB_MODEL_EN", "bge-small-en-v1.5")):
            os.environ.setdefault(env, str(ROOT.parent / "shared" / "models" / name))
        CAPTURE.write_text(json.dumps(capture()))
    report(json.loads(CAPTURE.read_text())["rows"])


if __name__ == "__main__":
    main()
