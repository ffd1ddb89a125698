"""Replays of bench/calibrate_search.py's dump: fusion variants and the strength calibration.

Pure numpy over the dumped candidate lists, so a variant costs milliseconds and no model.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np

K = 60.0
LIMIT = 10


def _metrics(ranks):
    n = len(ranks) or 1
    return (sum(r == 1 for r in ranks) / n, sum(r is not None and r <= 3 for r in ranks) / n,
            sum(1 / r for r in ranks if r is not None and r <= 10) / n)


def _rank(order, expected):
    for i, k in enumerate(order[:LIMIT], 1):
        if k in expected:
            return i
    return None


def coverage(q, item):
    idf = q["idf"]
    tot = sum(idf) or 1.0
    return sum(idf[i] for i in item["held"]) / tot


def looks_like_identifier(text):
    from kyb_cli.core.search.relevance import looks_like_identifier as f

    return f(text.split())


def fuse(q, side="chunks", w_lex=0.4, w_sem=0.6, cover_pow=0.0, ident_tier=False, full_tier=False,
         sem_n=24, lex_n=24, k=K, sem_gate=None, gate=0.0, k_sem=None):
    lex = q["lexical"][:lex_n]
    sem = q[side][:sem_n]
    score, tier = {}, {}
    ident = ident_tier and looks_like_identifier(q["text"])
    for r, it in enumerate(lex, 1):
        c = coverage(q, it)
        if c < gate:
            c = 0.0
        score[it["key"]] = score.get(it["key"], 0) + w_lex * (c ** cover_pow) / (k + r)
        if (ident and c >= 0.999) or (full_tier and c >= 0.999 and len(q["terms"]) >= 2):
            tier[it["key"]] = 0
    for r, it in enumerate(sem, 1):
        score[it["key"]] = score.get(it["key"], 0) + w_sem / ((k_sem or k) + r)
    return sorted(score, key=lambda key: (tier.get(key, 1), -score[key], key))


def fusion(data, write=False):
    qs = [q for q in data["questions"] if q["expected"]]
    kinds = sorted({q["kind"] for q in qs})
    variants = {
        "lexical": lambda q: [it["key"] for it in q["lexical"]],
        "vec-head": lambda q: [it["key"] for it in q["head"]],
        "vec-chunks": lambda q: [it["key"] for it in q["chunks"]],
        "rrf-head .4/.6": lambda q: fuse(q, "head"),
        "rrf-chunks .4/.6": lambda q: fuse(q),
        "rrf cover^1": lambda q: fuse(q, cover_pow=1),
        "rrf cover^2": lambda q: fuse(q, cover_pow=2),
        "rrf cover^1 +ident": lambda q: fuse(q, cover_pow=1, ident_tier=True),
        "rrf cover^2 +ident": lambda q: fuse(q, cover_pow=2, ident_tier=True),
        "rrf cover^2 +ident .3/.7": lambda q: fuse(q, w_lex=0.3, w_sem=0.7, cover_pow=2, ident_tier=True),
        "rrf cover^2 +ident .5/.5": lambda q: fuse(q, w_lex=0.5, w_sem=0.5, cover_pow=2, ident_tier=True),
        "rrf cover^2 +ident+full": lambda q: fuse(q, cover_pow=2, ident_tier=True, full_tier=True),
        "rrf cover^2 +ident k30": lambda q: fuse(q, cover_pow=2, ident_tier=True, k=30),
        "rrf cover^3 +ident": lambda q: fuse(q, cover_pow=3, ident_tier=True),
    }
    print(f"{'variant':28} " + " ".join(f"{k[:14]:>22}" for k in kinds))
    for name, fn in variants.items():
        cells = []
        for kind in kinds:
            ranks = [_rank(fn(q), set(q["expected"])) for q in qs if q["kind"] == kind]
            t1, t3, mrr = _metrics(ranks)
            cells.append(f"{t1:.2f}/{t3:.2f}/{mrr:.3f}")
        print(f"{name:28} " + " ".join(f"{c:>22}" for c in cells))
    print("cells: top-1/top-3/MRR@10; n per kind: " + ", ".join(f"{k} {sum(q['kind'] == k for q in qs)}" for k in kinds))


def _unit(v):
    return v / (np.linalg.norm(v) or 1.0)


def sem_scores(q, side, cq, cp, top=LIMIT):
    """Calibrated score of each of the top vector candidates (centred cosine)."""
    qv = np.array(q["qvec"])
    qc = _unit(qv - cq) if cq is not None else qv
    out = []
    for it in q[side][:top]:
        pv = np.array(q[side + "_best"][it["key"]]) if it["key"] in q[side + "_best"] else None
        if pv is None:
            continue
        pc = _unit(pv - cp) if cp is not None else pv
        out.append(float(qc @ pc))
    return out


def fit(data, write=False, side="chunks"):
    c = {k: np.array(v) for k, v in data["centres"].items()}
    on = [q for q in data["questions"] if q["expected"]]
    off = [q for q in data["questions"] if not q["expected"]]
    print(f"on-topic {len(on)}, off-topic {len(off)}")
    centre_opts = {"raw": (None, None), "q-neutral": (c["neutral_q"], None),
                   "q+p neutral": (c["neutral_q"], c["neutral_p"]), "q neutral+p store": (c["neutral_q"], c["store_p"]),
                   "q questions+p store": (c["questions_q"], c["store_p"]),
                   "q questions+p neutral": (c["questions_q"], c["neutral_p"])}
    best_overall = None
    for cname, (cq, cp) in centre_opts.items():
        top_on = [max(sem_scores(q, side, cq, cp) or [-1]) for q in on]
        top_off = [max(sem_scores(q, side, cq, cp) or [-1]) for q in off]
        for cover in (0.34, 0.5, 0.67):
            lex_on = [any(coverage(q, it) >= cover - 1e-9 for it in q["lexical"][:LIMIT]) for q in on]
            lex_off = [any(coverage(q, it) >= cover - 1e-9 for it in q["lexical"][:LIMIT]) for q in off]
            best = None
            for floor in np.unique(np.round(np.concatenate([top_on, top_off]), 4)):
                a = np.mean([l or s >= floor for l, s in zip(lex_on, top_on)])
                b = np.mean([not (l or s >= floor) for l, s in zip(lex_off, top_off)])
                cand = (min(a, b), a + b, float(floor), a, b)
                if best is None or cand[:2] > best[:2]:
                    best = cand
            print(f"{cname:18} cover>={cover:.2f}: floor {best[2]:.4f} on-topic confident {best[3]:.2f}, "
                  f"off-topic not confident {best[4]:.2f}  (lexical alone: on {np.mean(lex_on):.2f}, off {np.mean(lex_off):.2f})")
            if best_overall is None or best[:2] > best_overall[0][:2]:
                best_overall = (best, cname, cover)
    (score, cname, cover) = best_overall
    print(f"best: {cname}, lexical cover {cover}, floor {score[2]:.4f}: on {score[3]:.2f} off {score[4]:.2f}")
    # Shipped: the centres of the dev set's own questions and passages (the typical operations
    # question and passage), which separated best above and held on a two-fold split (holdout).
    cname, cover = "q questions+p store", 0.5
    cq, cp = centre_opts[cname]
    top_on = [max(sem_scores(q, side, cq, cp) or [-1]) for q in on]
    top_off = [max(sem_scores(q, side, cq, cp) or [-1]) for q in off]
    lex_on = [any(coverage(q, it) >= cover - 1e-9 for it in q["lexical"][:LIMIT]) for q in on]
    lex_off = [any(coverage(q, it) >= cover - 1e-9 for it in q["lexical"][:LIMIT]) for q in off]
    best = None
    for floor in np.unique(np.round(np.concatenate([top_on, top_off]), 4)):
        a = np.mean([l or s >= floor for l, s in zip(lex_on, top_on)])
        b = np.mean([not (l or s >= floor) for l, s in zip(lex_off, top_off)])
        if best is None or (min(a, b), a + b) > best[:2]:
            best = (min(a, b), a + b, float(floor), a, b)
    score = best
    print(f"shipped: {cname}, lexical cover {cover}, floor {score[2]:.4f}: on {score[3]:.2f} off {score[4]:.2f}")
    for kind in sorted({q["kind"] for q in data["questions"]}):
        sel = [q for q in data["questions"] if q["kind"] == kind]
        conf = [any(coverage(q, it) >= cover - 1e-9 for it in q["lexical"][:LIMIT]) or
                max(sem_scores(q, side, cq, cp) or [-1]) >= score[2] for q in sel]
        print(f"  {kind:16} confident {np.mean(conf):.2f} (n={len(sel)})")
    if write:
        _write(data, {"floor": round(score[2], 4), "lexical_cover": cover,
                      "center_q": [round(float(x), 6) for x in cq], "center_p": [round(float(x), 6) for x in cp],
                      "source": f"bench/calibrate_search.py fit: {len(on)} on-topic, {len(off)} off-topic dev-set "
                                f"questions; on-topic confident {score[3]:.2f}, off-topic not confident {score[4]:.2f}"})
    return best_overall


def _write(data, entry):
    import sys

    path = Path(__file__).resolve().parents[1] / "kyb_cli" / "core" / "search" / "calibration.json"
    table = json.loads(path.read_text()) if path.exists() else {}
    fp = data.get("fingerprint")
    if not fp:
        sys.exit("the dump has no fingerprint (dump again with the model)")
    table[fp] = entry
    path.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote calibration for {fp} to {path}")


def features(data, write=False, side="chunks"):
    """Separation (balanced accuracy at the best floor) of single answer-level features."""
    c = {k: np.array(v) for k, v in data["centres"].items()}
    on = [q for q in data["questions"] if q["expected"] and q["kind"] != "identifier"]
    off = [q for q in data["questions"] if not q["expected"]]

    def feats(q):
        cos = np.array([it["cos"] for it in q[side]])
        s = sem_scores(q, side, c["neutral_q"], c["neutral_p"])
        return {"raw top1": cos[0], "top1-mean(2..10)": cos[0] - cos[1:10].mean(),
                "top1-mean(all)": cos[0] - cos.mean(), "z top1 (all)": (cos[0] - cos.mean()) / (cos.std() + 1e-6),
                "centred top1": s[0] if s else -1, "centred top1 - centred mean(2..10)": (s[0] - np.mean(s[1:10])) if len(s) > 2 else 0,
                "raw top1 + z/100": cos[0] + ((cos[0] - cos.mean()) / (cos.std() + 1e-6)) / 100}

    F_on = [feats(q) for q in on]
    F_off = [feats(q) for q in off]
    for name in F_on[0]:
        a = np.array([f[name] for f in F_on]); b = np.array([f[name] for f in F_off])
        best = max(((min(np.mean(a >= t), np.mean(b < t)), np.mean(a >= t), np.mean(b < t), t)
                    for t in np.unique(np.concatenate([a, b]))), key=lambda x: (x[0], x[1] + x[2]))
        print(f"{name:36} floor {best[3]:.4f}: on {best[1]:.2f} off {best[2]:.2f}   "
              f"on median {np.median(a):.3f} off median {np.median(b):.3f}")


def _combined(q, delta):
    """Vector list where a version scores max(first passage + delta, best passage)."""
    head = {it["key"]: it["cos"] for it in q["head"]}
    best = {it["key"]: it["cos"] for it in q["chunks"]}
    keys = set(head) | set(best)
    score = {k: max(head.get(k, -1) + delta, best.get(k, -1)) for k in keys}
    return [{"key": k, "cos": score[k]} for k in sorted(keys, key=lambda k: (-score[k], k))]


def vectors(data, write=False):
    qs = [q for q in data["questions"] if q["expected"]]
    kinds = sorted({q["kind"] for q in qs})
    for delta in (None, 0.0, 0.005, 0.01, 0.015, 0.02, 0.03):
        for q in qs:
            q["comb"] = q["head"] if delta is None else _combined(q, delta)
        cells = []
        for kind in kinds:
            sel = [q for q in qs if q["kind"] == kind]
            v = _metrics([_rank([it["key"] for it in q["comb"]], set(q["expected"])) for q in sel])
            h1 = _metrics([_rank(fuse(q, "comb", cover_pow=1, ident_tier=True), set(q["expected"])) for q in sel])
            h2 = _metrics([_rank(fuse(q, "comb", cover_pow=2, ident_tier=True), set(q["expected"])) for q in sel])
            cells.append(f"v {v[1]:.2f} h1 {h1[1]:.2f} h2 {h2[1]:.2f}")
        print(f"delta {delta!s:6} " + " | ".join(f"{k[:10]}: {c}" for k, c in zip(kinds, cells)))


def holdout(data, write=False, side="chunks", cover=0.5):
    """Two-fold check of the calibration: centres and floor fitted on half the documents (and
    their questions, half the off-topic ones), measured on the other half."""
    import hashlib

    def fold(key):
        return int(hashlib.sha256(key.encode()).hexdigest(), 16) % 2

    qs = data["questions"]
    for train in (0, 1):
        def part(q, f):
            k = q["expected"][0] if q["expected"] else q["text"]
            return fold(k) == f
        tr = [q for q in qs if part(q, train)]
        te = [q for q in qs if part(q, 1 - train)]
        cq = np.mean([q["qvec"] for q in tr], axis=0)
        vecs = [v for q in tr for k, v in q[side + "_best"].items() if q["expected"] and fold(k) == train]
        cp = np.mean(vecs, axis=0)

        def conf(q, floor):
            lex = any(coverage(q, it) >= cover - 1e-9 for it in q["lexical"][:LIMIT])
            return lex or max(sem_scores(q, side, cq, cp) or [-1]) >= floor

        best = None
        for floor in np.arange(0.15, 0.35, 0.0025):
            a = np.mean([conf(q, floor) for q in tr if q["expected"]])
            b = np.mean([not conf(q, floor) for q in tr if not q["expected"]])
            if best is None or (min(a, b), a + b) > best[:2]:
                best = (min(a, b), a + b, floor)
        floor = best[2]
        a = np.mean([conf(q, floor) for q in te if q["expected"]])
        b = np.mean([not conf(q, floor) for q in te if not q["expected"]])
        print(f"fit on fold {train} (floor {floor:.4f}): held-out on-topic confident {a:.2f}, off-topic not confident {b:.2f} "
              f"(n on {sum(1 for q in te if q['expected'])}, off {sum(1 for q in te if not q['expected'])})")


def prf(data, write=False, delta=0.02):
    """Pseudo-relevance feedback on the query vector: q' = q + beta * mean(best passages of the top k)."""
    P = np.array(data["passages"], dtype=np.float32)
    owners = np.array(data["owners"])
    first = np.array(data["first"])
    keys = data["keys"]
    qs = [q for q in data["questions"] if q["expected"]]
    kinds = sorted({q["kind"] for q in qs})

    def ranked(qv):
        cos = P @ qv + delta * first
        best = {}
        for j in np.argsort(-cos):
            d = owners[j]
            if d not in best:
                best[d] = (float(cos[j]), j)
            if len(best) >= 50:
                break
        return [(keys[d], c, j) for d, (c, j) in best.items()]

    for beta, k in ((0, 0), (0.3, 3), (0.5, 3), (0.3, 1), (0.5, 5), (1.0, 3)):
        cells = []
        for kind in kinds:
            vr, hr = [], []
            for q in (q for q in qs if q["kind"] == kind):
                qv = np.array(q["qvec"], dtype=np.float32)
                r = ranked(qv)
                if beta:
                    fb = P[[j for _key, _c, j in r[:k]]].mean(0)
                    qv2 = qv + beta * fb
                    r = ranked(qv2 / np.linalg.norm(qv2))
                q["prf"] = [{"key": key, "cos": c} for key, c, _j in r]
                vr.append(_rank([it["key"] for it in q["prf"]], set(q["expected"])))
                hr.append(_rank(fuse(q, "prf", cover_pow=2, ident_tier=True), set(q["expected"])))
            v, h = _metrics(vr), _metrics(hr)
            cells.append(f"v {v[1]:.2f}/{v[2]:.3f} h {h[1]:.2f}/{h[2]:.3f}")
        print(f"beta {beta} k {k}: " + " | ".join(f"{kd[:10]}: {c}" for kd, c in zip(kinds, cells)))


def gates(data, write=False, delta=0.02):
    qs = [q for q in data["questions"] if q["expected"]]
    kinds = sorted({q["kind"] for q in qs})
    for q in qs:
        q["comb"] = _combined(q, delta)
    base = {kind: (_metrics([_rank([it["key"] for it in q["lexical"]], set(q["expected"])) for q in qs if q["kind"] == kind]),
                   _metrics([_rank([it["key"] for it in q["comb"]], set(q["expected"])) for q in qs if q["kind"] == kind]))
            for kind in kinds}
    print("lex/vec top3: " + " | ".join(f"{k[:10]} {base[k][0][1]:.2f}/{base[k][1][1]:.2f}" for k in kinds))
    for pw, gate, ks in itertools.product((2, 3, 4), (0.0, 0.34, 0.5, 0.67), (None, 30)):
        cells = []
        ok = True
        for kind in kinds:
            m = _metrics([_rank(fuse(q, "comb", cover_pow=pw, ident_tier=True, gate=gate, k_sem=ks), set(q["expected"]))
                          for q in qs if q["kind"] == kind])
            ok &= m[1] >= max(base[kind][0][1], base[kind][1][1]) - 1e-9
            cells.append(f"{m[1]:.2f}/{m[2]:.3f}")
        print(f"pow {pw} gate {gate:.2f} ksem {ks!s:4} {'OK ' if ok else '   '}" + " | ".join(f"{k[:10]} {c}" for k, c in zip(kinds, cells)))


def decisive(data, write=False, delta=0.02):
    """A decisive lexical top hit (BM25 ratio to the second >= R, coverage >= C) leads the answer."""
    qs = [q for q in data["questions"] if q["expected"]]
    kinds = sorted({q["kind"] for q in qs})
    for q in qs:
        q["comb"] = _combined(q, delta)
    base = {kind: (_metrics([_rank([it["key"] for it in q["lexical"]], set(q["expected"])) for q in qs if q["kind"] == kind]),
                   _metrics([_rank([it["key"] for it in q["comb"]], set(q["expected"])) for q in qs if q["kind"] == kind]))
            for kind in kinds}
    print("lex/vec top3: " + " | ".join(f"{k[:10]} {base[k][0][1]:.2f}/{base[k][1][1]:.2f}" for k in kinds))

    def run(q, gate, ks, ratio, cmin, pw=2):
        order = fuse(q, "comb", cover_pow=pw, ident_tier=True, gate=gate, k_sem=ks)
        L = q["lexical"]
        if L and ratio is not None:
            b = [it["bm25"] for it in L]
            r = b[0] / b[1] if len(b) > 1 and b[1] > 0 else 99
            if r >= ratio and coverage(q, L[0]) >= cmin:
                order = [L[0]["key"]] + [k for k in order if k != L[0]["key"]]
        return order

    for gate, ks, ratio, cmin in itertools.product((0.0, 0.34, 0.5), (None, 30), (None, 1.2, 1.3, 1.5, 2.0), (0.5, 0.67)):
        if ratio is None and cmin != 0.5:
            continue
        cells, ok = [], True
        for kind in kinds:
            m = _metrics([_rank(run(q, gate, ks, ratio, cmin), set(q["expected"])) for q in qs if q["kind"] == kind])
            ok &= m[1] >= max(base[kind][0][1], base[kind][1][1]) - 1e-9
            cells.append(f"{m[1]:.2f}/{m[2]:.3f}")
        print(f"gate {gate:.2f} ksem {ks!s:4} R {ratio!s:4} C {cmin:.2f} {'OK ' if ok else '   '}" + " | ".join(f"{k[:8]} {c}" for k, c in zip(kinds, cells)))


def adaptive(data, write=False, delta=0.02):
    """Decisive lexical side (BM25 ratio >= R and top coverage >= C): its top hit leads and both sides
    rank at K; otherwise vectors rank at K_SEM and partial word matches below the gate do not count."""
    qs = [q for q in data["questions"] if q["expected"]]
    kinds = sorted({q["kind"] for q in qs})
    for q in qs:
        q["comb"] = _combined(q, delta)
    base = {kind: (_metrics([_rank([it["key"] for it in q["lexical"]], set(q["expected"])) for q in qs if q["kind"] == kind]),
                   _metrics([_rank([it["key"] for it in q["comb"]], set(q["expected"])) for q in qs if q["kind"] == kind]))
            for kind in kinds}
    print("lex/vec top3: " + " | ".join(f"{k[:10]} {base[k][0][1]:.2f}/{base[k][1][1]:.2f}" for k in kinds))

    def run(q, ratio, cmin, gate_d, gate_n, ks_n, lead):
        L = q["lexical"]
        dec = False
        if L:
            b = [it["bm25"] for it in L]
            r = b[0] / b[1] if len(b) > 1 and b[1] > 0 else 99
            dec = r >= ratio and coverage(q, L[0]) >= cmin
        if dec:
            order = fuse(q, "comb", cover_pow=2, ident_tier=True, gate=gate_d, k_sem=None)
            if lead:
                order = [L[0]["key"]] + [k for k in order if k != L[0]["key"]]
        else:
            order = fuse(q, "comb", cover_pow=2, ident_tier=True, gate=gate_n, k_sem=ks_n)
        return order

    for ratio, cmin, gate_d, gate_n, ks_n, lead in itertools.product((1.2, 1.3, 1.5), (0.5, 0.67), (0.0, 0.34), (0.5, 0.67), (30, 20), (True, False)):
        cells, ok, miss = [], True, 0
        for kind in kinds:
            sel = [q for q in qs if q["kind"] == kind]
            m = _metrics([_rank(run(q, ratio, cmin, gate_d, gate_n, ks_n, lead), set(q["expected"])) for q in sel])
            ok &= m[1] >= max(base[kind][0][1], base[kind][1][1]) - 1e-9
            miss += max(0, round((max(base[kind][0][1], base[kind][1][1]) - m[1]) * len(sel)))
            cells.append(f"{m[1]:.2f}/{m[2]:.3f}")
        if miss <= 1:
            print(f"R {ratio} C {cmin} gd {gate_d} gn {gate_n} ks {ks_n} lead {lead:d} miss {miss} " + " | ".join(f"{k[:8]} {c}" for k, c in zip(kinds, cells)))


def ramps(data, write=False, delta=0.02):
    """c_eff = clamp((c - a) / (1 - a), 0, 1) ** p instead of a hard gate; decisive lead as in `decisive`."""
    qs = [q for q in data["questions"] if q["expected"]]
    kinds = sorted({q["kind"] for q in qs})
    for q in qs:
        q["comb"] = _combined(q, delta)
    base = {kind: max(_metrics([_rank([it["key"] for it in q["lexical"]], set(q["expected"])) for q in qs if q["kind"] == kind])[1],
                      _metrics([_rank([it["key"] for it in q["comb"]], set(q["expected"])) for q in qs if q["kind"] == kind])[1])
            for kind in kinds}

    def run(q, a, p, ks, ratio, cmin, wl):
        score, tier = {}, {}
        ident = looks_like_identifier(q["text"])
        for r, it in enumerate(q["lexical"][:24], 1):
            c = coverage(q, it)
            ce = max(0.0, min(1.0, (c - a) / (1 - a))) ** p
            score[it["key"]] = score.get(it["key"], 0) + wl * ce / (K + r)
            if ident and c >= 0.999:
                tier[it["key"]] = 0
        for r, it in enumerate(q["comb"][:24], 1):
            score[it["key"]] = score.get(it["key"], 0) + 0.6 / (ks + r)
        order = sorted(score, key=lambda key: (tier.get(key, 1), -score[key], key))
        L = q["lexical"]
        if L and ratio:
            b = [it["bm25"] for it in L]
            rr = b[0] / b[1] if len(b) > 1 and b[1] > 0 else 99
            if rr >= ratio and coverage(q, L[0]) >= cmin and not tier:
                order = [L[0]["key"]] + [k for k in order if k != L[0]["key"]]
        return order

    rows = []
    for a, p, ks, ratio, cmin, wl in itertools.product((0.0, 0.2, 0.3, 0.4), (1, 2), (20, 30, 45), (None, 1.3), (0.67,), (0.4, 0.6, 0.8)):
        cells, miss, mrr = [], 0, 0
        for kind in kinds:
            sel = [q for q in qs if q["kind"] == kind]
            m = _metrics([_rank(run(q, a, p, ks, ratio, cmin, wl), set(q["expected"])) for q in sel])
            miss += max(0, round((base[kind] - m[1]) * len(sel)))
            mrr += m[2] * len(sel)
            cells.append(f"{m[1]:.2f}/{m[2]:.3f}")
        rows.append((miss, -mrr, f"a {a} p {p} ks {ks} R {ratio} wl {wl} miss {miss} " + " | ".join(f"{k[:8]} {c}" for k, c in zip(kinds, cells))))
    for r in sorted(rows)[:12]:
        print(r[2])


def combo(data, write=False, side="chunks"):
    """Answer-level evidence = centred top score + lam * best lexical coverage (one floor)."""
    c = {k: np.array(v) for k, v in data["centres"].items()}
    cq, cp = c["questions_q"], c["store_p"]
    on = [q for q in data["questions"] if q["expected"]]
    off = [q for q in data["questions"] if not q["expected"]]

    def feats(q):
        s = sem_scores(q, side, cq, cp)
        mc = max([coverage(q, it) for it in q["lexical"][:LIMIT]] or [0])
        return (max(s or [-1]), mc)
    F_on = [feats(q) for q in on]
    F_off = [feats(q) for q in off]
    for lam in (0.0, 0.05, 0.1, 0.15, 0.2, 0.3):
        for cover in (0.5, 0.67, 1.01):
            a_ = np.array([s + lam * m for s, m in F_on]); b_ = np.array([s + lam * m for s, m in F_off])
            la = np.array([m >= cover for _s, m in F_on]); lb = np.array([m >= cover for _s, m in F_off])
            best = max(((min(np.mean(la | (a_ >= t)), np.mean(~(lb | (b_ >= t)))), np.mean(la | (a_ >= t)), np.mean(~(lb | (b_ >= t))), t)
                        for t in np.unique(np.concatenate([a_, b_]))), key=lambda x: (x[0], x[1] + x[2]))
            print(f"lam {lam:.2f} cover {cover:.2f}: floor {best[3]:.4f} on {best[1]:.2f} off {best[2]:.2f}")
