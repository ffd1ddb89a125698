"""Evidence for the search pipeline's choices: dump both sides' candidates once, replay variants.

    KYB_MODEL=../shared/models/multilingual-e5-small python bench/calibrate_search.py dump [--set dev|small]
    python bench/calibrate_search.py fit [--write]     # semantic floor + centres -> calibration.json
    KYB_MODEL=… python bench/calibrate_search.py pipeline [--write]  # the floor on the pipeline's answers
    KYB_MODEL=… python bench/calibrate_search.py agree [--write]     # + the agreement rule, jointly
    python bench/calibrate_search.py fusion            # fusion variants, top-1/top-3/MRR per kind

`dump` builds a store from the set's documents, embeds every passage of every document (user
vector cache, so a second run costs seconds), and writes for each question the lexical candidates
(BM25 order, which question terms each holds, the terms' IDF) and the vector candidates (cosine
per passage recipe: `head` = the first passage only, as recipe 1 did; `chunks` = best of all
passages) to /tmp/kyb-calibrate.json. `fit` chooses the semantic score (raw or centred cosine) and
its floor where on-topic and off-topic questions separate best; `--write` stores it under the
current fingerprint in kyb_cli/core/search/calibration.json. The dev set is bench/evalset/.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
DUMP = Path(os.environ.get("KYB_CALIBRATE_DUMP", "/tmp/kyb-calibrate.json"))
N = 50

# Neutral texts: what "no topic in particular" looks like to the model, for the centres.
NEUTRAL_QUERIES = [
    "what time is it", "how do I cook pasta", "best movies of the year", "weather tomorrow",
    "where is the nearest train station", "как дела", "что посмотреть вечером", "wie spät ist es",
    "wo ist der Bahnhof", "quelle heure est-il", "où est la plage", "qué tiempo hace", "dónde está el museo",
    "que horas são", "onde fica o mercado", "котра година", "今天吃什么", "天气怎么样", "今日は何曜日ですか",
    "history of the roman empire", "how to learn piano", "football results yesterday", "symptoms of a cold",
    "cheap flights to paris", "how tall is mount everest", "book recommendations", "how to tie a tie",
    "birthday gift ideas", "yoga for beginners", "how to grow tomatoes", "the price of bread",
    "why is the sky blue", "how many legs does a spider have", "famous paintings of the renaissance",
]
NEUTRAL_PASSAGES = [
    "The weather today is sunny with a light breeze.", "A recipe for tomato soup with basil and garlic.",
    "The football match ended in a draw after extra time.", "История Древнего Рима насчитывает много веков.",
    "Die Katze schläft auf dem Sofa.", "Le musée ouvre à neuf heures du matin.", "El tren sale a las ocho.",
    "今天天气很好，我们去公园散步。", "A short poem about the sea and the wind.", "Notes about gardening in spring.",
    "O mercado abre aos sábados.", "東京は日本の首都です。", "Our family trip to the mountains last summer.",
    "How to knit a scarf: cast on forty stitches.", "The library has a new collection of novels.",
    "Бабушка испекла пирог с яблоками.", "Mi perro duerme en el jardín.", "La recette de la tarte aux pommes.",
]

SMALL_OFF_TOPIC = [
    "kubernetes ingress controller", "how to bake sourdough bread", "who won the world cup 2018", "рецепт борща",
    "Wie konfiguriere ich einen Kafka Consumer?", "configurer un pare-feu iptables", "cómo entrenar a un perro",
    "如何学习吉他", "elasticsearch shard rebalancing", "terraform state lock dynamodb", "GPU driver installation nvidia",
    "react component lifecycle hooks", "migrate mysql to cassandra", "прогноз погоды на завтра",
    "kubectl rollout undo deployment", "java garbage collector tuning", "how do I reset my bios password",
    "spark executor memory overhead", "qual é a capital da austrália", "ключи ssh для github",
]


def load_set(name: str) -> tuple[list[dict], list[dict]]:
    """(documents {key,title,body,tags}, questions {text, kind, expected: [keys] (empty: off-topic)})."""
    if name == "small":
        import eval_search as E

        docs = [{"key": k, "title": t, "body": b, "tags": []} for k, t, b in E.RECORDS]
        qs = [{"text": q, "kind": g, "expected": [k]} for g, cases in E.GROUPS.items() for q, k in cases]
        qs += [{"text": q, "kind": "off-topic", "expected": []} for q in SMALL_OFF_TOPIC]
        return docs, qs
    from evalset import checks  # where the documents live (they are not committed): bench/evalset/README.md

    docs = [json.loads(line) for line in checks.DOCS.read_text(encoding="utf-8").splitlines() if line.strip()]
    qs = []
    for path in [checks.QUESTIONS]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                exp = q.get("relevant", q.get("expected", []))
                if isinstance(exp, str):
                    exp = [exp]
                qs.append({"text": q.get("query", q.get("text")), "kind": q.get("kind", "?"),
                           "expected": list(exp or []), "lang": q.get("lang", "")})
    return docs, qs


def build_store(path: Path, docs: list[dict]) -> None:
    from kyb_cli.core.canon.attribution import detect
    from kyb_cli.core.records.model import Record
    from kyb_cli.core.canon.repo import init_store

    store = init_store(path)
    with store.writing(detect("cli")) as tx:
        for d in docs:
            tx.put(Record(key=d["key"], title=d["title"], body=d.get("body", ""), tags=d.get("tags") or []))


def _vecs(texts: list[str], kind: str) -> list[list[float]]:
    from kyb_cli.core import embed
    from kyb_cli.core.embed.recipe import passage_input, text_hash

    if kind == "query":
        out = []
        for t in texts:
            v, why = embed.query_vector(t)
            if v is None:
                sys.exit(f"no model: {why}")
            out.append(list(embed.vector_from_bytes(v)))
        return out
    got = embed.passage_vectors(texts)
    if got.reason:
        sys.exit(f"no model: {got.reason}")
    return [list(embed.vector_from_bytes(got.vectors[text_hash(passage_input(t))])) for t in texts]


def dump(set_name: str) -> None:
    import numpy as np

    from kyb_cli.core.embed import recipe

    if os.environ.get("KYB_CALIBRATE_CHUNK"):  # try another chunk size: UNITS,OVERLAP (evidence only)
        recipe.CHUNK_UNITS, recipe.OVERLAP_UNITS = (int(x) for x in os.environ["KYB_CALIBRATE_CHUNK"].split(","))

    from kyb_cli.core.embed.recipe import passages, passage_text
    from kyb_cli.core.index.fresh import fresh
    from kyb_cli.core.search.lexical import lexical
    from kyb_cli.core.search.tokens import _CYRILLIC, is_function_word, russian_stem
    from kyb_cli.core.search.relevance import term_hits, term_weights
    from kyb_cli.core.search.syntax import parse, plan

    docs, qs = load_set(set_name)
    from kyb_cli.core.errors import KybError
    from kyb_cli.core.records.model import Record
    from kyb_cli.core.records.validate import validate as validate_record

    ok = []
    for d in docs:
        try:
            validate_record(Record(key=d["key"], title=d["title"], body=d.get("body", ""), tags=d.get("tags") or []))
            ok.append(d)
        except KybError as exc:
            print(f"skipped {d['key']}: {exc}", file=sys.stderr)
    docs = ok
    have = {d["key"] for d in docs}
    qs = [q for q in qs if not q["expected"] or set(q["expected"]) & have]
    keys = [d["key"] for d in docs]
    head_texts = [passage_text(d) for d in docs]
    chunk_texts = [passages(d) for d in docs]
    flat = [t for ts in chunk_texts for t in ts]
    print(f"{len(docs)} docs, {len(flat)} passages, {len(qs)} questions", file=sys.stderr)
    P = np.array(_vecs(sorted(set(flat) | set(head_texts)), "passage"), dtype=np.float32)
    index = {t: i for i, t in enumerate(sorted(set(flat) | set(head_texts)))}
    Qv = np.array(_vecs([q["text"] for q in qs], "query"), dtype=np.float32)
    NQ = np.array(_vecs(NEUTRAL_QUERIES, "query"), dtype=np.float32)
    NP = np.array(_vecs(NEUTRAL_PASSAGES, "passage"), dtype=np.float32)
    head = P[[index[t] for t in head_texts]]
    owners = [i for i, ts in enumerate(chunk_texts) for _ in ts]
    chunks = P[[index[t] for t in flat]]
    stem = lambda t: russian_stem(t) if _CYRILLIC.match(t) else None  # noqa: E731
    from kyb_cli.core import embed

    out = {"passages": np.round(chunks, 5).tolist(), "owners": owners,
           "first": [j == 0 for ts in chunk_texts for j, _ in enumerate(ts)],
           "keys": keys, "fingerprint": embed.current_fingerprint()[0], "questions": [], "centres": {
        "neutral_q": NQ.mean(0).tolist(), "neutral_p": NP.mean(0).tolist(),
        "store_p": chunks.mean(0).tolist(), "questions_q": Qv.mean(0).tolist(), "store_head": head.mean(0).tolist()}}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        build_store(store, docs)
        f = fresh(store)
        for qi, q in enumerate(qs):
            pl = plan(parse(q["text"]), stem=stem, is_function_word=is_function_word)
            ranked = lexical(f.conn, q["text"], limit=N)
            vids = [vid for vid, _h in ranked]
            held = term_hits(f.conn, pl.terms, vids)
            lex = [{"key": h["key"], "bm25": h["score"], "held": sorted(held[vid])} for vid, h in ranked]
            row = {**q, "terms": pl.terms, "idf": term_weights(f.conn, pl.terms), "lexical": lex,
                   "qvec": Qv[qi].tolist()}
            for name, mat, own in (("head", head, list(range(len(docs)))), ("chunks", chunks, owners)):
                cos = mat @ Qv[qi]
                best: dict[int, tuple[float, int]] = {}
                for j, c in enumerate(cos):
                    d = own[j]
                    if d not in best or c > best[d][0]:
                        best[d] = (float(c), j)
                order = sorted(best, key=lambda d: -best[d][0])[:N]
                row[name] = [{"key": keys[d], "cos": best[d][0], "vec": None} for d in order]
                row[name + "_best"] = {keys[d]: mat[best[d][1]].tolist() for d in order[:12]}
            out["questions"].append(row)
        f.conn.close()
    DUMP.write_text(json.dumps(out))
    print(f"wrote {DUMP}", file=sys.stderr)


def pipeline_floor(write: bool) -> None:
    """Fit the floor on the real pipeline's answers (bench/eval_devset.py's cached store): per
    question, the best calibrated score among the returned hits and whether a hit is lexically strong."""
    import numpy as np

    import eval_devset as ev

    docs = [json.loads(x) for x in ev.checks.DOCS.read_text(encoding="utf-8").splitlines() if x.strip()]
    qs = [json.loads(x) for x in ev.checks.QUESTIONS.read_text(encoding="utf-8").splitlines() if x.strip()]
    store, _t = ev.prepare(docs, rebuild=False)
    from kyb_cli.core.search.pipeline import search
    from kyb_cli.core.search import relevance

    answers = []
    for q in qs:
        r = search(store, q["query"], semantic=True, explain=True, limit=ev.LIMIT)
        pairs = [(h["explain"]["semantic_score"], h["explain"]["coverage"]) for h in r["hits"]
                 if h["explain"]["semantic_score"] is not None]
        lex = any(h["explain"]["coverage"] >= relevance.calibration(None).lexical_cover - 1e-9 for h in r["hits"])
        answers.append((q["kind"], bool(q["relevant"]), pairs, lex))
    overall = None
    # the semantic score may be helped by the words a hit shares with the question: score + boost * coverage
    for boost in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5):
        rows = [(k, rel, max([s + boost * c for s, c in pairs] or [-1.0]), lx) for k, rel, pairs, lx in answers]
        on = [(s, lx) for k, rel, s, lx in rows if rel]
        off = [(s, lx) for k, rel, s, lx in rows if not rel]
        best = None
        for t in sorted({round(s, 4) for _k, _r, s, _l in rows}):
            a = np.mean([lx or s >= t for s, lx in on])
            b = np.mean([not (lx or s >= t) for s, lx in off])
            if best is None or (min(a, b), a + b) > best[:2]:
                best = (min(a, b), a + b, t, a, b)
        print(f"boost {boost:.1f}: floor {best[2]:.4f}: on-topic confident {best[3]:.2f}, off-topic not confident "
              f"{best[4]:.2f} ({len(on)} on, {len(off)} off)")
        if overall is None or best[0] > overall[0][0] + 0.01:  # a boost must earn its keep
            overall = (best, boost, rows)
    best, boost, rows = overall
    print(f"chosen: boost {boost}, floor {best[2]:.4f}")
    # evidence only (not shipped: no gain on the dev set): one floor for ASCII-only questions (mostly
    # English) and another for the rest, since e5 scores lower across languages
    other_q = [any(ch.isalpha() and ord(ch) > 127 for ch in q["query"]) for q in qs]

    def fit_group(sel):
        g_on = [(s, lx) for (k, rel, s, lx), o in zip(rows, other_q) if rel and sel(o)]
        g_off = [(s, lx) for (k, rel, s, lx), o in zip(rows, other_q) if not rel and sel(o)]
        gb = None
        for t in sorted({round(s, 4) for s, _l in g_on + g_off}):
            a = np.mean([lx or s >= t for s, lx in g_on])
            b = np.mean([not (lx or s >= t) for s, lx in g_off])
            if gb is None or (min(a, b), a + b) > gb[:2]:
                gb = (min(a, b), a + b, t, a, b)
        print(f"  group floor {gb[2]:.4f}: on {gb[3]:.2f} ({len(g_on)}), off {gb[4]:.2f} ({len(g_off)})")
        return gb[2]

    floor_ascii = fit_group(lambda o: not o)
    floor_other = fit_group(lambda o: o)
    conf = [lx or s >= (floor_other if o else floor_ascii) for (k, rel, s, lx), o in zip(rows, other_q)]
    a = np.mean([c for c, (k, rel, s, lx) in zip(conf, rows) if rel])
    b = np.mean([not c for c, (k, rel, s, lx) in zip(conf, rows) if not rel])
    print(f"two floors {floor_ascii:.4f} / {floor_other:.4f}: on-topic confident {a:.2f}, off-topic not confident {b:.2f}")
    if min(a, b) > best[0] + 0.005:
        best = (min(a, b), a + b, floor_ascii, a, b)
    else:
        floor_other = None
    for kind in sorted({k for k, *_ in rows}):
        sel = [c for c, (k, *_r) in zip(conf, rows) if k == kind] if floor_other is not None else \
              [lx or s >= best[2] for k2, _r, s, lx in rows if k2 == kind]
        print(f"  {kind:16} confident {np.mean(sel):.2f} (n={len(sel)})")
    on = [r for r in rows if r[1]]
    off = [r for r in rows if not r[1]]
    if write:
        from kyb_cli.core import embed

        path = ROOT / "kyb_cli" / "core" / "search" / "calibration.json"
        table = json.loads(path.read_text())
        fp = embed.current_fingerprint()[0]
        table[fp]["floor"] = round(float(best[2]), 4)
        table[fp]["lexical_boost"] = boost
        table[fp]["source"] = (f"bench/calibrate_search.py fit + pipeline: {len(on)} on-topic, {len(off)} off-topic "
                               f"dev-set questions; on-topic confident {best[3]:.2f}, off-topic not confident {best[4]:.2f}")
        path.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        print(f"wrote floor for {fp}")


def agreement(write: bool) -> None:
    """Fit the agreement rule (search/relevance.py: a hit holding `agree_cover` of the question's
    weight and scoring `agree_floor` is strong) jointly with the floor, on the real pipeline's
    answers: per question, every returned hit's (semantic score, coverage, holds an identifier
    whole). Maximises the worse of on-topic confident / off-topic not confident, then their sum,
    then prefers the floor `pipeline` chose. Run after `pipeline --write`."""
    import eval_devset as ev
    from kyb_cli.core import embed
    from kyb_cli.core.search import relevance
    from kyb_cli.core.search.pipeline import search

    docs = ev.checks.load(ev.checks.DOCS)
    qs = ev.checks.load(ev.checks.QUESTIONS)
    store, _t = ev.prepare(docs, rebuild=False)
    fp = embed.current_fingerprint()[0]
    cal = relevance.calibration(fp)
    if cal.floor is None:
        sys.exit(f"no calibration for {fp}: run fit --write and pipeline --write first")
    answers = []
    for q in qs:
        r = search(store, q["query"], semantic=True, explain=True, limit=ev.LIMIT)
        hits = [(h["explain"]["semantic_score"], h["explain"]["coverage"], h["explain"]["lexical_rank"] is not None
                 or h["explain"]["coverage"] > 0, h["strength"] == "strong" and h["found_by"] == "lexical"
                 and h["explain"]["coverage"] < cal.lexical_cover) for h in r["hits"]]
        answers.append((bool(q["relevant"]), q.get("split") or ev.checks.split_of(q), hits))

    def rates(floor, cover, agree_cover, agree_floor, sel=None, boost=cal.lexical_boost):
        def strong(s, c, lex, whole):
            s = -9.0 if s is None else s
            return (s + boost * c >= floor or (lex and (whole or c >= cover - 1e-9))
                    or (agree_cover is not None and lex and c >= agree_cover - 1e-9 and s >= agree_floor))
        rows = [(rel, any(strong(*h) for h in hits)) for rel, split, hits in answers if sel is None or split == sel]
        on = [c for rel, c in rows if rel]
        off = [not c for rel, c in rows if not rel]
        return sum(on) / len(on), sum(off) / len(off)

    base = rates(cal.floor, cal.lexical_cover, None, None)
    print(f"without agreement (floor {cal.floor}, boost {cal.lexical_boost}): on-topic confident {base[0]:.3f}, "
          f"off-topic not confident {base[1]:.3f}")
    best = None
    for boost in (0.0, 0.05, 0.1):
        for floor in sorted({round(cal.floor + d / 1000, 4) for d in range(-40, 41, 5)}):
            for agree_cover in (0.15, 0.2, 0.25, 0.3, 0.35):
                for agree_floor in (0.12, 0.14, 0.16, 0.18, 0.2, 0.22):
                    if agree_floor >= floor:
                        continue
                    a, b = rates(floor, cal.lexical_cover, agree_cover, agree_floor, boost=boost)
                    key = (round(min(a, b), 4), round(a + b, 4), -boost, -abs(floor - cal.floor), -agree_floor, agree_cover)
                    if best is None or key > best[0]:
                        best = (key, floor, agree_cover, agree_floor, a, b, boost)
    _key, floor, agree_cover, agree_floor, a, b, boost = best
    halves = {sp: rates(floor, cal.lexical_cover, agree_cover, agree_floor, sp, boost) for sp in ("fit", "check")}
    print(f"chosen: boost {boost}, floor {floor}, agree_cover {agree_cover}, agree_floor {agree_floor}: on-topic confident {a:.3f}, "
          f"off-topic not confident {b:.3f}; fit half {halves['fit'][0]:.2f} / {halves['fit'][1]:.2f}, "
          f"check half {halves['check'][0]:.2f} / {halves['check'][1]:.2f}")
    if write:
        path = ROOT / "kyb_cli" / "core" / "search" / "calibration.json"
        table = json.loads(path.read_text())
        n_on = sum(1 for rel, _s, _h in answers if rel)
        table[fp].update(floor=floor, lexical_boost=boost, agree_cover=agree_cover, agree_floor=agree_floor, source=(
            f"bench/calibrate_search.py fit + pipeline + agree: {n_on} on-topic, {len(answers) - n_on} off-topic "
            f"dev-set questions; on-topic confident {a:.2f}, off-topic not confident {b:.2f}"))
        path.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        print(f"wrote floor and agreement for {fp}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["dump", "fit", "fusion", "features", "vectors", "holdout", "prf", "gates", "decisive", "adaptive", "ramps", "combo", "pipeline", "agree"])
    ap.add_argument("--set", default="dev", choices=["dev", "small"])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    if args.cmd == "pipeline":
        pipeline_floor(args.write)
    elif args.cmd == "agree":
        agreement(args.write)
    elif args.cmd == "dump":
        if not os.environ.get("KYB_MODEL"):
            os.environ["KYB_MODEL"] = str(ROOT.parent / "shared" / "models" / "multilingual-e5-small")
        dump(args.set)
    else:
        import calibrate_replay

        getattr(calibrate_replay, args.cmd)(json.loads(DUMP.read_text()), write=args.write)
