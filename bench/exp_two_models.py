"""Dense retrieval alone on the dev set, per model and fused: e5 (multilingual) vs bge-small-en-v1.5.

    python bench/exp_two_models.py [--split all|fit|check]
    python bench/exp_two_models.py --router     # the product's router (search/route.py) against each question's language
    python bench/exp_two_models.py --bge-plain  # also bge asked without its query instruction (issue 38)

Issue 26's first measurement: before wiring a second vector side into the product, does bge beat e5
on paraphrases here, and does a fusion keep e5's cross-language? Passages are the recipe's
(kyb_cli.core.embed.recipe.passages); a document scores 0.7 x best + 0.3 x second passage cosine.
Embeddings are cached as .npy under $KYB_BENCH_DIR (default /tmp)/kyb-twomodels/ between runs.
Fusions: `sum` = e5 + bge cosines after z-scoring each over the documents (per question);
`routed` = sum for ASCII questions, e5 alone otherwise. `--bge-plain` adds `bge plain` and `routed
plain`: bge's questions without its query instruction, which makes a short question ~8 tokens
shorter and its run ~3.5 ms quicker on an AVX2 core (issue 38's hybrid floor; docs/BENCHMARKS.md).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
from evalset import checks  # noqa: E402

from kyb_cli.core.embed import recipe  # noqa: E402
from kyb_cli.core.embed.embedder import Embedder  # noqa: E402

MODELS = ROOT.parent / "shared" / "models"
CACHE = Path(os.environ.get("KYB_BENCH_DIR", "/tmp")) / "kyb-twomodels"
BGE_Q = "Represent this sentence for searching relevant passages: "


class ClsEmbedder(Embedder):
    """bge: CLS pooling (token 0), L2-normalised (its NOTICE.md)."""

    def _run(self, encodings):
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            ids[row, :len(enc.ids)] = enc.ids
            mask[row, :len(enc.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, feed)[0]
        cls = hidden[:, 0, :]
        return (cls / np.linalg.norm(cls, axis=1, keepdims=True)).astype(np.float32)


def embed(name: str, inputs: list[str]) -> np.ndarray:
    h = hashlib.sha256("\n".join(inputs).encode()).hexdigest()[:12]
    path = CACHE / f"{name}-{h}.npy"
    if path.exists():
        return np.load(path)
    model = Embedder(MODELS / "multilingual-e5-small") if name == "e5" else ClsEmbedder(MODELS / "bge-small-en-v1.5")
    vecs = model.embed(inputs)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vecs)
    return vecs


def doc_scores(qv: np.ndarray, pv: np.ndarray, owner: np.ndarray, ndocs: int) -> np.ndarray:
    sims = qv @ pv.T  # (q, passages)
    out = np.zeros((len(qv), ndocs), dtype=np.float32)
    for d in range(ndocs):
        s = np.sort(sims[:, owner == d], axis=1)[:, ::-1]
        out[:, d] = s[:, 0] if s.shape[1] == 1 else 0.7 * s[:, 0] + 0.3 * s[:, 1]
    return out


def z(m: np.ndarray) -> np.ndarray:
    return (m - m.mean(axis=1, keepdims=True)) / (m.std(axis=1, keepdims=True) + 1e-6)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", choices=("all", "fit", "check"), default="all")
    ap.add_argument("--router", action="store_true", help="only measure the router (no model needed)")
    ap.add_argument("--bge-plain", action="store_true", help="also bge's questions without the instruction")
    args = ap.parse_args()
    if args.router:
        from kyb_cli.core.search.route import is_english

        rows = checks.load(checks.QUESTIONS)
        for lang_en in (True, False):
            sel = [q for q in rows if (q["lang"] == "en") == lang_en]
            routed = sum(is_english(q["query"]) for q in sel)
            ascii_ = sum(q["query"].isascii() for q in sel)
            print(f"{'English' if lang_en else 'other languages'} ({len(sel)}): routed English {routed}, "
                  f"in ASCII {ascii_}")
        for q in rows:
            if is_english(q["query"]) != (q["lang"] == "en"):
                print(f"  misrouted {q['id']} ({q['lang']}): {q['query']}")
        return
    docs = checks.load(checks.DOCS)
    qs = [q for q in checks.load(checks.QUESTIONS) if q["relevant"]]
    if args.split != "all":
        qs = [q for q in qs if checks.split_of(q) == args.split]
    texts, owner = [], []
    for d, doc in enumerate(docs):
        for p in recipe.passages(doc):
            texts.append(p)
            owner.append(d)
    owner = np.array(owner)
    keys = [d["key"] for d in docs]
    all_q = [q for q in checks.load(checks.QUESTIONS)]
    e5p = embed("e5", [recipe.passage_input(t) for t in texts])
    bgp = embed("bge", texts)
    e5q_all = embed("e5", [recipe.query_input(q["query"]) for q in all_q])
    bgq_all = embed("bge", [BGE_Q + q["query"] for q in all_q])
    idx = {q["id"]: i for i, q in enumerate(all_q)}
    sel = [idx[q["id"]] for q in qs]
    e5 = doc_scores(e5q_all[sel], e5p, owner, len(docs))
    bg = doc_scores(bgq_all[sel], bgp, owner, len(docs))
    ascii_q = np.array([q["query"].isascii() for q in qs])
    fused = {"e5": e5, "bge": bg, "sum": z(e5) + z(bg),
             "routed": np.where(ascii_q[:, None], z(e5) + z(bg), z(e5)),
             "routed_bge_heavy": np.where(ascii_q[:, None], 0.4 * z(e5) + z(bg), z(e5))}
    if args.bge_plain:
        plain = doc_scores(embed("bge", [q["query"] for q in all_q])[sel], bgp, owner, len(docs))
        fused |= {"bge plain": plain, "routed plain": np.where(ascii_q[:, None], z(e5) + z(plain), z(e5))}
    kinds = [k for k in checks.KINDS if k != "off_topic"]
    print(f"{len(docs)} documents, {len(texts)} passages, {len(qs)} questions, split {args.split}")
    print("| kind (n) | " + " | ".join(fused) + " |\n|---|" + "---|" * len(fused))
    for kind in kinds:
        rows = [i for i, q in enumerate(qs) if q["kind"] == kind]
        if not rows:
            continue
        cells = []
        for m in fused.values():
            hit = 0
            for i in rows:
                top = np.argsort(-m[i])[:3]
                hit += any(keys[t] in qs[i]["relevant"] for t in top)
            cells.append(f"{hit / len(rows):.2f}")
        print(f"| {kind} ({len(rows)}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
