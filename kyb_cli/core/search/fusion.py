"""Reciprocal rank fusion of the lexical (BM25) list and the vector list (rule "hybrid fusion"), adapted to
the question and to how decisive each side is.

score(item) = W_LEX * c(item)^COVER_POWER/(K + lexical rank) + W_SEM/(K_SEM + vector rank), ranks
1-based, where c is the share of the question's term weight (IDF) the lexical hit holds, and 0
below COVER_GATE: a hit holding only some of the question's words is noise next to vectors (it
reordered close vector ranks), one holding them all counts fully. K_SEM < K makes the vector
ranks steeper, so a word match no longer lifts a far vector candidate over a near one. An
item in one list only still scores, so a meaning-only match enters and an exact-word match
survives. `first`: hits that go ahead of every other in lexical order — the pipeline puts there
the hits holding a question that looks like an identifier as written, so identifiers stay exact.
Sorted by score descending, ties by key ascending (then newest version first). Pure and tiny: no
numpy, no I/O. Measured on the dev set (bench/calibrate_search.py fusion; docs/SEARCH.md): fixed
0.4/0.6 weights lost cross-language and identifier questions that one side alone got right.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable

K = 60.0
W_LEX = 0.4
W_SEM = 0.6
MIN_CANDIDATES = 24  # each side contributes max(limit, 24) candidates
COVER_POWER = 2.0
COVER_GATE = 0.5
K_SEM = 30.0


def candidates(limit: int) -> int:
    return max(int(limit), MIN_CANDIDATES)


@dataclass
class Fused:
    ident: Hashable
    score: float
    lexical_rank: int | None
    vector_rank: int | None


def rrf(lexical: list[Hashable], semantic: list[Hashable] | None, tie: dict[Hashable, tuple] | None = None,
        k: float = K, w_lex: float = W_LEX, w_sem: float = W_SEM, cover: dict[Hashable, float] | None = None,
        first: set[Hashable] | None = None, k_sem: float | None = None) -> list[Fused]:
    """Fuse two ranked lists of identities; `tie[ident]` orders equal scores (default: the ident).

    `cover[ident]` (0..1, default 1) scales a lexical hit by cover**COVER_POWER; idents in `first`
    lead, in lexical order."""
    out: dict[Hashable, Fused] = {}
    for rank, ident in enumerate(lexical, 1):
        if ident not in out:
            c = 1.0 if cover is None else max(0.0, min(1.0, cover.get(ident, 1.0)))
            c = 0.0 if c < COVER_GATE else c
            out[ident] = Fused(ident, w_lex * c ** COVER_POWER / (k + rank), rank, None)
    for rank, ident in enumerate(semantic or [], 1):
        f = out.setdefault(ident, Fused(ident, 0.0, None, None))
        if f.vector_rank is None:
            f.vector_rank = rank
            f.score += w_sem / ((K_SEM if k_sem is None else k_sem) + rank)
    tie = tie or {}
    lead = first or set()
    return sorted(out.values(), key=lambda f: (
        (0, f.lexical_rank) if f.ident in lead and f.lexical_rank is not None else (1, 0),
        -round(f.score, 12), tie.get(f.ident, (str(f.ident),))))
