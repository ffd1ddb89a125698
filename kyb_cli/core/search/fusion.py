"""Fusing the lexical (BM25) and vector lists into one order (rule "hybrid fusion"), adapted to the
question and to how decisive each side is.

score(item) = meaning(item) + WORDS_WEIGHT * max(0, c(item) - typical)

- meaning: the vector side's score (its two best passages' cosines, search/semantic.py nearest),
  the same number the vector side ranks by. An item without a vector yet (pending) counts as the
  weakest meaning on the vector list, so it is placed by its words among the rest.
- c: the share of the question's term weight (IDF) the item holds; typical: what the candidates
  commonly hold (the upper quartile of their c). Words count by how far an item stands out: when
  many candidates hold a paraphrase's common words, none is lifted; the one document that holds a
  long question's rare words is.

A convex combination of the two scores, not reciprocal rank fusion: ranks throw away how close two
candidates are, so RRF let a word match lift a far vector candidate over a near one and, the other
way, buried the one document that held a long question's rare words (bench/eval_devset.py: RRF
reached top-3 0.93 on questions about the end of long documents where words alone reach 0.97; this
0.97, with paraphrase and cross-language unchanged; docs/SEARCH.md "Fusion"). Bruch, Gai and
Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval" (ACM TOIS 2023), find the same: a
convex combination tuned on a small sample beats RRF, which is sensitive to its parameters.

`first`: items that go ahead of every other in lexical order — the pipeline puts there the hits
holding a question that looks like an identifier as written, or a decisive word match, so
identifiers stay exact. Without any vector score the lexical order is kept as it is. Ties: by the
lexical rank, then `tie[ident]`. Pure and tiny: no numpy, no I/O.
"""

from __future__ import annotations

from operator import itemgetter

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a lexical query loads `typical`)
if TYPE_CHECKING:
    from typing import Hashable

MIN_CANDIDATES = 24  # each side contributes max(limit, 24) candidates
WORDS_WEIGHT = 0.04
TYPICAL_QUANTILE = 0.25  # "typical" = the coverage a quarter of the candidates reach


def candidates(limit: int) -> int:
    return max(int(limit), MIN_CANDIDATES)


def typical(covers: list[float]) -> float:
    """The coverage a quarter of the candidates reach (0 for no candidates)."""
    ordered = sorted(covers, reverse=True)
    return ordered[int(len(ordered) * TYPICAL_QUANTILE)] if ordered else 0.0


def words_part(cover: float, usual: float, weight: float = WORDS_WEIGHT) -> float:
    """What holding `cover` of the question's weight adds to the meaning score, when candidates
    usually hold `usual` (`weight`: the words' weight, WORDS_WEIGHT unless the caller says).
    max(0, min(1, cover) - usual) written as comparisons (the same doubles, NaN and -0.0 too): the
    builtins' calls were a third of fuse's ~40 candidates."""
    d = (cover if cover < 1.0 else 1.0) - usual
    return weight * (d if d > 0.0 else 0.0)


_NO_TIE = object()


def fuse(lexical: list[Hashable], semantic: list[Hashable] | None, meaning: dict[Hashable, float] | None = None,
         cover: dict[Hashable, float] | None = None, first: set[Hashable] | None = None,
         tie: dict[Hashable, tuple] | None = None, words_weight: float = WORDS_WEIGHT) -> list[tuple]:
    """One order over both lists, as (ident, lexical rank, vector rank, score) rows. `semantic`: the
    vector side's order; `meaning[ident]`: the score it ranks by (items of `lexical` may have one too:
    their cosine outside the vector side's top); `cover[ident]` 0..1 (default 1 for lexical items, 0
    for the rest); `words_weight`: see words_part. Rows, not an object per candidate, each sort key
    made in one loop: ~100 -> ~55 us of a hybrid answer's ~40 candidates (issue 38)."""
    meaning = meaning or {}
    cover = cover or {}
    tie = tie or {}
    lead = first or set()
    semantic = semantic or []
    lrank = {ident: r for r, ident in enumerate(lexical, 1)}
    vrank: dict[Hashable, int] = {}
    for r, ident in enumerate(semantic, 1):
        vrank.setdefault(ident, r)
    idents = list(dict.fromkeys([*lexical, *semantic]))
    if not any(i in meaning for i in idents):  # no vector to judge by: the words' order
        return [(i, lrank.get(i), vrank.get(i), 0.0) for i in sorted(
            idents, key=lambda i: (lrank.get(i, len(lrank) + 1), tie.get(i, (str(i),))))]
    weakest = min((meaning[i] for i in semantic if i in meaning), default=min(meaning.values()))
    held = [cover.get(i, 1.0 if i in lrank else 0.0) for i in idents]
    usual = typical(held)
    nowhere = len(lrank) + 1
    rows = []
    mget, lget, vget, tget = meaning.get, lrank.get, vrank.get, tie.get
    for n, i in enumerate(idents):
        score = mget(i, weakest) + words_part(held[n], usual, words_weight)
        lr = lget(i)
        t = tget(i, _NO_TIE)
        rows.append((((0, lr) if lr is not None and i in lead else (1, 0), -round(score, 12), lr or nowhere,
                      (str(i),) if t is _NO_TIE else t), n, i, lr, vget(i), score))
    rows.sort(key=itemgetter(0))  # stable: equal keys keep the candidates' order, as sorted(key=...) did
    return [(i, lr, vr, score) for _k, _n, i, lr, vr, score in rows]
