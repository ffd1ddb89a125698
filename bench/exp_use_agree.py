"""Two independent models agreeing on a question not in English (issue 41, the last points): is it
evidence of `strong` / `confident`? Every dev-set question asked once through the real pipeline,
plain and with its rephrasings (bench/evalset/also.jsonl), capturing each answer's graded hits and
USE's own top 10 (cosines) for the question as asked; then rules replayed per half.

    python bench/exp_use_agree.py [--replay] [--split all|fit|check]   # models as bench/eval_devset.py

Rules replayed:
- agree@t (plain answers): a non-English question whose top hit is also USE's first, with a USE
  cosine of at least t, is confident (the top hit strong);
- margin@m (plain answers): ... and USE's first leads its second by at least m;
- --tiny: the README's three-record store (tests/test_hybrid_real_model.py): the README's Russian
  question, then every non-English off-topic dev-set question, with USE's first, its cosine, its lead
  over the second and whether it is the answer's top: can agreement make the README example strong
  without making off-topic questions strong in the same store?
- in-use@k (rephrasings): a non-English question's answer is confident only through hits that are
  strong AND in USE's top k for the question as asked (an English rephrasing's strong hit that USE
  puts nowhere for the original does not count).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import eval_devset as ev  # noqa: E402
from evalset import checks  # noqa: E402
from exp_phrasings import captured  # noqa: E402

CAPTURE = Path(os.environ.get("KYB_BENCH_DIR", "/tmp")) / "kyb-use-agree.json"


def capture(store: Path, questions: list[dict]) -> list[dict]:
    """Per question: plain answer [(key, strength)], USE's top [(key, cos)] for the question as asked
    (None: the router calls it English), and the answer with rephrasings, per phrasing and fused."""
    from kyb_cli.core.search import phrasings, semantic

    use_seen: dict = {}
    real_side = semantic.semantic_side
    per_phrasing: list = []
    real_fuse = phrasings.fuse_answers

    def side_spy(conn, text, *a, **kw):
        got = real_side(conn, text, *a, **kw)
        spec = kw.get("spec")
        if spec is not None and spec.languages == "other" and got.ranked is not None:
            use_seen[text] = [(x.key, round(x.cos, 5)) for x in got.ranked]
        return got

    def fuse_spy(answers, mode, *rest, **kw):
        per_phrasing.append([[(h["key"], h["strength"]) for h in hits] for hits, _out in answers])
        return real_fuse(answers, mode, *rest, **kw)

    semantic.semantic_side = side_spy
    phrasings.fuse_answers = fuse_spy
    search, _embed = ev.engine()
    also = ev.also_phrasings()
    rows = []
    for q in questions:
        use_seen.clear()
        plain = search(store, q["query"], semantic=True)
        use = use_seen.get(q["query"])
        row = {"id": q["id"], "kind": q["kind"], "relevant": q["relevant"], "split": checks.split_of(q),
               "query": q["query"], "plain": [(h["key"], h["strength"]) for h in plain["hits"]],
               "use": use, "conf": plain.get("confident"), "missing": plain.get("semantic_missing")}
        others = also.get(q["id"], {}).get("also", [])
        if others:
            per_phrasing.clear()
            fused = search(store, q["query"], semantic=True, also=others)
            row["also"] = [(h["key"], h["strength"]) for h in fused["hits"]]
            row["also_conf"] = fused.get("confident")
            row["phrasings"] = per_phrasing[0] if per_phrasing else None
        rows.append(row)
    return rows


def agree(row: dict, t: float, top: int = 1) -> bool:
    """The plain answer's top hit is USE's first (within `top`) with a cosine of at least t."""
    use, hits = row["use"], row["plain"]
    if not use or not hits:
        return False
    return any(k == hits[0][0] and c >= t for k, c in use[:top])


def confident(hits) -> bool:
    return any(s == "strong" for _k, s in hits)


def table_agree(rows: list[dict], ts) -> None:
    print("plain answers: on-topic confident:true / off-topic confident:false (all kinds), and the "
          "non-English questions alone")
    for t in [None, *ts]:
        on = off = n_on = n_off = xon = xoff = nxon = nxoff = 0
        for r in rows:
            c = confident(r["plain"]) or (t is not None and agree(r, t))
            x = r["use"] is not None
            if r["relevant"]:
                n_on += 1
                on += c
                nxon += x
                xon += x and c
            else:
                n_off += 1
                off += not c
                nxoff += x
                xoff += x and not c
        name = "shipped" if t is None else f"agree@{t}"
        print(f"  {name}: on {on}/{n_on} = {on / max(n_on, 1):.3f}, off {off}/{n_off} = {off / max(n_off, 1):.3f}"
              f"  | non-English on {xon}/{nxon}, off {xoff}/{nxoff}")


def also_confident(r: dict, rule: str | None, k: int) -> bool:
    """`confident` of the answer with rephrasings (the plain answer for a question without any) under a rule:
    in-use: a non-English question's strong hit counts only when in USE's top k for the question as asked;
    own-or-use: ... or when the question as asked grades it strong itself (only a rephrasing's grade needs USE)."""
    hits = r.get("also", r["plain"])
    if rule is None or r["use"] is None or "also" not in r:
        return confident(hits)
    keep = {key for key, _c in r["use"][:k]}
    own = {key for key, s in (r.get("phrasings") or [[]])[0] if s == "strong"} if rule == "own-or-use" else set()
    return any(s == "strong" and (key in keep or key in own) for key, s in hits)


def table_in_use(rows: list[dict], ks) -> None:
    print("with rephrasings (mode also, every question): a non-English question's strong hit counts for "
          "`confident` only when in USE's top k for the question as asked (own-or-use: or strong as asked)")
    for rule, k in [(None, 0), *[(rule, k) for rule in ("in-use", "own-or-use") for k in ks]]:
        on = off = n_on = n_off = 0
        for r in rows:
            c = also_confident(r, rule, k)
            if r["relevant"]:
                n_on += 1
                on += c
            else:
                n_off += 1
                off += not c
        name = "shipped" if rule is None else f"{rule}@{k}"
        print(f"  {name}: on {on}/{n_on} = {on / max(n_on, 1):.3f}, off {off}/{n_off} = {off / max(n_off, 1):.3f}")


def table_needs_use(rows: list[dict], ks) -> None:
    print("plain answers: a non-English question's strong hit counts only when in USE's top k (needs-use@k)")
    for k in [None, *ks]:
        on = off = n_on = n_off = 0
        for r in rows:
            keep = None if k is None or r["use"] is None else {key for key, _c in r["use"][:k]}
            c = any(s == "strong" and (keep is None or key in keep) for key, s in r["plain"])
            if r["relevant"]:
                n_on, on = n_on + 1, on + c
            else:
                n_off, off = n_off + 1, off + (not c)
        name = "shipped" if k is None else f"needs-use@{k}"
        print(f"  {name}: on {on}/{n_on} = {on / max(n_on, 1):.3f}, off {off}/{n_off} = {off / max(n_off, 1):.3f}")


def table_margin(rows: list[dict], ms) -> None:
    print("plain answers: agree by margin: the top hit is USE's first and USE's first leads its second by m")
    for m in ms:
        on = off = n_on = n_off = 0
        for r in rows:
            u, hits = r["use"], r["plain"]
            lead = bool(u and hits and len(u) > 1 and u[0][0] == hits[0][0] and u[0][1] - u[1][1] >= m)
            c = confident(hits) or lead
            if r["relevant"]:
                n_on, on = n_on + 1, on + c
            else:
                n_off, off = n_off + 1, off + (not c)
        print(f"  margin@{m}: on {on}/{n_on} = {on / max(n_on, 1):.3f}, off {off}/{n_off} = {off / max(n_off, 1):.3f}")


def details(rows: list[dict]) -> None:
    print("non-English questions: USE's first (cos), the plain top, confident?")
    for r in rows:
        if r["use"] is None:
            continue
        u = r["use"][0] if r["use"] else ("-", 0)
        top = r["plain"][0][0] if r["plain"] else "-"
        mark = "on " if r["relevant"] else "OFF"
        gap = u[1] - r["use"][1][1] if len(r["use"]) > 1 else 0.0
        print(f"  {mark} {r['split']:5} {u[1]:.3f} gap {gap:.3f} same={u[0] == top} conf={confident(r['plain'])} "
              f"also={confident(r['also']) if 'also' in r else '-'} {r['id']}")


README_QUESTION = "куда пишет оформление заказа"


def tiny() -> None:
    """The README example's store: its question's agreement figures against off-topic questions'."""
    import tempfile

    os.environ.update(KYB_EMBED_HELPER="0", KYB_USE="on")
    base = Path(tempfile.mkdtemp(prefix="kyb-tiny-"))
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        os.environ[name] = str(base / name)
    from kyb_cli.core.canon.repo import init_store
    from kyb_cli.core.search import semantic
    from kyb_cli.core.search.pipeline import search
    from tests.support.index_helpers import T0, fill_in_background_now, put

    store = base / "store"
    init_store(store)
    put(store, "checkout-write-path", "Checkout write path",
        "Checkout writes go through svc-checkout on node-3, port 9090.", T0)
    put(store, "team-lunch", "Team lunch", "The weekly team lunch is on Friday at the Italian place.", T0 + 1)
    put(store, "db-host", "Database host", "Postgres primary runs on db-1.", T0 + 2)
    fill_in_background_now(store)
    seen: dict = {}
    real = semantic.semantic_side

    def spy(conn, text, *a, **kw):
        got = real(conn, text, *a, **kw)
        if kw.get("spec") is not None and kw["spec"].languages == "other":
            seen[text] = [(x.key, x.cos) for x in got.ranked or ()]
        return got

    semantic.semantic_side = spy
    asked = [("readme", README_QUESTION)] + [(q["id"], q["query"]) for q in checks.load(checks.QUESTIONS)
                                             if q["kind"] == "off_topic"]
    print("| question | USE's first is the top | USE cosine | lead over the second | confident |")
    print("|---|---|---|---|---|")
    for ident, text in asked:
        r = search(store, text, semantic=True)
        u = seen.pop(text, None)
        if not u or not r["hits"]:
            continue
        print(f"| {ident} | {u[0][0] == r['hits'][0]['key']} | {u[0][1]:.3f} | {u[0][1] - u[1][1]:.3f} | "
              f"{r['confident']} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("all", "fit", "check"), default="all")
    ap.add_argument("--replay", action="store_true", help=f"replay the last capture ({CAPTURE}) only")
    ap.add_argument("--details", action="store_true", help="one line per non-English question")
    ap.add_argument("--tiny", action="store_true", help="the README example's store (see above)")
    args = ap.parse_args()
    if args.tiny:
        tiny()
        return
    rows = captured(args, capture, CAPTURE)
    table_agree(rows, (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5))
    table_in_use(rows, (1, 2, 3, 5, 10))
    table_needs_use(rows, (1, 2, 3, 5, 10))
    table_margin(rows, (0.02, 0.04, 0.06, 0.08, 0.1, 0.15))
    if args.details:
        details(rows)


if __name__ == "__main__":
    main()
